import type {
  MockSeedCategory,
  MockSeedCoupon,
  MockSeedGateway,
  MockSeedProduct,
  MockSeedReward,
} from './seed-types.js';

/**
 * One purchase row: one per cart line (or per `addPurchase`). The keys are the service's
 * lowercase DB columns; these rows are what a v4 claim returns as `rawTransactions`.
 */
export interface PurchaseRow {
  /** Sequential row number (1, 2, 3 …) across the whole mock; restarts on `reset()`. */
  invoice: number;
  /** The checkout's `transactionId` (a UUID); `addPurchase` rows get their own. */
  transactionid: string;
  /** The player name, exactly as sent at checkout (case matters). */
  username: string;
  /** The catalog `id` of the product (the cart item id). */
  catalogid: number;
  /** The merchant `productId`, as a string. */
  productid: string;
  /** The product name when bought. */
  productname: string;
  /** Unit list price when bought. */
  price: number;
  /** Unit price with the best active sale when bought (a coupon applies to the checkout total, not here). */
  pricewithdiscount: number;
  /** Units bought. */
  quantity: number;
  /** Units to grant in game: `quantity` × the product's units per purchase. */
  givequantity: number;
  /** Always 0: the mock never re-delivers a row. */
  allowreclaim: number;
  /** `Gateway` (paid at the pay page), `Free` (zero total) or `Manual` (`addPurchase`). */
  paymenttype: 'Gateway' | 'Free' | 'Manual';
  /** `Pending` until the payment completes. */
  paymentstatus: 'Pending' | 'Paid';
  /** `Delivered` once a claim handed it out. */
  deliverystatus: 'Undelivered' | 'Delivered';
  /** ISO 8601 time of the checkout (mock clock). */
  created: string;
  /** ISO 8601 time of delivery, `null` until delivered. */
  delivered: string | null;
}

/** One line of a {@link CheckoutRecord}. */
export interface CheckoutLine {
  /** Catalog product id. */
  id: number;
  /** Units bought. */
  quantity: number;
  /** Unit price with the best active sale. */
  unitPrice: number;
  /** `unitPrice` × `quantity`, rounded to cents. */
  lineTotal: number;
}

/** A checkout and its payment state. */
export interface CheckoutRecord {
  /** UUID, also in the pay page URL. */
  transactionId: string;
  /** Name of the game server it belongs to. */
  serverName: string;
  /** The `username` sent at checkout. */
  username: string;
  /** The cart lines with their prices. */
  lines: CheckoutLine[];
  /** Sum of the line totals. */
  subtotal: number;
  /** The coupon code applied, as defined in the seed, or `null`. */
  coupon: string | null;
  /** What the player pays: subtotal after the coupon, rounded to cents, never below 0. */
  total: number;
  /** `true` when the total was zero (rows created paid). */
  isFree: boolean;
  /** `pending` until paid at the pay page or by `completePayment`; `cancelled` by `cancelPayment`. */
  status: 'pending' | 'paid' | 'cancelled';
  /** ISO 8601 creation time (mock clock). */
  created: string;
  /** ISO 8601 payment time, or `null`. */
  paid: string | null;
}

/** A player's vote points on one game server. */
export interface VoteRecord {
  /** The player name, exact. */
  playerName: string;
  /** Points available to spend on rewards. */
  vote_points: number;
  /** Votes recorded (each `recordVote` call counts one). */
  votes_month: number;
  /** Points ever recorded; spending does not lower it. */
  total_points: number;
}

/** A vote reward claim the mock carried out (its answer may have been lost): what it cost and gave. */
export interface VoteClaimRecord {
  /** The player name, exact. */
  playerName: string;
  /** The reward claimed. */
  rewardId: number;
  /** Units claimed. */
  units: number;
  /** Points spent per unit (the reward's price when the claim was carried out). */
  cost: number;
  /** Units given in all (`units × giveAmount`). */
  giveAmount: number;
  /** The player's `total_points` after it (the counters its answer carried). */
  total_points: number;
  /** The player's `vote_points` after it. */
  vote_points: number;
  /** ISO 8601 time it was carried out (mock clock). */
  at: string;
}

/** A product as the mock holds it now (seed format, with the current stock). */
export type MockProductState = MockSeedProduct;

/** Everything the mock holds for one game server, as `state()` reports it. */
export interface MockServerState {
  /** The server's name (`"Game server N"` when the seed gives none). */
  name: string;
  /** The raw API key (a sandbox key from the seed). */
  apiKey: string;
  /** The gateway configuration with defaults applied. */
  gateway: Required<Pick<MockSeedGateway, 'configured' | 'integrationComplete' | 'minimumCharge'>> &
    Pick<MockSeedGateway, 'maximumTotal' | 'maximumItems'>;
  /** The seed's `transactionMessage`, when set: the `message` of every claimed item row. */
  transactionMessage?: string;
  /** Coupons from the seed. */
  coupons: MockSeedCoupon[];
  /** Categories from the seed. */
  categories: MockSeedCategory[];
  /** Products now (after updates, removals and stock changes). */
  products: MockProductState[];
  /** Vote rewards from the seed. */
  rewards: MockSeedReward[];
  /** Vote records, one per player who voted. */
  votes: VoteRecord[];
  /** Every vote reward claim carried out, in order, lost answers and late landings included. */
  voteClaims: VoteClaimRecord[];
  /** Purchase rows in creation order. */
  purchases: PurchaseRow[];
  /**
   * The open claim rate windows: each player whose last accepted claim (the start of the
   * 10 s window) would refuse a claim now. A window the mock clock has passed is not
   * listed, and is forgotten from memory by the next claim on this server.
   */
  lastAcceptedClaims: Array<{
    /** The player name, exact. */
    playerName: string;
    /** ISO 8601 time of the player's last accepted claim. */
    at: string;
  }>;
}

/** A snapshot of the whole mock (`state()` and `GET /__mock/state`). */
export interface MockStateSnapshot {
  /** Mock clock in epoch milliseconds. */
  now: number;
  /** Mock clock as ISO 8601. */
  time: string;
  /** Every game server. */
  servers: MockServerState[];
  /** Every checkout, in creation order. */
  checkouts: CheckoutRecord[];
}

/** What `addPurchase` needs: a player, a catalog product id and how many units were bought. */
export interface AddPurchaseInput {
  /** Player name (same rules as a claim: non-blank, at most 64 characters, no control or bidi-override characters). */
  playerName: string;
  /** Catalog product id (as in a cart item). */
  id: number;
  /** Units bought, default 1. */
  quantity?: number | undefined;
}
