/**
 * Error classes thrown (as promise rejections) by {@link StorefrontClient}.
 *
 * Business outcomes the service reports with HTTP 200 (no items, rate limit, out of
 * stock …) are values, not errors. These classes are for configuration, transport and
 * protocol failures. None of them ever holds the API key or its Base64 form.
 *
 * @module
 */

const BRAND: unique symbol = Symbol.for('teamgames-sdk.StorefrontError');

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

/** `host/prefix/path` when the host is known: the URL called, which service (or proxy) is at fault. */
function where(details: RequestErrorDetails): string {
  return `${details.host ?? ''}${details.basePath ?? ''}${details.endpoint}`;
}

/** `, after 3 attempts` when a call was tried more than once. */
function tries(details: RequestErrorDetails): string {
  return details.attempts !== undefined && details.attempts > 1 ? `, after ${details.attempts} attempts` : '';
}

// The brand lives on the prototype: it survives a second copy of the SDK (Symbol.for is
// global) and stays out of util.inspect and JSON output of error instances.
Object.defineProperty(StorefrontError.prototype, BRAND, { value: true });

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

/**
 * The delivery journal could not be read or written, or is in use by another process.
 *
 * {@link StorefrontClient.deliver} reports it on the report (`journalError`, and an
 * `onEvent` event of type `journalError`) rather than throwing: before a claim it means
 * nothing was claimed (code `ERROR`); after a claim succeeded, the claimed items were
 * granted from memory all the same and the failure is reported so that staff can free the
 * disk or fix the file. {@link FileJournal} throws it when its file is locked by another
 * process. `cause` holds the underlying error (an `ENOSPC` from the file system, your
 * journal's own error).
 *
 * @example
 * ```ts
 * const report = await client.deliver(player, grant);
 * if (report.journalError) log.error(`journal failing, deliveries paused: ${report.journalError.message}`);
 * ```
 * @see [Delivering purchases in game: when the journal fails](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#when-the-journal-fails)
 */
export class JournalError extends StorefrontError {
  /** The journal file, for {@link FileJournal}; `undefined` for other journals. */
  readonly path: string | undefined;

  /** @internal */
  constructor(message: string, options: { operation?: Operation; path?: string; cause?: unknown } = {}) {
    super('JOURNAL_FAILED', message, options.operation === undefined ? {} : { operation: options.operation });
    this.name = 'JournalError';
    this.path = options.path;
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A player's entries that {@link StorefrontClient.resumeDeliveries} could not reconcile
 * because the service answered the preview with an outcome rather than the list
 * (`RATE_LIMIT` after the allowed waits, `PRODUCT_NOT_FOUND`, `INVALID_PLAYER`, a code this
 * SDK does not know). Found in {@link ResumeReport.errors}; the entries stay in the
 * journal and the next run (or the player's next `deliver`) tries again.
 *
 * @example
 * ```ts
 * const { errors } = await client.resumeDeliveries(grant);
 * for (const { playerName, error } of errors) log.warn(`${playerName}: ${error.message}`);
 * ```
 */
export class NotReconciledError extends StorefrontError {
  /** The player, exact name. */
  readonly playerName: string;
  /** The preview's outcome code, e.g. `RATE_LIMIT`. */
  readonly claimCode: string;

  /** @internal */
  constructor(operation: Operation, playerName: string, claimCode: string) {
    super('NOT_RECONCILED', `${operation}: player ${JSON.stringify(playerName)} was not reconciled: the preview answered ${claimCode}; the entries stay in the journal for the next run`, { operation });
    this.name = 'NotReconciledError';
    this.playerName = playerName;
    this.claimCode = claimCode;
  }
}

/**
 * A second delivery loop refused: one already runs on the same journal in this process
 * (on this client, a client derived from it, or another client given the same journal).
 * Two loops would poll every player twice and together spend twice `maxCallsPerSecond`.
 * Stop the running loop first, or share it.
 *
 * @example
 * ```ts
 * try {
 *   loop = client.startDeliveryLoop({ give });
 * } catch (error) {
 *   if (isStorefrontError(error, 'LOOP_RUNNING')) loop = existingLoop; // one per journal
 *   else throw error;
 * }
 * ```
 */
export class LoopRunningError extends StorefrontError {
  /** @internal */
  constructor() {
    super('LOOP_RUNNING', 'startDeliveryLoop: a delivery loop already runs on this journal in this process (this client, a client derived from it, or another client on the same journal); stop() it first, or share the running loop', { operation: 'startDeliveryLoop' });
    this.name = 'LoopRunningError';
  }
}

/**
 * {@link resolveWindow} found the window already resolved: another staff member (another
 * admin command, another node, the `teamgames journal resolve` command) closed it first.
 * Nothing was written; the first resolution stands, and this error says who made it, when
 * and what they noted. Resolving is compare-and-set on every journal: of several resolves
 * of one window at once, exactly one succeeds and every other gets this error.
 *
 * @example
 * ```ts
 * try {
 *   await resolveWindow(journal, { windowId, by: 'mod:bob', note: 'granted VIP by hand' });
 * } catch (error) {
 *   if (isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')) {
 *     reply(`already handled by ${error.resolution.by} at ${new Date(error.resolution.at).toISOString()}: ${error.resolution.note}`);
 *   } else throw error;
 * }
 * ```
 * @see [Delivering purchases in game: what staff do](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#unverified-what-staff-do)
 */
export class WindowAlreadyResolvedError extends StorefrontError {
  /** The window's id (`window:…`). */
  readonly windowId: string;
  /** The player whose window it is, exact name. */
  readonly playerName: string;
  /** The first resolution, as the journal keeps it. */
  readonly resolution: {
    /** Who resolved it first. */
    readonly by: string;
    /** When, epoch ms. */
    readonly at: number;
    /** What they found and did. */
    readonly note: string;
  };

  /** @internal */
  constructor(windowId: string, playerName: string, resolution: { by: string; at: number; note: string }) {
    // Bounded: a record written before the bounds (or by another tool) may hold anything; the fields keep it whole.
    super(
      'WINDOW_ALREADY_RESOLVED',
      `resolveWindow: window ${excerpt(windowId)} of player ${excerpt(playerName)} was already resolved by ${excerpt(resolution.by)} at ${timeText(resolution.at)} (note: ${excerpt(resolution.note)}); nothing was written, the first resolution stands`,
    );
    this.name = 'WindowAlreadyResolvedError';
    this.windowId = windowId;
    this.playerName = playerName;
    this.resolution = { by: resolution.by, at: resolution.at, note: resolution.note };
  }
}

/** A text as a JSON string of at most 200 characters (then `…`). */
function excerpt(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** An epoch time as ISO 8601, or the number as it is when no date has it (1e16). */
function timeText(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} (epoch ms, not a date)` : date.toISOString();
}

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
