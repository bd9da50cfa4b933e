/**
 * The scripts' statistics (the bench, the simulation, the crash campaigns): one definition
 * of a percentile, so a p50 means the same in every figure they print.
 *
 * @module
 */

/** The nearest-rank percentile: the smallest sample with at least `q` (0 to 1) of the samples at or below it; 0 with no samples. */
export function percentile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** The nearest-rank median (of an even count, the lower of the two middle samples). */
export const median = (samples: readonly number[]): number => percentile(samples, 0.5);
