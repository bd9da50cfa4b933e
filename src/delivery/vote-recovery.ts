/**
 * What the service's vote counters tell: every reward row carries the player's
 * `total_points` (ever earned) and `vote_points` (left), so `total − left` is what the
 * player has spent so far, whatever they earned meanwhile. Between two answers the SDK
 * saw, the difference of that figure is what the calls in between spent; when one of them
 * lost its answer, the next answer tells what the lost call spent.
 *
 * The one rule everything here stands on **[assumption, documented in the guide]**: every
 * vote reward claim of the player on this key goes through `deliverVoteReward` on this
 * journal (as every purchase claim goes through `deliver`), so no other spending hides in
 * the difference. Under it, a lost call is granted only when the numbers identify it
 * exactly; anything else is a window for staff, never a guess.
 *
 * @module
 * @internal
 */
import type { JournalVoteClaim, JournalVoteCounters, VoteRewardPrice } from '../journals/vote-entries.js';
import type { VoteReward, VoteRewardInput } from '../wire/vote-reward.js';

/** The counters of one answer. */
export interface Counters {
  total: number;
  left: number;
}

/** What a vote answer does to the lost calls before it, and to the player's counters. */
export interface Accounting {
  /** Rows worked out for a lost call: journaled and given like the answer's own. */
  recovered: Array<{ mark: JournalVoteClaim; reward: VoteReward }>;
  /** Set when the lost calls' spending could not be identified: a window for staff. */
  window?: { from: number; reward: string; points?: number };
  /** The player's counters record after this answer. */
  counters: JournalVoteCounters;
}

/**
 * The counters an answer carries: those of its last reward row, when they read as
 * whole numbers (`total_points` is a string on the wire) with no more left than earned.
 */
export function countersOf(rewards: readonly VoteReward[]): Counters | undefined {
  const last = rewards.at(-1);
  if (last === undefined || !/^\d{1,15}$/.test(last.total_points)) return undefined;
  const total = Number(last.total_points);
  const left = last.vote_points;
  return Number.isSafeInteger(left) && left >= 0 && left <= total ? { total, left } : undefined;
}

/**
 * Accounts for one answer: `before` is the player's counters record (from the last answer
 * that carried counters), `lost` the claims since whose answers never reached the journal,
 * `input` and `rewards` this call and its answer.
 */
export function account(player: string, now: number, before: JournalVoteCounters | undefined, lost: readonly JournalVoteClaim[], input: VoteRewardInput, rewards: readonly VoteReward[]): Accounting {
  const after = countersOf(rewards);
  const prices = [...(before?.prices ?? [])];
  const record = (counters: Counters | undefined, known: VoteRewardPrice[]): JournalVoteCounters => ({
    deliveryId: `votes:${player}`,
    playerName: player,
    state: 'voteCounters',
    ...(counters === undefined ? {} : { totalPoints: counters.total, votePoints: counters.left }),
    recordedAt: now,
    prices: known,
  });
  const start = before?.totalPoints === undefined || before.votePoints === undefined ? undefined : { total: before.totalPoints, left: before.votePoints };
  // What this call and the lost ones spent together, when both answers' counters are known and agree.
  const spent = start === undefined || after === undefined || after.total < start.total ? undefined : after.total - after.left - (start.total - start.left);
  if (lost.length === 0) {
    // A message row spends nothing: the record stays. A reward row whose counters cannot be
    // read spent what nobody can tell: the next answer starts a new count.
    if (after === undefined) return { recovered: [], counters: record(rewards.length === 0 ? start : undefined, prices) };
    // Spending nobody can tell (no counters before, or they went back) teaches no price.
    const learned = priceOf(input, rewards, spent ?? 0, now);
    return { recovered: [], counters: record(after, learned === undefined ? prices : [...prices.filter((p) => p.reward !== learned.reward), learned]) };
  }
  const own = ownSpending(input, rewards, prices);
  const unaccounted = own === undefined || spent === undefined || spent < own ? undefined : spent - own;
  const from = Math.min(...lost.map((m) => m.recordedAt));
  // The lost calls spent nothing (they met a message row): nothing to give, nothing to check.
  if (unaccounted === 0) return { recovered: [], counters: record(after, prices) };
  const only = lost.length === 1 ? lost[0] : undefined;
  const price = only === undefined ? undefined : prices.find((p) => p.reward === only.reward);
  if (only !== undefined && price !== undefined && typeof only.amount === 'number' && unaccounted === only.amount * price.cost && after !== undefined) {
    const reward: VoteReward = {
      total_points: String(after.total),
      vote_points: after.left,
      // `after` was read from the answer's last row: there is one.
      votes_month: (rewards.at(-1) as VoteReward).votes_month,
      give_amount: only.amount * price.give,
      reward_id: Number(only.reward),
      reward_name: price.name,
    };
    return { recovered: [{ mark: only, reward }], counters: record(after, prices) };
  }
  // Not identified: staff check it. The next answer starts a new count from its own counters.
  const window = { from, reward: [...new Set(lost.map((m) => m.reward))].join(','), ...(unaccounted === undefined ? {} : { points: unaccounted }) };
  return { recovered: [], window, counters: record(after, prices) };
}

/**
 * What this call spent, when its price is known: a number of units asked of a reward whose
 * price was learned, and an answer that gave exactly the units that price gives (a changed
 * yield means a changed reward: unknown then).
 */
function ownSpending(input: VoteRewardInput, rewards: readonly VoteReward[], prices: readonly VoteRewardPrice[]): number | undefined {
  if (typeof input.amount !== 'number') return undefined;
  const price = prices.find((p) => p.reward === String(input.reward));
  if (price === undefined || rewards.length !== 1) return undefined;
  const row = rewards[0] as VoteReward;
  if (String(row.reward_id) !== price.reward || row.give_amount !== input.amount * price.give) return undefined;
  return input.amount * price.cost;
}

/**
 * A reward's price, learned from a clean answer: a number of units asked, one row of that
 * reward, whole points and units per unit.
 */
function priceOf(input: VoteRewardInput, rewards: readonly VoteReward[], spent: number, now: number): VoteRewardPrice | undefined {
  const amount = input.amount;
  if (typeof amount !== 'number' || rewards.length !== 1) return undefined;
  const row = rewards[0] as VoteReward;
  if (String(row.reward_id) !== String(input.reward)) return undefined;
  if (spent <= 0 || spent % amount !== 0 || row.give_amount <= 0 || row.give_amount % amount !== 0) return undefined;
  return { reward: String(input.reward), name: row.reward_name, cost: spent / amount, give: row.give_amount / amount, learnedAt: now };
}
