/**
 * The mock's state: the game servers built from the seed, the checkouts, the purchase
 * rows, and the clock every rule reads. The operation modules (catalog, checkout,
 * payment, claims, votes, admin) take a {@link MockState} and change it; nothing here
 * knows about HTTP.
 */
// The client's encoder is a leaf module (no client code comes with it); the wire tests pin
// its output against an independently computed Base64.
import { encodeApiKey } from '../../auth.js';
import { presentedKey, type CredentialScheme } from './auth.js';
import type { MockClock } from './clock.js';
import { MockAdminError } from './errors.js';
import { RateWindows } from './rate-windows.js';
import type { MockSeed, MockSeedCategory, MockSeedCoupon, MockSeedProduct, MockSeedReward } from './seed.js';
import { unitsToGrant } from './rules.js';
import type { CheckoutRecord, MockServerState, PurchaseRow, VoteClaimRecord, VoteRecord } from './types.js';
import type { WireRequest } from './wire.js';

/** One game server (one store) as the mock holds it. */
export interface ServerState {
  /** 1-based position in the seed: the `gameServer` of the INVALID_STOCK rows (I-8). */
  id: number;
  apiKey: string;
  name: string;
  gateway: MockServerState['gateway'];
  /** The seed's switch: the `message` put on every claimed item row (I-9). */
  transactionMessage: string | undefined;
  coupons: MockSeedCoupon[];
  categories: MockSeedCategory[];
  products: Map<number, MockSeedProduct>;
  rewards: Map<number, MockSeedReward>;
  purchases: PurchaseRow[];
  votes: Map<string, VoteRecord>;
  voteClaims: VoteClaimRecord[];
  rateWindows: RateWindows;
}

/** A checkout and the game server it belongs to. */
export interface CheckoutState extends CheckoutRecord {
  server: ServerState;
}

/** Everything the mock holds; built from a validated seed, returned to it by {@link resetState}. */
export interface MockState {
  readonly seed: MockSeed;
  readonly clock: MockClock;
  servers: ServerState[];
  byKey: Map<string, ServerState>;
  byBase64: Map<string, ServerState>;
  checkouts: Map<string, CheckoutState>;
  nextInvoice: number;
}

/** Builds the state from an already validated seed (copied: the caller's seed is never shared). */
export function createState(seed: MockSeed, clock: MockClock): MockState {
  const state: MockState = {
    seed: structuredClone(seed),
    clock,
    servers: [],
    byKey: new Map(),
    byBase64: new Map(),
    checkouts: new Map(),
    nextInvoice: 1,
  };
  load(state);
  return state;
}

/** Returns everything to the seed, the clock included. */
export function resetState(state: MockState): void {
  state.clock.reset();
  load(state);
}

function load(state: MockState): void {
  state.servers = state.seed.servers.map((s, index) => ({
    id: index + 1,
    apiKey: s.apiKey,
    name: s.name ?? `Game server ${index + 1}`,
    gateway: {
      configured: s.gateway?.configured ?? true,
      integrationComplete: s.gateway?.integrationComplete ?? true,
      minimumCharge: s.gateway?.minimumCharge ?? 0,
      ...(s.gateway?.maximumTotal === undefined ? {} : { maximumTotal: s.gateway.maximumTotal }),
      ...(s.gateway?.maximumItems === undefined ? {} : { maximumItems: s.gateway.maximumItems }),
    },
    transactionMessage: s.transactionMessage,
    coupons: structuredClone(s.coupons ?? []),
    categories: structuredClone(s.categories ?? []),
    products: new Map((s.products ?? []).map((p) => [p.id, structuredClone(p)])),
    rewards: new Map((s.rewards ?? []).map((r) => [r.id, structuredClone(r)])),
    purchases: [],
    votes: new Map(),
    voteClaims: [],
    rateWindows: new RateWindows(),
  }));
  state.byKey = new Map(state.servers.map((s) => [s.apiKey, s]));
  state.byBase64 = new Map(state.servers.map((s) => [encodeApiKey(s.apiKey), s]));
  state.checkouts = new Map();
  state.nextInvoice = 1;
}

/** The mock clock as ISO 8601. */
export function isoNow(state: MockState): string {
  return new Date(state.clock.now()).toISOString();
}

/** The game server whose key the request presents under `scheme`, if any. */
export function resolveServer(state: MockState, request: WireRequest, scheme: CredentialScheme): ServerState | undefined {
  const key = presentedKey(request.header, scheme, (value) => state.byBase64.get(value)?.apiKey);
  return key === undefined ? undefined : state.byKey.get(key);
}

/**
 * The game server of a raw key, for the admin operations.
 *
 * @throws MockAdminError 404 for an unknown key.
 */
export function serverFor(state: MockState, apiKey: string): ServerState {
  const server = state.byKey.get(apiKey);
  if (server === undefined) {
    throw new MockAdminError(404, 'No game server in the seed has this API key.');
  }
  return server;
}

/** A new purchase row (the next invoice number, created now, undelivered). */
export function newPurchaseRow(
  state: MockState,
  product: MockSeedProduct,
  username: string,
  quantity: number,
  unitPrice: number,
  payment: Pick<PurchaseRow, 'transactionid' | 'paymenttype' | 'paymentstatus'>,
): PurchaseRow {
  return {
    invoice: state.nextInvoice++,
    ...payment,
    username,
    catalogid: product.id,
    productid: String(product.productId),
    productname: product.name,
    price: product.price,
    pricewithdiscount: unitPrice,
    quantity,
    givequantity: unitsToGrant(product, quantity),
    allowreclaim: 0,
    deliverystatus: 'Undelivered',
    created: isoNow(state),
    delivered: null,
  };
}

/** A checkout as the admin operations report it (a copy, without its server). */
export function checkoutRecord(checkout: CheckoutState): CheckoutRecord {
  const { server: _server, ...record } = checkout;
  return structuredClone(record);
}
