/**
 * The mock's seed types: the starting state of the mock, also the JSON format of the
 * CLI's `--seed` file. A leaf module (it imports nothing), so the rules and the state can
 * name these types without a cycle through the seed's schema.
 *
 * @module
 */

/**
 * The starting state of the mock, also the JSON format of the CLI's `--seed` file.
 *
 * @example
 * ```ts
 * const seed: MockSeed = {
 *   servers: [{
 *     apiKey: 'test-key', name: 'My RSPS',
 *     products: [{ id: 1, productId: 'dragon_scimitar', name: 'Dragon scimitar', price: 4.99 }],
 *   }],
 * };
 * ```
 */
export interface MockSeed {
  /** The game servers; each is its own store with its own key. At least one. */
  servers: MockSeedServer[];
}

/** One game server (one store) of a {@link MockSeed}. */
export interface MockSeedServer {
  /** The raw API key (printable ASCII, no spaces); unique across servers. */
  apiKey: string;
  /** Display name, shown by the CLI and in the state snapshot. */
  name?: string;
  /** Payment gateway limits; absent means configured, integration complete, no minimum charge, no maximums. */
  gateway?: MockSeedGateway;
  /**
   * Puts this `message` on every purchase row the claims answer (v3 and v4), e.g.
   * `"Thank you for your purchase!"` or `""`. Absent (the default): item rows carry no
   * `message`, as the official plugins expect of the live service. Set it to check that
   * your plugin does not take a one-item claim for a message-only row.
   */
  transactionMessage?: string;
  /** Coupon codes a checkout may send. */
  coupons?: MockSeedCoupon[];
  /** Catalog categories, referenced by `products[].categoryIds`. */
  categories?: MockSeedCategory[];
  /** The catalog. */
  products?: MockSeedProduct[];
  /** Vote rewards, claimed with points. */
  rewards?: MockSeedReward[];
}

/** Payment gateway configuration of a {@link MockSeedServer}. */
export interface MockSeedGateway {
  /** `false` makes every paid checkout answer `status: "ERROR"`. Default `true`. */
  configured?: boolean;
  /**
   * `false`: the store's payment integration is incomplete, and every paid checkout
   * answers `statusCode: "400"` (code `INTEGRATION_INCOMPLETE`). Default `true`.
   */
  integrationComplete?: boolean;
  /** A paid checkout below this total answers `status: "ERROR"`. Default 0. */
  minimumCharge?: number;
  /** A checkout above this total answers `statusCode: "400"`. Default: no maximum. */
  maximumTotal?: number;
  /** A checkout with more cart lines than this answers `statusCode: "400"`. Default: no maximum. */
  maximumItems?: number;
}

/** A coupon of a {@link MockSeedServer}; `percentOff` applies first, then `amountOff`. */
export interface MockSeedCoupon {
  /** The code the player types (matched ignoring letter case). */
  code: string;
  /** Percentage taken off the cart total, 0–100. */
  percentOff?: number;
  /** Amount taken off the cart total (after `percentOff`). */
  amountOff?: number;
  /** ISO 8601; from this instant on the coupon is rejected as expired. */
  expiresAt?: string;
}

/** A catalog category of a {@link MockSeedServer}. */
export interface MockSeedCategory {
  /** Positive integer id, the `categoryId` of a catalog request. */
  id: number;
  /** Display name. */
  name: string;
}

/** A catalog product of a {@link MockSeedServer}. */
export interface MockSeedProduct {
  /** Positive integer id (at most 2,147,483,647), the value used in carts; unique per server. */
  id: number;
  /** The merchant's own id (e.g. an in-game item id); a string, or an integer within a Java `int`. */
  productId: string | number;
  /** Display name. */
  name: string;
  /** List price, >= 0. */
  price: number;
  /** Units granted per unit bought, a positive integer. Default 1. */
  quantity?: number;
  /** Description shown in the catalog. Default `""`. */
  description?: string;
  /** Image URL shown in the catalog. Default `""`. */
  image?: string;
  /** A disabled product is hidden from the catalog and refused at checkout. */
  disabled?: boolean;
  /** ISO 8601; the product is listed from this instant on (inclusive). */
  startDate?: string;
  /** ISO 8601; the product is listed until this instant (exclusive). */
  endDate?: string;
  /** Categories the product belongs to (ids of `categories`). */
  categoryIds?: number[];
  /** Units left, an integer from 0 to 2,147,483,647; `null` or absent means unlimited. */
  stock?: number | null;
  /** Sales; only those active now are listed and applied. */
  sales?: MockSeedSale[];
}

/** A sale on a {@link MockSeedProduct}. */
export interface MockSeedSale {
  /** `"percentage"` uses `discountPercentage`, `"amount"` uses `discountAmount`. */
  saleType: 'percentage' | 'amount';
  /** Percentage off the list price, 0–100 (required for `"percentage"`). */
  discountPercentage?: number;
  /** Amount off the list price (required for `"amount"`). */
  discountAmount?: number;
  /** ISO 8601; the sale is active from this instant on (inclusive). */
  startDate?: string;
  /** ISO 8601; the sale is active until this instant (exclusive). */
  endDate?: string;
}

/** A vote reward of a {@link MockSeedServer}. */
export interface MockSeedReward {
  /** Positive integer id, the `reward` form field (integrators use it as the item id). */
  id: number;
  /** Display name. */
  name: string;
  /** Vote points per unit, a positive integer. */
  cost: number;
  /** Units given per unit claimed. Default 1. */
  giveAmount?: number;
}

/** A change to a vote reward for `updateReward`, as the owner makes on the dashboard: any reward field but `id`. */
export type MockRewardPatch = Partial<Omit<MockSeedReward, 'id'>>;

/** A change to a catalog product for `updateProduct`: any seed product field but `id`. */
export type MockProductPatch = Partial<Omit<MockSeedProduct, 'id'>>;
