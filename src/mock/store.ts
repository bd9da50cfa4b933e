// The client's encoder is a leaf module (no client code comes with it); the wire tests pin
// its output against an independently computed Base64.
import { encodeApiKey as encodeKey } from '../auth.js';
import { presentedKey, type CredentialScheme } from './auth.js';
import type { MockClock } from './clock.js';
import { MockAdminError } from './errors.js';
import {
  type MockProductPatch,
  type MockSeed,
  type MockSeedCategory,
  type MockSeedCoupon,
  type MockSeedProduct,
  type MockSeedReward,
  type MockSeedSale,
  describeIssues,
  productPatchSchema,
  productSchema,
} from './seed.js';
import { TEXT } from './texts.js';
import type {
  AddPurchaseInput,
  CheckoutLine,
  CheckoutRecord,
  MockServerState,
  MockStateSnapshot,
  PurchaseRow,
  VoteRecord,
} from './types.js';
import {
  type WireRequest,
  type WireResponse,
  badRequest,
  cartItemsSchema,
  catalogBodySchema,
  checkoutBodySchema,
  claimV3BodySchema,
  claimV4BodySchema,
  decodeBody,
  readFields,
  voteBodySchema,
} from './wire.js';

/** One accepted claim per player per game server in this many milliseconds. */
export const CLAIM_WINDOW_MS = 10_000;

/** Longest valid player name, in characters (code points). */
export const MAX_PLAYER_NAME_LENGTH = 64;

/** Where a checkout's `redirect` points, under the request's own origin. */
export const PAY_PAGE_PATH = '/__mock/pay/';

interface ServerState {
  apiKey: string;
  name: string;
  gateway: MockServerState['gateway'];
  coupons: MockSeedCoupon[];
  categories: MockSeedCategory[];
  products: Map<number, MockSeedProduct>;
  rewards: Map<number, MockSeedReward>;
  purchases: PurchaseRow[];
  votes: Map<string, VoteRecord>;
  rateWindows: RateWindows;
}

interface CheckoutState extends CheckoutRecord {
  server: ServerState;
}

type ClaimOutcome =
  | { code: 'INVALID_PLAYER' | 'RATE_LIMIT' | 'NO_ITEMS' | 'ALREADY_CLAIMED' | 'PRODUCT_NOT_FOUND' }
  | { code: 'PREVIEW' | 'SUCCESS'; rows: PurchaseRow[] };

/** Rounds money to cents; the epsilon keeps 1.005 from rounding down. */
export function roundCents(amount: number): number {
  return Math.round((amount + Number.EPSILON) * 100) / 100;
}

const money = (amount: number): string => amount.toFixed(2);

/**
 * SPEC §3.2 player names: non-blank, at most 64 characters, no control characters.
 * Spaces, underscores and 17-digit Steam ids are all fine; letter case is kept.
 */
export function isValidPlayerName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.trim() !== '' &&
    [...name].length <= MAX_PLAYER_NAME_LENGTH &&
    !/\p{Cc}/u.test(name)
  );
}

/**
 * The v4 `product_id`: the merchant id as an int when it is an integer string, else 0.
 * [interpretation] SPEC §3.2; `product_id_string` always carries the merchant id.
 */
export function productIdAsInt(productId: string): number {
  if (!/^-?\d+$/.test(productId)) {
    return 0;
  }
  const value = Number(productId);
  return Number.isSafeInteger(value) ? value : 0;
}

/** Start inclusive, end exclusive. */
function insideWindow(item: { startDate?: string; endDate?: string }, now: number): boolean {
  return (
    (item.startDate === undefined || now >= Date.parse(item.startDate)) &&
    (item.endDate === undefined || now < Date.parse(item.endDate))
  );
}

function activeSales(product: MockSeedProduct, now: number): MockSeedSale[] {
  return (product.sales ?? []).filter((sale) => insideWindow(sale, now));
}

/** The price with the best active sale, never below 0, rounded to cents. */
export function priceWithSale(product: MockSeedProduct, now: number): number {
  const prices = activeSales(product, now).map((sale) =>
    sale.saleType === 'percentage'
      ? product.price * (1 - (sale.discountPercentage ?? 0) / 100)
      : product.price - (sale.discountAmount ?? 0),
  );
  return roundCents(Math.max(0, Math.min(product.price, ...prices)));
}

function isAvailable(product: MockSeedProduct, now: number): boolean {
  return product.disabled !== true && insideWindow(product, now);
}

