/**
 * Input checks (SPEC §4): bad arguments reject with InvalidInputError naming the
 * argument and the rule, before any request. Methods never throw synchronously; only
 * the constructor does.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, StorefrontClient, isStorefrontError } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';
import { BASE, catalogBody, useMsw } from '../support/msw.js';

const { json } = useMsw();

/** Deliberately wrong arguments: the casts are what a JavaScript caller can pass. */
const bad = <T>(value: unknown) => value as T;

type Call = (client: StorefrontClient) => Promise<unknown>;

/**
 * Calls `call` and checks the contract: no synchronous throw, a rejection with
 * InvalidInputError naming `argument`, a rule matching `rule`, and no request.
 */
async function expectRejected(call: Call, argument: string, rule: RegExp) {
  const calls = json(catalogBody);
  const client = new StorefrontClient({ apiKey: KEY });
  let promise: Promise<unknown> | undefined;
  expect(() => {
    promise = call(client);
  }).not.toThrow();
  expect(promise).toBeInstanceOf(Promise);
  const error = await (promise as Promise<unknown>).then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );

  expect(error).toBeInstanceOf(InvalidInputError);
  expect(isStorefrontError(error, 'INVALID_INPUT')).toBe(true);
  const e = error as InvalidInputError;
  expect(e.argument).toBe(argument);
  expect(e.rule).toMatch(rule);
  // Named by the call that refused it.
  expect(e.operation).toMatch(/^[a-z][A-Za-z]+$/);
  expect(e.message).toBe(`${e.operation}: invalid ${argument}: ${e.rule}`);
  expect(calls).toHaveLength(0);
  return e;
}

const BLANK = /must not be blank/;
const STRING = /must be a string/;
const POSITIVE_INT = /must be a positive integer/;
const QUANTITY = /must be an integer from 1 to 1,000,000/;
const UNKNOWN = /unknown option/;

const cart = (items: unknown) => ({ username: 'Player123', items: bad<[]>(items) });
const item = (fields: Record<string, unknown>) => cart([{ id: 12, quantity: 1, ...fields }]);

describe('getCatalog', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['categoryId 0', { categoryId: 0 }, 'options.categoryId', POSITIVE_INT],
    ['categoryId 1.5', { categoryId: 1.5 }, 'options.categoryId', POSITIVE_INT],
    ['categoryId -1', { categoryId: -1 }, 'options.categoryId', POSITIVE_INT],
    ['categoryId NaN', { categoryId: Number.NaN }, 'options.categoryId', POSITIVE_INT],
    ["categoryId '3'", { categoryId: '3' }, 'options.categoryId', POSITIVE_INT],
    ['an unknown option, with a did-you-mean', { categoryid: 3 }, 'options.categoryid', /unknown option \(did you mean categoryId\?\)/],
    ['an unknown option, the known ones listed', { category: 3 }, 'options.category', /^unknown option; known: categoryId, signal, timeoutMs$/],
    ['options not an object', 'all', 'options', /must be an object/],
    ['a signal that is not an AbortSignal', { signal: {} }, 'options.signal', /must be an AbortSignal/],
  ])('rejects %s', async (_, options, argument, rule) => {
    await expectRejected((c) => c.getCatalog(bad(options)), argument, rule);
  });
});

