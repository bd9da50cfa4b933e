/**
 * What every error of the SDK shares: the base class {@link StorefrontError}, its stable
 * codes, the operations an error belongs to, the brand {@link isStorefrontError} checks.
 * The classes themselves are in `request.ts` (a call to the service) and `delivery.ts`
 * (the journal, reconciliation, the loop, staff); `src/errors.ts` gathers them.
 *
 * @module
 */

/** @internal The brand on every SDK error's prototype (global, so it survives a second copy of the SDK). */
export const BRAND: unique symbol = Symbol.for('teamgames-sdk.StorefrontError');

/** The stable `code` of every error class, one per class. */
export type StorefrontErrorCode =
  | 'INVALID_INPUT'
  | 'AUTHENTICATION_FAILED'
  | 'REQUEST_REJECTED'
  | 'HTTP_ERROR'
  | 'RESPONSE_VALIDATION_FAILED'
  | 'TIMEOUT'
  | 'NETWORK_ERROR'
  | 'CLAIM_OUTCOME_UNKNOWN'
  | 'RESPONSE_TOO_LARGE'
  | 'JOURNAL_FAILED'
  | 'NOT_RECONCILED'
  | 'LOOP_RUNNING'
  | 'WINDOW_ALREADY_RESOLVED';

/**
 * The SDK operation an error or event belongs to: the name of the client method
 * (`claimStoreTransactions` for the v3 store claim). The six endpoints' methods are also
 * the endpoints' names in the mock (its `MockOperationName`s, which fault rules take).
 */
export type Operation =
  | 'getCatalog'
  | 'checkout'
  | 'claim'
  | 'claimLegacy'
  | 'claimStoreTransactions'
  | 'claimVoteReward'
  | 'deliver'
  | 'resumeDeliveries'
  | 'deliverVoteReward'
  | 'resumeVoteRewards'
  | 'startDeliveryLoop'
  | 'expectCheckout'
  | 'withOptions';

/** Fields shared by the constructors of the errors that describe a request. */
export interface RequestErrorDetails {
  /** The SDK operation that failed. */
  operation: Operation;
  /** The endpoint path, e.g. `/api/v4/store/transaction/update`. */
  endpoint: string;
  /** The host called, e.g. `api.teamgames.io` (with its port when not the default). */
  host?: string;
  /** The path of the base URL before the endpoint path, e.g. `/teamgames` for `https://example.com/teamgames/`; absent or empty when there is none. */
  basePath?: string;
  /** How many attempts were sent (reads are retried; everything else is sent once). */
  attempts?: number;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** The first characters of the response body, with any credential removed. */
  bodyExcerpt?: string;
}

/**
 * Base class of every error the SDK raises. Check with {@link isStorefrontError}
 * rather than `instanceof` when two copies of the SDK may be loaded (ESM and CJS).
 *
 * @example
 * ```ts
 * try {
 *   await client.getCatalog();
 * } catch (error) {
 *   if (isStorefrontError(error)) console.error(error.code, error.message);
 *   else throw error;
 * }
 * ```
 * @see [Errors and retries](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/errors-and-retries.md)
 */
export class StorefrontError extends Error {
  /** Stable, machine-readable identifier of the failure class. */
  readonly code: StorefrontErrorCode;
  /** The SDK operation that failed, when the failure belongs to one. */
  readonly operation: Operation | undefined;
  /** The endpoint path that was called, when a request was involved. */
  readonly endpoint: string | undefined;
  /** HTTP status of the response, when one arrived. */
  readonly status: number | undefined;
  /** A short excerpt of the response body (credentials removed), when one arrived. */
  readonly bodyExcerpt: string | undefined;
  /** The host that was called, when a request was involved: which service or proxy failed. */
  readonly host: string | undefined;
  /** How many attempts were sent before the call gave up, when a request was involved. */
  readonly attempts: number | undefined;
  /** @internal */
  constructor(code: StorefrontErrorCode, message: string, details?: Partial<RequestErrorDetails>) {
    super(message);
    this.name = 'StorefrontError';
    this.code = code;
    this.operation = details?.operation;
    this.endpoint = details?.endpoint;
    this.status = details?.status;
    this.bodyExcerpt = details?.bodyExcerpt;
    this.host = details?.host;
    this.attempts = details?.attempts;
  }
}

// The brand lives on the prototype: it survives a second copy of the SDK (Symbol.for is
// global) and stays out of util.inspect and JSON output of error instances.
Object.defineProperty(StorefrontError.prototype, BRAND, { value: true });
