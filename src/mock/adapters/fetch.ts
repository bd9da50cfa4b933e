import { DROPPED, notFound, type MockRouter } from './router.js';

/**
 * A `fetch` answered by the mock in process: no network, no msw. Unknown routes answer the
 * HTTP server's JSON 404; a dropped connection (fault injection) rejects with a
 * `TypeError('fetch failed')` whose `cause.code` is `ECONNRESET`, as Node's fetch does for
 * a reset; an aborted signal rejects with its reason, while the mock, like a real server,
 * may still finish the request it received.
 */
export function createMockFetch(router: MockRouter): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const { signal } = request;
    signal.throwIfAborted();
    const answered = await untilAborted(router(request), signal);
    if (answered === undefined) return notFound(request);
    if (answered === DROPPED) {
      const reset = Object.assign(new Error('the mock dropped the connection (fault injection)'), { code: 'ECONNRESET' });
      throw new TypeError('fetch failed', { cause: reset });
    }
    return answered;
  };
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