describe('a bad argument of a call, as the error describes it', () => {
  const client = () => new StorefrontClient({ apiKey: KEY, retry: 0 });
  const ruleOf = async (categoryId: unknown) => {
    const error = await client().getCatalog({ categoryId: bad(categoryId) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    return (error as InvalidInputError).rule;
  };

  it('by its type, its number, or a short string as sent; a longer string by its length only', async () => {
    const described: Array<[unknown, string]> = [
      [[1], 'an array'],
      [{}, 'an object'],
      [null, 'null'],
      [1.5, '1.5'],
      [true, 'boolean'],
      ['x'.repeat(40), JSON.stringify('x'.repeat(40))],
      ['x'.repeat(41), 'a string of 41 characters'],
    ];
    for (const [value, words] of described) expect(await ruleOf(value)).toBe(`must be a positive integer, got ${words}`);
    const error = await client().claimVoteReward({ player: 'Ann', reward: bad(undefined), amount: 1 }).catch((e: unknown) => e);
    expect((error as InvalidInputError).rule).toBe('must be a string, got undefined');
  });

  it('a call\'s timeoutMs: from 1 to 2,147,483,647 ms (the longest timer)', async () => {
    const words = 'must be a positive integer number of milliseconds up to 2147483647';
    for (const timeoutMs of [0, 2_147_483_648]) {
      const error = await client().getCatalog({ timeoutMs }).catch((e: unknown) => e);
      expect((error as InvalidInputError).rule).toBe(`${words}, got ${timeoutMs}`);
    }
    json(catalogBody);
    await expect(client().getCatalog({ timeoutMs: 2_147_483_647 })).resolves.toBeDefined();
  });
});

describe('checkout', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['no input', undefined, 'input', /must be an object with username and items/],
    ['null input', null, 'input', /must be an object with username and items/],
    ["username ''", { ...item({}), username: '' }, 'input.username', BLANK],
    ["username '  '", { ...item({}), username: '  ' }, 'input.username', BLANK],
    ['username 42', { ...item({}), username: 42 }, 'input.username', STRING],
    ['missing items', { username: 'Player123' }, 'input.items', /must be an array/],
    ['items not an array', cart({ id: 1, quantity: 1 }), 'input.items', /must be an array/],
    ['an empty cart', cart([]), 'input.items', /must not be empty/],
    ['an item that is not an object', cart([12]), 'input.items[0]', /must be an object/],
    ['an item null', cart([null]), 'input.items[0]', /^must be an object, got null$/],
    ['id 0', item({ id: 0 }), 'input.items[0].id', POSITIVE_INT],
    ['id 1.5', item({ id: 1.5 }), 'input.items[0].id', POSITIVE_INT],
    ['id -1', item({ id: -1 }), 'input.items[0].id', POSITIVE_INT],
    ['id NaN', item({ id: Number.NaN }), 'input.items[0].id', POSITIVE_INT],
    ["id '12' (a string)", item({ id: '12' }), 'input.items[0].id', POSITIVE_INT],
    ['quantity 0', item({ quantity: 0 }), 'input.items[0].quantity', QUANTITY],
    ['quantity 1.5', item({ quantity: 1.5 }), 'input.items[0].quantity', QUANTITY],
    ['quantity -1', item({ quantity: -1 }), 'input.items[0].quantity', QUANTITY],
    ['quantity 2,000,000', item({ quantity: 2_000_000 }), 'input.items[0].quantity', QUANTITY],
    ['quantity NaN', item({ quantity: Number.NaN }), 'input.items[0].quantity', QUANTITY],
    ['a missing quantity', cart([{ id: 12 }]), 'input.items[0].quantity', QUANTITY],
    ['a bad second line', cart([{ id: 12, quantity: 1 }, { id: 13, quantity: 0 }]), 'input.items[1].quantity', QUANTITY],
    ["coupon ''", { ...item({}), coupon: '' }, 'input.coupon', BLANK],
    ['an unknown field', { ...item({}), couponCode: 'SPRING' }, 'input.couponCode', UNKNOWN],
  ])('rejects %s', async (_, input, argument, rule) => {
    await expectRejected((c) => c.checkout(bad(input)), argument, rule);
  });

  it('rejects an unknown per-call option', async () => {
    await expectRejected((c) => c.checkout({ username: 'P', items: [{ id: 1, quantity: 1 }] }, bad({ timeout: 5 })), 'options.timeout', UNKNOWN);
  });

  it('accepts the limits: quantity 1 and 1,000,000', async () => {
    const calls = json({ status: 'SUCCESS', isFree: true, transactionId: 't' });
    await new StorefrontClient({ apiKey: KEY }).checkout({ username: 'P', items: [{ id: 1, quantity: 1 }, { id: 2, quantity: 1_000_000 }] });
    expect(calls).toHaveLength(1);
  });
});

const claimMethods: Array<[string, (c: StorefrontClient, name: unknown, options?: unknown) => Promise<unknown>, string]> = [
  ['claim', (c, name, options) => c.claim(bad(name), bad(options)), 'claim'],
  ['previewClaim', (c, name, options) => c.previewClaim(bad(name), bad(options)), 'claim'],
  ['claimLegacy', (c, name, options) => c.claimLegacy(bad(name), bad(options)), 'claimLegacy'],
  ['claimStoreTransactions', (c, name, options) => c.claimStoreTransactions(bad(name), bad(options)), 'claimStoreTransactions'],
];

