/**
 * The mock's seeded random numbers, in a module of its own so that a small program (the
 * crash campaign's worker) can use the same generator without loading the mock.
 *
 * @module
 * @internal
 */

/** mulberry32: small, fast and good enough to decide faults deterministically. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
