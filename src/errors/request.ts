/**
 * The errors of a request to the service: a rule broken before sending, the credential
 * refused, an HTTP status, a body that does not validate, a timeout, the network, a body
 * too large, and a claim or vote whose outcome is unknown. Built in one place,
 * `internal/to-error.ts`, with every excerpt redacted.
 *
 * @module
 */
import { StorefrontError, type Operation, type RequestErrorDetails } from './base.js';

/** `host/prefix/path` when the host is known: the URL called, which service (or proxy) is at fault. */
function where(details: RequestErrorDetails): string {
  return `${details.host ?? ''}${details.basePath ?? ''}${details.endpoint}`;
}

/** `, after 3 attempts` when a call was tried more than once. */
function tries(details: RequestErrorDetails): string {
  return (details.attempts ?? 1) > 1 ? `, after ${details.attempts} attempts` : '';
}


/**
 * An argument broke a documented rule. Raised before any request is sent.
 *
 * @example
 * ```ts
 * await client.claim('  ').catch((e) => {
 *   // e.argument === 'playerName', e.rule === 'must not be blank'
 * });
 * ```
 */
export class InvalidInputError extends StorefrontError {
  /** The argument at fault, e.g. `items[0].quantity` or `options.baseUrl`. */
  readonly argument: string;
  /** The rule it broke, in words. */
  readonly rule: string;

  /** @internal */
  constructor(argument: string, rule: string, operation?: Operation) {
    super('INVALID_INPUT', `${operation ?? 'StorefrontClient'}: invalid ${argument}: ${rule}`, operation ? { operation } : {});
    this.name = 'InvalidInputError';
    this.argument = argument;
    this.rule = rule;
  }
}

/**
 * The service did not accept the API key: HTTP 401, a catalog answer
 * `GAME_SERVER_NOT_FOUND`, a claim answer `SERVER_NOT_FOUND`, or the v3
 * "game server could not be found" text. Pass the raw key, not its Base64.
 * @see [Authentication](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/authentication.md)
 */
export class AuthenticationError extends StorefrontError {
  /** @internal */
  constructor(details: RequestErrorDetails, what: string) {
    super(
      'AUTHENTICATION_FAILED',
      `${details.operation}: the API key was refused (${what}). Pass the raw key from the TeamGames dashboard, not its Base64 form.`,
      details,
    );
    this.name = 'AuthenticationError';
  }
}

/** The service could not parse the request (checkout answers HTTP 404 for that). */
export class RequestRejectedError extends StorefrontError {
  /** @internal */
  constructor(details: RequestErrorDetails) {
    super('REQUEST_REJECTED', `${details.operation}: the service rejected the request payload (HTTP ${details.status ?? 404})`, details);
    this.name = 'RequestRejectedError';
  }
}

/** Any other non-2xx answer. `status` holds the HTTP status. */
export class HttpError extends StorefrontError {
  /** HTTP status of the response. */
  declare readonly status: number;

  /** @internal */
  constructor(details: RequestErrorDetails & { status: number }) {
    super('HTTP_ERROR', `${details.operation}: ${where(details)} answered HTTP ${details.status}${tries(details)}`, details);
    this.name = 'HttpError';
  }
}

/** One problem zod found in a response body. */
export interface ValidationIssue {
  /** Where in the body, e.g. `['products', 3, 'price']`. */
  path: ReadonlyArray<PropertyKey>;
  /** What was wrong. */
  message: string;
}

/**
 * The response body was not JSON, or not the shape the protocol defines.
 * `issues` lists what zod found; `bodyExcerpt` shows the start of the body.
 */
export class ResponseValidationError extends StorefrontError {
  /** The schema violations, empty when the body was not JSON at all. */
  readonly issues: readonly ValidationIssue[];

  /** @internal */
  constructor(details: RequestErrorDetails, what: string, issues: readonly ValidationIssue[] = []) {
    super('RESPONSE_VALIDATION_FAILED', `${details.operation}: unexpected response from ${where(details)}: ${what}`, details);
    this.name = 'ResponseValidationError';
    this.issues = issues;
  }
}

