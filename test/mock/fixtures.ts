import { setupServer } from 'msw/node';
import type { MockSeed, MockService } from '../../src/mock/index.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const KEY_A = 'test-key-a';
export const KEY_B = 'test-key-b';

export const b64 = (key: string): string => Buffer.from(key, 'utf8').toString('base64');

/** A seed with one product per catalog rule, so each test names what it exercises. */
export const testSeed: MockSeed = {
  servers: [
    {
      apiKey: KEY_A,
      name: 'Store A',
      gateway: { minimumCharge: 1, maximumTotal: 100, maximumItems: 3 },
      coupons: [
        { code: 'SPRING', percentOff: 10 },
        { code: 'FIVE', amountOff: 5 },
        { code: 'OLD', percentOff: 50, expiresAt: '2025-06-01T00:00:00Z' },
        { code: 'ALLFREE', percentOff: 100 },
      ],
      categories: [
        { id: 1, name: 'Weapons' },
        { id: 2, name: 'Ranks' },
        { id: 3, name: 'Empty' },
      ],
      products: [
        { id: 1, productId: '42', name: 'Whip', price: 10, categoryIds: [1] },
        {
          id: 2,
          productId: 'minecraft:diamond',
          name: 'Diamonds',
          price: 5,
          quantity: 64,
          categoryIds: [1],
          sales: [{ saleType: 'percentage', discountPercentage: 20 }],
        },
        {
          id: 3,
          productId: 7,
          name: 'Sword',
          price: 20,
          categoryIds: [1],
          sales: [
            { saleType: 'percentage', discountPercentage: 10 },
            { saleType: 'amount', discountAmount: 5 },
            { saleType: 'amount', discountAmount: 19, startDate: '2026-02-01T00:00:00Z' },
            { saleType: 'percentage', discountPercentage: 90, endDate: '2025-12-31T00:00:00Z' },
          ],
        },
        { id: 4, productId: 'claws', name: 'Claws', price: 3, stock: 2 },
        { id: 5, productId: 'starter', name: 'Starter pack', price: 0 },
        { id: 6, productId: 'off', name: 'Disabled', price: 1, disabled: true },
        { id: 7, productId: 'soon', name: 'Future', price: 1, startDate: '2026-02-01T00:00:00Z' },
        { id: 8, productId: 'gone', name: 'Past', price: 1, endDate: '2025-12-31T00:00:00Z' },
        { id: 9, productId: 'give', name: 'Giveaway', price: 4, sales: [{ saleType: 'amount', discountAmount: 10 }] },
        { id: 10, productId: 'rank_vip', name: 'VIP rank', price: 50, categoryIds: [2] },
        { id: 11, productId: 'cheap', name: 'Cheap', price: 0.5 },
      ],
      rewards: [
        { id: 1, name: 'Vote Mystery Box', cost: 1, giveAmount: 1 },
        { id: 2, name: 'Scroll', cost: 5, giveAmount: 2 },
      ],
    },
    {
      apiKey: KEY_B,
      name: 'Store B',
      gateway: { configured: false },
      products: [{ id: 1, productId: 'thing', name: 'Thing', price: 2 }],
    },
  ],
};

/** How the tests reach the mock: msw in process, or real HTTP via `listen()`. */
export interface Transport {
  name: string;
  start(mock: MockService): Promise<{ base: string; stop(): Promise<void>; afterEach(): void }>;
}

export const transports: Transport[] = [
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

/** Plain-fetch calls to each wire operation, in the exact shapes of SPEC §2. */
export function wire(base: () => string) {
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(base() + path, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });
  const postJson = async (path: string, headers: Record<string, string>, body: unknown) => {
    const res = await post(path, { 'content-type': 'application/json', ...headers }, JSON.stringify(body));
    return { status: res.status, body: (await res.json()) as any };
  };
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const formType = 'application/x-www-form-urlencoded; charset=UTF-8';

  return {
    post,
    catalog: (body: unknown = {}, key = KEY_A) =>
      postJson('/api/v2/client/global/products', { authorization: b64(key) }, body),
    checkout: (
      username: string,
      items: unknown,
      extra: Record<string, unknown> = {},
      headers: Record<string, string> = { authorization: b64(KEY_A) },
    ) =>
      postJson(
        '/api/v2/client/global/checkout/complete',
        headers,
        { username, cartItems: typeof items === 'string' ? items : JSON.stringify(items), ...extra },
      ),
    claim: async (
      playerName: unknown,
      options: Record<string, unknown> = {},
      headers: Record<string, string> = { authorization: b64(KEY_A) },
    ) =>
      (await postJson('/api/v4/store/transaction/update', headers, { playerName, ...options })).body,
    claimV3: async (playerName: string, headers: Record<string, string> = { 'x-api-key': KEY_A }) =>
      (await postJson('/api/v3/store/transaction/update', headers, { playerName })).body,
    claimV3Form: async (playerName: string, headers: Record<string, string> = { 'x-api-key': KEY_A }) => {
      const res = await post('/api/v3/store/transaction/update', { 'content-type': formType, ...headers }, form({ playerName }));
      return (await res.json()) as any;
    },
    storeClaim: async (playerName: string, headers: Record<string, string> = { 'X-API-Key': KEY_A }) => {
      const res = await post('/v3/store/transaction/claim', { 'content-type': 'application/x-www-form-urlencoded', ...headers }, form({ playerName }));
      return (await res.json()) as any;
    },
    vote: async (fields: Record<string, string>, headers: Record<string, string> = { 'X-API-Key': KEY_A }) => {
      const res = await post('/v3/vote/reward/claim', { 'content-type': formType, ...headers }, form(fields));
      return { status: res.status, body: (await res.json()) as any };
    },
    admin: async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await fetch(base() + path, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) as any };
    },
  };
}
