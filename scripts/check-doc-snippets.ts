/**
 * Type-checks every ```ts block of README.md and docs/*.md: each block is written to
 * .tmp/doc-snippets/ as its own module and compiled with the project's tsconfig (so
 * `teamgames-sdk` resolves to the sources). Longer code lives in examples/ and is
 * included by reference (`{@includeCode}`), where `npm run typecheck` and CI cover it.
 *
 * Run: `npm run check:snippets`. Exits 1 and names the document and line on an error.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, '.tmp', 'doc-snippets');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const origin = new Map<string, string>();
for (const doc of documents) {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  let start = -1;
  lines.forEach((line, i) => {
    if (start < 0 && /^\s*```ts\s*$/.test(line)) start = i;
    else if (start >= 0 && /^\s*```\s*$/.test(line)) {
      const file = `${doc.replace(/[/.]/g, '_')}_L${start + 2}.ts`;
      // `export {}` makes every block a module, as the examples are (top-level await allowed).
      writeFileSync(join(out, file), `${lines.slice(start + 1, i).join('\n')}\nexport {};\n`);
      origin.set(file, `${doc}:${start + 2}`);
      start = -1;
    }
  });
}
writeFileSync(join(out, 'tsconfig.json'), JSON.stringify({ extends: '../../tsconfig.json', include: ['*.ts'] }, null, 2));

try {
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', out], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
  console.log(`doc snippets: ${origin.size} TypeScript blocks in ${documents.length} documents type-check`);
} catch (error) {
  const output = String((error as { stdout?: string }).stdout ?? error);
  // .tmp/doc-snippets/README_md_L40.ts(3,7): error … → README.md:40 (+2 lines): error …
  console.error(
    output.replace(/\S*doc-snippets\/(\S+?\.ts)\((\d+),\d+\)/g, (_m, file: string, line: string) => {
      const at = origin.get(file) ?? file;
      return `${at} (block line ${line})`;
    }),
  );
  process.exitCode = 1;
}
