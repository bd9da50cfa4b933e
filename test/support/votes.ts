/**
 * What the vote reward tests share (test/delivery/votes*.test.ts): a game that gives each
 * `deliveryId` once, and the states of journal records.
 */
import type { GivenVoteReward, JournalEntry } from '../../src/index.js';

/** The game: gives each `deliveryId` once, counts the units per reward. */
export function game() {
  const seen = new Set<string>();
  const units = new Map<number, number>();
  let repeats = 0;
  const give = (reward: GivenVoteReward) => {
    if (seen.has(reward.deliveryId)) {
      repeats += 1;
      return;
    }
    seen.add(reward.deliveryId);
    units.set(reward.reward_id, (units.get(reward.reward_id) ?? 0) + reward.give_amount);
  };
  return { give, units, repeats: () => repeats };
}

export const states = (entries: readonly JournalEntry[]) => entries.map((e) => e.state);

