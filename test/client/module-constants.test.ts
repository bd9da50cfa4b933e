/**
 * The decisions the client core keeps in module-level constants (issue #46 point 2): the
 * service's texts and codes the answers are read by, the option names and defaults, the
 * connection codes that prove nothing was sent, the statuses a read retries, the headers
 * masked, the brand of the errors. StrykerJS's `ignoreStatic` drops a mutant that only a
 * module's loading reaches; each test here loads the SDK afresh (vi.resetModules) inside the
 * test, so a changed constant is seen by a test that fails.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isStorefrontError as isStorefrontErrorHere, InvalidInputError as InvalidInputErrorHere } from '../../src/index.js';
import { KEY, TEXT } from '../support/fixtures.js';
import { v4 } from '../support/msw.js';

type Sdk = typeof import('../../src/index.js');

afterEach(() => {
  vi.resetModules();
});

/** The SDK loaded afresh, its module-level code run again. */
async function freshSdk(): Promise<Sdk> {
  vi.resetModules();
  return import('../../src/index.js');
}

/** A client of `sdk` whose requests `answer` answers; the requests are recorded. */
function clientOf(sdk: Sdk, answer: (path: string) => Response | Promise<Response>, options: Record<string, unknown> = {}) {
  const sent: Array<{ path: string; headers: Record<string, string> }> = [];
  const fetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const path = new URL(String(url)).pathname;
    sent.push({ path, headers: init?.headers as Record<string, string> });
    return answer(path);
  };
  return { client: new sdk.StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch, ...options }), sent };
}

