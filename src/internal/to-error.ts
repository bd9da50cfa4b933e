/**
 * The one mapping from a failed call to a typed error. Every error the SDK raises about
 * a request is built here, from plain data: no ky error, Request or header ever reaches
 * an error object, and body excerpts are redacted at construction.
 */
import type { Endpoint } from '../endpoints.js';
import {
  AuthenticationError,
  ClaimOutcomeUnknownError,
  HttpError,
  NetworkError,
  RequestRejectedError,
  ResponseTooLargeError,
  ResponseValidationError,
  TimeoutError,
  type Operation,
  type RequestErrorDetails,
  type ValidationIssue,
} from '../errors.js';

export interface FailureContext {
  operation: Operation;
  endpoint: string;
  /** The host called, `api.teamgames.io`. */
  host: string;
  /** The base URL's path before the endpoint's (`/teamgames`), empty when there is none. */
  basePath: string;
  /** How many attempts went out. */
  attempts: number;
  /** The status with which the endpoint refuses a payload it could not parse (checkout: 404); `undefined` for the others. */
  rejectedStatus: number | undefined;
  /** A sent request without a usable answer leaves the outcome unknown. */
  delivers: boolean;
  /** The player (or voter) of the call. */
  playerName: string;
  redact: (text: string) => string;
}

export type Failure =
  | { kind: 'status'; status: number; text: string }
  | { kind: 'auth'; status: number; text: string; what: string }
  | { kind: 'protocol'; status: number; text: string; what: string; issues: readonly ValidationIssue[] }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'network'; reason: string; sent: boolean; error?: unknown }
  | { kind: 'tooLarge'; limitBytes: number }
  | { kind: 'aborted'; reason: unknown; sent: boolean };

const EXCERPT_LENGTH = 200;

/** The start of a body for error messages: credentials removed, whitespace folded. */
export function excerpt(text: string, redact: (text: string) => string): string {
  const folded = redact(text).replace(/\s+/g, ' ').trim();
  return folded.length > EXCERPT_LENGTH ? `${folded.slice(0, EXCERPT_LENGTH)}…` : folded;
}

/**
 * Returns the error to throw; for an abort with nothing at stake, the signal's own reason.
 */
export function toError(ctx: FailureContext, failure: Failure): unknown {
  const details: RequestErrorDetails = { operation: ctx.operation, endpoint: ctx.endpoint, host: ctx.host, basePath: ctx.basePath, attempts: ctx.attempts };
  if ('text' in failure) {
    details.status = failure.status;
    details.bodyExcerpt = excerpt(failure.text, ctx.redact);
  }
  const unknownOutcome = (reason: ClaimOutcomeUnknownError['reason'], what: string, issues: readonly ValidationIssue[] = []) =>
    new ClaimOutcomeUnknownError(details, ctx.playerName, reason, what, issues);

  switch (failure.kind) {
    case 'status': {
      const { status } = failure;
      if (status === 401) return new AuthenticationError(details, 'HTTP 401');
      if (status === ctx.rejectedStatus) return new RequestRejectedError(details);
      // A 5xx from a proxy says nothing about whether the service acted.
      if (status >= 500 && ctx.delivers) return unknownOutcome('http', `${ctx.host}${ctx.basePath}${ctx.endpoint} answered HTTP ${status}`);
      return new HttpError({ ...details, status });
    }
    case 'auth':
      return new AuthenticationError(details, failure.what);
    case 'protocol':
      if (ctx.delivers) return unknownOutcome('invalid-response', `the answer could not be read (${failure.what})`, failure.issues);
      return new ResponseValidationError(details, failure.what, failure.issues);
    case 'timeout':
      if (ctx.delivers) return unknownOutcome('timeout', `no answer within ${failure.timeoutMs} ms`);
      return new TimeoutError(details, failure.timeoutMs);
    case 'network': {
      const reason = shortReason(failure.reason, ctx.redact);
      if (ctx.delivers && failure.sent) return unknownOutcome('network', `the connection failed after sending (${reason})`);
      const error = new NetworkError(details, reason);
      if (failure.error !== undefined) error.cause = sanitizedCause(failure.error, ctx.redact);
      return error;
    }
    case 'tooLarge':
      if (ctx.delivers) return unknownOutcome('invalid-response', `the answer is larger than ${failure.limitBytes} bytes (maxResponseBytes)`);
      return new ResponseTooLargeError(details, failure.limitBytes);
    case 'aborted':
      if (ctx.delivers && failure.sent) return unknownOutcome('aborted', 'aborted after sending');
      return failure.reason;
  }
}

/**
 * What an operator needs of a low-level failure, and nothing a logger could leak: the
 * socket error's name, code and message (redacted, cut to 200 characters), never the
 * original object (undici's carries the request, headers included).
 */
function sanitizedCause(error: unknown, redact: (text: string) => string): Error {
  const inner = (error as { cause?: unknown } | null)?.cause ?? error;
  const source = typeof inner === 'object' && inner !== null ? (inner as { name?: unknown; code?: unknown; message?: unknown }) : { message: String(inner) };
  const cause = new Error(redact(typeof source.message === 'string' ? source.message : String(source.code ?? 'unknown failure')).slice(0, 200));
  cause.name = typeof source.name === 'string' ? source.name : 'Error';
  // A code is an identifier (ECONNRESET); anything else is text, and text may quote the key.
  if (typeof source.code === 'string' && /^[A-Z][A-Z0-9_]{0,40}$/.test(source.code)) Object.assign(cause, { code: source.code });
  return cause;
}

/**
 * The error for an answer that was read but cannot be acted on: a preview the delivery
 * engine cannot track, or one answered like a claim.
 */
export function unusableAnswer(endpoint: Endpoint, playerName: string, what: string): ResponseValidationError {
  const ctx: FailureContext = { operation: endpoint.operation, endpoint: `/${endpoint.path}`, host: '', basePath: '', attempts: 1, rejectedStatus: endpoint.rejectedStatus, delivers: false, playerName, redact: (text) => text };
  return toError(ctx, { kind: 'protocol', status: 200, text: '', what, issues: [] }) as ResponseValidationError;
}

/**
 * Why a fetch failed (undici puts the socket error in `cause`): its code, else its text,
 * whole. Cut it with {@link shortReason}, which redacts first: the text may come from a
 * custom fetch and quote the request, key included, and cutting first could leave a piece
 * of the key that no longer matches.
 */
export function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  const own = (error as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  if (typeof cause?.message === 'string') return cause.message;
  if (error instanceof Error) return error.message;
  return 'unknown network failure';
}

/** A network reason fit for a message: credentials removed, then cut to 80 characters. */
export function shortReason(reason: string, redact: (text: string) => string): string {
  return redact(reason).slice(0, 80);
}
