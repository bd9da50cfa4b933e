/**
 * The one transport: every endpoint goes through `Transport.send`, which does the HTTP
 * work with a single ky instance per client and turns every failure into a typed error
 * through `toError`. ky's own errors and Request objects never leave this file.
 */
import ky, { HTTPError, TimeoutError as KyTimeoutError, type KyInstance, type Options } from 'ky';
import { maskHeaders, type Credentials } from '../auth.js';
import type { Endpoint } from '../endpoints.js';
import type { StorefrontEvent } from '../types.js';
import type { WireProblem } from '../normalize.js';
import { toError, type Failure, type FailureContext } from './to-error.js';

export interface TransportConfig {
  baseUrl: string;
  timeoutMs: number;
  retry: number;
  fetch: typeof globalThis.fetch | undefined;
  userAgent: string;
  onEvent: ((event: StorefrontEvent) => void) | undefined;
  credentials: Credentials;
}

export interface SendContext {
  signal: AbortSignal | undefined;
  /** The player (or voter) the call is for, reported by ClaimOutcomeUnknownError. */
  subject: string;
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
  readonly #readRetry: NonNullable<Options['retry']>;
  readonly #baseHeaders: Readonly<Record<string, string>>;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#readRetry = {
      limit: config.retry,
      methods: ['post'],
      statusCodes: RETRY_STATUS_CODES,
      afterStatusCodes: [429, 503],
      maxRetryAfter: MAX_RETRY_AFTER_MS,
      backoffLimit: BACKOFF_LIMIT_MS,
      retryOnTimeout: true,
    };
    this.#baseHeaders = { accept: 'application/json', 'user-agent': config.userAgent };
    this.#ky = ky.create({ prefixUrl: config.baseUrl, timeout: config.timeoutMs });
  }

  /**
   * Sends one operation and resolves to its parsed JSON body (2xx only). Rejects with a
   * StorefrontError, or with `signal.reason` when aborted before anything was sent.
   */
  async send(endpoint: Endpoint, payload: Record<string, unknown>, ctx: SendContext): Promise<unknown> {
    const context: FailureContext = {
      operation: endpoint.operation,
      endpoint: `/${endpoint.path}`,
      delivers: ctx.delivers,
      subject: ctx.subject,
      redact: (text) => this.#config.credentials.redact(text),
    };
    if (ctx.signal?.aborted) {
      ctx.onNotSent?.();
      throw ctx.signal.reason;
    }
    const body =
      endpoint.body === 'json'
        ? JSON.stringify(payload)
        : new URLSearchParams(payload as Record<string, string>).toString();
    const options: Options = {
      method: 'post',
      body,
      headers: { ...this.#baseHeaders, 'content-type': endpoint.contentType, ...this.#config.credentials.headers(endpoint.auth) },
      retry: endpoint.retryable ? this.#readRetry : 0,
      // Only reads need ky to throw on a status (that is how its retry sees 5xx).
      throwHttpErrors: endpoint.retryable,
    };
    if (ctx.signal) options.signal = ctx.signal;
    // "Sent" means fetch was called: a failure before that (ky building the Request,
    // an abort before dispatch) cannot have reached the service. fetch is looked up per
    // request, never captured, because msw and test doubles patch globalThis.fetch.
    let dispatched = false;
    const customFetch = this.#config.fetch;
    options.fetch = (input, init) => {
      dispatched = true;
      return (customFetch ?? globalThis.fetch)(input, init);
    };
    if (this.#config.onEvent) options.hooks = this.#eventHooks(endpoint, this.#config.onEvent);

    let response: Response;
    try {
      response = await this.#ky(endpoint.path, options);
    } catch (error) {
      if (!(error instanceof HTTPError)) throw this.#transportFailure(error, ctx, context, dispatched);
      response = error.response;
    }

    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw this.#transportFailure(error, ctx, context, true);
    }
    if (!response.ok) throw toError(context, { kind: 'status', status: response.status, text });
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw toError(context, { kind: 'protocol', status: response.status, text, what: 'the body is not JSON', issues: [] });
    }
  }

  /** The error for a body that parsed as JSON but broke the protocol. */
  protocolError(endpoint: Endpoint, ctx: Pick<SendContext, 'delivers' | 'subject'>, problem: WireProblem, body: unknown): unknown {
    let text: string;
    try {
      text = JSON.stringify(body) ?? '';
    } catch {
      text = '';
    }
    const failure: Failure =
      problem.kind === 'auth'
        ? { kind: 'auth', status: 200, text, what: problem.what }
        : { kind: 'protocol', status: 200, text, what: problem.what, issues: problem.issues };
    return toError(
      {
        operation: endpoint.operation,
        endpoint: `/${endpoint.path}`,
        delivers: ctx.delivers,
        subject: ctx.subject,
        redact: (t) => this.#config.credentials.redact(t),
      },
      failure,
    );
  }

  #transportFailure(error: unknown, ctx: SendContext, context: FailureContext, dispatched: boolean): unknown {
    if (!dispatched) ctx.onNotSent?.();
    if (ctx.signal?.aborted) return toError(context, { kind: 'aborted', reason: ctx.signal.reason, sent: dispatched });
    if (error instanceof KyTimeoutError) return toError(context, { kind: 'timeout', timeoutMs: this.#config.timeoutMs });
    const code = networkCode(error);
    const sent = dispatched && !NOT_SENT_CODES.has(code);
    if (dispatched && !sent) ctx.onNotSent?.();
    return toError(context, { kind: 'network', reason: code, sent });
  }

  #eventHooks(endpoint: Endpoint, onEvent: (event: StorefrontEvent) => void): NonNullable<Options['hooks']> {
    const emit = (event: StorefrontEvent): void => {
      try {
        onEvent(event);
      } catch {
        // A listener's failure must not change the outcome of the call.
      }
    };
    let startedAt = 0;
    return {
      beforeRequest: [
        (request, _options, { retryCount }) => {
          startedAt = performance.now();
          emit({ type: 'request', operation: endpoint.operation, method: request.method, url: request.url, headers: maskHeaders(request.headers), attempt: retryCount });
        },
      ],
      afterResponse: [
        (request, _options, response, { retryCount }) => {
          emit({ type: 'response', operation: endpoint.operation, url: request.url, status: response.status, attempt: retryCount, durationMs: performance.now() - startedAt });
        },
      ],
      beforeRetry: [
        ({ request, error, retryCount }) => {
          const reason = error instanceof HTTPError ? `HTTP ${error.response.status}` : error instanceof KyTimeoutError ? 'timeout' : networkCode(error);
          emit({ type: 'retry', operation: endpoint.operation, url: request.url, attempt: retryCount, reason });
        },
      ],
    };
  }
}

/** A short reason for a failed fetch (undici puts the socket error in `cause`). */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  const own = (error as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own;
  if (typeof cause?.message === 'string') return cause.message.slice(0, 80);
  if (error instanceof Error) return error.message.slice(0, 80);
  return 'unknown network failure';
}