function toTransaction(row: PurchaseRow): Record<string, unknown> {
  return {
    player_name: row.username,
    product_id: productIdAsInt(row.productid),
    product_id_string: row.productid,
    product_name: row.productname,
    // [interpretation] The unit price the player paid before any coupon.
    product_price: row.pricewithdiscount,
    quantity_to_grant: row.givequantity,
    quantity_purchased: row.quantity,
    product_amount: row.givequantity,
    amount_purchased: row.quantity,
  };
}

function toLegacyTransaction(row: PurchaseRow): Record<string, unknown> {
  return {
    player_name: row.username,
    product_id: productIdAsInt(row.productid),
    product_id_string: row.productid,
    product_amount: row.givequantity,
    amount_purchased: row.quantity,
    product_name: row.productname,
    product_price: row.pricewithdiscount,
  };
}

const json = (body: unknown, status = 200): WireResponse => ({ status, body });
const messageRows = (message: string): WireResponse => json([{ message }]);

/** One player's window in {@link RateWindows}' heap: it ends at `end` (= `at` + 10 s). */
interface WindowEnd {
  end: number;
  playerName: string;
  at: number;
}

/**
 * The claim rate windows of one game server (SPEC §3.2: one accepted call per player per
 * 10 s, counted from the last accepted call), kept only while they can refuse a claim.
 *
 * A window refuses while `now - at < 10 s` on the mock clock, which includes a clock set
 * back before `at`. It is forgotten by the first claim on the server handled at or after its
 * end (`at` + 10 s), when it refuses nothing at that time; setting the clock back
 * afterwards does not bring it back. The ends sit in a min-heap, so each claim forgets what
 * has ended in amortized O(log n), and a window ending later (the clock was set back, then
 * forward) never holds back the ones ending sooner: memory follows the claims of the last
 * 10 s of mock time, not every player ever seen.
 */
class RateWindows {
  /** Player → time of the last accepted claim; exactly the windows in `#ends`. */
  readonly #last = new Map<string, number>();
  /** Binary min-heap on `end`, one entry per window in `#last`. */
  readonly #ends: WindowEnd[] = [];

  /** Windows held in memory. */
  get size(): number {
    return this.#last.size;
  }

  /** Whether a claim of `playerName` at `now` is refused; forgets the windows ended by `now` first. */
  refuses(playerName: string, now: number): boolean {
    this.#forgetEnded(now);
    const at = this.#last.get(playerName);
    return at !== undefined && now - at < CLAIM_WINDOW_MS;
  }

  /** Opens (or restarts) the player's window at `now`: an accepted claim. */
  accept(playerName: string, now: number): void {
    this.#last.set(playerName, now);
    this.#push({ end: now + CLAIM_WINDOW_MS, playerName, at: now });
  }

  /** The windows that refuse a claim at `now`, as `[playerName, at]` in the order they were opened. Changes nothing. */
  open(now: number): Array<[string, number]> {
    return [...this.#last].filter(([, at]) => now - at < CLAIM_WINDOW_MS);
  }

  #forgetEnded(now: number): void {
    const heap = this.#ends;
    while (heap.length > 0 && (heap[0] as WindowEnd).end <= now) {
      const ended = this.#pop();
      // A window restarted since has its own, later entry; only the current one is dropped.
      if (this.#last.get(ended.playerName) === ended.at) {
        this.#last.delete(ended.playerName);
      }
    }
  }

  #push(entry: WindowEnd): void {
    const heap = this.#ends;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as WindowEnd).end <= entry.end) break;
      heap[i] = heap[parent] as WindowEnd;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): WindowEnd {
    const heap = this.#ends;
    const top = heap[0] as WindowEnd;
    const last = heap.pop() as WindowEnd;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && (heap[right] as WindowEnd).end < (heap[left] as WindowEnd).end ? right : left;
        if ((heap[child] as WindowEnd).end >= last.end) break;
        heap[i] = heap[child] as WindowEnd;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}

/**
 * The mock service's state and every rule of SPEC §3.2. Transport-free: the msw handlers
 * turn requests into {@link WireRequest}s and answer the {@link WireResponse}s, and every
 * time-dependent rule reads the injected clock.
 */
export class MockStore {
  readonly #seed: MockSeed;
  readonly #clock: MockClock;
  #servers: ServerState[] = [];
  #byKey = new Map<string, ServerState>();
  #byBase64 = new Map<string, ServerState>();
  #checkouts = new Map<string, CheckoutState>();
  #nextInvoice = 1;

