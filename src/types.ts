/**
 * The public types: what the client takes and what it resolves to. Wire objects keep
 * the service's own field names (`player_name`, `quantity_to_grant` …) so they read
 * the same as the TeamGames API documentation.
 *
 * @module
 */
import type { JournalError, Operation } from './errors.js';
import type { DeliveryJournal } from './delivery/journal.js';
import type { UnverifiedWindow } from './delivery/types.js';

// ---------------------------------------------------------------------------
// Client options and per-call options

/**
 * Options of {@link StorefrontClient}. Only `apiKey` is required. Unknown option names
 * are rejected, so a typo fails loudly.
 * @see [Getting started](../docs/getting-started.md)
 */
export interface StorefrontClientOptions {
  /** The raw API key of one game server, from the TeamGames dashboard. Never pre-encode it. */
  apiKey: string;
  /**
   * Base URL of the service. Default `https://api.teamgames.io`. Plain `http:` is only
   * accepted for loopback hosts (`localhost`, `127.0.0.0/8`, `[::1]`), e.g. the mock.
   */
  baseUrl?: string;
  /** Timeout of each attempt, from sending it to the last byte of its answer, in milliseconds. Default `15000`. */
  timeoutMs?: number;
  /**
   * Retries for reads (the catalog) on network errors, timeouts, 429 and 5xx, with
   * backoff and `Retry-After` honoured up to 30 s; `0` disables. Default `2`. Claims,
   * checkouts and votes are never retried.
   */
  retry?: number;
  /** How long a catalog answer is reused, per category, in milliseconds; `0` disables. Default `60000`. */
  catalogCacheTtlMs?: number;
  /** The local per-player claim guard (10 s). Default `true`. */
  rateLimit?: boolean;
  /** The clock of the claim guard and the catalog cache. Default `Date.now`. */
  now?: () => number;
  /** A custom `fetch`. Default: `globalThis.fetch`, looked up at each request (so msw and test doubles work). */
  fetch?: typeof globalThis.fetch;
  /** Prepended to the SDK's own `User-Agent` (`teamgames-sdk/<version> node/<version>`). */
  userAgent?: string;
  /**
   * Called for each request, response and retry, with credentials masked. A listener
   * that throws is ignored.
   */
  onEvent?: (event: StorefrontEvent) => void;
  /**
   * Where {@link StorefrontClient.deliver} records deliveries before granting them.
   * Default: a {@link FileJournal} at `./.teamgames-journal.jsonl` (relative to the
   * working directory), opened on the first `deliver` or `resumeDeliveries`, never by the
   * constructor. Pass your own in production (one per API key: a file next to the game's
   * data, or a database shared by the game servers of one key) and a
   * {@link MemoryJournal} in tests.
   */
  journal?: DeliveryJournal;
}

