/**
 * The tests' one fixture set: the start time, the keys, the store seed (one product per
 * catalog or checkout rule, so each test names what it exercises), and the service's
 * player-facing texts. The mock's wire suite (`test/mock/`), the end-to-end suite
 * (`test/e2e/`) and the client's unit tests (`test/client/`) all read them from here.
 */
import { encodeApiKey, type Transaction, type VoteReward } from 'teamgames-sdk';
import type { MockSeed } from 'teamgames-sdk/mock';

// One start time for tests and scripts alike; it lives in the reliability harness, which the scripts share.
export { T0 } from './reliability.js';

/** The raw key of the store (a test value, not a secret). */
export const KEY = 'test-key-store';
/** What v2 and v4 send in `Authorization`: the Base64 of the raw key. */
export const KEY_BASE64 = encodeApiKey(KEY);
/** The raw key of the second game server, whose payment gateway is not configured. */
export const KEY_UNCONFIGURED = 'test-key-unconfigured';

/**
 * The service's player-facing texts (SPEC §2.1), written out here once. Tests compare with
 * these, never with the mock's own table (`src/mock/service/texts.ts`), so a changed text fails.
 */
export const TEXT = {
  success: 'Transaction has been completed. Thank you for the purchase!',
  noItems: 'There are currently no items to claim.',
  /** The v3 message row; v4 ends the same text with a full stop ({@link TEXT.rateLimitV4}). */
  rateLimit: 'Please wait a few seconds before trying again',
  rateLimitV4: 'Please wait a few seconds before trying again.',
  serverNotFound: 'The game server could not be found. This could be that the Api Key is incorrect.',
  invalidPlayer: 'Invalid player name.',
  productNotFound: 'The product could not be found.',
  alreadyClaimed: 'Your purchases have already been claimed.',
  notVoted: 'You have not voted yet.',
  rewardNotFound: 'The reward could not be found.',
} as const;

/**
 * The store: one product per catalog or checkout rule. Gateway: minimum charge 1.00,
 * maximum total 100.00, at most 3 lines. A second server has no gateway.
 *
 * | id | product | rule |
 * |---|---|---|
 * | 1 | Abyssal whip, merchant id "42" | plain, category 1 |
 * | 2 | Dragon sword, merchant id 7 (a number), 2 units each | best active sale (15.00); a 19.00-off sale from February; an expired one |
 * | 3 | Donator rank, merchant id "rank_donator" | a word merchant id (product_id 0), category 2 |
 * | 4 | Dragon claws | stock 2 |
 * | 5 | Starter pack | free |
 * | 6 | Disabled item | disabled |
 * | 7 | Event cape | listed from 2026-01-10 to 2026-01-20 |
 * | 8 | Retired item | ended before T0 |
 * | 9 | Giveaway | a sale larger than the price |
 * | 10 | VIP rank | 60.00, category 2 |
 * | 11 | Cheap trinket | 0.50, below the minimum charge |
 * | 12 | Diamonds, 64 units each | 20 % off on 2026-01-05 only |
 */
export const storeSeed: MockSeed = {
  servers: [
    {
      apiKey: KEY,
      name: 'Test store',
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
            { saleType: 'percentage', discountPercentage: 90, endDate: '2025-12-31T00:00:00Z' },
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

/** What a claim hands Player1 for two Abyssal whips (id 1): merchant id "42" is sent as the int 42. */
export const TWO_WHIPS: Transaction = {
  player_name: 'Player1',
  product_id: 42,
  product_id_string: '42',
  product_name: 'Abyssal whip',
  product_price: 10,
  quantity_to_grant: 2,
  quantity_purchased: 2,
  product_amount: 2,
  amount_purchased: 2,
};

/** The vote reward row for 2 Scrolls (reward 2, 5 points each) spent from 12 points over 2 votes. */
export const TWO_SCROLLS: VoteReward = {
  message: 'You have claimed 2 x Scroll.',
  total_points: '12',
  vote_points: 2,
  votes_month: 2,
  give_amount: 4,
  reward_id: 2,
  reward_name: 'Scroll',
};

/** A game server whose item rows carry a `message` (the seed's `transactionMessage` switch). */
export const KEY_ITEM_MESSAGE = 'test-key-item-message';
/**
 * The `message` it puts on every item row: the no-items text itself, the nastiest case for
 * a plugin that takes "one row with a message" for a message-only row.
 */
export const ITEM_MESSAGE = TEXT.noItems;
/** A game server whose payment integration is incomplete (`gateway.integrationComplete: false`). */
export const KEY_INCOMPLETE = 'test-key-incomplete';
/** A game server at the limits of a Java int. */
export const KEY_LIMITS = 'test-key-limits';
/** The largest Java int, which every integer the mock sends must respect. */
export const JAVA_INT_MAX = 2_147_483_647;

/**
 * The store seed plus three game servers for the seed's switches and the integer limits:
 *
 * | key | server |
 * |---|---|
 * | {@link KEY_ITEM_MESSAGE} | `transactionMessage`: item rows carry {@link ITEM_MESSAGE}; product 1 "Abyssal whip", merchant id "42" |
 * | {@link KEY_INCOMPLETE} | `gateway.integrationComplete: false`; product 1 at 2.00, product 2 free |
 * | {@link KEY_LIMITS} | product 2147483647 "Gold" (merchant id "99999999999", 2,147 units each, 0.01); product 2 "Too much gold" (2,148 units each); reward 1 giving 1,000,000 units per point |
 */
export const switchesSeed: MockSeed = {
  servers: [
    ...storeSeed.servers,
    {
      apiKey: KEY_ITEM_MESSAGE,
      name: 'Store whose item rows carry a message',
      transactionMessage: ITEM_MESSAGE,
      products: [{ id: 1, productId: '42', name: 'Abyssal whip', price: 10 }],
    },
    {
      apiKey: KEY_INCOMPLETE,
      name: 'Store with an incomplete integration',
      gateway: { integrationComplete: false },
      products: [
        { id: 1, productId: 'thing', name: 'Thing', price: 2 },
        { id: 2, productId: 'gift', name: 'Gift', price: 0 },
      ],
    },
    {
      apiKey: KEY_LIMITS,
      name: 'Store at the limits of a Java int',
      products: [
        { id: JAVA_INT_MAX, productId: '99999999999', name: 'Gold', price: 0.01, quantity: 2_147, stock: JAVA_INT_MAX },
        { id: 2, productId: 'too-much', name: 'Too much gold', price: 0.01, quantity: 2_148 },
      ],
      rewards: [{ id: 1, name: 'Gold pile', cost: 1, giveAmount: 1_000_000 }],
    },
  ],
};
