/**
 * The links of the README, the guides and the TSDoc, read where users read them: in an
 * installed package (npm's page, node_modules, an editor's hover), on GitHub and on the
 * docs site. Relative links must name a file the package ships; the TSDoc, read from the
 * bundled `dist/**\/*.d.ts` where no relative link has a base, links to the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  keywords: string[];
};
const typedoc = JSON.parse(read('typedoc.json')) as { readme: string; projectDocuments: string[] };

/** The repository's web address, from package.json: the one source of it. */
const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
const guideUrlPrefix = `${repository}/blob/main/`;
/** Where the guides show the repository's images from. */
const rawPrefix = `${repository.replace('https://github.com/', 'https://raw.githubusercontent.com/')}/main/`;

const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown without its fenced code blocks. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^([ \t]*)(```|~~~)[^\n]*\n[\s\S]*?^\1\2[^\n]*$/gm, '');
}

/** Markdown outside fenced code blocks and inline code, where links are links. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '``');
}

/** The targets of `[text](target)` and `![alt](target)` links, titles dropped. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The anchors GitHub gives a document's headings (its slugger, for the headings used here). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of withoutFences(markdown).replace(/`([^`\n]*)`/g, '$1').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[*]/g, '');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    result.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return result;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Every problem with one link to a file of the repository (`path#anchor`, from the root). */
function checkTarget(from: string, path: string, anchor: string | undefined, shipped: Set<string>): string[] {
  const problems: string[] = [];
  if (!existsSync(join(root, path))) return [`${from}: ${path} does not exist`];
  if (!shipped.has(path) && ![...shipped].some((file) => file.startsWith(`${path}/`))) {
    problems.push(`${from}: ${path} is not in the package (package.json "files")`);
  }
  if (anchor && path.endsWith('.md') && !anchors(read(path)).has(anchor)) {
    problems.push(`${from}: ${path} has no heading #${anchor}`);
  }
  return problems;
}

describe('links in an installed package', () => {
  let shipped: Set<string>;

  beforeAll(() => {
    // What `npm publish` would put in the tarball, without building or writing anything.
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [report] = JSON.parse(out) as [{ files: { path: string }[] }];
    shipped = new Set(report.files.map((f) => f.path));
  }, 60_000);

  it('ships the guides and the examples, but no images (the guides show them from the repository)', () => {
    expect([...shipped].filter((f) => /\.(png|jpe?g|gif|webp)$/.test(f))).toEqual([]);
    for (const file of [
      'README.md',
      'docs/README.md',
      'docs/getting-started.md',
      'examples/getting-started.ts',
      'examples/seed.json',
      'examples/web-shop/server.ts',
    ]) {
      expect(shipped, file).toContain(file);
    }
  });

  it('every relative link of the README and the guides names a file the package ships', () => {
    const problems: string[] = [];
    let count = 0;
    for (const doc of documents) {
      const markdown = read(doc);
      const targets = [
        ...linkTargets(markdown),
        // typedoc's includes: plain text in an installed package, so the file must be there too.
        ...[...prose(markdown).matchAll(/\{@include(?:Code)?\s+([^}\s]+)\s*\}/g)].map((m) => m[1]!),
      ];
      for (const target of targets) {
        // An image shown from the repository (the package ships none) must exist in it.
        const fromRepository = target.startsWith(rawPrefix) ? target.slice(rawPrefix.length) : undefined;
        if (fromRepository !== undefined && !existsSync(join(root, fromRepository))) problems.push(`${doc} → ${target}: ${fromRepository} does not exist`);
        if (isExternal(target)) continue;
        count++;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? doc : posix.normalize(posix.join(posix.dirname(doc), path));
        problems.push(...checkTarget(`${doc} → ${target}`, file, anchor, shipped));
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(30);
  });

  it('the TSDoc links to the repository, never relative (dead in the d.ts and in hovers)', () => {
    const problems: string[] = [];
    let count = 0;
    const walk = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
      );
    for (const file of walk('src')) {
      const comments = read(file).match(/\/\*\*[\s\S]*?\*\//g) ?? [];
      for (const target of comments.flatMap(linkTargets)) {
        if (!isExternal(target)) {
          problems.push(`${file}: relative link ${target}: use ${guideUrlPrefix}…`);
          continue;
        }
        if (!target.startsWith(repository)) continue;
        count++;
        if (!target.startsWith(guideUrlPrefix)) {
          problems.push(`${file}: ${target} does not start with ${guideUrlPrefix}`);
          continue;
        }
        const [path = '', anchor] = target.slice(guideUrlPrefix.length).split('#');
        problems.push(...checkTarget(`${file} → ${target}`, path, anchor, shipped));
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThan(20);
  });
});

describe('the link checker itself', () => {
  it('finds links outside code only, and slugs headings as GitHub does', () => {
    const doc = [
      '# `deliveryId`: the game\'s dedupe check',
      'See [a](./a.md#x), ![img](images/p.png "title") and `[not](code.md)`.',
      '```ts',
      '// [neither](b.md)',
      '# not a heading',
      '```',
      '## Twice',
      '## Twice',
    ].join('\n');
    expect(linkTargets(doc)).toEqual(['./a.md#x', 'images/p.png']);
    expect([...anchors(doc)]).toEqual(['deliveryid-the-games-dedupe-check', 'twice', 'twice-1']);
  });
});

describe('package.json and the docs site agree', () => {
  it('names the repository, its README and its issues consistently', () => {
    expect(pkg.repository).toEqual({ type: 'git', url: 'git+https://github.com/teamgamesllc/teamgames-sdk.git' });
    expect(pkg.homepage).toBe(`${repository}#readme`);
    expect(pkg.bugs).toEqual({ url: `${repository}/issues` });
    expect(pkg.keywords).toEqual(expect.arrayContaining(['teamgames', 'storefront', 'rsps', 'mock']));
  });

  it('the site shows every guide, in the order the README and the site index list them', () => {
    const guides = documents.filter((d) => d.startsWith('docs/') && d !== typedoc.readme);
    expect(typedoc.readme).toBe('docs/README.md');
    expect([...typedoc.projectDocuments].sort()).toEqual([...guides].sort());
    expect(typedoc.projectDocuments[0]).toBe('docs/getting-started.md');
    // The first link of each list item of the "## Guides" section.
    const listed = (markdown: string, from: string) =>
      markdown
        .slice(markdown.indexOf('## Guides'), markdown.indexOf('\n## ', markdown.indexOf('## Guides') + 1))
        .split('\n')
        .filter((line) => /^(?:[-*]|\d+\.)\s+\[/.test(line))
        .map((line) => posix.normalize(posix.join(from, linkTargets(line)[0]!.split('#')[0]!)));
    expect(listed(read('README.md'), '.')).toEqual(typedoc.projectDocuments);
    expect(listed(read('docs/README.md'), 'docs')).toEqual(typedoc.projectDocuments);
  });
});
