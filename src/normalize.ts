/**
 * From validated wire bodies to the SDK's values: the catalog, and v4 envelopes into a
 * {@link ClaimResult}. Checkout answers are read in `checkout.ts`, v3 answers in
 * `normalize-v3.ts`; both load on first use.
 *
 * @module
 */
import type { z } from 'zod';
import type { ValidationIssue } from './errors.js';
import { toProduct, toTransaction, wireSchemas } from './schemas.js';
import type { Catalog } from './types.js';
import type { ClaimResult, RawTransaction, Transaction } from './wire/claim.js';

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

/** The claim window of the service, per player and game server. */
export const CLAIM_WINDOW_MS = 10_000;

/** The v4 codes with a branch of their own; anything else is `UNKNOWN`. */
const V4_CODES = new Set(['SUCCESS', 'PREVIEW', 'NO_ITEMS', 'RATE_LIMIT', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER']);

function issuesOf(error: z.ZodError, prefix: readonly PropertyKey[] = []): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: [...prefix, ...issue.path], message: issue.message }));
}

/** @internal */
export function parse<T extends z.ZodType>(schema: T, body: unknown, what: string, prefix: readonly PropertyKey[] = []): z.output<T> {
  const result = schema.safeParse(body);
  if (!result.success) throw new WireProblem('invalid', what, issuesOf(result.error, prefix));
  return result.data;
}

/** @internal */
export function parseTransactions(rows: readonly unknown[], prefix: readonly PropertyKey[]): Transaction[] {
  const schema = wireSchemas().transaction;
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
  if (issues.length > 0) throw new WireProblem('invalid', 'a claimed transaction does not match the schema', issues);
  return out;
}

// ---------------------------------------------------------------------------

/** @internal */
export function catalogFromWire(body: unknown): Catalog {
  const wire = parse(wireSchemas().catalogResponse, body, 'the catalog does not match the schema');
  if (wire.message === 'GAME_SERVER_NOT_FOUND') throw new WireProblem('auth', 'GAME_SERVER_NOT_FOUND');
  return { message: wire.message, products: wire.products ? wire.products.map(toProduct) : [] };
}

/** @internal */
export function claimFromV4(body: unknown): ClaimResult {
  const wire = parse(wireSchemas().claimV4Response, body, 'the claim answer does not match the schema');
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
