/**
 * The claim family's public types: what {@link StorefrontClient.claim} and the legacy
 * claims resolve to. Wire objects keep the service's field names (`player_name`,
 * `quantity_to_grant` …).
 *
 * @module
 */
import type { RequestOptions } from '../types.js';


/**
 * One purchase to deliver, in v4 names. Whatever endpoint it came from, every field
 * is filled: the legacy keys mirror the new ones.
 */
export interface Transaction {
  /** The player who bought it (exact name). */
  player_name: string;
  /** The merchant `productId` as an integer, `0` when it is not one (e.g. `minecraft:diamond`). */
  product_id: number;
  /** The merchant `productId` as a string; use this to map to in-game items. */
  product_id_string: string;
  /** The product's display name. */
  product_name: string;
  /** The unit price paid. */
  product_price: number;
  /** A message attached to the purchase, if any. */
  message?: string;
  /** Units to give in game (quantity bought × units per purchase). */
  quantity_to_grant: number;
  /** Units the player bought. */
  quantity_purchased: number;
  /** Legacy name of `quantity_to_grant`. */
  product_amount: number;
  /** Legacy name of `quantity_purchased`. */
  amount_purchased: number;
}

/** A raw purchase row (lowercase database columns); values kept as the service sent them. */
export type RawTransaction = Record<string, unknown>;

/** Options of {@link StorefrontClient.claim}. */
export interface ClaimOptions extends RequestOptions {
  /** List what would be claimed without delivering anything. */
  preview?: boolean;
  /** Also return the raw purchase rows. */
  includeRawTransactions?: boolean;
}

/** Fields every claim outcome has. */
export interface ClaimResultBase {
  /** Coarse status: `SUCCESS`, `PREVIEW` or `ERROR`. */
  status: string;
  /** Player-facing text from the service (or the SDK, for the local rate limit). */
  message: string;
  /** The purchases; empty unless `code` is `SUCCESS` or `PREVIEW`. */
  claims: Transaction[];
  /** The raw purchase rows, when asked with `includeRawTransactions` (v4 only). */
  rawTransactions?: RawTransaction[];
}

/** The purchases were marked delivered: grant every claim now. */
export interface ClaimSuccess extends ClaimResultBase {
  /** Discriminant. */
  code: 'SUCCESS';
}

/** A preview: `claims` lists what a claim would deliver; nothing changed. */
export interface ClaimPreview extends ClaimResultBase {
  /** Discriminant. */
  code: 'PREVIEW';
}

/** Nothing to claim. Tell the player. */
export interface ClaimNoItems extends ClaimResultBase {
  /** Discriminant. */
  code: 'NO_ITEMS';
}

/** Claimed too soon for this player (one claim per 10 s). Wait `retryAfterMs`. */
export interface ClaimRateLimited extends ClaimResultBase {
  /** Discriminant. */
  code: 'RATE_LIMIT';
  /** Time left in the local window, or 10,000 when the service refused. */
  retryAfterMs: number;
  /** `local`: the SDK's guard answered without a request; `server`: the service refused. */
  source: 'local' | 'server';
}

/** Everything paid was already delivered (another node may have claimed it). */
export interface ClaimAlreadyClaimed extends ClaimResultBase {
  /** Discriminant. */
  code: 'ALREADY_CLAIMED';
}

/** A purchase references a product that no longer exists; nothing was delivered. Escalate to the store owner. */
export interface ClaimProductNotFound extends ClaimResultBase {
  /** Discriminant. */
  code: 'PRODUCT_NOT_FOUND';
}

/** The service refused the player name. */
export interface ClaimInvalidPlayer extends ClaimResultBase {
  /** Discriminant. */
  code: 'INVALID_PLAYER';
}

/**
 * An answer the SDK does not know (a new v4 `code`, an unfamiliar v3 message). Never
 * treated as a claim: `claims` is empty. Log `serverCode` and `message` and escalate.
 */
export interface ClaimUnknown extends ClaimResultBase {
  /** Discriminant. */
  code: 'UNKNOWN';
  /** The v4 `code` as sent, or `''` for a v3 message row. */
  serverCode: string;
  /** The v4 `data` object as sent, when there was one. */
  data?: unknown;
}

/**
 * What the claim methods resolve to, discriminated on `code`:
 * - `SUCCESS`: grant every item of `claims` now; they are marked delivered.
 * - `PREVIEW`: show `claims`; nothing changed.
 * - `NO_ITEMS`, `ALREADY_CLAIMED`: tell the player `message`.
 * - `RATE_LIMIT`: wait `retryAfterMs`.
 * - `PRODUCT_NOT_FOUND`: nothing delivered; escalate to the store owner.
 * - `INVALID_PLAYER`: the name was refused.
 * - `UNKNOWN`: log and escalate; never grant.
 * @see [Delivering purchases in game](../../docs/delivering-purchases.md)
 */
export type ClaimResult =
  | ClaimSuccess
  | ClaimPreview
  | ClaimNoItems
  | ClaimRateLimited
  | ClaimAlreadyClaimed
  | ClaimProductNotFound
  | ClaimInvalidPlayer
  | ClaimUnknown;

/** The `code` values of {@link ClaimResult}. */
export type ClaimCode = ClaimResult['code'];
