/**
 * The bounds the SDK holds the service's numbers to before anything reaches a give: a
 * count (units, quantities, points, ids) is a whole number from 0 to
 * {@link MAX_SERVICE_COUNT}, a price a finite number from 0 to it; units to give and
 * quantities bought are at least 1. An answer outside them is not read (see the
 * errors guide): a claim's answer then is a `ClaimOutcomeUnknownError`, never an item.
 *
 * @module
 */

/**
 * The largest count or price the SDK accepts from the service: 2,147,483,647, a Java
 * `int`'s largest value **[interpretation]**: the service stores these as Java ints (the
 * mock keeps them there too), so anything larger is a broken or hostile answer.
 */
export const MAX_SERVICE_COUNT = 2_147_483_647;

/** What is wrong with `value` as a count from `min` to {@link MAX_SERVICE_COUNT}, or `undefined`. @internal */
export function countProblem(value: number, min: 0 | 1): string | undefined {
  return Number.isSafeInteger(value) && value >= min && value <= MAX_SERVICE_COUNT ? undefined : `expected a whole number from ${min} to ${MAX_SERVICE_COUNT}, got ${String(value)}`;
}

/** What is wrong with `value` as a price from 0 to {@link MAX_SERVICE_COUNT}, or `undefined`. @internal */
export function priceProblem(value: number): string | undefined {
  return Number.isFinite(value) && value >= 0 && value <= MAX_SERVICE_COUNT ? undefined : `expected a price from 0 to ${MAX_SERVICE_COUNT}, got ${String(value)}`;
}
