/**
 * Reaching the mock the two ways a program does (msw handlers in process, real HTTP via
 * `listen()`), shared by the mock's wire suite (`test/mock/contract.test.ts`) and the
 * end-to-end suite (`test/e2e/`). `useMockSession` gives each `describe.each(transports)`
 * block a mock on the store seed, reset after each test, with plain-fetch wire calls and
 * fresh SDK clients on the mock's clock.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { StorefrontClient, type StorefrontClientOptions } from 'teamgames-sdk';
import { createMockService, type MockSeed, type MockService } from 'teamgames-sdk/mock';
import { KEY, KEY_BASE64, T0, storeSeed } from './fixtures.js';

/** How the tests reach the mock: `mock.fetch` or msw in process, or real HTTP via `listen()`. */
export interface Transport {
  name: string;
  /** `fetch`: the one the SDK and the wire calls use (absent: the global one). */
  start(mock: MockService): Promise<{ base: string; fetch?: typeof globalThis.fetch; stop(): Promise<void>; afterEach(): void }>;
}

export const transports: Transport[] = [
  {
    name: 'in-process mock.fetch',
    async start(mock) {
      // A loopback port nothing listens on: a call that missed `fetch` fails at once, never leaves the machine.
      return { base: 'http://127.0.0.1:9', fetch: mock.fetch, stop: async () => undefined, afterEach: () => undefined };
    },
  },
  {
    name: 'in-process msw handlers',
    async start(mock) {
      const server = setupServer(...mock.handlers);
      server.listen({ onUnhandledRequest: 'error' });
      return {
        base: 'https://api.teamgames.io',
        stop: async () => server.close(),
        afterEach: () => server.resetHandlers(),
      };
    },
  },
  {
    name: 'real HTTP via listen()',
    async start(mock) {
      const { url, close } = await mock.listen({ port: 0 });
      return { base: url, stop: close, afterEach: () => undefined };
    },
  },
];

export interface MockSession {
  /** The mock of this `describe.each` block, on the store seed at T0; reset after each test. */
  readonly mock: MockService;
  /** Where the SDK and plain fetch reach the mock. */
  readonly baseUrl: string;
  /** The transport's `fetch`, for plain requests such as the pay page (msw and HTTP: the global one). */
  readonly fetch: typeof globalThis.fetch;
  /** Plain-fetch calls of each wire operation, for asserting raw bodies. */
  readonly api: ReturnType<typeof wire>;
  /**
   * A fresh SDK client for `KEY` on the mock's clock. Defaults for the tests: no catalog
   * cache (scenarios change products) and no read retries (every answer arrives).
   */
  client(options?: Partial<StorefrontClientOptions>): StorefrontClient;
}

/**
 * Registers the hooks of one transport block and returns its session. Call it at the top
 * of a `describe.each(transports)` body; `seed` replaces the store seed (for the seed's
 * switches).
 */
export function useMockSession(transport: Transport, seed: MockSeed = storeSeed): MockSession {
  const mock = createMockService({ seed, now: T0 });
  let session: Awaited<ReturnType<Transport['start']>> | undefined;
  const baseUrl = (): string => {
    if (session === undefined) throw new Error('the transport is not started');
    return session.base;
  };

  beforeAll(async () => {
    session = await transport.start(mock);
  });
  afterEach(() => {
    session?.afterEach();
    mock.reset();
  });
  afterAll(async () => {
    await session?.stop();
  });

  return {
    mock,
    get baseUrl() {
      return baseUrl();
    },
    fetch: (input, init) => (session?.fetch ?? fetch)(input, init),
    api: wire(baseUrl, () => session?.fetch ?? fetch),
    client: (options = {}) =>
      new StorefrontClient({
        apiKey: KEY,
        baseUrl: baseUrl(),
        now: mock.clock.now,
        catalogCacheTtlMs: 0,
        retry: 0,
        ...(session?.fetch === undefined ? {} : { fetch: session.fetch }),
        ...options,
      }),
  };
}

/**
 * Plain-fetch calls to each wire operation, in the exact shapes of SPEC §2 (as a plugin in
 * another language would send them), each named after the client method that calls its
 * endpoint. Each takes the headers to send; the default is the store key in the
 * operation's scheme.
 */
export function wire(base: () => string, fetcher: () => typeof globalThis.fetch = () => fetch) {
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetcher()(base() + path, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });
  const postJson = async (path: string, headers: Record<string, string>, body: unknown) => {
    const res = await post(path, { 'content-type': 'application/json', ...headers }, JSON.stringify(body));
    return { status: res.status, body: (await res.json()) as any };
  };
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const formType = 'application/x-www-form-urlencoded; charset=UTF-8';

  return {
    post,
    getCatalog: (body: unknown = {}, headers: Record<string, string> = { authorization: KEY_BASE64 }) =>
      postJson('/api/v2/client/global/products', headers, body),
    checkout: (
      username: string,
      items: unknown,
      extra: Record<string, unknown> = {},
      headers: Record<string, string> = { authorization: KEY_BASE64 },
    ) =>
      postJson(
        '/api/v2/client/global/checkout/complete',
        headers,
        { username, cartItems: typeof items === 'string' ? items : JSON.stringify(items), ...extra },
      ),
    claim: async (
      playerName: unknown,
      options: Record<string, unknown> = {},
      headers: Record<string, string> = { authorization: KEY_BASE64 },
    ) =>
      (await postJson('/api/v4/store/transaction/update', headers, { playerName, ...options })).body,
    claimLegacy: async (playerName: string, headers: Record<string, string> = { 'x-api-key': KEY }) =>
      (await postJson('/api/v3/store/transaction/update', headers, { playerName })).body,
    claimLegacyForm: async (playerName: string, headers: Record<string, string> = { 'x-api-key': KEY }) => {
      const res = await post('/api/v3/store/transaction/update', { 'content-type': formType, ...headers }, form({ playerName }));
      return (await res.json()) as any;
    },
    claimStoreTransactions: async (playerName: string, headers: Record<string, string> = { 'X-API-Key': KEY }) => {
      const res = await post('/v3/store/transaction/claim', { 'content-type': 'application/x-www-form-urlencoded', ...headers }, form({ playerName }));
      return (await res.json()) as any;
    },
    /** The store claim with a JSON body, which the description does not allow (form only). */
    claimStoreTransactionsJson: (playerName: string, headers: Record<string, string> = { 'X-API-Key': KEY }) =>
      postJson('/v3/store/transaction/claim', headers, { playerName }),
    claimVoteReward: async (fields: Record<string, string>, headers: Record<string, string> = { 'X-API-Key': KEY }) => {
      const res = await post('/v3/vote/reward/claim', { 'content-type': formType, ...headers }, form(fields));
      return { status: res.status, body: (await res.json()) as any };
    },
    admin: async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await fetcher()(base() + path, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) as any };
    },
  };
}

/** The numeric ids of a catalog's products (an SDK result or a raw body). */
export const ids = (catalog: { products: ReadonlyArray<{ id: number }> }): number[] => catalog.products.map((p) => p.id);
