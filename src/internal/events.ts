/**
 * The ky hooks that report a call to `onEvent`: loaded by the transport on the first call
 * of a client that has a listener, so clients without one never load them.
 *
 * @module
 * @internal
 */
import { HTTPError, TimeoutError as KyTimeoutError, type Options } from 'ky';
import { maskHeaders } from '../auth.js';
import type { Endpoint } from '../endpoints.js';
import type { StorefrontEvent } from '../types.js';
import { networkCode } from './to-error.js';

/** Hooks for one call: a `request` event per attempt, a `response` per answer, a `retry` per retry. */
export function eventHooks(endpoint: Endpoint, headers: Record<string, string>, onEvent: (event: StorefrontEvent) => void): NonNullable<Options['hooks']> {
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
        emit({ type: 'request', operation: endpoint.operation, method: request.method, url: request.url, headers: maskHeaders(new Headers(headers)), attempt: retryCount });
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