describe.each(claimMethods)('%s', (_, method, operation) => {
  it.each<[string, unknown, RegExp]>([
    ["''", '', BLANK],
    ["'  '", '  ', BLANK],
    ["'\\t\\n'", '\t\n', BLANK],
    ['42', 42, STRING],
    ['undefined', undefined, STRING],
    ['null', null, STRING],
  ])('rejects playerName %s', async (__, name, rule) => {
    const error = await expectRejected((c) => method(c, name), 'playerName', rule);
    expect(error.operation).toBe(operation);
    expect(error.message.startsWith(`${operation}: `)).toBe(true);
  });

  it('rejects an unknown per-call option', async () => {
    await expectRejected((c) => method(c, 'Player123', { timeout: 5 }), 'options.timeout', UNKNOWN);
  });

  it('rejects a per-call timeoutMs outside its rule', async () => {
    await expectRejected((c) => method(c, 'Player123', { timeoutMs: 0 }), 'options.timeoutMs', /positive integer number of milliseconds/);
  });

  it('rejects a signal that is not an AbortSignal', async () => {
    await expectRejected((c) => method(c, 'Player123', { signal: 'stop' }), 'options.signal', /must be an AbortSignal/);
  });
});

describe('claim options', () => {
  it.each<[string, unknown, string, RegExp]>([
    ["preview 'yes'", { preview: 'yes' }, 'options.preview', /must be a boolean/],
    ['includeRawTransactions 1', { includeRawTransactions: 1 }, 'options.includeRawTransactions', /must be a boolean/],
    ['a misspelt option, with a did-you-mean', { includerawtransactions: true }, 'options.includerawtransactions', /did you mean includeRawTransactions\?/],
  ])('rejects %s', async (_, options, argument, rule) => {
    await expectRejected((c) => c.claim('Player123', bad(options)), argument, rule);
  });
});

describe('claimVoteReward', () => {
  const vote = (fields: Record<string, unknown>) => bad<Parameters<StorefrontClient['claimVoteReward']>[0]>({ player: 'Player123', reward: '1', amount: 'all', ...fields });

  it.each<[string, unknown, string, RegExp]>([
    ['no input', undefined, 'input', /must be an object with player, reward and amount/],
    ['null input', null, 'input', /must be an object with player, reward and amount/],
    ["player ''", vote({ player: '' }), 'input.player', BLANK],
    ["player '  '", vote({ player: '  ' }), 'input.player', BLANK],
    ['player 7', vote({ player: 7 }), 'input.player', STRING],
    ["reward ''", vote({ reward: '' }), 'input.reward', BLANK],
    ["reward '  '", vote({ reward: '  ' }), 'input.reward', BLANK],
    ['reward 0', vote({ reward: 0 }), 'input.reward', POSITIVE_INT],
    ['reward 1.5', vote({ reward: 1.5 }), 'input.reward', POSITIVE_INT],
    ['amount 0', vote({ amount: 0 }), 'input.amount', POSITIVE_INT],
    ["amount 'some'", vote({ amount: 'some' }), 'input.amount', /got "some"/],
    ['amount 1.5', vote({ amount: 1.5 }), 'input.amount', POSITIVE_INT],
    ['amount -1', vote({ amount: -1 }), 'input.amount', POSITIVE_INT],
    ['amount NaN', vote({ amount: Number.NaN }), 'input.amount', POSITIVE_INT],
    ["amount 'ALL'", vote({ amount: 'ALL' }), 'input.amount', /got "ALL"/],
    ['a missing amount', { player: 'Player123', reward: '1' }, 'input.amount', POSITIVE_INT],
    ['an unknown field', vote({ points: 3 }), 'input.points', UNKNOWN],
  ])('rejects %s', async (_, input, argument, rule) => {
    await expectRejected((c) => c.claimVoteReward(bad(input)), argument, rule);
  });

  it('rejects an unknown per-call option', async () => {
    await expectRejected((c) => c.claimVoteReward(vote({}), bad({ retry: 1 })), 'options.retry', UNKNOWN);
  });
});

