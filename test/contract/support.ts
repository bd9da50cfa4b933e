/**
 * The contract suite's fixtures: one seed, two transports (msw in process, real HTTP via
 * `listen()`), and `useContract`, which gives each `describe.each` block a fresh mock
 * state and a fresh SDK client per test, on the mock's clock.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { StorefrontClient, encodeApiKey, type StorefrontClientOptions } from 'teamgames-sdk';
import { createMockService, type MockSeed, type MockService } from 'teamgames-sdk/mock';
import { transports, type Transport } from '../mock/fixtures.js';

/** The mock's frozen start: 2026-01-01T00:00:00Z. Time moves only by `mock.clock`. */
export const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Raw keys of the two game servers of the seed (test values, not secrets). */
export const KEY = 'contract-key-store';
export const KEY_UNCONFIGURED = 'contract-key-unconfigured';

export const TEXT = {
  success: 'Transaction has been completed. Thank you for the purchase!',
  noItems: 'There are currently no items to claim.',
  invalidPlayer: 'Invalid player name.',
  productNotFound: 'The product could not be found.',
  notVoted: 'You have not voted yet.',
  rewardNotFound: 'The reward could not be found.',
} as const;

/**
 * One product per catalog or checkout rule, so each scenario names what it exercises.
 * Store gateway: minimum charge 1.00, maximum total 100.00, at most 3 lines.
 */
export const contractSeed: MockSeed = {
  servers: [
    {
      apiKey: KEY,
      name: 'Contract store',
      gateway: { minimumCharge: 1, maximumTotal: 100, maximumItems: 3 },
      coupons: [
        { code: 'SPRING', percentOff: 10 },
        { code: 'OLD', percentOff: 50, expiresAt: '2025-06-01T00:00:00Z' },
      ],
      categories: [
        { id: 1, name: 'Weapons' },
        { id: 2, name: 'Ranks' },
        { id: 3, name: 'Empty' },
      ],
      products: [
        { id: 1, productId: '42', name: 'Abyssal whip', price: 10, categoryIds: [1] },
        {
          id: 2,
          productId: 7, // a number on the wire
          name: 'Dragon sword',
          price: 20,
          quantity: 2,
          categoryIds: [1],
          sales: [
            { saleType: 'percentage', discountPercentage: 10 },
            { saleType: 'amount', discountAmount: 5 },
            { saleType: 'amount', discountAmount: 19, startDate: '2026-02-01T00:00:00Z' },
          ],
        },
        { id: 3, productId: 'rank_donator', name: 'Donator rank', price: 25, categoryIds: [2] },
        { id: 4, productId: 'claws', name: 'Dragon claws', price: 3, stock: 2 },
        { id: 5, productId: 'starter', name: 'Starter pack', price: 0 },
        { id: 6, productId: 'off', name: 'Disabled item', price: 1, disabled: true },
        { id: 7, productId: 'event', name: 'Event cape', price: 2, startDate: '2026-01-10T00:00:00Z', endDate: '2026-01-20T00:00:00Z' },
        { id: 8, productId: 'retired', name: 'Retired item', price: 1, endDate: '2025-12-31T00:00:00Z' },
        { id: 9, productId: 'give', name: 'Giveaway', price: 4, sales: [{ saleType: 'amount', discountAmount: 10 }] },
        { id: 10, productId: 'rank_vip', name: 'VIP rank', price: 60, categoryIds: [2] },
        { id: 11, productId: 'cheap', name: 'Cheap trinket', price: 0.5 },
        {
          id: 12,
          productId: 'minecraft:diamond',
          name: 'Diamonds',
          price: 5,
          quantity: 64,
          sales: [{ saleType: 'percentage', discountPercentage: 20, startDate: '2026-01-05T00:00:00Z', endDate: '2026-01-06T00:00:00Z' }],
        },
      ],
      rewards: [
        { id: 1, name: 'Vote Mystery Box', cost: 1, giveAmount: 1 },
        { id: 2, name: 'Scroll', cost: 5, giveAmount: 2 },
      ],
    },
    {
      apiKey: KEY_UNCONFIGURED,
      name: 'Store without a gateway',
      gateway: { configured: false },
      products: [{ id: 1, productId: 'thing', name: 'Thing', price: 2 }],
    },
  ],
};

/** The products the catalog lists at T0 (enabled and inside their window). */
export const LISTED_AT_T0 = [1, 2, 3, 4, 5, 9, 10, 11, 12];

// The two ways of reaching the mock are the ones its own wire tests use.
export { transports };
type Session = Awaited<ReturnType<Transport['start']>>;

export interface Contract {
  /** The mock of this `describe.each` block; reset after each test. */
  readonly mock: MockService;
  /** Where the SDK and plain fetch reach the mock. */
  readonly baseUrl: string;
  /**
   * A fresh client for `KEY` on the mock's clock. Defaults for the suite: no catalog
   * cache (scenarios change products) and no read retries (every answer arrives).
   */
  client(options?: Partial<StorefrontClientOptions>): StorefrontClient;
  /** Plain fetch of a wire operation, for asserting raw bodies. */
  raw: ReturnType<typeof rawWire>;
}

/**
 * Registers the hooks of one transport block and returns its context. Call it at the top
 * of a `describe.each(transports)` body.
 */
export function useContract(transport: Transport): Contract {
  const mock = createMockService({ seed: contractSeed, now: T0 });
  let session: Session | undefined;
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
    client: (options = {}) =>
      new StorefrontClient({
        apiKey: KEY,
        baseUrl: baseUrl(),
        now: mock.clock.now,
        catalogCacheTtlMs: 0,
        retry: 0,
        ...options,
      }),
    raw: rawWire(baseUrl),
  };
}

/** Plain-fetch calls in the exact wire shapes of SPEC §2 (what the SDK sends). */
export function rawWire(base: () => string) {
  const json = async (path: string, headers: Record<string, string>, body: unknown): Promise<unknown> => {
    const res = await fetch(base() + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const form = async (path: string, fields: Record<string, string>, key: string): Promise<unknown> => {
    const res = await fetch(base() + path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', 'X-API-Key': key },
      body: new URLSearchParams(fields).toString(),
    });
    return res.json();
  };
  return {
    catalog: (body: Record<string, unknown> = {}, key = KEY) =>
      json('/api/v2/client/global/products', { authorization: encodeApiKey(key) }, body),
    checkout: (username: string, items: Array<{ id: number; quantity: number }>, extra: Record<string, unknown> = {}, key = KEY) =>
      json('/api/v2/client/global/checkout/complete', { authorization: encodeApiKey(key) }, { username, cartItems: JSON.stringify(items), ...extra }),
    claim: (playerName: string, options: { preview?: boolean; includeRawTransactions?: boolean } = {}, key = KEY) =>
      json('/api/v4/store/transaction/update', { authorization: encodeApiKey(key) }, { playerName, preview: false, includeRawTransactions: false, ...options }),
    claimV3: (playerName: string, key = KEY) => json('/api/v3/store/transaction/update', { 'x-api-key': key }, { playerName }),
    storeClaim: (playerName: string, key = KEY) => form('/v3/store/transaction/claim', { playerName }, key),
    vote: (player: string, reward: string, amount: string, key = KEY) => form('/v3/vote/reward/claim', { player, reward, amount }, key),
  };
}

/** The numeric ids of a catalog's products. */
export const ids = (catalog: { products: ReadonlyArray<{ id: number }> }): number[] => catalog.products.map((p) => p.id);
