/**
 * The one transport: every endpoint goes through `Transport.send`, the whole pipeline of
 * a call: send with a single ky instance per client, read the answer with the endpoint
 * family's reader, and turn every failure into a typed error through `toError`. ky's own
 * errors and Request objects never leave this file.
 *
 * @module
 * @internal
 */
import ky, { HTTPError, TimeoutError as KyTimeoutError, type KyInstance, type Options, type RetryOptions } from 'ky';
import type { Credentials } from '../auth.js';
import type { Endpoint } from '../endpoints.js';
import type { StorefrontRequestEvent } from './request-events.js';
import { WireProblem } from '../wire/parse.js';
import { eventReporter } from './events.js';
import { linkSignals, untilAborted } from './signals.js';
import { networkCode, toError, type Failure, type FailureContext } from './to-error.js';

export interface TransportConfig {
  baseUrl: string;
  timeoutMs: number;
  retry: number;
  /** The largest answer read, in decoded bytes. */
  maxResponseBytes: number;
  fetch: typeof globalThis.fetch | undefined;
  userAgent: string;
  onEvent: ((event: StorefrontRequestEvent) => void) | undefined;
  credentials: Credentials;
}

/** What one call adds to its endpoint row. */
export interface SendContext {
  signal: AbortSignal | undefined;
  /** This call's timeout per attempt (the call's `timeoutMs`); absent: the client's. */
  timeoutMs?: number | undefined;
  /** The player (or voter, or buyer) the call is for, reported by ClaimOutcomeUnknownError. */
  playerName: string;
  /** Whether a sent request without a usable answer leaves the outcome unknown. */
  delivers: boolean;
  /** Called when the request certainly never reached the service. */
  onNotSent?: () => void;
}

// Connection failures that happen before a byte of the request is written.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']);

// 5xx and 429 are worth another try for a read; Retry-After is honoured on 429 and 503.
const RETRY_STATUS_CODES = [429, 500, 502, 503, 504];
const MAX_RETRY_AFTER_MS = 30_000;
const BACKOFF_LIMIT_MS = 10_000;

export class Transport {
  readonly #ky: KyInstance;
  readonly #config: TransportConfig;
  readonly #readRetry: RetryOptions;
  readonly #baseHeaders: Readonly<Record<string, string>>;
  readonly #headers = new Map<Endpoint, Record<string, string>>();
  readonly #host: string;
  readonly #basePath: string;