/** Options every method accepts. */
export interface RequestOptions {
  /** Aborts the call. Aborted before sending: rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** An event emitted through {@link StorefrontClientOptions.onEvent}. Credential headers read `<redacted>`. */
export type StorefrontEvent =
  | {
      /** An attempt is about to be sent. */
      type: 'request';
      /** The SDK method that sent it. */
      operation: Operation;
      /** Always `POST`. */
      method: string;
      /** The full URL. */
      url: string;
      /** Request headers, credential values replaced by `<redacted>`. */
      headers: Record<string, string>;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
    }
  | {
      /** An attempt got its response headers. */
      type: 'response';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The HTTP status. */
      status: number;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
      /** Time from sending this attempt to its response headers. */
      durationMs: number;
    }
  | {
      /** A read is about to be retried. */
      type: 'retry';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The attempt about to start (1 for the first retry). */
      attempt: number;
      /** Why the previous attempt failed: an HTTP status or a network reason. */
      reason: string;
    }
  | {
      /** A lost claim was reconciled: purchases in the window may have been delivered unseen. */
      type: 'unverified';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player and the window, as on the report. */
      window: UnverifiedWindow;
    }
  | {
      /** The delivery journal failed; deliveries for the player are paused or granted from memory. */
      type: 'journalError';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player whose delivery met the failure. */
      playerName: string;
      /** The failure; its `cause` holds the journal's own error. */
      error: JournalError;
    };

// ---------------------------------------------------------------------------
// Catalog

/** A sale active now on a product. */
export interface Sale {
  /** `"percentage"` or `"amount"` (other values are passed through). */
  saleType: 'percentage' | 'amount' | (string & {});
  /** Percent off, for percentage sales. */
  discountPercentage?: number;
  /** Amount off the unit price, for amount sales. */
  discountAmount?: number;
  /** Fields beyond these are kept as the service sent them. */
  [field: string]: unknown;
}

/** A product of the catalog. */
export interface Product {
  /** The id used in cart items. */
  id: number;
  /** The merchant's own id (a number on the wire for some stores; always a string here). */
  productId: string;
  /** Display name. */
  name: string;
  /** List price. */
  price: number;
  /** List price before sales (defaults to `price` when absent). */
  priceOriginal: number;
  /** Price with the best active sale applied (defaults to `price` when absent). */
  priceWithSale: number;
  /** Units granted per unit bought (default 1). */
  quantity: number;
  /** Default `''`. */
  description: string;
  /** Image URL, `''` when none. */
  image: string;
  /** Default `false`. */
  disabled: boolean;
  /** Only the sales active now. */
  sales: Sale[];
  /** Fields beyond these are kept as the service sent them. */
  [field: string]: unknown;
}

/** What {@link StorefrontClient.getCatalog} resolves to. */
export interface Catalog {
  /** `"SUCCESS"`. */
  message: string;
  /** The products on sale now, in the service's order. */
  products: Product[];
}

/** Options of {@link StorefrontClient.getCatalog}. */
export interface CatalogOptions extends RequestOptions {
  /** Only the products of this category (a positive integer). */
  categoryId?: number;
}

// ---------------------------------------------------------------------------
// Checkout

/** One line of a cart. */
export interface CartItem {
  /** The product's `id` (not its merchant `productId`); a positive integer. */
  id: number;
  /** How many units; an integer from 1 to 1,000,000. */
  quantity: number;
}

/** The input of {@link StorefrontClient.checkout}. */
export interface CheckoutInput {
  /** The player's in-game name (case matters: it is who can claim). */
  username: string;
  /** At least one line. Only `id` and `quantity` are sent. */
  items: readonly CartItem[];
  /** A coupon code, when the player entered one. */
  coupon?: string;
}

/** Wire fields a checkout answer may carry; kept on every outcome. */
export interface CheckoutWireFields {
  /** The wire `status`: `SUCCESS`, `INVALID_STOCK`, `ERROR` … */
  status?: string;
  /** The wire `statusCode`, as text: `"200"` on success, `"400"` for a rejected basket. */
  statusCode?: string;
  /** The service's text, when it sent one. */
  message?: string;
  /** The service's longer explanation, when it sent one. */
  extendedMessage?: string;
  /** Fields beyond these are kept as the service sent them. */
  [field: string]: unknown;
}

/** The player must pay at `redirect`; the purchase becomes claimable once paid. */
export interface CheckoutPaymentRequired extends CheckoutWireFields {
  /** Discriminant: the player must pay. */
  outcome: 'PAYMENT_REQUIRED';
  /** Send the player here to pay. */
  redirect: string;
  /** The checkout's id (a UUID): it identifies the payment. */
  transactionId: string;
  /** Always `false` here. */
  isFree: false;
}

/** The cart totals zero: nothing to pay; the items are claimable at once. */
export interface CheckoutFree extends CheckoutWireFields {
  /** Discriminant: nothing to pay. */
  outcome: 'FREE';
  /** The checkout's id (a UUID). */
  transactionId: string;
  /** Always `true` here. */
  isFree: true;
}

/** Availability changed: some products are gone, disabled, out of window or out of stock. Show the cart again. */
export interface CheckoutInvalidStock extends CheckoutWireFields {
  /** Discriminant: availability changed. */
  outcome: 'INVALID_STOCK';
  /** Snapshots of the products at fault, as the service sent them. */
  productsAffected: unknown[];
}

/** The coupon was refused; show `error` to the player. */
export interface CheckoutCouponRejected extends CheckoutWireFields {
  /** Discriminant: the coupon was refused. */
  outcome: 'COUPON_REJECTED';
  /** The service's text, meant for the player. */
  error: string;
}

/** The basket breaks the gateway's limits (total, number of lines) or the store's integration is incomplete. */
export interface CheckoutBasketRejected extends CheckoutWireFields {
  /** Discriminant: the basket breaks the gateway's limits. */
  outcome: 'BASKET_REJECTED';
}

/** A gateway prerequisite is unmet (minimum charge, gateway not configured). For the store owner, not the player. */
export interface CheckoutGatewayError extends CheckoutWireFields {
  /** Discriminant: the store's payment setup is incomplete. */
  outcome: 'GATEWAY_ERROR';
  /** What is missing, for the store owner (e.g. the minimum charge). */
  message: string;
}

/**
 * What {@link StorefrontClient.checkout} resolves to, discriminated on `outcome`:
 * - `PAYMENT_REQUIRED`: send the player to `redirect`.
 * - `FREE`: nothing to pay; tell the player to claim in game.
 * - `INVALID_STOCK`: refresh the catalog and show the cart again.
 * - `COUPON_REJECTED`: show `error`; let the player remove the coupon.
 * - `BASKET_REJECTED`: the cart is too large or expensive for the gateway; split it.
 * - `GATEWAY_ERROR`: the store's payment setup is incomplete; escalate to the owner.
 * @see [Building a storefront](../docs/building-a-storefront.md)
 */
export type CheckoutResult =
  | CheckoutPaymentRequired
  | CheckoutFree
  | CheckoutInvalidStock
  | CheckoutCouponRejected
  | CheckoutBasketRejected
  | CheckoutGatewayError;

/** The `outcome` values of {@link CheckoutResult}. */
export type CheckoutOutcome = CheckoutResult['outcome'];

// ---------------------------------------------------------------------------
// Votes

/** The input of {@link StorefrontClient.claimVoteReward}. */
export interface VoteRewardInput {
  /** The voter's in-game name. */
  player: string;
  /** The reward id configured on the dashboard (sent as text). */
  reward: string | number;
  /** Units to buy with points: a positive integer, or `'all'` for as many as the points pay for. */
  amount: number | 'all';
}

/** A reward row, in wire names. */
export interface VoteReward {
  /** A text attached to the row, if any. */
  message?: string;
  /** Points ever earned; a string on the wire, kept as one. */
  total_points: string;
  /** Points left to spend. */
  vote_points: number;
  /** Votes this month. */
  votes_month: number;
  /** Units to give in game. */
  give_amount: number;
  /** Integrators use it as the in-game item id. */
  reward_id: number;
  /** The reward's display name. */
  reward_name: string;
}

/** What {@link StorefrontClient.claimVoteReward} resolves to. */
export interface VoteRewardResult {
  /** The rewards to give, one row each. */
  rewards: VoteReward[];
  /** Texts of the message-only rows (e.g. "You have not voted yet."). */
  messages: string[];
  /** True when a message starts with `Insufficient Points`. */
  insufficientPoints: boolean;
}
