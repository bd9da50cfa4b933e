/**
 * The clock of intervals. The wall clock (`Date.now()`) steps: NTP corrections, a host
 * whose clock is set back an hour, a VM resumed from a snapshot. A window or a cache
 * lifetime measured on it would then last an hour, or end at once. `performance.now()`
 * only moves forward, at the pace of real time, so every interval the SDK measures (the
 * claim guard's 10 s window, the catalog cache's lifetime, a wait) reads this clock,
 * unless a test injected its own `now`.
 *
 * @module
 * @internal
 */

/**
 * Milliseconds on a monotonic clock (`performance.now()`, read through the global at each
 * call so that fake timers which replace `performance` are seen). Only differences of
 * two readings mean anything; it is not a date.
 */
export function monotonicNow(): number {
  return globalThis.performance.now();
}
