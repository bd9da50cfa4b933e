/**
 * A web shop for a game server: the storefront page server owners build by hand today,
 * in one file of `node:http`, no framework.
 *
 * - The API key stays on this server; the browser never sees it.
 * - The catalog is shown by category, with sale prices and a "free" badge.
 * - The cart lives in a cookie (product id and quantity per line).
 * - Checkout shows every outcome in plain words and sends the player to the payment page.
 * - After a checkout it sends the delivery side a checkout hint (#47): the game's loop then
 *   claims for the player once per window while they pay, so the purchase is in their hands
 *   about 10 s after payment. Through a running `teamgames bridge` (`TEAMGAMES_BRIDGE_URL`,
 *   `TEAMGAMES_BRIDGE_TOKEN`), or `loop.expect` when the loop runs in this process.
 * - `/return` (where the player lands back) previews the claim: what waits in game.
 * - Page renders get a short timeout (`client.withOptions`): a page never hangs for the
 *   client's default 15 s per attempt.
 *
 * Run it against the mock:
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a npx tsx examples/web-shop/server.ts
 *   # open http://127.0.0.1:3000
 *
 * Settings (environment): TEAMGAMES_API_KEY (raw key), TEAMGAMES_BASE_URL, PORT (3000),
 * SHOP_NAME, SHOP_CATEGORIES ("1:Weapons,2:Ranks,3:Supplies": the API lists products by
 * category id but has no names for categories, so the shop names them), TEAMGAMES_BRIDGE_URL
 * and TEAMGAMES_BRIDGE_TOKEN (the checkout hint to a bridge; without them, none is sent).
 *
 * `examples/web-shop/e2e.ts` buys through it in a headless browser.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { InvalidInputError, StorefrontClient, isStorefrontError, type CartItem, type CheckoutHint, type ClaimResult, type Product } from 'teamgames-sdk';

/** A category the shop shows, by the id products are filed under on the dashboard. */
export interface ShopCategory {
  id: number;
  name: string;
}

export interface ShopOptions {
  client: StorefrontClient;
  shopName?: string;
  categories?: ShopCategory[];
  /**
   * Tells the delivery side that a player just checked out: `loop.expect` when the delivery
   * loop runs in this process, {@link bridgeHint} for a bridge. Best effort: a hint that
   * fails only leaves the purchase to the routine polls, so it never fails the checkout.
   */
  hint?: (player: string, hint: CheckoutHint) => unknown;
}

/**
 * The checkout hint through a running `teamgames bridge`: `POST /v1/expect` with its token,
 * at most 2 s; a refusal (429 `HINTS_FULL`, 409 `HINT_EXPIRED`) or a bridge that is down is
 * logged, and the purchase comes with the routine polls.
 */
// #region bridge-hint
export function bridgeHint(url: string, token: string): (player: string, hint: CheckoutHint) => Promise<void> {
  return async (player, hint) => {
    const response = await fetch(new URL('/v1/expect', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ player, ...hint }),
      signal: AbortSignal.timeout(2_000),
    });
    if (!response.ok) console.error(`web-shop: the bridge did not take the checkout hint (${response.status} ${await response.text()})`);
  };
}
// #endregion bridge-hint

// ------------------------------------------------------------------ cart and cookies

const MAX_LINES = 20;

/** The cart cookie: `101:1,302:2`. Anything unreadable is dropped, never trusted. */
export function readCart(value: string | undefined): CartItem[] {
  const lines = new Map<number, number>();
  for (const part of (value ?? '').split(',')) {
    const match = /^(\d{1,9}):(\d{1,4})$/.exec(part.trim());
    if (match) lines.set(Number(match[1]), Math.min(9_999, (lines.get(Number(match[1])) ?? 0) + Number(match[2])));
  }
  return [...lines].filter(([id, q]) => id > 0 && q > 0).slice(0, MAX_LINES).map(([id, quantity]) => ({ id, quantity }));
}

const writeCart = (cart: readonly CartItem[]) => cart.map((l) => `${l.id}:${l.quantity}`).join(',');

function cookies(req: IncomingMessage): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) jar[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim());
  }
  return jar;
}

