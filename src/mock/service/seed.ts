import { describeIssues } from './issues.js';
import { mockSeedSchema } from './seed-schema.js';
import type { MockSeed } from './seed-types.js';

export type { MockSeed, MockSeedServer, MockSeedGateway, MockSeedCoupon, MockSeedCategory, MockSeedProduct, MockSeedSale, MockSeedReward, MockProductPatch, MockRewardPatch } from './seed-types.js';

/**
 * Validates a seed and returns it typed; the error message names every bad field.
 *
 * @example
 * ```ts
 * const seed = parseMockSeed(JSON.parse(await readFile('seed.json', 'utf8')));
 * ```
 * @throws Error `Invalid mock seed: seed.servers[0].products[2].price: expected a number >= 0`
 *   for one problem; for several, `Invalid mock seed, 3 problems:` and one per line.
 */
export function parseMockSeed(input: unknown): MockSeed {
  const result = mockSeedSchema.safeParse(input);
  if (result.success) {
    return result.data as MockSeed;
  }
  // Every problem, one per line: someone editing a seed wants them all at once.
  const problems = describeIssues('seed', result.error.issues);
  if (problems.length <= 1) throw new Error(`Invalid mock seed: ${problems[0] ?? 'seed: invalid'}`);
  throw new Error(`Invalid mock seed, ${problems.length} problems:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
}
