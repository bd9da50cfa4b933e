/**
 * The fuzzing properties, shared by `test/wire/fuzz.test.ts` (a few hundred cases
 * per operation, in `npm test`) and `scripts/fuzz.ts` (≥ 10,000 per operation), which is
 * why they live outside `test/`.
 *
 * 1. Responses, from a hostile transport: arbitrary statuses and bodies (truncated JSON,
 *    wrong types, huge numbers, HTML, empty, nulls, nesting 100,000 deep, bodies over the
 *    size bound, the key echoed in every form, broken streams, fetches that fail with odd
 *    values or with the request headers in their text) for every operation → the call
 *    resolves a well-typed value or rejects with a StorefrontError that holds no form of
 *    the key (message, stack, excerpt, causes, inspect, JSON); never a TypeError, an
 *    unhandled rejection or a hang.
 * 2. Inputs: arbitrary arguments to every method → the promise rejects with
 *    InvalidInputError (never a synchronous throw), or the request sent matches the wire
 *    contract (path, credential header, content type, body).
 */
import { inspect } from 'node:util';
import fc from 'fast-check';
import { InvalidInputError, MemoryJournal, StorefrontClient, encodeApiKey, isStorefrontError } from '../../src/index.js';

export const FUZZ_KEY = 'fuzz-key-\u00e9\u00df';
const BASE = 'https://api.teamgames.io';
const CASE_TIMEOUT_MS = 2_000;
/** The fuzzed client's size bound: small, so that bodies over it stay cheap to make. */
const FUZZ_MAX_RESPONSE_BYTES = 64 * 1024;