const cookie = (name: string, value: string) =>
  `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax${value === '' ? '; Max-Age=0' : '; Max-Age=2592000'}`;

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 10_000) break;
  }
  return new URLSearchParams(body);
}

// ------------------------------------------------------------------ HTML

const esc = (text: unknown) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
const money = (n: number) => `$${n.toFixed(2)}`;

const CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,sans-serif;background:#f4f1ea;color:#222}
header{background:#2d2a4a;color:#fff;padding:14px 28px;display:flex;justify-content:space-between;align-items:center}
header h1{margin:0;font-size:22px}header a{color:#ffd866}
main{display:grid;grid-template-columns:1fr 320px;gap:24px;padding:20px 28px;max-width:1180px;margin:auto}
h2{margin:18px 0 10px;font-size:18px;border-bottom:2px solid #d9d2c3;padding-bottom:4px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:12px}
.card{background:#fff;border-radius:10px;padding:12px;box-shadow:0 1px 3px #0002;display:flex;flex-direction:column;gap:6px;position:relative}
.card h3{margin:0;font-size:15px}.card p{margin:0;color:#666;font-size:13px;flex:1}
.tile{height:54px;border-radius:8px;background:linear-gradient(135deg,#5b4fc7,#b07ee8);color:#fff;font-size:26px;font-weight:700;display:flex;align-items:center;justify-content:center}
.price{font-weight:700;font-size:16px}.price s{color:#999;font-weight:400;font-size:13px;margin-right:6px}
.badge{position:absolute;top:8px;right:8px;border-radius:12px;padding:1px 9px;font-size:12px;font-weight:700;color:#fff}
.free{background:#1f9d55}.sale{background:#d64545}
button{background:#2d2a4a;color:#fff;border:0;border-radius:6px;padding:7px 12px;font:inherit;cursor:pointer}
button.link{background:none;color:#a33;padding:0 4px}
aside{background:#fff;border-radius:10px;padding:14px 16px;box-shadow:0 1px 3px #0002;align-self:start;position:sticky;top:16px}
aside h2{margin-top:0}aside table{width:100%;border-collapse:collapse}aside td{padding:3px 0}aside td.n{text-align:right}
input{width:100%;padding:7px;border:1px solid #ccc;border-radius:6px;font:inherit;margin:3px 0 9px}
.total{font-weight:700;border-top:1px solid #ddd}.note{color:#666;font-size:12px}
.box{background:#fff;border-radius:10px;padding:20px 24px;max-width:640px;margin:30px auto;box-shadow:0 1px 3px #0002}
.ok{border-left:5px solid #1f9d55}.warn{border-left:5px solid #d68b00}.bad{border-left:5px solid #d64545}
`;

function layout(shopName: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${esc(shopName)}</title><style>${CSS}</style></head><body>
<header><h1>${esc(shopName)}</h1><a href="/return">Paid already? See what waits in game</a></header>${body}</body></html>`;
}

function messagePage(shopName: string, tone: 'ok' | 'warn' | 'bad', title: string, text: string, extra = ''): string {
  return layout(shopName, `<div class="box ${tone}"><h2>${esc(title)}</h2><p>${esc(text)}</p>${extra}<p><a href="/">Back to the shop</a></p></div>`);
}

function productCard(p: Product): string {
  const onSale = p.priceWithSale > 0 && p.priceWithSale < p.priceOriginal;
  const badge = p.priceWithSale === 0 ? '<span class="badge free">FREE</span>' : onSale ? `<span class="badge sale">-${Math.round((1 - p.priceWithSale / p.priceOriginal) * 100)}%</span>` : '';
  const price = p.priceWithSale === 0 ? 'Free' : onSale ? `<s>${money(p.priceOriginal)}</s>${money(p.priceWithSale)}` : money(p.priceWithSale);
  const units = p.quantity > 1 ? ` <span class="note">(${p.quantity.toLocaleString('en-US')} per unit)</span>` : '';
  return `<div class="card" data-product="${p.id}">${badge}<div class="tile">${esc(p.name.charAt(0))}</div>
<h3>${esc(p.name)}${units}</h3><p>${esc(p.description)}</p><div class="price">${price}</div>
<form method="post" action="/cart/add"><input type="hidden" name="id" value="${p.id}"><button>Add to cart</button></form></div>`;
}

// ------------------------------------------------------------------ pages

/** Creates the shop's HTTP server (not listening yet). */
export function createShop(options: ShopOptions): Server {
  const { client, hint } = options;
  // #region pages
  // What a page shows is read through a derived client: 3 s per attempt and one retry,
  // so a slow service costs a page at most about 6 s instead of 46 s. It shares the
  // catalog cache and the claim guard with `client`, which the checkout still uses.
  const forPages = client.withOptions({ timeoutMs: 3_000, retry: 1 });
  // #endregion pages
  const shopName = options.shopName ?? 'Game Store';
  const categories = options.categories ?? [];

  async function sections(): Promise<Array<{ name: string; products: readonly Product[] }>> {
    // One cached catalog request per category (the client caches each for 60 s).
    const [all, ...byCategory] = await Promise.all([forPages.getCatalog(), ...categories.map((c) => forPages.getCatalog({ categoryId: c.id }))]);
    const seen = new Set<number>();
    const result = categories.map((c, i) => {
      const products = byCategory[i]?.products ?? [];
      for (const p of products) seen.add(p.id);
      return { name: c.name, products };
    });
    const other = all.products.filter((p) => !seen.has(p.id));
    if (other.length > 0) result.push({ name: categories.length > 0 ? 'More' : 'Products', products: other });
    return result.filter((s) => s.products.length > 0);
  }

  async function home(req: IncomingMessage): Promise<string> {
    const jar = cookies(req);
    const cart = readCart(jar['cart']);
    const shelves = await sections();
    const byId = new Map(shelves.flatMap((s) => s.products).map((p) => [p.id, p]));
    let total = 0;
    const rows = cart.map((line) => {
      const p = byId.get(line.id);
      if (p === undefined) return `<tr><td colspan="2">Item #${line.id} (no longer listed)</td><td></td></tr>`;
      total += p.priceWithSale * line.quantity;
      return `<tr><td>${line.quantity} × ${esc(p.name)}</td><td class="n">${p.priceWithSale === 0 ? 'Free' : money(p.priceWithSale * line.quantity)}</td>
<td><form method="post" action="/cart/remove"><input type="hidden" name="id" value="${line.id}"><button class="link" title="Remove">✕</button></form></td></tr>`;
    });
    const cartHtml =
      cart.length === 0
        ? '<p class="note">Your cart is empty.</p>'
        : `<table>${rows.join('')}<tr class="total"><td>Total</td><td class="n">${money(total)}</td><td></td></tr></table>
<form method="post" action="/checkout"><label>In-game name<input name="username" required maxlength="64" value="${esc(jar['player'] ?? '')}" placeholder="Player123"></label>
<label>Coupon (optional)<input name="coupon" maxlength="40"></label><button>Checkout</button></form>
<p class="note">Your items are delivered in game: log in and type <b>::claim</b> after paying.</p>`;
    const main = shelves.map((s) => `<section><h2>${esc(s.name)}</h2><div class="grid">${s.products.map(productCard).join('')}</div></section>`).join('');
    return layout(shopName, `<main><div>${main}</div><aside><h2>Your cart</h2>${cartHtml}</aside></main>`);
  }

  /** Sends the checkout hint without waiting for it: the player is redirected to pay at once. */
  function sendHint(player: string, transactionId: string): void {
    if (hint === undefined) return;
    void Promise.resolve()
      .then(() => hint(player, { transactionId }))
      .catch((error: unknown) => console.error(`web-shop: checkout hint not sent: ${error instanceof Error ? error.message : String(error)}`));
  }

  async function checkout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const fields = await form(req);
    const jar = cookies(req);
    const cart = readCart(jar['cart']);
    const username = (fields.get('username') ?? '').trim();
    const coupon = (fields.get('coupon') ?? '').trim();
    const send = (status: number, tone: 'ok' | 'warn' | 'bad', title: string, text: string, extra?: string) =>
      html(res, status, messagePage(shopName, tone, title, text, extra), [cookie('player', username)]);
    if (cart.length === 0) return send(400, 'warn', 'Your cart is empty', 'Add something to your cart first.');
    if (username === '') return send(400, 'warn', 'Who is it for?', 'Enter your in-game name, exactly as you log in (letter case matters).');

    try {
      const result = await client.checkout({ username, items: cart, ...(coupon === '' ? {} : { coupon }) });
      // #region hint
      // The player is about to pay (or, free, has nothing to pay): the game's loop claims for them meanwhile.
      if (result.outcome === 'PAYMENT_REQUIRED' || result.outcome === 'FREE') sendHint(username, result.transactionId);
      // #endregion hint
      switch (result.outcome) {
        case 'PAYMENT_REQUIRED':
          // Remember the order for /return, empty the cart, and send the player to pay.
          res.writeHead(303, { location: result.redirect, 'set-cookie': [cookie('cart', ''), cookie('player', username), cookie('tx', result.transactionId)] });
          res.end();
          return;
        case 'FREE':
          res.setHeader('set-cookie', [cookie('cart', ''), cookie('tx', result.transactionId)]);
          return send(200, 'ok', 'It is free!', `Nothing to pay. Log in as ${username} and type ::claim to receive your items.`, '<p><a href="/return">See what waits in game</a></p>');
        case 'INVALID_STOCK': {
          const names = result.productsAffected
            .map((p) => (typeof p === 'object' && p !== null ? ((p as { name?: unknown }).name ?? `item #${String((p as { id?: unknown }).id)}`) : ''))
            .filter((n) => n !== '');
          client.clearCatalogCache(); // the cache forPages reads too
          return send(409, 'warn', 'Some items are not available', `${names.length > 0 ? `${names.join(', ')}: ` : ''}no longer available or not enough in stock. Please change your cart and try again.`);
        }
        case 'COUPON_REJECTED':
          return send(400, 'warn', 'Coupon not accepted', `${result.error} Remove the coupon or try another one.`);
        case 'BASKET_REJECTED':
          return send(400, 'warn', 'This cart is too large for one payment', `${result.message ?? ''} Split it into smaller orders.`.trim());
        case 'GATEWAY_ERROR':
          return send(503, 'bad', 'Payment not possible', `${result.message} If this looks wrong, tell the server staff.`);
        case 'UNKNOWN':
          // A status this SDK version does not know: nothing to pay was offered. Log it for the owner.
          console.error(`web-shop: checkout answered ${result.status} (${result.code || 'no code'}): ${result.message}`);
          return send(503, 'bad', 'Checkout not possible', 'The store could not take this order. Nothing was charged; please tell the server staff.');
      }
    } catch (error) {
      if (error instanceof InvalidInputError) return send(400, 'warn', 'Please check your order', `${error.argument}: ${error.rule}.`);
      // Wrong key, service down …: the player cannot fix it. Log it for the owner (never the key: the SDK keeps it out).
      console.error(`web-shop: checkout failed: ${isStorefrontError(error) ? error.message : String(error)}`);
      return send(503, 'bad', 'The store is unavailable', 'Nothing was charged. Please try again in a few minutes.');
    }
  }

  async function returned(req: IncomingMessage, url: URL): Promise<string> {
    const jar = cookies(req);
    const player = (url.searchParams.get('player') ?? jar['player'] ?? '').trim();
    const tx = url.searchParams.get('tx') ?? jar['tx'] ?? '';
    const order = tx === '' ? '' : `<p class="note">Order ${esc(tx)}</p>`;
    if (player === '') {
      return messagePage(shopName, 'warn', 'Who are you?', 'Enter your in-game name to see what waits for you.', '<form method="get" action="/return"><input name="player" required maxlength="64"><button>Show</button></form>');
    }
    // A preview lists what a claim would deliver and changes nothing. It does count toward
    // the service's one-claim-per-10-s window for this player, hence the "few seconds".
    let result: ClaimResult;
    try {
      result = await forPages.previewClaim(player);
    } catch (error) {
      console.error(`web-shop: preview failed: ${isStorefrontError(error) ? error.message : String(error)}`);
      return messagePage(shopName, 'bad', 'The store is unavailable', 'We could not check your purchases. Your payment is safe; try again in a few minutes.');
    }
    switch (result.code) {
      case 'PREVIEW': {
        const items = result.claims.map((t) => `<li><b>${esc(t.product_name)}</b> × ${t.quantity_to_grant.toLocaleString('en-US')}</li>`).join('');
        return messagePage(shopName, 'ok', `Thank you, ${player}!`, 'Waiting for you in game:', `<ul>${items}</ul>${order}<p>Log in and type <b>::claim</b> in a few seconds to receive them.</p>`);
      }
      case 'NO_ITEMS':
        return messagePage(shopName, 'warn', 'Nothing waits yet', `No paid purchase for ${player} yet. If you just paid, the payment may still be processing: refresh this page in a minute.`, order);
      case 'ALREADY_CLAIMED':
        return messagePage(shopName, 'ok', 'All delivered', `Everything ${player} bought has already been delivered in game.`, order);
      case 'RATE_LIMIT':
        return messagePage(shopName, 'warn', 'Just a moment', `Checked a moment ago. Refresh in ${Math.ceil(result.retryAfterMs / 1000)} seconds.`, order);
      default:
        return messagePage(shopName, 'bad', 'Please contact staff', `${result.message} (${result.code})`, order);
    }
  }

  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop.invalid');
    const route = `${req.method} ${url.pathname}`;
    const run = async () => {
      if (route === 'GET /') return html(res, 200, await home(req));
      if (route === 'GET /return') return html(res, 200, await returned(req, url));
      if (route === 'POST /checkout') return checkout(req, res);
      if (route === 'POST /cart/add' || route === 'POST /cart/remove') {
        const id = Number((await form(req)).get('id'));
        let cart = readCart(cookies(req)['cart']);
        if (Number.isInteger(id) && id > 0) {
          cart = route === 'POST /cart/add' ? readCart(`${writeCart(cart)},${id}:1`) : cart.filter((l) => l.id !== id);
        }
        res.writeHead(303, { location: '/', 'set-cookie': cookie('cart', writeCart(cart)) });
        res.end();
        return;
      }
      html(res, 404, messagePage(shopName, 'warn', 'Not found', 'This page does not exist.'));
    };
    run().catch((error: unknown) => {
      console.error(`web-shop: ${route} failed: ${isStorefrontError(error) ? error.message : String(error)}`);
      if (!res.headersSent) html(res, 503, messagePage(shopName, 'bad', 'The store is unavailable', 'Please try again in a few minutes.'));
    });
  });
}

function html(res: ServerResponse, status: number, body: string, setCookies: string[] = []): void {
  const previous = res.getHeader('set-cookie');
  const all = [...(Array.isArray(previous) ? previous : []), ...setCookies];
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...(all.length > 0 ? { 'set-cookie': all } : {}) });
  res.end(body);
}

/** Parses `SHOP_CATEGORIES`, e.g. `1:Weapons,2:Ranks`. */
export function parseCategories(text: string): ShopCategory[] {
  return text
    .split(',')
    .map((part) => /^\s*(\d+)\s*:\s*(.+?)\s*$/.exec(part))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: Number(m[1]), name: m[2] ?? '' }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const shop = createShop({
    client: new StorefrontClient(), // TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL
    ...(process.env['TEAMGAMES_BRIDGE_URL'] && process.env['TEAMGAMES_BRIDGE_TOKEN'] ? { hint: bridgeHint(process.env['TEAMGAMES_BRIDGE_URL'], process.env['TEAMGAMES_BRIDGE_TOKEN']) } : {}),
    shopName: process.env['SHOP_NAME'] ?? 'Demo RSPS Store',
    categories: parseCategories(process.env['SHOP_CATEGORIES'] ?? '1:Weapons,2:Ranks,3:Supplies'),
  });
  const port = Number(process.env['PORT'] ?? 3000);
  shop.listen(port, '127.0.0.1', () => {
    const address = shop.address();
    console.log(`Web shop on http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`);
  });
}
