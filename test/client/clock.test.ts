/**
 * Intervals on a monotonic clock (issue #21, point 12): the host's wall clock steps back an
 * hour after a claim, or after a catalog was cached. The local claim guard never answers a
 * `retryAfterMs` above the service's 10 s window, and a cached catalog never outlives its
 * TTL, whatever `Date.now()` (or an injected `now`) does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorefrontClient, type StorefrontClientOptions } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { CLAIM_WINDOW_MS } from '../../src/wire/claim.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { manualClock } from '../support/time.js';

const HOUR = 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

/** A client on the in-process mock (whose own clock is frozen at T0), counting requests per path. */
function setup(options: Partial<StorefrontClientOptions> = {}) {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const paths: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    paths.push(new URL(String(input)).pathname);
    return mock.fetch(input, init);
  };
  const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, retry: 0, ...options });
  return { mock, client, paths };
}

describe('the wall clock steps back an hour (default clocks, no `now` option)', () => {
  it('after a claim: the guard still answers the time left in the 10 s window, never an hour', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: T0 });
    const { mock, client, paths } = setup();
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');

    vi.setSystemTime(Date.now() - HOUR); // the wall clock only; monotonic time does not move
    vi.advanceTimersByTime(20);
    const refused = await client.claim('Player123');
    expect(refused).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 9_980 });

    vi.advanceTimersByTime(9_980);
    mock.clock.advance(CLAIM_WINDOW_MS);
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');
    expect(paths).toHaveLength(2);
  });

  it('after a claim, on real monotonic time: retryAfterMs stays within the window', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T0 });
    const { client } = setup();
    await client.claim('Player123');
    vi.setSystemTime(Date.now() - HOUR);
    const refused = await client.claim('Player123');
    expect(refused.code).toBe('RATE_LIMIT');
    expect(refused.code === 'RATE_LIMIT' && refused.retryAfterMs).toBeLessThanOrEqual(CLAIM_WINDOW_MS);
  });

  it('after a catalog was cached: the cache expires after its TTL of monotonic time, not an hour later', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: T0 });
    const { client, paths } = setup({ catalogCacheTtlMs: 60_000 });
    await client.getCatalog();
    vi.setSystemTime(Date.now() - HOUR);
    vi.advanceTimersByTime(59_999);
    await client.getCatalog();
    expect(paths).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await client.getCatalog();
    expect(paths).toHaveLength(2);
  });

  it('a wall clock stepped forward an hour does not expire the cache or open the window early', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: T0 });
    const { client, paths } = setup({ catalogCacheTtlMs: 60_000 });
    await client.getCatalog();
    await client.claim('Player123');
    vi.setSystemTime(Date.now() + HOUR);
    await client.getCatalog();
    expect((await client.claim('Player123')).code).toBe('RATE_LIMIT');
    expect(paths).toHaveLength(2);
  });
});

describe('an injected `now` that steps back', () => {
  it('the guard answers at most the 10 s window, and a claim goes out 10 s later on that clock', async () => {
    const clock = manualClock();
    const { mock, client, paths } = setup({ now: clock.now });
    await client.claim('Player123');
    mock.clock.advance(CLAIM_WINDOW_MS); // the service's own clock: its window is over
    clock.advance(-HOUR);
    const refused = await client.claim('Player123');
    expect(refused).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: CLAIM_WINDOW_MS });
    clock.advance(CLAIM_WINDOW_MS - 1);
    expect((await client.claim('Player123')).code).toBe('RATE_LIMIT');
    clock.advance(1);
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');
    expect(paths).toHaveLength(2);
  });

  it('a cached catalog is not served while the clock reads before the time it was cached', async () => {
    const clock = manualClock();
    const { client, paths } = setup({ now: clock.now, catalogCacheTtlMs: 60_000 });
    await client.getCatalog();
    clock.advance(-HOUR);
    await client.getCatalog();
    expect(paths).toHaveLength(2);
  });
});
