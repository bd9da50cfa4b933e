/**
 * The v4 claim: its public types (also what the legacy claims resolve to), its wire
 * schemas and its reader. Wire objects keep the service's field names (`player_name`,
 * `quantity_to_grant` …).
 *
 * @module
 */
import * as z from 'zod/mini';
import type { ValidationIssue } from '../errors.js';
import type { RequestOptions } from './options.js';
import { countProblem, priceProblem } from './bounds.js';
import { WireProblem, WireRefusal, compiled, given, issuesOf, optional, parse, scalars, schemasOnFirstUse, type Wire } from './parse.js';


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
 * @see [Delivering purchases in game](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md)
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

// ---------------------------------------------------------------------------
// The wire

/** The documented v4 success text; the v3 endpoints send none, so we reuse it. */
export const SUCCESS_MESSAGE = 'Transaction has been completed. Thank you for the purchase!';

/** The text players see when the SDK's local guard refuses a claim. */
export const RATE_LIMIT_MESSAGE = 'Please wait a few seconds before trying again.';

/** The claim window of the service, per player and game server. */
export const CLAIM_WINDOW_MS = 10_000;

/** The v4 codes with a branch of their own; anything else is `UNKNOWN`. */
const V4_CODES = new Set(['SUCCESS', 'PREVIEW', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER']);

/** The claim's schemas, built on the first claim answer. @internal */
export const claimSchemas = schemasOnFirstUse(() => {
  const { numberLike, intLike, playerText } = scalars();

  /** A purchase row, v4 or legacy v3; {@link toTransaction} fills every v4 field. */
  const transaction = compiled(
    z.looseObject({
      player_name: z.string(),
      product_id: z.nullish(z.union([z.number(), z.string()])),
      product_id_string: z.nullish(z.union([z.string(), z.number()])),
      product_name: z.string(),
      product_price: numberLike,
      message: z.nullish(playerText),
      quantity_to_grant: z.nullish(intLike),
      quantity_purchased: z.nullish(intLike),
      product_amount: z.nullish(intLike),
      amount_purchased: z.nullish(intLike),
    }),
  );

  const claimResponse = compiled(
    z.looseObject({
      status: z.string(),
      code: z.string(),
      message: optional(playerText),
      data: optional(
        z.looseObject({
          claims: optional(z.array(z.unknown())),
          rawTransactions: optional(z.array(z.record(z.string(), z.unknown()))),
        }),
      ),
    }),
  );

  return { transaction, claimResponse };
});

/** The claim's schemas. @internal */
export type ClaimSchemas = ReturnType<typeof claimSchemas>;

/**
 * A validated purchase row as a {@link Transaction} with every v4 field filled:
 * `product_id_string` from `product_id` when absent, each quantity from its twin.
 * Returns the problems instead when a required pair is wholly missing.
 */
export function toTransaction(t: Wire<ClaimSchemas['transaction']>): Transaction | string[] {
  const problems: string[] = [];
  if (!given(t.product_id) && !given(t.product_id_string)) problems.push('product_id: product_id or product_id_string is required');
  const grant = t.quantity_to_grant ?? t.product_amount;
  const bought = t.quantity_purchased ?? t.amount_purchased;
  if (!given(grant)) problems.push('quantity_to_grant: quantity_to_grant or product_amount is required');
  if (!given(bought)) problems.push('quantity_purchased: quantity_purchased or amount_purchased is required');
  if (!given(grant) || !given(bought) || problems.length > 0) return problems;
  // Bounded before anything is given: 1e20 units would reach the game as a float.
  const bounds: Array<[string, string | undefined]> = [
    ['quantity_to_grant', countProblem(Number(grant), 1)],
    ['quantity_purchased', countProblem(Number(bought), 1)],
    ['product_price', priceProblem(Number(t.product_price))],
  ];
  for (const [field, problem] of bounds) if (problem !== undefined) problems.push(`${field}: ${problem}`);
  if (problems.length > 0) return problems;
  const { message, ...rest } = t;
  const idString = given(t.product_id_string) ? String(t.product_id_string) : String(t.product_id);
  const out: Transaction = {
    ...rest,
    product_id: productIdNumber(t.product_id, idString),
    product_id_string: idString,
    product_price: Number(t.product_price),
    quantity_to_grant: Number(grant),
    quantity_purchased: Number(bought),
    product_amount: Number(grant),
    amount_purchased: Number(bought),
  };
  if (given(message)) out.message = message;
  return out;
}

/** The merchant id as an int when it is an integer (number or integer string), else 0. */
function productIdNumber(wire: number | string | null | undefined, idString: string): number {
  if (Number.isSafeInteger(wire)) return wire as number; // false for anything that is not a number
  const text = typeof wire === 'string' ? wire : idString;
  return /^-?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : 0;
}

/** Reads purchase rows (v4 claims or v3 arrays), every problem listed with its path. @internal */
export function parseTransactions(rows: readonly unknown[], prefix: readonly PropertyKey[]): Transaction[] {
  const schema = claimSchemas().transaction;
  const out: Transaction[] = [];
  const issues: ValidationIssue[] = [];
  rows.forEach((row, index) => {
    const result = schema.safeParse(row);
    if (!result.success) {
      issues.push(...issuesOf(result.error, [...prefix, index]));
      return;
    }
    const transaction = toTransaction(result.data);
    if (Array.isArray(transaction)) {
      for (const problem of transaction) {
        const [field = '', message = problem] = problem.split(': ');
        issues.push({ path: [...prefix, index, field], message });
      }
    } else out.push(transaction);
  });
  if (issues.length > 0) throw new WireProblem('a claimed transaction does not match the schema', issues);
  return out;
}

/** Reads a v4 claim answer. @internal */
export function readClaim(body: unknown): ClaimResult {
  const wire = parse(claimSchemas().claimResponse, body, 'the claim answer does not match the schema');
  if (wire.code === 'SERVER_NOT_FOUND') throw new WireRefusal('SERVER_NOT_FOUND');
  const message = wire.message ?? '';
  const raw = wire.data?.rawTransactions;
  const base = raw === undefined ? { status: wire.status, message } : { status: wire.status, message, rawTransactions: raw as RawTransaction[] };
  if (!V4_CODES.has(wire.code)) {
    return wire.data === undefined
      ? { ...base, code: 'UNKNOWN', serverCode: wire.code, claims: [] }
      : { ...base, code: 'UNKNOWN', serverCode: wire.code, claims: [], data: wire.data };
  }
  const code = wire.code as Exclude<ClaimResult['code'], 'UNKNOWN'>;
  if (code === 'SUCCESS' || code === 'PREVIEW') {
    return { ...base, code, claims: parseTransactions(wire.data?.claims ?? [], ['data', 'claims']) };
  }
  if (code === 'RATE_LIMIT') return { ...base, code, claims: [], retryAfterMs: CLAIM_WINDOW_MS, source: 'server' };
  return { ...base, code, claims: [] };
}