/** Every form of the key a hostile answer or a failing fetch might carry back. */
const KEY_FORMS = (() => {
  const base64 = encodeApiKey(FUZZ_KEY);
  const unpadded = base64.replace(/=+$/, '');
  return [FUZZ_KEY, encodeURIComponent(FUZZ_KEY), base64, unpadded, unpadded.replace(/\+/g, '-').replace(/\//g, '_'), encodeURIComponent(base64)];
})();

const transaction = {
  player_name: 'P',
  product_id: 42,
  product_id_string: '42',
  product_name: 'Whip',
  product_price: 10,
  quantity_to_grant: 2,
  quantity_purchased: 2,
  product_amount: 2,
  amount_purchased: 2,
};
const legacy = { player_name: 'P', product_id: 42, product_amount: 5, amount_purchased: 1, product_name: 'Whip', product_price: 4.99 };
const v4 = (code: string) => ({
  status: code === 'SUCCESS' || code === 'PREVIEW' ? code : 'ERROR',
  code,
  message: 'm',
  data: { claims: code === 'SUCCESS' || code === 'PREVIEW' ? [transaction] : [], rawTransactions: [{ invoice: 7, productid: '42', givequantity: 2 }] },
});

/** One fuzzed operation: how to call it and a valid answer to mutate. */
export interface FuzzOperation {
  name: string;
  path: string;
  valid: unknown;
  call: (client: StorefrontClient) => Promise<unknown>;
  /** True when a resolved value has the documented shape. */
  check: (value: unknown) => boolean;
}

const CLAIM_CODES = new Set(['SUCCESS', 'PREVIEW', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER', 'UNKNOWN']);
const DELIVERY_CODES = new Set(['SUCCESS', 'PARTIAL', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER', 'UNKNOWN', 'OUTCOME_UNKNOWN', 'ERROR']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isTransaction = (t: unknown) =>
  isRecord(t) &&
  typeof t['player_name'] === 'string' &&
  typeof t['product_id_string'] === 'string' &&
  typeof t['product_name'] === 'string' &&
  ['product_id', 'product_price', 'quantity_to_grant', 'quantity_purchased', 'product_amount', 'amount_purchased'].every((k) => typeof t[k] === 'number' && Number.isFinite(t[k]));
const isClaimResult = (v: unknown) =>
  isRecord(v) && CLAIM_CODES.has(v['code'] as string) && typeof v['message'] === 'string' && Array.isArray(v['claims']) && (v['claims'] as unknown[]).every(isTransaction) && (v['code'] === 'SUCCESS' || v['code'] === 'PREVIEW' || (v['claims'] as unknown[]).length === 0);

const sleep0 = async () => {};

export const OPERATIONS: readonly FuzzOperation[] = [
  {
    name: 'getCatalog',
    path: '/api/v2/client/global/products',
    valid: { message: 'SUCCESS', products: [{ id: 1, productId: 'a', name: 'n', price: 1, priceOriginal: 1, priceWithSale: 1, quantity: 1, description: '', image: '', disabled: false, sales: [{ saleType: 'percentage', discountPercentage: 10 }] }] },
    call: (c) => c.getCatalog(),
    check: (v) => isRecord(v) && typeof v['message'] === 'string' && Array.isArray(v['products']) && (v['products'] as unknown[]).every((p) => isRecord(p) && typeof p['id'] === 'number' && typeof p['productId'] === 'string' && typeof p['price'] === 'number' && Array.isArray(p['sales'])),
  },
  {
    name: 'checkout',
    path: '/api/v2/client/global/checkout/complete',
    valid: { status: 'SUCCESS', statusCode: '200', isFree: false, redirect: 'https://pay.example/x', transactionId: 'a6f1b5a0-0000-4000-8000-000000000000' },
    call: (c) => c.checkout({ username: 'P', items: [{ id: 1, quantity: 1 }] }),
    check: (v) => isRecord(v) && ['PAYMENT_REQUIRED', 'FREE', 'INVALID_STOCK', 'COUPON_REJECTED', 'BASKET_REJECTED', 'GATEWAY_ERROR', 'UNKNOWN'].includes(v['outcome'] as string),
  },
  { name: 'claim', path: '/api/v4/store/transaction/update', valid: v4('SUCCESS'), call: (c) => c.claim('P'), check: isClaimResult },
  {
    name: 'previewClaim',
    path: '/api/v4/store/transaction/update',
    valid: v4('PREVIEW'),
    call: (c) => c.previewClaim('P', { includeRawTransactions: true }),
    check: (v) => isClaimResult(v) && (!isRecord(v) || v['rawTransactions'] === undefined || Array.isArray(v['rawTransactions'])),
  },
  { name: 'claimLegacy', path: '/api/v3/store/transaction/update', valid: [legacy], call: (c) => c.claimLegacy('P'), check: isClaimResult },
  { name: 'claimStoreTransactions', path: '/v3/store/transaction/claim', valid: [legacy], call: (c) => c.claimStoreTransactions('P'), check: isClaimResult },
  {
    name: 'claimVoteReward',
    path: '/v3/vote/reward/claim',
    valid: [{ message: 'ok', total_points: '42', vote_points: 3, votes_month: 7, give_amount: 2, reward_id: 995, reward_name: 'Coins' }],
    call: (c) => c.claimVoteReward({ player: 'P', reward: '1', amount: 'all' }),
    check: (v) => isRecord(v) && Array.isArray(v['rewards']) && Array.isArray(v['messages']) && typeof v['insufficientPoints'] === 'boolean',
  },
  {
    name: 'deliver',
    path: '/api/v4/store/transaction/update',
    valid: v4('SUCCESS'),
    call: (c) => c.deliver('P', () => {}, { sleep: sleep0 }),
    check: (v) => isRecord(v) && DELIVERY_CODES.has(v['code'] as string) && Array.isArray(v['granted']) && (v['granted'] as unknown[]).every(isTransaction),
  },
  {
    name: 'deliver exactlyOnce',
    path: '/api/v4/store/transaction/update',
    valid: v4('PREVIEW'),
    call: (c) => c.deliver('P', () => {}, { mode: 'exactlyOnce', sleep: sleep0 }),
    check: (v) => isRecord(v) && DELIVERY_CODES.has(v['code'] as string) && Array.isArray(v['granted']),
  },
];

// ------------------------------------------------------------------ responses

/** Every path into a JSON value (the root included). */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out = [prefix];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...prefix, i])));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  return out;
}

function replaceAt(value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = replacement;
  return copy;
}

const oddValue = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.1, '', ' ', 'SUCCESS', 'x'.repeat(10_000), [], {}, [null], { data: null }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A response body as text, built around the operation's valid answer. */
export function bodyText(valid: unknown): fc.Arbitrary<string> {
  const validText = JSON.stringify(valid);
  const allPaths = paths(valid);
  return fc.oneof(
    fc.constant(validText),
    fc.tuple(fc.nat(), oddValue).map(([k, odd]) => JSON.stringify(replaceAt(valid, allPaths[k % allPaths.length] as Array<string | number>, odd))),
    fc.tuple(fc.nat(), fc.nat()).map(([k, j]) => {
      // Two replacements: wrong types in two places at once.
      const once = replaceAt(valid, allPaths[k % allPaths.length] as Array<string | number>, null);
      const again = paths(once);
      return JSON.stringify(replaceAt(once, again[j % again.length] as Array<string | number>, 'x'));
    }),
    fc.nat({ max: validText.length }).map((n) => validText.slice(0, n)),
    fc.constantFrom('', 'null', 'true', '0', '[]', '{}', '""', '1e400', '-1e400', '123456789012345678901234567890', 'NaN', '[{}]', '[{"message":null}]', '{"data":{"claims":null}}'),
    fc.constantFrom(
      '<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>',
      '<html><head><title>Just a moment...</title></head></html>',
      'Service Unavailable',
    ),
    fc.constantFrom([valid], { data: valid }, { status: 'SUCCESS', code: 'SUCCESS', data: { claims: [valid] } }).map((v) => JSON.stringify(v)),
    fc.integer({ min: 1, max: 100_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
    // A valid answer with a field nested 100,000 deep.
    fc.constant(validText.replace(/^\{/, `{"deep":${'['.repeat(100_000)}${']'.repeat(100_000)},`)),
    // Over the size bound, valid JSON or not.
    fc.constantFrom(JSON.stringify({ ...(valid as object), pad: 'x'.repeat(FUZZ_MAX_RESPONSE_BYTES) }), 'y'.repeat(FUZZ_MAX_RESPONSE_BYTES + 1)),
    // The key echoed back, in every form, in an error page or inside a valid answer.
    fc.constantFrom(...KEY_FORMS).map((form) => `<html><pre>Authorization: ${form}\nX-API-Key: ${form}</pre></html>`),
    fc.constantFrom(...KEY_FORMS).map((form) => validText.replace(/^\{/, `{"echo":${JSON.stringify(form)},`)),
    fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'{"data":'.repeat(depth)}null${'}'.repeat(depth)}`),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
  );
}

/** What the stubbed `fetch` does for one case. */
export type FetchPlan =
  | { kind: 'respond'; status: number; contentType: string | undefined; body: string }
  | { kind: 'brokenStream'; status: number; body: string }
  | { kind: 'reject'; error: unknown };

export function fetchPlan(valid: unknown): fc.Arbitrary<FetchPlan> {
  const status = fc.constantFrom(200, 200, 200, 200, 200, 201, 204, 301, 400, 401, 403, 404, 415, 429, 500, 502, 503, 504);
  const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/html', 'text/plain', undefined);
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant('respond' as const), status, contentType, body: bodyText(valid) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('brokenStream' as const), status, body: bodyText(valid) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('reject' as const),
        error: fc.constantFrom<unknown>(
          new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }),
          new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }),
          new TypeError('fetch failed'),
          new Error('socket hang up'),
          'a string',
          null,
          undefined,
          42,
          { code: 'UND_ERR_SOCKET' },
          { code: 42, cause: 'odd' },
          Object.create(null),
          // A fetch whose failure quotes the request, key included.
          ...KEY_FORMS.map((form) => new TypeError(`fetch failed: {"authorization":"${form}"}`, { cause: new Error(`headers: x-api-key=${form}`) })),
          ...KEY_FORMS.map((form) => new TypeError('fetch failed', { cause: { code: `ECONNRESET x-api-key=${form}` } })),
        ),
      }),
    },
  );
}

function respond(plan: FetchPlan): Promise<Response> {
  if (plan.kind === 'reject') return Promise.reject(plan.error);
  const nullBody = plan.status === 204 || plan.status === 304;
  if (plan.kind === 'brokenStream') {
    const bytes = new TextEncoder().encode(plan.body.slice(0, Math.ceil(plan.body.length / 2)));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.error(new TypeError('terminated', { cause: { code: 'ECONNRESET' } }));
      },
    });
    return Promise.resolve(new Response(nullBody ? null : stream, { status: plan.status }));
  }
  const headers: Record<string, string> = plan.contentType === undefined ? {} : { 'content-type': plan.contentType };
  return Promise.resolve(new Response(nullBody ? null : plan.body, { status: plan.status, headers }));
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function fuzzClient(fetch: typeof globalThis.fetch): StorefrontClient {
  return new StorefrontClient({ apiKey: FUZZ_KEY, baseUrl: BASE, fetch, retry: 0, catalogCacheTtlMs: 0, timeoutMs: 1_000, maxResponseBytes: FUZZ_MAX_RESPONSE_BYTES, journal: new MemoryJournal() });
}

/** Every text a logger could make of an error: no form of the key may be in any. */
function leakedKey(error: unknown): string | undefined {
  const texts = [String(error), JSON.stringify(error) ?? '', inspect(error, { depth: 10, showHidden: true })];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    texts.push(e.message, e.stack ?? '', String((e as { bodyExcerpt?: unknown }).bodyExcerpt ?? ''));
  }
  return KEY_FORMS.find((form) => texts.some((text) => text.includes(form)));
}

/** Property 1 for one operation. */
export function responseProperty(op: FuzzOperation) {
  return fc.asyncProperty(fc.array(fetchPlan(op.valid), { minLength: 1, maxLength: 3 }), async (plans) => {
    let i = 0;
    const client = fuzzClient(() => respond(plans[Math.min(i++, plans.length - 1)] as FetchPlan));
    let value: unknown;
    try {
      value = await withTimeout(op.call(client), op.name);
    } catch (error) {
      if (!isStorefrontError(error)) throw new Error(`${op.name} rejected with a non-StorefrontError: ${String(error)}`, { cause: error });
      const form = leakedKey(error);
      if (form !== undefined) throw new Error(`${op.name}: the key (as ${JSON.stringify(form)}) leaked into a ${error.name}`);
      return;
    }
    if (!op.check(value)) throw new Error(`${op.name} resolved a value outside its type: ${JSON.stringify(value)?.slice(0, 300)}`);
  });
}

// ------------------------------------------------------------------ inputs

interface Sent {
  url: URL;
  method: string;
  headers: Headers;
  body: string;
}

const FUZZ_KEY_BASE64 = encodeApiKey(FUZZ_KEY);
const nonBlank = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const keysAre = (o: Record<string, unknown>, allowed: string[], required: string[]) =>
  Object.keys(o).every((k) => allowed.includes(k)) && required.every((k) => k in o);

/** True when a request matches the wire contract of SPEC §2 for its path. */
export function matchesContract(sent: Sent): string | undefined {
  if (sent.method !== 'POST') return `method ${sent.method}`;
  const path = sent.url.pathname;
  const json = () => {
    try {
      return JSON.parse(sent.body) as unknown;
    } catch {
      return undefined;
    }
  };
  const form = () => Object.fromEntries(new URLSearchParams(sent.body));
  const type = sent.headers.get('content-type') ?? '';
  const v2v4Auth = sent.headers.get('authorization') === FUZZ_KEY_BASE64 && !sent.headers.has('x-api-key');
  const v3Auth = sent.headers.get('x-api-key') === FUZZ_KEY && !sent.headers.has('authorization');
  switch (path) {
    case '/api/v2/client/global/products': {
      const body = json();
      if (!v2v4Auth || type !== 'application/json' || !isRecord(body)) return 'catalog envelope';
      if (!keysAre(body, ['categoryId'], [])) return 'catalog keys';
      if (body['categoryId'] !== undefined && !(Number.isSafeInteger(body['categoryId']) && (body['categoryId'] as number) > 0)) return 'categoryId';
      return undefined;
    }
    case '/api/v2/client/global/checkout/complete': {
      const body = json();
      if (!v2v4Auth || type !== 'application/json' || !isRecord(body)) return 'checkout envelope';
      if (!keysAre(body, ['username', 'cartItems', 'coupon'], ['username', 'cartItems'])) return 'checkout keys';
      if (!nonBlank(body['username'])) return 'username';
      if (body['coupon'] !== undefined && !nonBlank(body['coupon'])) return 'coupon';
      if (typeof body['cartItems'] !== 'string') return 'cartItems must be a string';
      const cart = JSON.parse(body['cartItems']) as unknown;
      if (!Array.isArray(cart) || cart.length === 0) return 'cart';
      for (const line of cart) {
        if (!isRecord(line) || !keysAre(line, ['id', 'quantity'], ['id', 'quantity'])) return 'cart line keys';
        if (!Number.isSafeInteger(line['id']) || (line['id'] as number) <= 0) return 'cart id';
        if (!Number.isInteger(line['quantity']) || (line['quantity'] as number) < 1 || (line['quantity'] as number) > 1_000_000) return 'cart quantity';
      }
      return undefined;
    }
    case '/api/v4/store/transaction/update': {
      const body = json();
      if (!v2v4Auth || type !== 'application/json' || !isRecord(body)) return 'claim envelope';
      if (!keysAre(body, ['playerName', 'preview', 'includeRawTransactions'], ['playerName'])) return 'claim keys';
      if (!nonBlank(body['playerName'])) return 'playerName';
      if (typeof body['preview'] !== 'boolean' || typeof body['includeRawTransactions'] !== 'boolean') return 'claim flags';
      return undefined;
    }
    case '/api/v3/store/transaction/update': {
      const body = json();
      if (!v3Auth || type !== 'application/json' || !isRecord(body) || !keysAre(body, ['playerName'], ['playerName']) || !nonBlank(body['playerName'])) return 'claim v3';
      return undefined;
    }
    case '/v3/store/transaction/claim': {
      const body = form();
      if (!v3Auth || type !== 'application/x-www-form-urlencoded' || !keysAre(body, ['playerName'], ['playerName']) || !nonBlank(body['playerName'])) return 'store claim';
      return undefined;
    }
    case '/v3/vote/reward/claim': {
      const body = form();
      if (!v3Auth || !/^application\/x-www-form-urlencoded; charset=utf-8$/i.test(type)) return 'vote envelope';
      if (!keysAre(body, ['player', 'reward', 'amount'], ['player', 'reward', 'amount'])) return 'vote keys';
      if (!nonBlank(body['player']) || !nonBlank(body['reward'])) return 'vote player/reward';
      if (!(body['amount'] === 'all' || (/^[1-9]\d*$/.test(body['amount'] as string) && Number.isSafeInteger(Number(body['amount']))))) return 'vote amount';
      return undefined;
    }
    default:
      return `unknown path ${path}`;
  }
}

const anything = fc.anything({ maxDepth: 2, withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withSparseArray: true });
const intish = fc.oneof(fc.integer({ min: -2, max: 1_000_002 }), fc.constantFrom(0, 1, 1.5, NaN, Infinity, 2 ** 53, -0, '1', null), anything);
const name = fc.oneof(fc.string(), fc.constantFrom('', ' ', '\t', 'Player 1', '76561198000000000', 'a'.repeat(65), 'P\u0000'), anything);
const flag = fc.oneof(fc.boolean(), anything);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** Arbitrary calls of every method, with near-valid and wild arguments. */
export const INPUT_CALLS: ReadonlyArray<{ name: string; args: fc.Arbitrary<(c: StorefrontClient) => Promise<unknown>> }> = [
  {
    name: 'getCatalog',
    args: fc.oneof(fc.record({ categoryId: maybe(intish) }, { requiredKeys: [] }), anything).map((o) => labelled('getCatalog', [o], (c) => c.getCatalog(o as never))),
  },
  {
    name: 'checkout',
    args: fc
      .tuple(
        fc.oneof(
          fc.record({ username: name, items: fc.oneof(fc.array(fc.oneof(fc.record({ id: intish, quantity: intish, extra: maybe(anything) }, { requiredKeys: ['id', 'quantity'] }), anything), { maxLength: 4 }), anything), coupon: maybe(name) }, { requiredKeys: [] }),
          anything,
        ),
        maybe(anything),
      )
      .map(([input, options]) => labelled('checkout', [input, options], (c) => c.checkout(input as never, options as never))),
  },
  {
    name: 'claim',
    args: fc
      .tuple(name, fc.oneof(fc.record({ preview: maybe(flag), includeRawTransactions: maybe(flag) }, { requiredKeys: [] }), maybe(anything)))
      .map(([player, options]) => labelled('claim', [player, options], (c) => c.claim(player as never, options as never))),
  },
  { name: 'previewClaim', args: fc.tuple(name, maybe(anything)).map(([p, o]) => labelled('previewClaim', [p, o], (c) => c.previewClaim(p as never, o as never))) },
  { name: 'claimLegacy', args: fc.tuple(name, maybe(anything)).map(([p, o]) => labelled('claimLegacy', [p, o], (c) => c.claimLegacy(p as never, o as never))) },
  { name: 'claimStoreTransactions', args: fc.tuple(name, maybe(anything)).map(([p, o]) => labelled('claimStoreTransactions', [p, o], (c) => c.claimStoreTransactions(p as never, o as never))) },
  {
    name: 'claimVoteReward',
    args: fc
      .tuple(fc.oneof(fc.record({ player: name, reward: fc.oneof(name, intish), amount: fc.oneof(intish, fc.constantFrom('all', 'ALL', ' all')) }, { requiredKeys: [] }), anything), maybe(anything))
      .map(([input, options]) => labelled('claimVoteReward', [input, options], (c) => c.claimVoteReward(input as never, options as never))),
  },
  {
    name: 'deliver',
    args: fc
      .tuple(name, fc.oneof(fc.constant(() => {}), anything), fc.oneof(fc.record({ mode: maybe(fc.oneof(fc.constantFrom('fast', 'exactlyOnce'), anything)), maxRateLimitWaits: maybe(intish), sleep: maybe(fc.oneof(fc.constant(sleep0), anything)) }, { requiredKeys: [] }), maybe(anything)))
      .map(([p, g, o]) => labelled('deliver', [p, g, o], (c) => c.deliver(p as never, g as never, o as never))),
  },
  { name: 'resumeDeliveries', args: fc.tuple(fc.oneof(fc.constant(() => {}), anything), maybe(anything)).map(([g, o]) => labelled('resumeDeliveries', [g, o], (c) => c.resumeDeliveries(g as never, o as never))) },
];

/** A call that prints its arguments in fast-check's counterexamples. */
function labelled(name: string, args: unknown[], run: (c: StorefrontClient) => Promise<unknown>): (c: StorefrontClient) => Promise<unknown> {
  return Object.assign(run, { [fc.toStringMethod]: () => `${name}(${args.map((a) => fc.stringify(a)).join(', ')})` });
}

const OK_BODY: Record<string, unknown> = {
  '/api/v2/client/global/products': { message: 'SUCCESS', products: [] },
  '/api/v2/client/global/checkout/complete': { status: 'SUCCESS', statusCode: '200', isFree: true, transactionId: 't' },
  '/api/v4/store/transaction/update': { status: 'ERROR', code: 'NO_ITEMS', message: 'none', data: { claims: [] } },
  '/api/v3/store/transaction/update': [{ message: 'There are currently no items to claim.' }],
  '/v3/store/transaction/claim': [{ message: 'There are currently no items to claim.' }],
  '/v3/vote/reward/claim': [{ message: 'You have not voted yet.' }],
};

/** Property 2 for one method. */
export function inputProperty(call: (typeof INPUT_CALLS)[number]) {
  return fc.asyncProperty(call.args, async (run) => {
    const problems: string[] = [];
    const client = fuzzClient(async (input, init) => {
      const request = new Request(input as RequestInfo, init);
      const sent = { url: new URL(request.url), method: request.method, headers: request.headers, body: await request.text() };
      const problem = matchesContract(sent);
      if (problem !== undefined) problems.push(`${problem}: ${sent.url.pathname} ${sent.body.slice(0, 200)}`);
      return Response.json(OK_BODY[sent.url.pathname] ?? {});
    });
    let promise: Promise<unknown>;
    try {
      promise = run(client);
    } catch (error) {
      throw new Error(`${call.name} threw synchronously: ${String(error)}`, { cause: error });
    }
    try {
      await withTimeout(promise, call.name);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw new Error(`${call.name} rejected with ${String(error)}`, { cause: error });
    }
    if (problems.length > 0) throw new Error(`${call.name} sent a request outside the contract: ${problems.join('; ')}`);
  });
}
