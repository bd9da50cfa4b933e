/**
 * From validated wire bodies to the SDK's values: v3 arrays and v4 envelopes into one
 * {@link ClaimResult}, checkout indicators into a {@link CheckoutResult}, vote rows
 * into a {@link VoteRewardResult}.
 *
 * @module
 */
import type { z } from 'zod';
import type { ValidationIssue } from './errors.js';
import {
  TRANSACTION_KEYS,
  VOTE_REWARD_KEYS,
  catalogResponseSchema,
  checkoutResponseSchema,
  claimV4ResponseSchema,
  legacyResponseSchema,
  messageRowSchema,
  toProduct,
  toTransaction,
  toVoteReward,
  transactionSchema,
  voteRewardSchema,
} from './schemas.js';
import type {
  Catalog,
  CheckoutResult,
  ClaimResult,
  RawTransaction,
  Transaction,
  VoteReward,
  VoteRewardResult,
} from './types.js';

/**
 * A body that is valid HTTP but not a valid answer: refused credentials reported in the
 * body, or a shape outside the protocol. The client maps it to a typed error.
 * @internal
 */
export class WireProblem extends Error {
  constructor(
    readonly kind: 'auth' | 'invalid',
    readonly what: string,
    readonly issues: readonly ValidationIssue[] = [],
  ) {
    super(what);
  }
}

/** The documented v4 success text; the v3 endpoints send none, so we reuse it. */
export const SUCCESS_MESSAGE = 'Transaction has been completed. Thank you for the purchase!';

/** The text players see when the SDK's local guard refuses a claim. */
export const RATE_LIMIT_MESSAGE = 'Please wait a few seconds before trying again.';

/** What v3 says when there is nothing to claim; also used for an empty v3 array. */
export const NO_ITEMS_MESSAGE = 'There are currently no items to claim.';

/** The claim window of the service, per player and game server. */
export const CLAIM_WINDOW_MS = 10_000;

/**
 * v3 reports outcomes as a message-only row. Known texts, matched on their leading words
 * (case-insensitive) so a trailing change of punctuation does not break them. `auth` is
 * not an outcome: the key was refused.
 */
const LEGACY_MESSAGES: ReadonlyArray<readonly [prefix: string, code: LegacyCode]> = [
  ['there are currently no items to claim', 'NO_ITEMS'],
  ['please wait a few seconds', 'RATE_LIMIT'],
  ['the game server could not be found', 'auth'],
  ['invalid player name', 'INVALID_PLAYER'],
  ['the product could not be found', 'PRODUCT_NOT_FOUND'],
];
type LegacyCode = 'NO_ITEMS' | 'RATE_LIMIT' | 'INVALID_PLAYER' | 'PRODUCT_NOT_FOUND' | 'auth';

/** The v4 codes with a branch of their own; anything else is `UNKNOWN`. */
const V4_CODES = new Set(['SUCCESS', 'PREVIEW', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER']);

function issuesOf(error: z.ZodError, prefix: readonly PropertyKey[] = []): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: [...prefix, ...issue.path], message: issue.message }));
}

function parse<T extends z.ZodType>(schema: T, body: unknown, what: string, prefix: readonly PropertyKey[] = []): z.output<T> {
  const result = schema.safeParse(body);
  if (!result.success) throw new WireProblem('invalid', what, issuesOf(result.error, prefix));
  return result.data;
}

type Defined<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/** Copies `source` without the keys whose value is `undefined`. */
function defined<T extends object>(source: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}