describe('constructor', () => {
  beforeEach(() => {
    // Empty reads as unset; vitest restores the real values (unstubEnvs in the config).
    vi.stubEnv('TEAMGAMES_API_KEY', '');
    vi.stubEnv('TEAMGAMES_BASE_URL', '');
  });

  /** The constructor is the one place that throws synchronously. */
  function constructionError(options: unknown): InvalidInputError {
    let error: unknown;
    try {
      new StorefrontClient(bad(options));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }

  it.each<[string, unknown, string, RegExp]>([
    // TEAMGAMES_API_KEY is unset for these (see beforeEach): the error names both ways in.
    ['no options', undefined, 'options.apiKey', /is required: pass \{ apiKey \}.* or set the TEAMGAMES_API_KEY environment variable/],
    ['options null', null, 'options', /must be an object, got null/],
    ['a missing apiKey', {}, 'options.apiKey', /is required: .*TEAMGAMES_API_KEY/],
    ["apiKey ''", { apiKey: '' }, 'options.apiKey', BLANK],
    ["apiKey '  '", { apiKey: '  ' }, 'options.apiKey', BLANK],
    ['apiKey 42', { apiKey: 42 }, 'options.apiKey', STRING],
    ['an apiKey with a trailing newline', { apiKey: `${KEY}\n` }, 'options.apiKey', /leading or trailing whitespace/],
    ['an apiKey that cannot travel in a header (a pasted en dash)', { apiKey: 'tg–key' }, 'options.apiKey', /HTTP header/],
    ['an apiKey with a control character', { apiKey: 'tg-\u0000-key' }, 'options.apiKey', /HTTP header/],
    ['apikey (a typo), with a did-you-mean', { apikey: KEY }, 'options.apikey', /unknown option \(did you mean apiKey\?\)/],
    ['an unknown option', { apiKey: KEY, cache: true }, 'options.cache', UNKNOWN],
    ['http: to a non-loopback host', { apiKey: KEY, baseUrl: 'http://example.com' }, 'options.baseUrl', /^plain http: is only allowed for loopback hosts \(localhost, 127\.0\.0\.1, \[::1\]\); use https: for example\.com$/],
    ['a relative URL', { apiKey: KEY, baseUrl: '/api' }, 'options.baseUrl', /absolute http\(s\) URL/],
    ['ftp:', { apiKey: KEY, baseUrl: 'ftp://127.0.0.1/' }, 'options.baseUrl', /must use https:/],
    ["baseUrl ''", { apiKey: KEY, baseUrl: '' }, 'options.baseUrl', BLANK],
    ['a baseUrl with credentials', { apiKey: KEY, baseUrl: 'https://user:pass@api.teamgames.io' }, 'options.baseUrl', /^must not contain credentials$/],
    ['a baseUrl with a user name only', { apiKey: KEY, baseUrl: 'https://user@api.teamgames.io' }, 'options.baseUrl', /^must not contain credentials$/],
    ['a baseUrl with a password only', { apiKey: KEY, baseUrl: 'https://:pass@api.teamgames.io' }, 'options.baseUrl', /^must not contain credentials$/],
    ['a baseUrl with a query', { apiKey: KEY, baseUrl: 'https://api.teamgames.io/?key=1' }, 'options.baseUrl', /^must not have a query or a fragment$/],
    ['a baseUrl with a fragment', { apiKey: KEY, baseUrl: 'https://api.teamgames.io/#top' }, 'options.baseUrl', /^must not have a query or a fragment$/],
    ['timeoutMs 0', { apiKey: KEY, timeoutMs: 0 }, 'options.timeoutMs', /positive integer/],
    ['timeoutMs -1', { apiKey: KEY, timeoutMs: -1 }, 'options.timeoutMs', /positive integer/],
    ['timeoutMs 1.5', { apiKey: KEY, timeoutMs: 1.5 }, 'options.timeoutMs', /positive integer/],
    ['retry -1', { apiKey: KEY, retry: -1 }, 'options.retry', /integer from 0 to 10/],
    ['retry 11', { apiKey: KEY, retry: 11 }, 'options.retry', /integer from 0 to 10/],
    ['retry 1.5', { apiKey: KEY, retry: 1.5 }, 'options.retry', /integer from 0 to 10/],
    ['catalogCacheTtlMs -1', { apiKey: KEY, catalogCacheTtlMs: -1 }, 'options.catalogCacheTtlMs', /integer from 0/],
    ["rateLimit 'yes'", { apiKey: KEY, rateLimit: 'yes' }, 'options.rateLimit', /must be a boolean/],
    ['now not a function', { apiKey: KEY, now: 5 }, 'options.now', /must be a function/],
    ['fetch not a function', { apiKey: KEY, fetch: 'fetch' }, 'options.fetch', /must be a function/],
    ['a two-line userAgent', { apiKey: KEY, userAgent: 'Bot\r\nX-Evil: 1' }, 'options.userAgent', /one line/],
    ['a userAgent with a trailing newline', { apiKey: KEY, userAgent: 'Bot/1.0\n' }, 'options.userAgent', /leading or trailing whitespace/],
    ["userAgent ''", { apiKey: KEY, userAgent: '' }, 'options.userAgent', BLANK],
  ])('throws for %s', (_, options, argument, rule) => {
    const error = constructionError(options);
    expect(error.argument).toBe(argument);
    expect(error.rule).toMatch(rule);
    expect(error.message).toMatch(/^StorefrontClient: invalid /);
  });

  it.each(['http://127.0.0.1:4010', 'http://localhost', 'http://[::1]:4010', 'https://sandbox.example.com/base'])('accepts baseUrl %s and sends there', async (baseUrl) => {
    const calls = json(catalogBody);
    await new StorefrontClient({ apiKey: KEY, baseUrl }).getCatalog();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url.href).toBe(`${baseUrl}/api/v2/client/global/products`);
  });

  it('a base URL ending in slashes: sent there without them', async () => {
    const calls = json(catalogBody);
    await new StorefrontClient({ apiKey: KEY, baseUrl: 'https://sandbox.example.com/base//' }).getCatalog();
    expect(calls[0]?.url.href).toBe('https://sandbox.example.com/base/api/v2/client/global/products');
    expect(String(new StorefrontClient({ apiKey: KEY, baseUrl: 'https://sandbox.example.com/base//' }))).toBe('StorefrontClient { baseUrl: https://sandbox.example.com/base }');
  });

  it('defaults to the production base URL', async () => {
    const calls = json(catalogBody);
    await new StorefrontClient({ apiKey: KEY }).getCatalog();
    expect(calls[0]?.url.origin).toBe(BASE);
  });

  it('accepts retry 0 and 10, catalogCacheTtlMs 0 and rateLimit false', () => {
    expect(() => new StorefrontClient({ apiKey: KEY, retry: 0, catalogCacheTtlMs: 0, rateLimit: false })).not.toThrow();
    expect(() => new StorefrontClient({ apiKey: KEY, retry: 10 })).not.toThrow();
  });
});

