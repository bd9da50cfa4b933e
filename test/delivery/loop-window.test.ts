/**
 * The loop and the client's local claim guard agree on the service's 10 s window
 * (src/delivery/loop/scheduler.ts, src/internal/claim-guard.ts, src/delivery/loop/call-budget.ts): both
 * time it from when a call's answer came back, and the loop's waits never end before
 * their time on its clock, even when the platform's timers fire a millisecond early (Node
 * rounds a timer's start down to the millisecond). So a `/claim` right after a poll waits
 * and succeeds, and never ends RATE_LIMIT with nothing given.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StorefrontEvent } from '../../src/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

beforeEach(() => {
  // The polls' jitter pinned: each a whole interval after the last run.
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Timers that fire a millisecond early, as Node's do for a timer started mid-millisecond;
 * returns a timer that keeps time, for the network's latency.
 */
function earlyTimers(): typeof setTimeout {
  const fake = globalThis.setTimeout;
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((run: () => void, ms?: number) => fake(run, ms !== undefined && ms >= 2 ? ms - 1 : ms)) as typeof setTimeout);
  return fake;
}

/** Answers that take 150 ms each way (the request arrives at the service 150 ms after it was sent). */
const slow = (timer: typeof setTimeout) => (next: typeof globalThis.fetch): typeof globalThis.fetch => async (input, init) => {
  await new Promise((r) => timer(r, 150));
  const answer = await next(input, init);
  await new Promise((r) => timer(r, 150));
  return answer;
};

describe('a /claim right after a poll', () => {
  it('waits for the window the poll opened (timed from its answer) and succeeds, on timers that fire a millisecond early', async () => {
    const { mock, client, calls, given, give } = setup({ fetch: slow(earlyTimers()) });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Hal'); // its preview: sent at 0, answered at 300
    await vi.advanceTimersByTimeAsync(1_000);
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    const report = loop.claim('Hal');
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await report).code).toBe('SUCCESS');
    expect(given).toHaveLength(1);
    // Each call sent a window after the last one's answer (300 ms after it was sent), so
    // they reach the service a window and a round trip apart: the preview, then the claim.
    const [join, preview, claim] = calls.map((c) => c.at - T0) as [number, number, number];
    expect(calls).toHaveLength(3);
    // Every call the loop made reached the service: none was refused by the client's guard.
    expect(loop.stats().calls).toBe(3);
    expect(preview - join).toBeGreaterThanOrEqual(10_000 + 300);
    expect(claim - preview).toBeGreaterThanOrEqual(10_000 + 300);
    await loop.stop();
  });

  it('three in a row: each succeeds, and the player is never reported blocked', async () => {
    const { mock, client, given, give, events } = setup({ fetch: slow(earlyTimers()) });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000 });
    loop.join('Ivy');
    const codes: string[] = [];
    for (let round = 0; round < 3; round++) {
      await vi.advanceTimersByTimeAsync(1_000); // the poll (or the last /claim's delivery) is answered
      mock.addPurchase(KEY, { playerName: 'Ivy', id: 1, quantity: 1 });
      const report = loop.claim('Ivy');
      await vi.advanceTimersByTimeAsync(22_000);
      codes.push((await report).code);
    }
    expect(codes).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
    expect(given).toHaveLength(3);
    expect(events.filter((e: StorefrontEvent) => e.type === 'playerBlocked')).toEqual([]);
    await loop.stop();
  });

  it('with claimMode fast: one claim a window after the poll\'s answer, which succeeds', async () => {
    const { mock, client, calls, given, give } = setup({ fetch: slow(earlyTimers()) });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, claimMode: 'fast' });
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(1_000);
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    const report = loop.claim('Jo');
    await vi.advanceTimersByTimeAsync(12_000);
    expect((await report).code).toBe('SUCCESS');
    expect(given).toHaveLength(1);
    expect(calls.map((c) => c.preview)).toEqual([true, false]);
    expect(loop.stats().calls).toBe(2);
    expect((calls[1]?.at as number) - (calls[0]?.at as number)).toBeGreaterThanOrEqual(10_000 + 300);
    await loop.stop();
  });
});
