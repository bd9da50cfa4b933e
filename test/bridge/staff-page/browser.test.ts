/**
 * The staff page in a real browser: Debian's Chromium driven by playwright-core, with
 * JavaScript off (the page needs none). Log in, find a player, see a window, resolve it,
 * see it resolved; a second staff member resolving the same window learns the winner's
 * name; a read-only account cannot resolve; a resolve forged from another site, or sent
 * without the form's token, is refused; a hostile player name and note show as text; the
 * page fits a phone. Saves the screenshot of the bridge guide to docs/images/staff-page.png
 * when UPDATE_DOCS_IMAGES=1.
 *
 * Skipped, saying why, where Chromium is not installed (CHROMIUM names another binary);
 * with CI=true it fails instead.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORDS, closePages, lineEntry, startPage, windowEntry, NOW } from './harness.js';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const CI = process.env['CI'] === 'true';
const available = existsSync(CHROMIUM);
/** Skipped (saying what to install) where Chromium is missing; failed instead on CI. */
function needs(found: boolean) {
  if (found) return { it, why: '' };
  if (CI) return { it, why: ` (Chromium not found at ${CHROMIUM}, and CI=true may not skip it: apt-get install chromium)` };
  return { it: it.skip, why: ` (skipped: Chromium not found at ${CHROMIUM}; Debian: apt-get install chromium)` };
}
const browserTest = needs(available);
const why = browserTest.why;
const EVIL = '<img src=x onerror=alert(1)>Bad\u200bName';
const HOUR = 3_600_000;

