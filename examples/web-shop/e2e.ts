/**
 * End-to-end test of the web shop in a real headless browser (Debian's `chromium`,
 * driven by playwright-core): browse, fill a cart, hit a rejected coupon and an
 * out-of-stock line, pay on the mock's pay page (the shop having sent the checkout hint),
 * come back and see what waits in game.
 * Saves a screenshot to docs/images/web-shop.png.
 *
 * Not a vitest file (`npm test` never needs a browser). Run it:
 *
 *   npx tsx examples/web-shop/e2e.ts          # scripts/run-examples.sh runs it too
 *
 * It starts its own mock (the example store) and shop on free ports; CHROMIUM overrides
 * the browser path (default /usr/bin/chromium).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { StorefrontClient, type CheckoutHint } from 'teamgames-sdk';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
import { createShop } from './server.js';

const KEY = exampleSeed.servers[0]!.apiKey;
const PLAYER = 'ShopTester';
const SCREENSHOT = fileURLToPath(new URL('../../docs/images/web-shop.png', import.meta.url));

const mock = createMockService({ seed: exampleSeed });
const sandbox = await mock.listen({ port: 0 });
/** The checkout hints the shop sent (a game's loop would get them: `loop.expect`). */
const hints: Array<{ player: string; hint: CheckoutHint }> = [];
const shop = createShop({
  client: new StorefrontClient({ apiKey: KEY, baseUrl: sandbox.url }),
  hint: (player, hint) => void hints.push({ player, hint }),
  shopName: 'Demo RSPS Store',
  categories: [
    { id: 1, name: 'Weapons' },
    { id: 2, name: 'Ranks' },
    { id: 3, name: 'Supplies' },
  ],
});
await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
const SHOP = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;

const browser = await chromium.launch({
  executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});

/** Every page the browser sees: never the key, never its Base64. */
async function checkNoSecret(page: Page): Promise<void> {
  const html = await page.content();
  assert.ok(!html.includes(KEY) && !html.includes(Buffer.from(KEY).toString('base64')), `the key leaked into ${page.url()}`);
}

async function addToCart(page: Page, productId: number): Promise<void> {
  await page.locator(`[data-product="${productId}"] button`).click();
  await page.waitForURL(`${SHOP}/`);
}

const step = (text: string) => console.log(`e2e: ${text}`);

try {
  const page = await browser.newPage({ viewport: { width: 1180, height: 900 } });

  step('catalog by category, with sale prices and the free badge');
  await page.goto(SHOP);
  assert.deepEqual(await page.locator('main section h2').allTextContents(), ['Weapons', 'Ranks', 'Supplies']);
  const godsword = page.locator('[data-product="102"]');
  assert.equal(await godsword.locator('.badge').textContent(), '-20%');
  assert.equal(await godsword.locator('.price').textContent(), '$24.99$19.99');
  assert.equal(await page.locator('[data-product="303"] .badge').textContent(), 'FREE');
  assert.equal(await page.locator('[data-product="304"]').count(), 0, 'a disabled product is not listed');
  await checkNoSecret(page);

  step('fill the cart');
  await addToCart(page, 102);
  await addToCart(page, 302);
  await addToCart(page, 302);
  await addToCart(page, 303);
  const cartText = await page.locator('aside').textContent();
  assert.match(cartText ?? '', /1 × Armadyl godsword\$19\.99/);
  assert.match(cartText ?? '', /2 × Shark pack\$3\.98/);
  assert.match(cartText ?? '', /Total\$23\.97/);
  await page.fill('input[name=username]', PLAYER);
  await page.screenshot({ path: SCREENSHOT });
  step(`screenshot saved to ${SCREENSHOT}`);

  step('an expired coupon is refused in plain words');
  await page.fill('input[name=coupon]', 'WINTER2024');
  await page.click('aside button:has-text("Checkout")');
  assert.equal(await page.locator('.box h2').textContent(), 'Coupon not accepted');
  assert.match((await page.locator('.box p').first().textContent()) ?? '', /The coupon code "WINTER2024" has expired\./);
  await page.click('text=Back to the shop');

  step('pay through the mock pay page, then come back');
  await page.fill('input[name=coupon]', '');
  await page.click('aside button:has-text("Checkout")');
  await page.waitForURL(/\/__mock\/pay\//);
  assert.equal(await page.locator('h1').textContent(), 'Payment complete');
  assert.match((await page.locator('p').first().textContent()) ?? '', /Paid 23\.97 for 4 items\. ShopTester can now claim/);
  const rows = mock.purchases(KEY, PLAYER);
  assert.deepEqual(rows.map((r) => `${r.productname}:${r.paymentstatus}/${r.deliverystatus}`), [
    'Armadyl godsword:Paid/Undelivered',
    'Shark pack:Paid/Undelivered',
    'Starter pack:Paid/Undelivered',
  ]);
  step('the shop told the delivery side about the checkout before the payment');
  assert.deepEqual(hints, [{ player: PLAYER, hint: { transactionId: rows[0]!.transactionid } }]);

  await page.goto(`${SHOP}/return`);
  assert.equal(await page.locator('.box h2').textContent(), `Thank you, ${PLAYER}!`);
  assert.deepEqual(await page.locator('.box li').allTextContents(), ['Armadyl godsword × 1', 'Shark pack × 200', 'Starter pack × 1']);
  assert.match((await page.locator('.box').textContent()) ?? '', /type ::claim/);
  assert.match((await page.locator('.box').textContent()) ?? '', new RegExp(`Order ${rows[0]!.transactionid}`));
  assert.equal(await page.locator('aside').count(), 0);
  await checkNoSecret(page);

  step('the cart is empty again; more Dragon claws than in stock');
  await page.goto(SHOP);
  assert.match((await page.locator('aside').textContent()) ?? '', /Your cart is empty/);
  for (let i = 0; i < 3; i += 1) await addToCart(page, 103);
  await page.click('aside button:has-text("Checkout")');
  assert.equal(await page.locator('.box h2').textContent(), 'Some items are not available');
  assert.match((await page.locator('.box p').first().textContent()) ?? '', /Dragon claws: no longer available or not enough in stock/);

  step('a free cart needs no payment');
  await page.goto(SHOP);
  await page.locator('aside button[title=Remove]').click();
  await addToCart(page, 303);
  await page.fill('input[name=username]', 'NewPlayer');
  await page.click('aside button:has-text("Checkout")');
  assert.equal(await page.locator('.box h2').textContent(), 'It is free!');
  assert.match((await page.locator('.box p').first().textContent()) ?? '', /Log in as NewPlayer and type ::claim/);
  assert.deepEqual(hints.map((h) => h.player), [PLAYER, 'NewPlayer']);
  await checkNoSecret(page);

  step('passed');
} finally {
  await browser.close();
  await new Promise<void>((resolve) => shop.close(() => resolve()));
  shop.closeAllConnections();
  await sandbox.close();
}
