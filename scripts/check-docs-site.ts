/**
 * Checks the docs site's front page in a real headless browser (Debian's `chromium`, driven
 * by playwright-core), the way a user first sees it: the menu lists the guides in reading
 * order and then the four entry points; the page shows the title once and opens with what
 * a user needs (what the SDK is, install, quick start), never the contributor commands.
 * Every guide page: no diagram (a block drawn with box-drawing characters) wraps.
 * Then, over every page: none sends a reader to the repository for a guide the site has
 * (the TSDoc `@see` links are absolute URLs, rewritten by scripts/typedoc-site.mjs), and
 * every link to a section of a guide finds its heading.
 * Saves a screenshot of the first screen to .tmp/docs-index.png.
 *
 * Run after `npm run docs`: `npm run check:docs-site`. CHROMIUM overrides the browser path
 * (default /usr/bin/chromium). Exits 1 and says what is wrong.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const site = join(root, 'docs-html');
const screenshot = join(root, '.tmp', 'docs-index.png');
const title = 'teamgames-sdk';

/** The guides in the order a new user reads them: the contract of the site's menu. */
const readingOrder = [
  'Getting started',
  'Authentication',
  'Delivering purchases in game',
  'A bridge for any game server',
  'Building a storefront',
  'Errors and retries',
  'Testing your plugin with the mock',
  'Migrating from the v3 claim to v4',
];
/** The package's entry points, from its `exports` (`.` is the package's own name). */
const { exports: exported } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const entryPoints = Object.keys(exported)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => `teamgames-sdk${subpath.slice(1)}`)
  .sort();
/** What only a contributor runs, in a clone of the repository. */
const contributorCommands = ['npm ci', 'npm run demo', 'npm test'];

if (!existsSync(join(site, 'index.html'))) {
  console.error('check-docs-site: docs-html/index.html is missing: run `npm run docs` first');
  process.exit(1);
}

const step = (text: string) => console.log(`docs site: ${text}`);
function fail(error: unknown): void {
  console.error(`check-docs-site: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}

const browser = await chromium.launch({
  executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(pathToFileURL(join(site, 'index.html')).href);
  // typedoc's script builds the menu from navigation.js after the page loads.
  await page.waitForSelector('#tsd-nav-container > li');

  step('the menu: the guides in reading order, then the four entry points');
  const menu = await page.locator('#tsd-nav-container > li').evaluateAll((items) =>
    items.map((li) => li.querySelector(':scope > a, :scope > details > summary > a')?.textContent?.trim() ?? ''),
  );
  assert.deepEqual(menu, [...readingOrder, ...entryPoints], 'the top level of the menu');
  for (const entry of entryPoints) {
    const groups = await page
      .locator('#tsd-nav-container > li > details')
      .filter({ has: page.locator(':scope > summary > a', { hasText: new RegExp(`^${entry}$`) }) })
      .locator(':scope > .tsd-accordion-details > ul > li > details > summary')
      .allTextContents();
    assert.ok(groups.length > 0 && groups.includes('Interfaces'), `${entry} is grouped by kind in the menu (got ${JSON.stringify(groups)})`);
  }

  step('the title once');
  const content = page.locator('.col-content');
  assert.deepEqual(await content.locator('h1').allTextContents(), [title], 'the page has one h1, the title');
  const headings = (await content.locator('h2, h3').allTextContents()).map((h) => h.trim());
  assert.ok(!headings.includes(title), `the title is repeated as a heading: ${JSON.stringify(headings)}`);

  step('it opens with what a user needs: what the SDK is, install, quick start');
  assert.deepEqual(headings.slice(0, 2), ['Install', 'Quick start'], 'the first sections');
  const intro = (await content.locator('.tsd-typography > p').first().textContent()) ?? '';
  assert.match(intro, /TypeScript client for the TeamGames storefront/, 'the first paragraph says what the SDK is');
  assert.equal((await content.locator('pre code').first().textContent())?.trim(), 'npm install teamgames-sdk', 'the first command is the install');
  const text = (await content.textContent()) ?? '';
  for (const command of contributorCommands) assert.ok(!text.includes(command), `the page shows the contributor command \`${command}\``);

  step('the page lists the guides in the same order, each linking to its page');
  const listed = content.locator('h2:has-text("Guides") + ol > li > a');
  assert.deepEqual(await listed.allTextContents(), readingOrder, 'the guides listed on the page');
  for (const href of await listed.evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).href))) {
    assert.ok(existsSync(fileURLToPath(href.replace(/#.*/, ''))), `the page links to a missing guide page: ${href}`);
  }

  mkdirSync(join(root, '.tmp'), { recursive: true });
  await page.screenshot({ path: screenshot });
  step(`first screen saved to ${screenshot}`);

  // typedoc's theme wraps code blocks (white-space: pre-wrap): a wrapped line of a diagram
  // breaks the drawing, so a diagram must fit the page as it is.
  step('no diagram (a block drawn with box-drawing characters) wraps on a guide page, 1280 px wide');
  for (const file of readdirSync(join(site, 'documents')).filter((f) => f.endsWith('.html'))) {
    await page.goto(pathToFileURL(join(site, 'documents', file)).href);
    const wrapped = await page.locator('.col-content pre').evaluateAll((blocks) =>
      blocks
        .filter((pre) => /[─│►◄▲▼┌┐└┘]/.test(pre.textContent ?? ''))
        .filter((pre) => {
          const block = pre as HTMLElement;
          const height = block.getBoundingClientRect().height;
          block.style.whiteSpace = 'pre';
          const unwrapped = block.getBoundingClientRect().height;
          block.style.whiteSpace = '';
          return height > unwrapped + 1;
        })
        .map((pre) => (pre.textContent ?? '').trim().split('\n')[0]),
    );
    assert.deepEqual(wrapped, [], `docs-html/documents/${file}: a diagram wraps (its first line is given)`);
  }
} catch (error) {
  fail(error);
} finally {
  await browser.close();
}

const pages = readdirSync(site, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.html'))
  .map((file) => ({ file, html: readFileSync(join(site, file), 'utf8') }));

step('no page links to the repository for a guide the site has');
const { repository: repo } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { repository: { url: string } };
const repository = `${repo.url.replace(/^git\+/, '').replace(/\.git$/, '')}/blob/`;
const outward = pages.filter(({ html }) => html.includes(`href="${repository}`));
if (outward.length > 0) {
  const { file, html } = outward[0]!;
  const at = html.indexOf(`href="${repository}`);
  fail(`${outward.length} pages link to the repository instead of the site, e.g. docs-html/${file}: ${html.slice(at, at + 120)}`);
}

step('every link to a section of a guide finds its heading');
const broken: string[] = [];
for (const { file, html } of pages) {
  for (const [, href, anchor] of html.matchAll(/href="([^"#:]*documents\/[^"#]+\.html)#([^"]+)"/g)) {
    const target = join(site, dirname(file), href!);
    if (!existsSync(target) || !readFileSync(target, 'utf8').includes(`id="${anchor}"`)) broken.push(`docs-html/${file} → ${href}#${anchor}`);
  }
}
if (broken.length > 0) fail(`links to missing sections:\n  ${[...new Set(broken)].join('\n  ')}`);

if (!process.exitCode) step('ok');