function parseTransactions(rows: readonly unknown[], prefix: readonly PropertyKey[]): Transaction[] {
  const out: Transaction[] = [];
  const issues: ValidationIssue[] = [];
  rows.forEach((row, index) => {
    const result = transactionSchema.safeParse(row);
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
  if (issues.length > 0) throw new WireProblem('invalid', 'a claimed transaction does not match the schema', issues);
  return out;
}

// ---------------------------------------------------------------------------

/** @internal */
export function catalogFromWire(body: unknown): Catalog {
  const wire = parse(catalogResponseSchema, body, 'the catalog does not match the schema');
  if (wire.message === 'GAME_SERVER_NOT_FOUND') throw new WireProblem('auth', 'GAME_SERVER_NOT_FOUND');
  return { message: wire.message, products: wire.products ? wire.products.map(toProduct) : [] };
}

/**
 * Checkout indicators, checked in the documented order: `error` → `statusCode "400"`
 * → `status`. A success also carries `statusCode "200"`, hence the order.
 * @internal
 */
export function checkoutFromWire(body: unknown): CheckoutResult {
  const wire = defined(parse(checkoutResponseSchema, body, 'the checkout answer does not match the schema'));
  if (wire.error !== undefined) return { ...wire, outcome: 'COUPON_REJECTED', error: wire.error };
  if (wire.statusCode === '400') return { ...wire, outcome: 'BASKET_REJECTED' };
  switch (wire.status) {
    case 'SUCCESS': {
      if (wire.transactionId === undefined) throw new WireProblem('invalid', 'a successful checkout carries no transactionId');
      if (wire.isFree === true) return { ...wire, outcome: 'FREE', transactionId: wire.transactionId, isFree: true };
      if (wire.redirect === undefined) throw new WireProblem('invalid', 'a checkout to pay carries no redirect');
      return { ...wire, outcome: 'PAYMENT_REQUIRED', transactionId: wire.transactionId, redirect: wire.redirect, isFree: false };
    }
    case 'INVALID_STOCK':
      return { ...wire, outcome: 'INVALID_STOCK', productsAffected: wire.productsAffected ?? [] };
    case 'ERROR':
      return { ...wire, outcome: 'GATEWAY_ERROR', message: wire.message ?? '' };
    default:
      throw new WireProblem('invalid', `unrecognized checkout status ${JSON.stringify(wire.status ?? null)}`);
  }
}

/** @internal */
export function claimFromV4(body: unknown): ClaimResult {
  const wire = parse(claimV4ResponseSchema, body, 'the claim answer does not match the schema');
  if (wire.code === 'SERVER_NOT_FOUND') throw new WireProblem('auth', 'SERVER_NOT_FOUND');
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

/**
 * v3 answers: a bare array of purchases, or one message-only row (`[{"message": …}]`),
 * or a bare `{message}` object, or `[]` (no items). A message row is never a purchase.
 * @internal
 */
export function claimFromLegacy(body: unknown): ClaimResult {
  const wire = parse(legacyResponseSchema, body, 'the v3 claim answer is neither an array nor an object');
  const rows = Array.isArray(wire) ? wire : [wire];
  const purchases: unknown[] = [];
  const messages: string[] = [];
  rows.forEach((row, index) => {
    if (TRANSACTION_KEYS.some((key) => key in row)) purchases.push(row);
    else messages.push(parse(messageRowSchema, row, 'a v3 row is neither a purchase nor a message', [index]).message);
  });
  // Purchases present means the service marked them delivered: they win over any message.
  if (purchases.length > 0) {
    return { code: 'SUCCESS', status: 'SUCCESS', message: SUCCESS_MESSAGE, claims: parseTransactions(purchases, []) };
  }
  const message = messages[0];
  if (message === undefined) return { code: 'NO_ITEMS', status: 'ERROR', message: NO_ITEMS_MESSAGE, claims: [] };
  const code = legacyCodeOf(message);
  if (code === 'auth') throw new WireProblem('auth', 'the game server could not be found');
  if (code === undefined) return { code: 'UNKNOWN', status: 'ERROR', message, serverCode: '', claims: [] };
  if (code === 'RATE_LIMIT') return { code, status: 'ERROR', message, claims: [], retryAfterMs: CLAIM_WINDOW_MS, source: 'server' };
  return { code, status: 'ERROR', message, claims: [] };
}

function legacyCodeOf(message: string): LegacyCode | undefined {
  const text = message.trim().toLowerCase();
  return LEGACY_MESSAGES.find(([prefix]) => text.startsWith(prefix))?.[1];
}

/** @internal */
export function voteFromWire(body: unknown): VoteRewardResult {
  const wire = parse(legacyResponseSchema, body, 'the vote answer is neither an array nor an object');
  const rows = Array.isArray(wire) ? wire : [wire];
  const rewards: VoteReward[] = [];
  const messages: string[] = [];
  rows.forEach((row, index) => {
    if (VOTE_REWARD_KEYS.some((key) => key in row)) rewards.push(toVoteReward(parse(voteRewardSchema, row, 'a vote reward row does not match the schema', [index])));
    else messages.push(parse(messageRowSchema, row, 'a vote row is neither a reward nor a message', [index]).message);
  });
  if (rewards.length === 0 && messages.some((m) => legacyCodeOf(m) === 'auth')) {
    throw new WireProblem('auth', 'the game server could not be found');
  }
  return { rewards, messages, insufficientPoints: messages.some((m) => /^\s*insufficient points/i.test(m)) };
}
