/**
 * The local claim guard and the service agree at the edge of the 10 s window (issue #21,
 * point 17). The service times its window from when a claim *arrives*; a guard that
 * timed it from the *send* let a retry at its edge reach the service a few ms early
 * whenever the first request took longer on its way than the retry: the service refused
 * it, and the player waited 10 s more. Over real HTTP (the mock's `listen()`), with the
 * first request delayed on its way in (the mock's `delay` fault, which runs before the
 * operation); time is faked (Date, performance, setTimeout) so the mock's real-time clock,
 * the client's monotonic clock and the delay all run on the same virtual time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient } from '../../src/index.js';
import { createMockService, type MockServerHandle, type MockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { settle } from '../support/time.js';

const LATENCY_MS = 300;

let mock: MockService;
let server: MockServerHandle;

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'], now: T0 });
  // No `now`: the mock follows the (faked) wall clock, as a real service follows its own.
  mock = createMockService({ seed: storeSeed });
  server = await mock.listen({ port: 0 });
});

afterEach(async () => {
  vi.useRealTimers();
  await server.close();
});

/** A client over HTTP on its default clocks (monotonic intervals). */
function client(): StorefrontClient {
  return new StorefrontClient({ apiKey: KEY, baseUrl: server.url, retry: 0, journal: new MemoryJournal() });
}

/** The value of a call that must fulfil, letting fake time run in small steps meanwhile. */
async function valueOf<T>(promise: Promise<T>): Promise<T> {
  const result = await settle(promise, { stepMs: 5 });
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

describe('a retry at the local guard\'s edge', () => {
  it(`is accepted by the service when the first claim took ${LATENCY_MS} ms to arrive`, async () => {
    const c = client();
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'delay', delayMs: LATENCY_MS, times: 1 });
    expect((await valueOf(c.claim('Max'))).code).toBe('SUCCESS');

    mock.addPurchase(KEY, { playerName: 'Max', id: 2, quantity: 1 });
    const refused = await c.claim('Max');
    expect(refused).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
    if (refused.code !== 'RATE_LIMIT') return;
    expect(refused.retryAfterMs).toBeLessThanOrEqual(10_000);

    // Exactly at the edge the guard named; the retry itself has no delay on its way.
    vi.advanceTimersByTime(refused.retryAfterMs);
    const retry = await c.claim('Max');
    expect(retry).toMatchObject({ code: 'SUCCESS' });
  });

  it('deliver (fast) waits out a local RATE_LIMIT once, and its retry is accepted: no second 10 s wait', async () => {
    const c = client();
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'delay', delayMs: LATENCY_MS, times: 1 });
    expect((await valueOf(c.claim('Max'))).code).toBe('SUCCESS');

    mock.addPurchase(KEY, { playerName: 'Max', id: 2, quantity: 1 });
    const waits: number[] = [];
    const granted: string[] = [];
    // No fake timer needs to fire on this path: only `sleep` moves time, by what it is asked.
    const report = await c.deliver('Max', (item) => void granted.push(item.product_id_string), {
      mode: 'fast',
      sleep: async (ms) => {
        waits.push(ms);
        vi.advanceTimersByTime(ms);
      },
    });
    expect(report.code).toBe('SUCCESS');
    expect(granted).toEqual(['7']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(10_000);
  });

  it('while a claim is in flight, a second one for the player is refused locally, never sent', async () => {
    const c = client();
    mock.faults.add({ operation: 'claim', kind: 'delay', delayMs: LATENCY_MS, times: 1 });
    const first = c.claim('Max');
    const second = await c.claim('Max');
    expect(second).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 10_000 });
    expect((await valueOf(first)).code).toBe('NO_ITEMS');
  });
});