  /** Builds the state from an already validated seed. */
  constructor(seed: MockSeed, clock: MockClock) {
    this.#seed = structuredClone(seed);
    this.#clock = clock;
    this.#load();
  }

  #load(): void {
    this.#servers = this.#seed.servers.map((s, index) => ({
      apiKey: s.apiKey,
      name: s.name ?? `Game server ${index + 1}`,
      gateway: {
        configured: s.gateway?.configured ?? true,
        minimumCharge: s.gateway?.minimumCharge ?? 0,
        ...(s.gateway?.maximumTotal === undefined ? {} : { maximumTotal: s.gateway.maximumTotal }),
        ...(s.gateway?.maximumItems === undefined ? {} : { maximumItems: s.gateway.maximumItems }),
      },
      coupons: structuredClone(s.coupons ?? []),
      categories: structuredClone(s.categories ?? []),
      products: new Map((s.products ?? []).map((p) => [p.id, structuredClone(p)])),
      rewards: new Map((s.rewards ?? []).map((r) => [r.id, structuredClone(r)])),
      purchases: [],
      votes: new Map(),
      rateWindows: new RateWindows(),
    }));
    this.#byKey = new Map(this.#servers.map((s) => [s.apiKey, s]));
    this.#byBase64 = new Map(this.#servers.map((s) => [encodeKey(s.apiKey), s]));
    this.#checkouts = new Map();
    this.#nextInvoice = 1;
  }

  /** Returns everything to the seed, the clock included. */
  reset(): void {
    this.#clock.reset();
    this.#load();
  }

  #now(): number {
    return this.#clock.now();
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }

  #resolve(request: WireRequest, scheme: CredentialScheme): ServerState | undefined {
    const key = presentedKey(request.header, scheme, (value) => this.#byBase64.get(value)?.apiKey);
    return key === undefined ? undefined : this.#byKey.get(key);
  }

  #serverFor(apiKey: string): ServerState {
    const server = this.#byKey.get(apiKey);
    if (server === undefined) {
      throw new MockAdminError(404, 'No game server in the seed has this API key.');
    }
    return server;
  }

  // ---------------------------------------------------------------- catalog

  /** `POST /api/v2/client/global/products`. */
  catalog(request: WireRequest): WireResponse {
    const server = this.#resolve(request, 'base64');
    if (server === undefined) {
      return json({ products: [], message: 'GAME_SERVER_NOT_FOUND', extendedMessage: TEXT.catalogServerNotFound });
    }
    // Some plugins post no body at all for "everything"; that reads as `{}`.
    const decoded = request.body.trim() === '' ? ({ ok: true, value: {} } as const) : decodeBody(request, ['json']);
    const body = readFields(catalogBodySchema, decoded);
    if (!body.ok) {
      return badRequest(body.status, body.problem);
    }
    const now = this.#now();
    const { categoryId } = body.value;
    const products = [...server.products.values()]
      .filter((p) => isAvailable(p, now))
      .filter((p) => categoryId === undefined || (p.categoryIds ?? []).includes(categoryId))
      .map((p) => this.#catalogProduct(p, now));
    return json({ message: 'SUCCESS', products });
  }

  #catalogProduct(product: MockSeedProduct, now: number): Record<string, unknown> {
    return {
      id: product.id,
      productId: product.productId,
      name: product.name,
      price: product.price,
      priceOriginal: product.price,
      priceWithSale: priceWithSale(product, now),
      quantity: product.quantity ?? 1,
      description: product.description ?? '',
      image: product.image ?? '',
      disabled: false,
      sales: activeSales(product, now).map((sale) => ({
        saleType: sale.saleType,
        discountPercentage: sale.discountPercentage ?? 0,
        discountAmount: sale.discountAmount ?? 0,
        ...(sale.startDate === undefined ? {} : { startDate: sale.startDate }),
        ...(sale.endDate === undefined ? {} : { endDate: sale.endDate }),
      })),
      // Extras beyond SPEC §2.1's list; clients keep them (passthrough).
      categoryIds: product.categoryIds ?? [],
      stock: product.stock ?? null,
    };
  }

  // ---------------------------------------------------------------- checkout

  /** `POST /api/v2/client/global/checkout/complete`, validated in SPEC §3.2's order. */
  checkout(request: WireRequest): WireResponse {
    const server = this.#resolve(request, 'base64');
    if (server === undefined) {
      return json({ status: 'UNAUTHORIZED', message: TEXT.checkoutUnauthorized }, 401);
    }

    const body = readFields(checkoutBodySchema, decodeBody(request, ['json']));
    if (!body.ok) {
      return json({ message: TEXT.checkoutUnparseable(body.problem) }, 404);
    }
    let cartJson: unknown;
    try {
      cartJson = JSON.parse(body.value.cartItems);
    } catch {
      return json({ message: TEXT.checkoutUnparseable('cartItems is not the JSON text of an array') }, 404);
    }
    const cart = cartItemsSchema.safeParse(cartJson);
    if (!cart.success) {
      return json({ message: TEXT.checkoutUnparseable(describeIssues('cartItems', cart.error.issues).join('; ')) }, 404);
    }

    const now = this.#now();
    const items = cart.data;
    const unavailable = this.#unavailableItems(server, items, now);
    if (unavailable !== undefined) {
      return json(unavailable);
    }

    let coupon: MockSeedCoupon | undefined;
    if (body.value.coupon !== undefined) {
      const code = body.value.coupon;
      // [interpretation] Coupon codes match ignoring letter case, as shop front-ends do.
      coupon = server.coupons.find((c) => c.code.toLowerCase() === code.toLowerCase());
      if (coupon === undefined) {
        return json({ error: TEXT.couponUnknown(code) });
      }
      if (coupon.expiresAt !== undefined && now >= Date.parse(coupon.expiresAt)) {
        return json({ error: TEXT.couponExpired(code) });
      }
    }

    const lines: CheckoutLine[] = items.map(({ id, quantity }) => {
      const unitPrice = priceWithSale(server.products.get(id) as MockSeedProduct, now);
      return { id, quantity, unitPrice, lineTotal: roundCents(unitPrice * quantity) };
    });
    const subtotal = roundCents(lines.reduce((sum, line) => sum + line.lineTotal, 0));
    const afterPercent = subtotal * (1 - (coupon?.percentOff ?? 0) / 100);
    const total = Math.max(0, roundCents(afterPercent - (coupon?.amountOff ?? 0)));

    if (total === 0) {
      const checkout = this.#createCheckout(server, body.value.username, lines, subtotal, coupon, total, 'paid');
      return json({
        status: 'SUCCESS',
        statusCode: '200',
        isFree: true,
        transactionId: checkout.transactionId,
        message: TEXT.free,
        total,
      });
    }
    const { gateway } = server;
    if (!gateway.configured) {
      return json({ status: 'ERROR', message: TEXT.gatewayNotConfigured });
    }
    if (total < gateway.minimumCharge) {
      return json({ status: 'ERROR', message: TEXT.belowMinimum(money(total), money(gateway.minimumCharge)) });
    }
    if (gateway.maximumTotal !== undefined && total > gateway.maximumTotal) {
      return json({ statusCode: '400', message: TEXT.aboveMaximumTotal(money(total), money(gateway.maximumTotal)) });
    }
    if (gateway.maximumItems !== undefined && lines.length > gateway.maximumItems) {
      return json({ statusCode: '400', message: TEXT.tooManyItems(lines.length, gateway.maximumItems) });
    }

    const checkout = this.#createCheckout(server, body.value.username, lines, subtotal, coupon, total, 'pending');
    return json({
      status: 'SUCCESS',
      statusCode: '200',
      isFree: false,
      redirect: `${request.origin}${PAY_PAGE_PATH}${checkout.transactionId}`,
      transactionId: checkout.transactionId,
      total,
    });
  }

  /** The INVALID_STOCK answer, or `undefined` when every line can be sold now. */
  #unavailableItems(
    server: ServerState,
    items: ReadonlyArray<{ id: number; quantity: number }>,
    now: number,
  ): Record<string, unknown> | undefined {
    // A product listed on several lines must have stock for all of them together.
    const requested = new Map<number, number>();
    for (const { id, quantity } of items) {
      requested.set(id, (requested.get(id) ?? 0) + quantity);
    }
    const reasons = new Map<number, string>();
    for (const [id, quantity] of requested) {
      const product = server.products.get(id);
      const reason =
        product === undefined
          ? 'NOT_FOUND'
          : product.disabled === true
            ? 'DISABLED'
            : !insideWindow(product, now)
              ? 'NOT_AVAILABLE'
              : product.stock != null && product.stock < quantity
                ? 'OUT_OF_STOCK'
                : undefined;
      if (reason !== undefined) {
        reasons.set(id, reason);
      }
    }
    if (reasons.size === 0) {
      return undefined;
    }
    return {
      status: 'INVALID_STOCK',
      message: TEXT.invalidStock,
      productsAffected: [...reasons].map(([id, reason]) => {
        const product = server.products.get(id);
        return {
          id,
          reason,
          requested: requested.get(id),
          ...(product === undefined
            ? {}
            : { productId: product.productId, name: product.name, stock: product.stock ?? null }),
        };
      }),
      cartItems: items.map(({ id, quantity }) => {
        const reason = reasons.get(id);
        return { id, quantity, valid: reason === undefined, ...(reason === undefined ? {} : { reason }) };
      }),
    };
  }

  #createCheckout(
    server: ServerState,
    username: string,
    lines: CheckoutLine[],
    subtotal: number,
    coupon: MockSeedCoupon | undefined,
    total: number,
    status: 'pending' | 'paid',
  ): CheckoutState {
    const created = this.#iso();
    const checkout: CheckoutState = {
      server,
      transactionId: globalThis.crypto.randomUUID(),
      serverName: server.name,
      username,
      lines,
      subtotal,
      coupon: coupon?.code ?? null,
      total,
      isFree: status === 'paid',
      status,
      created,
      paid: status === 'paid' ? created : null,
    };
    this.#checkouts.set(checkout.transactionId, checkout);
    for (const line of lines) {
      const product = server.products.get(line.id) as MockSeedProduct;
      if (product.stock != null) {
        product.stock -= line.quantity;
      }
      server.purchases.push(
        this.#purchaseRow(product, username, line.quantity, line.unitPrice, {
          transactionid: checkout.transactionId,
          paymenttype: status === 'paid' ? 'Free' : 'Gateway',
          paymentstatus: status === 'paid' ? 'Paid' : 'Pending',
        }),
      );
    }
    return checkout;
  }

  #purchaseRow(
    product: MockSeedProduct,
    username: string,
    quantity: number,
    unitPrice: number,
    payment: Pick<PurchaseRow, 'transactionid' | 'paymenttype' | 'paymentstatus'>,
  ): PurchaseRow {
    return {
      invoice: this.#nextInvoice++,
      ...payment,
      username,
      catalogid: product.id,
      productid: String(product.productId),
      productname: product.name,
      price: product.price,
      pricewithdiscount: unitPrice,
      quantity,
      givequantity: quantity * (product.quantity ?? 1),
      allowreclaim: 0,
      deliverystatus: 'Undelivered',
      created: this.#iso(),
      delivered: null,
    };
  }

  // ---------------------------------------------------------------- payment

  #checkoutFor(transactionId: string): CheckoutState {
    const checkout = this.#checkouts.get(transactionId);
    if (checkout === undefined) {
      throw new MockAdminError(404, `No checkout has the transaction id "${transactionId}".`);
    }
    return checkout;
  }

  /**
   * Completes a pending checkout: its rows become `Paid`, hence claimable. Completing a
   * paid checkout again changes nothing.
   *
   * @throws MockAdminError 404 for an unknown id, 409 for a cancelled checkout.
   */
  completePayment(transactionId: string): CheckoutRecord {
    const checkout = this.#checkoutFor(transactionId);
    if (checkout.status === 'cancelled') {
      throw new MockAdminError(409, `The checkout "${transactionId}" was cancelled; it cannot be paid.`);
    }
    if (checkout.status === 'pending') {
      checkout.status = 'paid';
      checkout.paid = this.#iso();
      for (const row of checkout.server.purchases) {
        if (row.transactionid === transactionId) {
          row.paymentstatus = 'Paid';
        }
      }
    }
    return this.#checkoutRecord(checkout);
  }

  /**
   * Cancels a pending checkout: it becomes `cancelled`, its rows are removed and its stock
   * released. Cancelling a cancelled checkout again changes nothing.
   *
   * @throws MockAdminError 404 for an unknown id, 409 for a paid checkout.
   */
  cancelPayment(transactionId: string): CheckoutRecord {
    const checkout = this.#checkoutFor(transactionId);
    if (checkout.status === 'paid') {
      throw new MockAdminError(409, `The checkout "${transactionId}" is already paid; it cannot be cancelled.`);
    }
    if (checkout.status === 'pending') {
      checkout.status = 'cancelled';
      const { server } = checkout;
      for (const line of checkout.lines) {
        const product = server.products.get(line.id);
        // A product removed or made unlimited since has no stock to give back.
        if (product !== undefined && product.stock != null) {
          product.stock += line.quantity;
        }
      }
      server.purchases = server.purchases.filter((row) => row.transactionid !== transactionId);
    }
    return this.#checkoutRecord(checkout);
  }

  /** `GET /__mock/pay/:transactionId`: the player "pays"; answers a small HTML page. */
  payPage(transactionId: string): WireResponse {
    const checkout = this.#checkouts.get(transactionId);
    if (checkout === undefined) {
      return { status: 404, kind: 'html', body: page('Unknown checkout', 'No checkout has this transaction id.') };
    }
    if (checkout.status === 'cancelled') {
      return { status: 409, kind: 'html', body: page('Checkout cancelled', 'This checkout was cancelled and cannot be paid.') };
    }
    const wasPaid = checkout.status === 'paid';
    this.completePayment(transactionId);
    const units = checkout.lines.reduce((sum, line) => sum + line.quantity, 0);
    const text = wasPaid
      ? 'This checkout is already paid.'
      : `Paid ${money(checkout.total)} for ${units} ${units === 1 ? 'item' : 'items'}.`;
    return {
      status: 200,
      kind: 'html',
      body: page('Payment complete', `${text} ${checkout.username} can now claim the purchase in game.`),
    };
  }

  // ---------------------------------------------------------------- claims

  /** The shared claim rules (v3 and v4) after the key: player → rate limit → state. */
  #claim(server: ServerState, playerName: unknown, preview: boolean): ClaimOutcome {
    if (!isValidPlayerName(playerName)) {
      return { code: 'INVALID_PLAYER' };
    }
    const now = this.#now();
    if (server.rateWindows.refuses(playerName, now)) {
      return { code: 'RATE_LIMIT' };
    }
    server.rateWindows.accept(playerName, now);

    const own = server.purchases.filter((row) => row.username === playerName && row.paymentstatus === 'Paid');
    const undelivered = own.filter((row) => row.deliverystatus === 'Undelivered');
    if (undelivered.length === 0) {
      // [interpretation] SPEC §3.2: delivered rows mean "already claimed", none at all "no items".
      return { code: own.length > 0 ? 'ALREADY_CLAIMED' : 'NO_ITEMS' };
    }
    if (undelivered.some((row) => !server.products.has(row.catalogid))) {
      return { code: 'PRODUCT_NOT_FOUND' };
    }
    if (preview) {
      return { code: 'PREVIEW', rows: undelivered };
    }
    const delivered = new Date(now).toISOString();
    for (const row of undelivered) {
      row.deliverystatus = 'Delivered';
      row.delivered = delivered;
    }
    return { code: 'SUCCESS', rows: undelivered };
  }

  /** `POST /api/v4/store/transaction/update`. */
  claimV4(request: WireRequest): WireResponse {
    const server = this.#resolve(request, 'base64');
    if (server === undefined) {
      return this.#v4Envelope('SERVER_NOT_FOUND', TEXT.serverNotFound, [], false);
    }
    const body = readFields(claimV4BodySchema, decodeBody(request, ['json']));
    if (!body.ok) {
      return badRequest(body.status, body.problem);
    }
    const withRaw = body.value.includeRawTransactions === true;
    const outcome = this.#claim(server, body.value.playerName, body.value.preview === true);
    switch (outcome.code) {
      case 'SUCCESS':
        return this.#v4Envelope('SUCCESS', TEXT.success, outcome.rows, withRaw);
      case 'PREVIEW':
        return this.#v4Envelope('PREVIEW', TEXT.preview(outcome.rows.length), outcome.rows, withRaw);
      case 'INVALID_PLAYER':
        return this.#v4Envelope(outcome.code, TEXT.invalidPlayer, [], withRaw);
      case 'RATE_LIMIT':
        return this.#v4Envelope(outcome.code, `${TEXT.rateLimit}.`, [], withRaw);
      case 'NO_ITEMS':
        return this.#v4Envelope(outcome.code, TEXT.noItems, [], withRaw);
      case 'ALREADY_CLAIMED':
        return this.#v4Envelope(outcome.code, TEXT.alreadyClaimed, [], withRaw);
      case 'PRODUCT_NOT_FOUND':
        return this.#v4Envelope(outcome.code, TEXT.productNotFound, [], withRaw);
    }
  }

  #v4Envelope(code: string, message: string, rows: readonly PurchaseRow[], withRaw: boolean): WireResponse {
    // v4 `status` is coarse; the fine outcome is `code`.
    const status = code === 'SUCCESS' || code === 'PREVIEW' ? code : 'ERROR';
    return json({
      status,
      code,
      message,
      data: {
        claims: rows.map(toTransaction),
        ...(withRaw ? { rawTransactions: structuredClone(rows) } : {}),
      },
    });
  }

  /**
   * `POST /api/v3/store/transaction/update` (`X-API-Key`) and its alias
   * `POST /v3/store/transaction/claim` (`X-API-Key` or `Bearer`); JSON or form body.
   */
  claimV3(request: WireRequest, scheme: 'api-key' | 'api-key-or-bearer'): WireResponse {
    const server = this.#resolve(request, scheme);
    if (server === undefined) {
      return messageRows(TEXT.serverNotFound);
    }
    const body = readFields(claimV3BodySchema, decodeBody(request, ['json', 'form']));
    if (!body.ok) {
      return badRequest(body.status, body.problem);
    }
    // v3 reports every outcome but items as a message-only row.
    const outcome = this.#claim(server, body.value.playerName, false);
    switch (outcome.code) {
      case 'SUCCESS':
      case 'PREVIEW':
        return json(outcome.rows.map(toLegacyTransaction));
      case 'INVALID_PLAYER':
        return messageRows(TEXT.invalidPlayer);
      case 'RATE_LIMIT':
        return messageRows(TEXT.rateLimit);
      case 'PRODUCT_NOT_FOUND':
        return messageRows(TEXT.productNotFound);
      case 'NO_ITEMS':
      case 'ALREADY_CLAIMED':
        return messageRows(TEXT.noItems);
    }
  }

  // ---------------------------------------------------------------- votes

  /**
   * `POST /v3/vote/reward/claim` (form). [interpretation] SPEC §3.2: checks key → player →
   * votes recorded → reward → amount → points.
   */
  voteClaim(request: WireRequest): WireResponse {
    const server = this.#resolve(request, 'api-key-or-bearer');
    if (server === undefined) {
      return messageRows(TEXT.serverNotFound);
    }
    const body = readFields(voteBodySchema, decodeBody(request, ['form']));
    if (!body.ok) {
      return badRequest(body.status, body.problem);
    }
    const { player, reward: rewardField = '', amount = '' } = body.value;
    if (!isValidPlayerName(player)) {
      return messageRows(TEXT.invalidPlayer);
    }
    const votes = server.votes.get(player);
    if (votes === undefined) {
      return messageRows(TEXT.notVoted);
    }
    const reward = /^\d+$/.test(rewardField) ? server.rewards.get(Number(rewardField)) : undefined;
    if (reward === undefined) {
      return messageRows(TEXT.rewardNotFound);
    }
    const all = amount.toLowerCase() === 'all';
    if (!all && !/^[1-9]\d*$/.test(amount)) {
      return messageRows(TEXT.invalidAmount);
    }
    // `all` buys as many units as the points pay for.
    const units = all ? Math.floor(votes.vote_points / reward.cost) : Number(amount);
    if (units === 0 || units * reward.cost > votes.vote_points) {
      return messageRows(TEXT.insufficientPoints(votes.vote_points, reward.name, reward.cost));
    }
    votes.vote_points -= units * reward.cost;
    return json([
      {
        message: TEXT.rewardClaimed(units, reward.name),
        total_points: String(votes.total_points),
        vote_points: votes.vote_points,
        votes_month: votes.votes_month,
        give_amount: units * (reward.giveAmount ?? 1),
        reward_id: reward.id,
        reward_name: reward.name,
      },
    ]);
  }

  // ---------------------------------------------------------------- admin

  /**
   * Adds a paid, undelivered row for the catalog product `id`, as if the player had bought
   * and paid for it now. Stock is not touched (an admin grant).
   *
   * @throws MockAdminError 404 for an unknown key or product, 400 for a bad name or quantity.
   */
  addPurchase(apiKey: string, input: AddPurchaseInput): PurchaseRow {
    const server = this.#serverFor(apiKey);
    if (!isValidPlayerName(input.playerName)) {
      throw new MockAdminError(400, 'addPurchase: playerName must be non-blank, at most 64 characters, no control characters.');
    }
    const quantity = input.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1) {
      throw new MockAdminError(400, 'addPurchase: quantity must be a positive integer.');
    }
    const product = server.products.get(input.id);
    if (product === undefined) {
      throw new MockAdminError(404, `addPurchase: no product has the id ${input.id}.`);
    }
    const row = this.#purchaseRow(product, input.playerName, quantity, priceWithSale(product, this.#now()), {
      transactionid: globalThis.crypto.randomUUID(),
      paymenttype: 'Manual',
      paymentstatus: 'Paid',
    });
    server.purchases.push(row);
    return structuredClone(row);
  }

  /**
   * Changes fields of a product (any seed product field but `id`); the result must still be
   * a valid seed product. Returns the product as it is now.
   *
   * @throws MockAdminError 404 for an unknown key or product, 400 for an invalid patch.
   */
  updateProduct(apiKey: string, id: number, patch: MockProductPatch): MockSeedProduct {
    const server = this.#serverFor(apiKey);
    const product = server.products.get(id);
    if (product === undefined) {
      throw new MockAdminError(404, `updateProduct: no product has the id ${id}.`);
    }
    const checked = productPatchSchema.safeParse(patch);
    if (!checked.success) {
      throw new MockAdminError(400, `updateProduct: ${describeIssues('patch', checked.error.issues).join('; ')}`);
    }
    const merged = productSchema.safeParse({ ...product, ...checked.data });
    if (!merged.success) {
      throw new MockAdminError(400, `updateProduct: ${describeIssues('product', merged.error.issues).join('; ')}`);
    }
    const known = new Set(server.categories.map((c) => c.id));
    const unknown = (merged.data.categoryIds ?? []).find((c) => !known.has(c));
    if (unknown !== undefined) {
      throw new MockAdminError(400, `updateProduct: unknown category ${unknown}.`);
    }
    const updated = merged.data as MockSeedProduct;
    server.products.set(id, updated);
    return structuredClone(updated);
  }

  /**
   * Removes a product: it leaves the catalog, and claims of rows that reference it answer
   * `PRODUCT_NOT_FOUND`.
   *
   * @throws MockAdminError 404 for an unknown key or product.
   */
  removeProduct(apiKey: string, id: number): void {
    const server = this.#serverFor(apiKey);
    if (!server.products.delete(id)) {
      throw new MockAdminError(404, `removeProduct: no product has the id ${id}.`);
    }
  }

  /**
   * The purchase rows of a game server, optionally of one player (exact name), in creation order.
   *
   * @throws MockAdminError 404 for an unknown key.
   */
  purchases(apiKey: string, playerName?: string): PurchaseRow[] {
    const rows = this.#serverFor(apiKey).purchases;
    return structuredClone(playerName === undefined ? rows : rows.filter((row) => row.username === playerName));
  }

  /**
   * Records one vote worth `points` for a player: adds to `vote_points` and `total_points`,
   * counts one in `votes_month`. Returns the player's record.
   *
   * @throws MockAdminError 404 for an unknown key, 400 for a bad name or points.
   */
  recordVote(apiKey: string, playerName: string, points: number): VoteRecord {
    const server = this.#serverFor(apiKey);
    if (!isValidPlayerName(playerName)) {
      throw new MockAdminError(400, 'recordVote: playerName must be non-blank, at most 64 characters, no control characters.');
    }
    if (!Number.isInteger(points) || points < 1) {
      throw new MockAdminError(400, 'recordVote: points must be a positive integer.');
    }
    const record = server.votes.get(playerName) ?? { playerName, vote_points: 0, votes_month: 0, total_points: 0 };
    record.vote_points += points;
    record.total_points += points;
    record.votes_month += 1;
    server.votes.set(playerName, record);
    return { ...record };
  }

  /** A deep copy of everything the mock holds. */
  state(): MockStateSnapshot {
    const now = this.#now();
    return {
      now,
      time: new Date(now).toISOString(),
      servers: this.#servers.map((s) =>
        structuredClone({
          name: s.name,
          apiKey: s.apiKey,
          gateway: s.gateway,
          coupons: s.coupons,
          categories: s.categories,
          products: [...s.products.values()],
          rewards: [...s.rewards.values()],
          votes: [...s.votes.values()],
          purchases: s.purchases,
          lastAcceptedClaims: s.rateWindows.open(now).map(([playerName, at]) => ({
            playerName,
            at: new Date(at).toISOString(),
          })),
        }),
      ),
      checkouts: [...this.#checkouts.values()].map((c) => this.#checkoutRecord(c)),
    };
  }

  /**
   * How many rate windows the game server holds in memory, expired ones not yet forgotten
   * included. For the tests that check the windows are forgotten.
   *
   * @internal
   * @throws MockAdminError 404 for an unknown key.
   */
  rateWindowsHeld(apiKey: string): number {
    return this.#serverFor(apiKey).rateWindows.size;
  }

  #checkoutRecord(checkout: CheckoutState): CheckoutRecord {
    const { server: _server, ...record } = checkout;
    return structuredClone(record);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, text: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · TeamGames mock</title></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>` +
    '<p><small>TeamGames mock service: no real payment was made.</small></p></body></html>'
  );
}
