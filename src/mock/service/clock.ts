/**
 * A point in time the mock accepts: epoch milliseconds, a `Date`, or an ISO 8601 string.
 */
export type MockTime = number | Date | string;

/**
 * The mock's single source of time: every time-dependent rule (windows, sales, coupons,
 * the 10 s claim limit, created/delivered stamps) reads `now()`.
 *
 * @example
 * ```ts
 * mock.clock.advance(10_000); // wait out the claim rate limit without sleeping
 * mock.clock.set('2026-06-01T12:00:00Z');
 * ```
 */
export interface MockClock {
  /** The current mock time in epoch milliseconds. */
  now(): number;
  /**
   * Moves the clock forward by `ms` milliseconds and returns the new time.
   *
   * @throws RangeError when `ms` is negative or not finite (use `set` to go back).
   */
  advance(ms: number): number;
  /**
   * Moves the clock to the given time and returns it in epoch milliseconds.
   *
   * @throws RangeError when the time cannot be parsed.
   */
  set(time: MockTime): number;
  /** Restores the clock to the `now` given at creation (or to real time when none was). */
  reset(): void;
}

/**
 * Converts a {@link MockTime} to epoch milliseconds.
 *
 * @throws RangeError when the value is not a finite number or a parseable date.
 */
export function toEpochMs(time: MockTime): number {
  const ms = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : time.getTime();
  if (!Number.isFinite(ms)) {
    throw new RangeError(`clock: ${JSON.stringify(String(time))} is not a valid time (use epoch ms or ISO 8601)`);
  }
  return ms;
}

/**
 * Creates a clock. With `start` the clock is frozen there and moves only by
 * `advance`/`set`; without it the clock follows real time, shifted by `advance`/`set`.
 *
 * @example
 * ```ts
 * const clock = createClock(Date.parse('2026-01-01T00:00:00Z'));
 * clock.advance(5_000);
 * ```
 */
export function createClock(start?: MockTime): MockClock {
  const frozenAt = start === undefined ? undefined : toEpochMs(start);
  // Frozen: `offset` is the distance from `frozenAt`. Real time: the distance from Date.now().
  let offset = 0;
  const base = (): number => frozenAt ?? Date.now();

  return {
    now: () => base() + offset,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) {
        throw new RangeError(`clock.advance: expected a finite number of milliseconds >= 0, got ${String(ms)}`);
      }
      offset += ms;
      return base() + offset;
    },
    set(time) {
      const target = toEpochMs(time);
      offset = target - base();
      return target;
    },
    reset() {
      offset = 0;
    },
  };
}