describe('the texts and codes the answers are read by', () => {
  it('v4 codes, v3 message rows, vote message rows, and the texts the SDK writes itself', async () => {
    const sdk = await freshSdk();
    for (const code of ['SUCCESS', 'PREVIEW', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER']) {
      expect((await clientOf(sdk, () => Response.json(v4(code))).client.claim('Ann')).code).toBe(code);
    }
    const legacy = (body: unknown) => clientOf(sdk, () => Response.json(body)).client.claimLegacy('Ann');
    expect(await legacy([])).toMatchObject({ code: 'NO_ITEMS', message: TEXT.noItems });
    expect((await legacy([{ message: TEXT.noItems }])).code).toBe('NO_ITEMS');
    expect((await legacy([{ message: TEXT.rateLimit }])).code).toBe('RATE_LIMIT');
    expect((await legacy([{ message: TEXT.invalidPlayer }])).code).toBe('INVALID_PLAYER');
    expect((await legacy([{ message: TEXT.productNotFound }])).code).toBe('PRODUCT_NOT_FOUND');
    await expect(legacy([{ message: TEXT.serverNotFound }])).rejects.toBeInstanceOf(sdk.AuthenticationError);
    const rows = [{ player_name: 'Ann', product_id: 1, product_name: 'Whip', product_price: 1, product_amount: 1, amount_purchased: 1 }];
    expect(await legacy(rows)).toMatchObject({ code: 'SUCCESS', message: TEXT.success });

    // What a vote delivery reports of a message-only row (deliverVoteReward's code).
    const { voteMessageCode } = await import('../../src/wire/vote-reward.js');
    const vote = async (message: string) => voteMessageCode(message);
    expect(await vote(TEXT.notVoted)).toBe('NOT_VOTED');
    expect(await vote('Insufficient Points')).toBe('INSUFFICIENT_POINTS');
    expect(await vote(TEXT.rewardNotFound)).toBe('REWARD_NOT_FOUND');
    expect(await vote('Invalid amount.')).toBe('INVALID_AMOUNT');
    expect(await vote(TEXT.invalidPlayer)).toBe('INVALID_PLAYER');

    const guarded = clientOf(sdk, () => Response.json(v4('NO_ITEMS')), { rateLimit: true }).client;
    await guarded.claim('Ann');
    expect(await guarded.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', message: TEXT.rateLimitV4 });
  });
});

describe('the options', () => {
  it('every option name is known, the derivable ones change, the defaults hold', async () => {
    const sdk = await freshSdk();
    const client = new sdk.StorefrontClient({
      apiKey: KEY,
      baseUrl: 'https://api.teamgames.io',
      timeoutMs: 1_000,
      retry: 0,
      maxResponseBytes: 256 * 1024 * 1024,
      catalogCacheTtlMs: 0,
      rateLimit: false,
      now: () => 0,
      fetch: async () => Response.json(v4('NO_ITEMS')),
      userAgent: 'x/1',
      onEvent: () => undefined,
      journal: new sdk.MemoryJournal(),
    });
    expect(() => client.withOptions({ timeoutMs: 1, retry: 1, maxResponseBytes: 1_024, fetch: globalThis.fetch, userAgent: 'y/2', onEvent: () => undefined })).not.toThrow();
    expect(() => client.withOptions({ rateLimit: true } as never)).toThrow(/cannot differ on a derived client/);
    expect(() => new sdk.StorefrontClient({ apiKey: KEY, maxResponseBytes: 256 * 1024 * 1024 + 1 })).toThrow(/options.maxResponseBytes/);

    // The defaults: production, 16 MiB, two retries.
    const { client: byDefault, sent } = clientOf(sdk, (path) => (path.endsWith('products') ? new Response('{}', { headers: { 'content-length': String(16 * 1024 * 1024 + 1) } }) : Response.json(v4('NO_ITEMS'))), { retry: undefined });
    expect((await byDefault.claim('Ann')).code).toBe('NO_ITEMS');
    await expect(byDefault.getCatalog()).rejects.toBeInstanceOf(sdk.ResponseTooLargeError);
    expect(sent.map((s) => s.path)).toEqual(['/api/v4/store/transaction/update', '/api/v2/client/global/products']);
    expect(sent[0]?.headers['content-type']).toBe('application/json');
    expect(String(byDefault)).toBe('StorefrontClient { baseUrl: https://api.teamgames.io }');
    expect(inspect(byDefault)).toBe('StorefrontClient { baseUrl: https://api.teamgames.io }');
    const { client: retrying, sent: tries } = clientOf(sdk, () => new Response('busy', { status: 503, headers: { 'retry-after': '0' } }), { retry: undefined });
    await expect(retrying.getCatalog()).rejects.toBeInstanceOf(sdk.HttpError);
    expect(tries).toHaveLength(3);
  });

  it('the key and base URL come from TEAMGAMES_API_KEY and TEAMGAMES_BASE_URL', async () => {
    vi.stubEnv('TEAMGAMES_API_KEY', 'from-env');
    vi.stubEnv('TEAMGAMES_BASE_URL', 'http://127.0.0.1:9');
    const sdk = await freshSdk();
    expect(sdk.API_KEY_ENV).toBe('TEAMGAMES_API_KEY');
    expect(sdk.BASE_URL_ENV).toBe('TEAMGAMES_BASE_URL');
    expect(String(new sdk.StorefrontClient())).toBe('StorefrontClient { baseUrl: http://127.0.0.1:9 }');
    vi.stubEnv('TEAMGAMES_BASE_URL', '');
    expect(sdk.DEFAULT_BASE_URL).toBe('https://api.teamgames.io');
    expect(String(new sdk.StorefrontClient())).toBe('StorefrontClient { baseUrl: https://api.teamgames.io }');
  });
});

describe('the wire and the errors', () => {
  it('connection codes that prove nothing was sent, the statuses retried, the headers masked, the brand, the operation names', async () => {
    const sdk = await freshSdk();
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']) {
      const { client } = clientOf(sdk, () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code } })));
      await expect(client.claim('Ann')).rejects.toBeInstanceOf(sdk.NetworkError);
    }

    const events: Array<Record<string, string>> = [];
    const { client } = clientOf(sdk, () => Response.json([]), { onEvent: (event: { type: string; headers?: Record<string, string> }) => event.headers && events.push(event.headers) });
    await client.claimLegacy('Ann');
    await client.claimVoteReward({ player: 'Ann', reward: 1, amount: 1 }).catch(() => undefined);
    expect(events.map((headers) => headers['x-api-key'])).toEqual(['<redacted>', '<redacted>']);
    const { maskHeaders, Credentials } = await import('../../src/auth.js');
    const headers = new Headers({ authorization: 'a', 'x-api-key': 'b', cookie: 'c', 'proxy-authorization': 'd', accept: 'e' });
    expect(maskHeaders(headers)).toEqual({ authorization: '<redacted>', 'x-api-key': '<redacted>', cookie: '<redacted>', 'proxy-authorization': '<redacted>', accept: 'e' });
    expect(inspect(new Credentials(KEY))).toBe('[Credentials]');

    // One brand for every copy of the SDK (the dual-package hazard).
    const error = await client.checkout({ username: 'Ann', items: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(sdk.InvalidInputError);
    expect(error).not.toBeInstanceOf(InvalidInputErrorHere);
    expect(isStorefrontErrorHere(error, 'INVALID_INPUT')).toBe(true);
    expect(sdk.isStorefrontError(new InvalidInputErrorHere('x', 'y'))).toBe(true);
    expect((error as Error).message.startsWith('checkout: invalid ')).toBe(true);
  });
});