describe('regressions', () => {
  // Found by the input fuzz: items.map skipped the hole and JSON.stringify sent `[null]`.
  it('a sparse cart is refused, not sent as null', async () => {
    // eslint-disable-next-line no-sparse-arrays
    const sparse = bad<[]>([, { id: 1, quantity: 1 }]);
    await expectRejected((c) => c.checkout({ username: 'Player123', items: sparse }), 'input.items[0]', /must be an object/);
  });
});

describe('plain http: only to a literal loopback address or localhost', () => {
  function refusal(baseUrl: string): InvalidInputError {
    try {
      new StorefrontClient({ apiKey: KEY, baseUrl });
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      return error as InvalidInputError;
    }
    throw new Error(`expected ${baseUrl} to be refused`);
  }

  // The resolver looks up a name under .localhost like any other (DNS, /etc/hosts): it
  // may not be this machine, and the key would travel in clear.
  it('a name under .localhost: the rule says why it is not loopback', () => {
    expect(refusal('http://foo.localhost:8080').rule).toBe('plain http: is only allowed for loopback hosts (localhost, 127.0.0.1, [::1]) (foo.localhost is a name looked up by the resolver, not a loopback address); use https: for foo.localhost');
  });

  it.each(['http://foo.localhost:8080', 'http://a.b.localhost', 'http://localhost.:4010', 'http://127.0.0.1.nip.io'])('refuses %s, naming the argument and the rule', (baseUrl) => {
    const error = refusal(baseUrl);
    expect(error.argument).toBe('options.baseUrl');
    expect(error.rule).toMatch(/^plain http: is only allowed for loopback hosts \(localhost, 127\.0\.0\.1, \[::1\]\)/);
    expect(error.message).toContain(`StorefrontClient: invalid options.baseUrl: plain http: is only allowed for loopback hosts`);
    expect(error.rule).toContain(`use https: for ${new URL(baseUrl).hostname}`);
  });

  it('says why a .localhost name is not loopback', () => {
    expect(refusal('http://foo.localhost:8080').rule).toBe(
      'plain http: is only allowed for loopback hosts (localhost, 127.0.0.1, [::1]) (foo.localhost is a name looked up by the resolver, not a loopback address); use https: for foo.localhost',
    );
  });

  it.each(['http://localhost:4010', 'http://127.0.0.1', 'http://127.255.0.9:80', 'http://127.1:4010', 'http://[::1]', 'http://[0:0:0:0:0:0:0:1]:4010', 'https://foo.localhost'])('accepts %s', (baseUrl) => {
    expect(() => new StorefrontClient({ apiKey: KEY, baseUrl })).not.toThrow();
  });
});
