/**
 * What reaches `onEvent` (src/internal/events.ts), pinned event by event (issue #46): a
 * request (method, URL, headers with the key masked, attempt), its response (status,
 * attempt, a duration), each retry with its reason (`HTTP 503`, `timeout`, the socket's
 * code, redacted and cut), and a listener that throws changes nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorefrontClient, type StorefrontEvent } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';
import { catalogBody } from '../support/msw.js';
import { settle } from '../support/time.js';

afterEach(() => {
  vi.useRealTimers();
});

const URL_ = 'https://api.teamgames.io/api/v2/client/global/products';

function client(fetch: typeof globalThis.fetch, events: StorefrontEvent[], options: { retry?: number; timeoutMs?: number } = {}) {
  return new StorefrontClient({ apiKey: KEY, catalogCacheTtlMs: 0, retry: 1, fetch, onEvent: (event) => void events.push(event), ...options });
}

describe('the events of a call', () => {
  it('request, response, retry (HTTP 503), request, response, in order', async () => {
    const events: StorefrontEvent[] = [];
    let calls = 0;
    const fetch = async () => (++calls === 1 ? new Response('busy', { status: 503, headers: { 'retry-after': '0' } }) : Response.json(catalogBody));
    await client(fetch, events).getCatalog();
    expect(events.map((e) => e.type)).toEqual(['request', 'response', 'retry', 'request', 'response']);
    const [request, response, retry, second, last] = events as [StorefrontEvent & Record<string, unknown>, ...Array<StorefrontEvent & Record<string, unknown>>];
    expect(request).toEqual({
      type: 'request',
      operation: 'getCatalog',
      method: 'POST',
      url: URL_,
      headers: { accept: 'application/json', authorization: '<redacted>', 'content-type': 'application/json', 'user-agent': expect.any(String) as unknown },
      attempt: 0,
    });
    expect(response).toMatchObject({ type: 'response', operation: 'getCatalog', url: URL_, status: 503, attempt: 0 });
    expect(typeof response?.durationMs === 'number' && (response.durationMs as number) >= 0).toBe(true);
    expect(retry).toEqual({ type: 'retry', operation: 'getCatalog', url: URL_, attempt: 1, reason: 'HTTP 503' });
    expect(second).toMatchObject({ type: 'request', attempt: 1 });
    expect(last).toMatchObject({ type: 'response', status: 200, attempt: 1 });
  });

  it('a response reports how long its attempt took, no more', async () => {
    const events: StorefrontEvent[] = [];
    const before = performance.now();
    await client(async () => Response.json(catalogBody), events).getCatalog();
    const took = performance.now() - before;
    const response = events.find((e) => e.type === 'response') as (StorefrontEvent & { durationMs: number }) | undefined;
    expect(response?.durationMs).toBeGreaterThanOrEqual(0);
    expect(response?.durationMs).toBeLessThanOrEqual(took);
  });

  it("a retry after a timeout says 'timeout'", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const events: StorefrontEvent[] = [];
    const hang: typeof globalThis.fetch = (_, init) => new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    await settle(client(hang, events, { timeoutMs: 50 }).getCatalog());
    expect(events.filter((e) => e.type === 'retry')).toEqual([{ type: 'retry', operation: 'getCatalog', url: URL_, attempt: 1, reason: 'timeout' }]);
  });

  it("a retry after a network failure names its code, else its text, the key redacted, cut to 80 characters", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const reasons = async (thrown: unknown) => {
      const events: StorefrontEvent[] = [];
      await settle(client(() => Promise.reject(thrown), events).getCatalog());
      return events.flatMap((e) => (e.type === 'retry' ? [e.reason] : []));
    };
    expect(await reasons(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }))).toEqual(['ECONNRESET']);
    expect(await reasons(new Error(`${KEY} ${'w'.repeat(100)}`))).toEqual([`<redacted> ${'w'.repeat(69)}`]);
  });

  it('a listener that throws changes nothing', async () => {
    const fetch = async () => Response.json(catalogBody);
    const sdk = new StorefrontClient({ apiKey: KEY, catalogCacheTtlMs: 0, fetch, onEvent: () => {
      throw new Error('listener');
    } });
    expect(await sdk.getCatalog()).toEqual(catalogBody);
  });
});
