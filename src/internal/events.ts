/**
 * What reports a call to `onEvent`: loaded by the transport on the first call of a
 * client that has a listener, so clients without one never load it.
 *
 * @module
 * @internal
 */
import { HTTPError, TimeoutError as KyTimeoutError, type Options } from 'ky';
import { maskHeaders } from '../auth.js';
import type { Endpoint } from '../endpoints.js';
import type { StorefrontRequestEvent } from './request-events.js';
import { networkCode, shortReason } from './to-error.js';

/** What reports one call to `onEvent`: ky hooks for its requests and retries, and a callback for its responses. */
export interface EventReporter {
  hooks: NonNullable<Options['hooks']>;
  /** Called by the transport when an attempt gets its response headers. */
  onHeaders(response: Response): void;
}

/**
 * A `request` event per attempt, a `response` per answer, a `retry` per retry. The
 * `response` event is not an `afterResponse` hook: ky would clone the response for it,
 * and the transport has read the body by the time ky runs those hooks.
 */
export function eventReporter(endpoint: Endpoint, headers: Record<string, string>, onEvent: (event: StorefrontRequestEvent) => void, redact: (text: string) => string): EventReporter {
  const emit = (event: StorefrontRequestEvent): void => {
    try {
      onEvent(event);
    } catch {
      // A listener's failure must not change the outcome of the call.
    }
  };
  let startedAt = 0;
  let attempt = 0;
  // Set by the first `beforeRequest`, which always comes before any response.
  let url: string;
  return {
    hooks: {
      beforeRequest: [
        (request, _options, { retryCount }) => {
          startedAt = performance.now();
          attempt = retryCount;
          url = request.url;
          emit({ type: 'request', operation: endpoint.operation, method: request.method, url, headers: maskHeaders(new Headers(headers)), attempt });
        },
      ],
      beforeRetry: [
        ({ request, error, retryCount }) => {
          const reason = error instanceof HTTPError ? `HTTP ${error.response.status}` : error instanceof KyTimeoutError ? 'timeout' : networkCode(error);
          emit({ type: 'retry', operation: endpoint.operation, url: request.url, attempt: retryCount, reason: shortReason(reason, redact) });
        },
      ],
    },
    onHeaders(response) {
      emit({ type: 'response', operation: endpoint.operation, url, status: response.status, attempt, durationMs: performance.now() - startedAt });
    },
  };
}
