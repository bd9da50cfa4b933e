/**
 * The campaign's seeded draws, below everything that draws (campaign, presence, kills).
 *
 * @module
 */

/** A pick from a list. */
export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
/** An integer from lo to hi, both included. */
export const between = (random: () => number, [lo, hi]: readonly [number, number]): number => lo + Math.floor(random() * (hi - lo + 1));