let browser: Browser | undefined;
beforeAll(async () => {
  if (!available) return;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(closePages);

async function staffPage() {
  const page = await startPage(
    [
      windowEntry('steve-1', 'Steve_Miner', { cause: 'unknownCommand', command: 'give Steve_Miner diamond 64', from: NOW - 90_000, to: NOW - 60_000 }),
      windowEntry('steve-vote', 'Steve_Miner', { cause: 'lostVote', reward: '12', points: 30 }),
      lineEntry('s', 'Steve_Miner', 'VIP rank (30 days)', 1, { lastError: { message: 'webhook answered 503', at: NOW - 600_000, attempts: 5, stuck: true } }),
      windowEntry('evil', EVIL),
      windowEntry('other', 'steve'),
    ],
    { online: () => ['Steve_Miner'] },
  );
  // A day of the chart, and the last gives.
  for (let i = 0; i <= 24; i++) page.desk.samples.push({ at: NOW - (24 - i) * HOUR, pending: Math.round(3 + 3 * Math.sin(i / 3)), openWindows: i > 18 ? 3 : 1 });
  page.desk.recent.push({ kind: 'purchase', player: 'Steve_Miner', deliveryId: 'invoice:1043', what: 'Dragon claws', units: 1, outcome: 'given', at: NOW - 70_000 });
  page.desk.recent.push({ kind: 'vote', player: 'Steve_Miner', deliveryId: 'vote:9:0', what: 'Mystery box', units: 5, outcome: 'given', at: NOW - 30_000 });
  return page;
}

async function loggedIn(url: string, name: keyof typeof PASSWORDS, viewport = { width: 900, height: 900 }) {
  expect(browser, `Chromium at ${CHROMIUM}`).toBeDefined();
  const context = await (browser as Browser).newContext({ javaScriptEnabled: false, viewport });
  const tab = await context.newPage();
  let dialogs = 0;
  tab.on('dialog', (d) => {
    dialogs += 1;
    void d.dismiss();
  });
  await tab.goto(`${url}/`);
  expect(new URL(tab.url()).pathname).toBe('/login');
  await tab.getByLabel('Name').fill(name);
  await tab.getByLabel('Password').fill(PASSWORDS[name]);
  await tab.getByRole('button', { name: 'Log in' }).click();
  await tab.waitForURL(`${url}/`);
  return { context, tab, dialogs: () => dialogs };
}

describe('the staff page in Chromium', () => {
  browserTest.it(`log in, find a player, see a window, resolve it, see it resolved; a second resolve gets the winner's name${why}`, { timeout: 60_000 }, async () => {
    const page = await staffPage();
    const alice = await loggedIn(page.url, 'alice');
    const bob = await loggedIn(page.url, 'bob');

    await alice.tab.getByLabel('Find a player').fill('STEVE');
    await alice.tab.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => alice.tab.locator('ul.players a').allTextContents()).toEqual(['steve', 'Steve_Miner']);
    await alice.tab.getByRole('link', { name: 'Steve_Miner' }).first().click();
    await alice.tab.waitForURL(/\/player\?name=Steve_Miner$/);
    const card = alice.tab.locator('article', { hasText: 'window:steve-1' });
    expect(await card.locator('dd pre').textContent()).toBe('give Steve_Miner diamond 64');
    expect(await alice.tab.locator('article', { hasText: 'window:steve-vote' }).locator('dd').allTextContents()).toContain('30');
    if (process.env['UPDATE_DOCS_IMAGES'] === '1') await alice.tab.screenshot({ path: 'docs/images/staff-page.png' });

    // Bob opens the same player before Alice resolves: his form is ready too.
    await bob.tab.goto(`${page.url}/player?name=Steve_Miner`);

    await card.getByLabel('What you found and did').fill('checked the game log: the command ran; nothing missing');
    await card.getByRole('button', { name: 'Resolve as alice' }).click();
    await alice.tab.waitForURL(/resolved=window%3Asteve-1$/);
    const resolved = alice.tab.locator('article.resolved', { hasText: 'window:steve-1' });
    expect(await resolved.locator('.by').textContent()).toBe('alice');
    expect(await resolved.locator('.note').textContent()).toBe('checked the game log: the command ran; nothing missing');
    expect(await alice.tab.locator('article.unverified').count()).toBe(1);

    const bobCard = bob.tab.locator('article', { hasText: 'window:steve-1' });
    await bobCard.getByLabel('What you found and did').fill('gave it by hand');
    await bobCard.getByRole('button', { name: 'Resolve as bob' }).click();
    await expect.poll(() => bob.tab.getByRole('alert').textContent()).toMatch(/^Already resolved by alice at .+ \(note: checked the game log: the command ran; nothing missing\)\. Nothing was written/);
    expect((await page.journal.pending('Steve_Miner')).find((e) => e.deliveryId === 'window:steve-1')).toMatchObject({ resolution: { by: 'alice' } });
    await alice.context.close();
    await bob.context.close();
  });

  browserTest.it(`a read-only account cannot resolve; a resolve forged from another site or without the token is refused${why}`, { timeout: 60_000 }, async () => {
    const page = await staffPage();
    const rita = await loggedIn(page.url, 'rita');
    await rita.tab.goto(`${page.url}/player?name=Steve_Miner`);
    expect(await rita.tab.locator('form[action="/resolve"]').count()).toBe(0);
    expect(await rita.tab.getByText('Your account is read-only').count()).toBe(2);
    const csrf = await rita.tab.locator('input[name="csrf"]').first().getAttribute('value');
    const ritaTry = await rita.context.request.post(`${page.url}/resolve`, { form: { csrf: csrf as string, window: 'window:steve-1', player: 'Steve_Miner', note: 'read-only try' }, maxRedirects: 0 });
    expect(ritaTry.status()).toBe(403);

    const alice = await loggedIn(page.url, 'alice');
    // The browser sends alice's cookie with this request, but no token: refused.
    const noToken = await alice.context.request.post(`${page.url}/resolve`, { form: { window: 'window:steve-1', player: 'Steve_Miner', note: 'forged' }, maxRedirects: 0 });
    expect(noToken.status()).toBe(403);
    // A page of another site that posts the form: refused as such (the browser says where it
    // comes from), and SameSite=Strict keeps the cookie home anyway.
    const attacker: Server = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${page.url}/resolve"><input name="window" value="window:steve-1"><input name="player" value="Steve_Miner"><input name="note" value="forged"><button>Win a prize</button></form>`);
    });
    await new Promise<void>((ok) => attacker.listen(0, '127.0.0.1', ok));
    try {
      await alice.tab.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      await alice.tab.getByRole('button', { name: 'Win a prize' }).click();
      await alice.tab.waitForURL(`${page.url}/resolve`);
      expect(await alice.tab.locator('h1').textContent()).toBe('Refused: sent from another site');
    } finally {
      attacker.closeAllConnections();
      await new Promise((ok) => attacker.close(ok));
    }
    expect((await page.journal.pending('Steve_Miner')).filter((e) => e.state === 'resolved')).toEqual([]);
    await rita.context.close();
    await alice.context.close();
  });

  browserTest.it(`shows a hostile player name and note as text, and fits a phone${why}`, { timeout: 60_000 }, async () => {
    const page = await staffPage();
    const alice = await loggedIn(page.url, 'alice', { width: 390, height: 844 });
    await alice.tab.getByLabel('Find a player').fill('<img');
    await alice.tab.getByRole('button', { name: 'Search' }).click();
    await alice.tab.locator('ul.players a').click();
    const card = alice.tab.locator('article', { hasText: 'window:evil' });
    await card.getByLabel('What you found and did').fill('<script>alert(2)</script> \u200b ok');
    await card.getByRole('button', { name: 'Resolve as alice' }).click();
    await alice.tab.waitForURL(/resolved=/);
    expect(await alice.tab.locator('h1.player').textContent()).toBe('<img src=x onerror=alert(1)>Bad\\u200bName');
    expect(await alice.tab.locator('.note').textContent()).toBe('<script>alert(2)</script> \\u200b ok');
    expect(await alice.tab.locator('main img, main script').count()).toBe(0);
    expect(alice.dialogs()).toBe(0);
    // Nothing wider than the phone: no sideways scrolling.
    expect(await alice.tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await alice.context.close();
  });
});
