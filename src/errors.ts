/**
 * Error classes thrown (as promise rejections) by {@link StorefrontClient}.
 *
 * Business outcomes the service reports with HTTP 200 (no items, rate limit, out of
 * stock …) are values, not errors. These classes are for configuration, transport and
 * protocol failures. None of them ever holds the API key or its Base64 form.
 *
 * The module users know: the classes live in `errors/` (`base.ts` the base class and
 * codes, `request.ts` a call's failures, `delivery.ts` the journal's, the loop's and
 * staff's), gathered here with {@link isStorefrontError}.
 *
 * @module
 */

import { BRAND, type StorefrontError, type StorefrontErrorCode } from './errors/base.js';
import type { JournalError, LoopRunningError, NotReconciledError, WindowAlreadyResolvedError } from './errors/delivery.js';
import type {
  AuthenticationError,
  ClaimOutcomeUnknownError,
  HttpError,
  InvalidInputError,
  NetworkError,
  RequestRejectedError,
  ResponseTooLargeError,
  ResponseValidationError,
  TimeoutError,
} from './errors/request.js';

export { StorefrontError, type Operation, type RequestErrorDetails, type StorefrontErrorCode } from './errors/base.js';
export {
  AuthenticationError,
  ClaimOutcomeUnknownError,
  HttpError,
  InvalidInputError,
  NetworkError,
  RequestRejectedError,
  ResponseTooLargeError,
  ResponseValidationError,
  TimeoutError,
  type OutcomeUnknownReason,
  type ValidationIssue,
} from './errors/request.js';
export { JournalError, LoopRunningError, NotReconciledError, WindowAlreadyResolvedError } from './errors/delivery.js';


/** The error class of each {@link StorefrontErrorCode}, for {@link isStorefrontError}. */
export interface StorefrontErrorByCode {
  /** {@link InvalidInputError} */
  INVALID_INPUT: InvalidInputError;
  /** {@link AuthenticationError} */
  AUTHENTICATION_FAILED: AuthenticationError;
  /** {@link RequestRejectedError} */
  REQUEST_REJECTED: RequestRejectedError;
  /** {@link HttpError} */
  HTTP_ERROR: HttpError;
  /** {@link ResponseValidationError} */
  RESPONSE_VALIDATION_FAILED: ResponseValidationError;
  /** {@link TimeoutError} */
  TIMEOUT: TimeoutError;
  /** {@link NetworkError} */
  NETWORK_ERROR: NetworkError;
  /** {@link ClaimOutcomeUnknownError} */
  CLAIM_OUTCOME_UNKNOWN: ClaimOutcomeUnknownError;
  /** {@link ResponseTooLargeError} */
  RESPONSE_TOO_LARGE: ResponseTooLargeError;
  /** {@link JournalError} */
  JOURNAL_FAILED: JournalError;
  /** {@link NotReconciledError} */
  NOT_RECONCILED: NotReconciledError;
  /** {@link LoopRunningError} */
  LOOP_RUNNING: LoopRunningError;
  /** {@link WindowAlreadyResolvedError} */
  WINDOW_ALREADY_RESOLVED: WindowAlreadyResolvedError;
}

/**
 * True when `value` is an error raised by this SDK (any copy of it: the check uses a
 * global brand, not `instanceof`). Pass a `code` to test for one class: the value is then
 * narrowed to that class (`error.reason` of a `ClaimOutcomeUnknownError`).
 *
 * @example
 * ```ts
 * if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) log.warn(`claim for ${error.playerName} lost (${error.reason})`);
 * ```
 * @see [Errors and retries](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/errors-and-retries.md)
 */
export function isStorefrontError<C extends StorefrontErrorCode>(value: unknown, code: C): value is StorefrontErrorByCode[C];
export function isStorefrontError(value: unknown): value is StorefrontError;
export function isStorefrontError(value: unknown, code?: StorefrontErrorCode): value is StorefrontError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [BRAND]?: unknown })[BRAND] === true &&
    (code === undefined || (value as StorefrontError).code === code)
  );
}