  constructor(config: TransportConfig) {
    this.#config = config;
    const base = new URL(config.baseUrl);
    this.#host = base.host;
    // A base URL with a path (https://example.com/teamgames) is called under it: errors name it too.
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#readRetry = {
      limit: config.retry,
      methods: ['post'],
      statusCodes: RETRY_STATUS_CODES,
      afterStatusCodes: [429, 503],
      maxRetryAfter: MAX_RETRY_AFTER_MS,
      backoffLimit: BACKOFF_LIMIT_MS,
      retryOnTimeout: true,
      // An answer over the size bound would be as large the next time.
      shouldRetry: ({ error }) => (error instanceof TooLarge ? false : undefined),
    };
    this.#baseHeaders = { accept: 'application/json', 'user-agent': config.userAgent };
    this.#ky = ky.create({ prefixUrl: config.baseUrl, timeout: config.timeoutMs });
  }

  /**
   * Sends one operation and reads its 2xx answer with `read`. Rejects with a
   * StorefrontError, or with `signal.reason` when aborted before anything was sent.
   */
  async send<T>(endpoint: Endpoint, payload: Record<string, unknown>, ctx: SendContext, read: (body: unknown) => T): Promise<T> {
    if (ctx.signal?.aborted) {
      ctx.onNotSent?.();
      throw ctx.signal.reason;
    }
    const body =
      endpoint.body === 'json'
        ? JSON.stringify(payload)
        : new URLSearchParams(payload as Record<string, string>).toString();
    const headers = this.#headersOf(endpoint);
    // ky's Request carries neither body nor headers: the fetch wrapper below sends both.
    // ky builds a Request per call and clones it per attempt; without a body there is no
    // stream to tee and nothing to copy, which is most of ky's cost over a bare fetch.
    // The caller's signal is never given to ky: ky would join it to its own per-call
    // controller with AbortSignal.any, which on Node 20 leaves a record on the caller's
    // signal per call (a bridge's shutdown signal, passed to every call for months, grew
    // by one per request). It is joined by hand to each attempt's fetch below, the
    // listener removed when the attempt is over; an abort between attempts (ky's backoff)
    // rejects at once through `untilAborted`, and stops ky's retries.
    const caller = ctx.signal;
    const options: Options = {
      method: 'post',
      retry: endpoint.retryable ? (caller === undefined ? this.#readRetry : { ...this.#readRetry, shouldRetry: stopWhenAborted(caller) }) : 0,
      // Only reads need ky to throw on a status (that is how its retry sees 5xx).
      throwHttpErrors: endpoint.retryable,
    };
    if (ctx.timeoutMs !== undefined) options.timeout = ctx.timeoutMs;

    // "Sent" means fetch was called with a live signal: a failure before that (ky
    // building the Request, an abort in the same tick) cannot have reached the service.
    let dispatched = false;
    let attempts = 0;
    let onHeaders: ((response: Response) => void) | undefined;
    if (this.#config.onEvent) {
      const reporter = eventReporter(endpoint, headers, this.#config.onEvent, (text) => this.#config.credentials.redact(text));
      options.hooks = reporter.hooks;
      onHeaders = reporter.onHeaders;
    }
    // The body is read inside the fetch that ky times, so `timeoutMs` bounds each
    // attempt's headers and body alike, and a read whose body breaks off is retried like
    // any other failed read.
    let text = '';
    const customFetch = this.#config.fetch;
    options.fetch = async (input) => {
      // ky's signal for this attempt: its timeout aborts it.
      const { signal: attempt, url } = input as Request;
      attempt.throwIfAborted();
      caller?.throwIfAborted();
      dispatched = true;
      attempts += 1;
      const linked = caller === undefined ? undefined : linkSignals(attempt, caller);
      try {
        // fetch is looked up per request, never captured: msw and test doubles patch
        // globalThis.fetch. It gets a URL and init rather than ky's Request, which it would
        // copy again; `redirect: 'manual'` stops the raw X-API-Key (which fetch does not
        // strip, unlike Authorization) and the claim itself from following a redirect.
        const signal = linked?.signal ?? attempt;
        const response = await (customFetch ?? globalThis.fetch)(url, { method: 'POST', headers, body, redirect: 'manual', signal });
        onHeaders?.(response);
        text = await readBounded(response, this.#config.maxResponseBytes);
        return response;
      } finally {
        linked?.dispose();
      }
    };

    let response: Response;
    try {
      response = await untilAborted(this.#ky(endpoint.path, options), caller);
    } catch (error) {
      if (error instanceof TooLarge) throw toError(this.#context(endpoint, ctx, attempts), { kind: 'tooLarge', limitBytes: error.limitBytes });
      if (!(error instanceof HTTPError)) throw this.#transportFailure(error, ctx, this.#context(endpoint, ctx, attempts), dispatched);
      response = error.response;
    }
    // `text` is this response's body: ky settles with the last attempt, the last one read
    // (an attempt ky gives up on has its fetch aborted before the next one starts).
    if (!response.ok) throw toError(this.#context(endpoint, ctx, attempts), { kind: 'status', status: response.status, text });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw toError(this.#context(endpoint, ctx, attempts), { kind: 'protocol', status: response.status, text, what: 'the body is not JSON', issues: [] });
    }
    try {
      return read(json);
    } catch (error) {
      throw toError(this.#context(endpoint, ctx, attempts), readFailure(error, response.status, text));
    }
  }

  /** What an error about this call needs; built only when a call fails. */
  #context(endpoint: Endpoint, ctx: SendContext, attempts: number): FailureContext {
    return {
      operation: endpoint.operation,
      endpoint: `/${endpoint.path}`,
      host: this.#host,
      basePath: this.#basePath,
      attempts,
      rejectedStatus: endpoint.rejectedStatus,
      delivers: ctx.delivers,
      playerName: ctx.playerName,
      redact: (text) => this.#config.credentials.redact(text),
    };
  }

  /** The full header set of an endpoint, built once per client and endpoint. */
  #headersOf(endpoint: Endpoint): Record<string, string> {
    let headers = this.#headers.get(endpoint);
    if (headers === undefined) {
      headers = { ...this.#baseHeaders, 'content-type': endpoint.contentType, ...this.#config.credentials.headers(endpoint.auth) };
      this.#headers.set(endpoint, headers);
    }
    return headers;
  }

  #transportFailure(error: unknown, ctx: SendContext, context: FailureContext, dispatched: boolean): unknown {
    if (!dispatched) ctx.onNotSent?.();
    if (ctx.signal?.aborted) return toError(context, { kind: 'aborted', reason: ctx.signal.reason, sent: dispatched });
    if (error instanceof KyTimeoutError) return toError(context, { kind: 'timeout', timeoutMs: ctx.timeoutMs ?? this.#config.timeoutMs });
    const code = networkCode(error);
    const sent = dispatched && !NOT_SENT_CODES.has(code);
    if (dispatched && !sent) ctx.onNotSent?.();
    return toError(context, { kind: 'network', reason: code, sent, error });
  }
}

/**
 * A reader's failure: refused credentials reported in the body, a shape outside the
 * protocol, or anything else a hostile body made the reader throw (too deep, too odd),
 * which is a protocol failure of the call all the same. Exported for its tests: no JSON body
 * known makes a reader of the SDK throw anything but a WireProblem.
 * @internal
 */
export function readFailure(error: unknown, status: number, text: string): Failure {
  if (error instanceof WireProblem && error.kind === 'auth') return { kind: 'auth', status, text, what: error.what };
  if (error instanceof WireProblem) return { kind: 'protocol', status, text, what: error.what, issues: error.issues };
  return { kind: 'protocol', status, text, what: `the answer could not be read (${error instanceof Error ? error.name : typeof error})`, issues: [] };
}

/**
 * ky's `shouldRetry` for a call with a signal of the caller's: no retry once it aborted
 * (the call has already rejected with its reason), nor for an answer over the size bound.
 */
function stopWhenAborted(signal: AbortSignal): NonNullable<RetryOptions['shouldRetry']> {
  return ({ error }) => (signal.aborted || error instanceof TooLarge ? false : undefined);
}

/** Thrown inside ky's fetch when an answer outgrows the bound; mapped to a typed error. */
class TooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer is larger than ${limitBytes} bytes`);
  }
}

/**
 * The body as text, read as it arrives and stopped once it passes `limit` bytes. fetch
 * hands over the decoded bytes, so a small compressed body that inflates past the bound
 * is stopped there, and no more than the bound is ever read.
 */
async function readBounded(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (!response.headers.has('content-encoding') && declared > limit) {
    void response.body?.cancel().catch(() => undefined);
    throw new TooLarge(limit);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  // The chunks are kept and decoded once at the end: a streaming TextDecoder (one call per
  // chunk, the pieces joined) cost a 500-product catalog about 150 µs more CPU than one
  // decode, and more again in JSON.parse, which reads one flat string faster (#47).
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => undefined);
      throw new TooLarge(limit);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : joined(chunks, size));
}

/** `chunks` as one array of `size` bytes. */
function joined(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