/**
 * No answer within `timeoutMs` (per attempt, after any retries), for the catalog and
 * checkout. A claim or vote that times out throws {@link ClaimOutcomeUnknownError}
 * instead, since the service may have acted on it.
 */
export class TimeoutError extends StorefrontError {
  /** The per-attempt timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;

  /** @internal */
  constructor(details: RequestErrorDetails, timeoutMs: number) {
    super('TIMEOUT', `${details.operation}: no answer from ${where(details)} within ${timeoutMs} ms${tries(details)}`, details);
    this.name = 'TimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** The connection failed (refused, reset, DNS failure …). `reason` says how. */
export class NetworkError extends StorefrontError {
  /** The low-level reason, e.g. `ECONNREFUSED`. Never includes request headers. */
  readonly reason: string;

  /** @internal */
  constructor(details: RequestErrorDetails, reason: string) {
    super('NETWORK_ERROR', `${details.operation}: could not reach ${where(details)} (${reason})${tries(details)}`, details);
    this.name = 'NetworkError';
    this.reason = reason;
  }
}

/**
 * An answer was larger than `maxResponseBytes` (counted on the decoded bytes as they
 * arrive): the read stopped there, and the call is not retried. A claim or vote answer
 * that large is a {@link ClaimOutcomeUnknownError} instead (the request was sent).
 */
export class ResponseTooLargeError extends StorefrontError {
  /** The bound that was exceeded, in bytes. */
  readonly limitBytes: number;

  /** @internal */
  constructor(details: RequestErrorDetails, limitBytes: number) {
    super('RESPONSE_TOO_LARGE', `${details.operation}: the answer from ${where(details)} is larger than ${limitBytes} bytes (maxResponseBytes); the read was stopped`, details);
    this.name = 'ResponseTooLargeError';
    this.limitBytes = limitBytes;
  }
}

/** Why the outcome of a claim or vote is unknown. */
export type OutcomeUnknownReason = 'timeout' | 'network' | 'http' | 'aborted' | 'invalid-response';

/**
 * A claim or vote request was sent but no usable answer came back (timeout, connection
 * reset, a 5xx from a proxy, an abort after sending, an unreadable body). The service may
 * have marked the items delivered. Never retry blindly: call
 * {@link StorefrontClient.previewClaim} after the rate window to see what is still pending,
 * and treat what disappeared as delivered by the lost call.
 *
 * @example
 * ```ts
 * try {
 *   await client.claim(player);
 * } catch (error) {
 *   if (error instanceof ClaimOutcomeUnknownError) {
 *     log.warn(`claim for ${player} may have gone through; checking with a preview`);
 *   }
 * }
 * ```
 * @see [Errors and retries: ClaimOutcomeUnknownError](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/errors-and-retries.md#claimoutcomeunknownerror)
 * @see [Delivering purchases in game: never losing an item](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#never-losing-an-item)
 */
export class ClaimOutcomeUnknownError extends StorefrontError {
  /** What went wrong after the request was sent. */
  readonly reason: OutcomeUnknownReason;
  /** The player (or voter) of the lost call. */
  readonly playerName: string;
  /** The schema violations when `reason` is `invalid-response`. */
  readonly issues: readonly ValidationIssue[];

  /** @internal */
  constructor(
    details: RequestErrorDetails,
    playerName: string,
    reason: OutcomeUnknownReason,
    what: string,
    issues: readonly ValidationIssue[] = [],
  ) {
    super(
      'CLAIM_OUTCOME_UNKNOWN',
      `${details.operation}: ${what}; the request was sent, so the service may have delivered the items. Do not retry blindly: preview the claim to see what is still pending.`,
      details,
    );
    this.name = 'ClaimOutcomeUnknownError';
    this.reason = reason;
    this.playerName = playerName;
    this.issues = issues;
  }
}
