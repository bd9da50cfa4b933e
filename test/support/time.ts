import { afterEach, vi } from 'vitest';
import { T0 } from './fixtures.js';

/**
 * A clock for the client's `now` option: starts at a fixed instant and moves only when
 * the test says so.
 */
export function manualClock(start = T0) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

/**
 * Fakes `setTimeout` (what ky's backoff and timeout use) for the current test and
 * restores real timers afterwards. Sockets and msw keep running on the real event loop.
 */
export function useFakeBackoff() {
  afterEach(() => {
    vi.useRealTimers();
  });
  return () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
}

/**
 * Advances the fake timers in steps until `promise` settles, letting real I/O run in
 * between, and resolves to what it settled with. Fails when it does not settle within
 * `limitMs` of fake time.
 */
export async function settle<T>(promise: Promise<T>, { stepMs = 50, limitMs = 60_000 } = {}): Promise<PromiseSettledResult<T>> {
  let result: PromiseSettledResult<T> | undefined;
  promise.then(
    (value) => (result = { status: 'fulfilled', value }),
    (reason: unknown) => (result = { status: 'rejected', reason }),
  );
  for (let elapsed = 0; result === undefined && elapsed <= limitMs; elapsed += stepMs) {
    await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(stepMs);
  }
  if (result === undefined) throw new Error(`the call did not settle within ${limitMs} ms of fake time`);
  return result;
}

/** The rejection reason of a settled call (fails when it fulfilled). */
export function rejectionOf<T>(result: PromiseSettledResult<T>): unknown {
  if (result.status === 'fulfilled') throw new Error(`expected a rejection, got ${JSON.stringify(result.value)}`);
  return result.reason;
}
