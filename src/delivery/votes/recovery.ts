/**
 * What the service's vote counters tell: every reward row carries the player's
 * `total_points` (ever earned) and `vote_points` (left), so `total − left` is what the
 * player has spent so far, whatever they earned meanwhile. Between two answers the SDK
 * saw, the difference of that figure is what the calls in between spent.
 *
 * The rule (stated in the delivery guide, "Vote rewards"): a lost call is given only when
 * the numbers leave no doubt, whatever prices the dashboard set meanwhile; a lost call
 * that spent nothing so far stays open until it can no longer land
 * ({@link VOTE_LANDING_MS}); anything else is a window with the points at stake. A price
 * learned from an earlier answer is never trusted for it: the dashboard may change it at
 * any time. It rests on one assumption **[interpretation, documented in the guide]**: every
 * vote reward claim of the player on this key goes through `deliverVoteReward` on this
 * journal (as every purchase claim goes through `deliver`), so no other spending hides in
 * the difference, and every unit a call asks costs the same whole number of points, at
 * least one.
 *
 * @module
 * @internal
 */
import type { JournalVoteClaim, JournalVoteCounters, VoteRewardPrice } from '../../journals/vote-entries.js';
import { MAX_SERVICE_COUNT } from '../../wire/bounds.js';
import type { VoteReward, VoteRewardInput } from '../../wire/vote-reward.js';

/**
 * How long after it was sent a vote claim whose answer was lost can still be carried out
 * by the service, in ms: 10 minutes **[interpretation]**. The SDK gives up on an answer
 * after `timeoutMs` (15 s), but the request may still sit in a proxy or in the service's
 * queue; the service's and its proxies' timeouts are not published (a common proxy waits
 * 100 s for its origin). A lost call that spent nothing so far is kept open until then.
 */
export const VOTE_LANDING_MS = 10 * 60_000;

// A lost call of more units than this is never recovered (a window): it bounds the search below.
const MAX_PRICE_SEARCH = 100_000;

/** The counters of one answer. */
export interface Counters {
  total: number;
  left: number;
}

/** What a vote answer does to the lost calls before it, and to the player's counters. */
export interface Accounting {
  /** Rows worked out for a lost call: journaled and given like the answer's own. */
  recovered: Array<{ mark: JournalVoteClaim; reward: VoteReward }>;
  /**
   * Lost calls kept open: they spent nothing the counters show (or a window names them) and
   * could still be carried out; the next answer accounts for them again.
   */
  open: JournalVoteClaim[];
  /**
   * Set when the lost calls' spending could not be identified: a window for staff, with
   * `points`, the most they can have spent (absent when the counters could not tell), and
   * `until`, when it must run until a lost call can no longer land (later than now).
   */
  window?: { from: number; reward: string; points?: number; until?: number };
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
  const moved = start === undefined || after === undefined || after.total < start.total ? undefined : { after, spent: after.total - after.left - (start.total - start.left) };
  if (lost.length === 0) {
    // A message row spends nothing: the record stays. A reward row whose counters cannot be
    // read spent what nobody can tell: the next answer starts a new count.
    if (after === undefined) return { recovered: [], open: [], counters: record(rewards.length === 0 ? start : undefined, prices) };
    // Spending nobody can tell (no counters before, or they went back) teaches no price.
    const learned = priceOf(input, rewards, moved?.spent ?? 0, now);
    return { recovered: [], open: [], counters: record(after, learned === undefined ? prices : [...prices.filter((p) => p.reward !== learned.reward), learned]) };
  }
  // Folded, not spread: a player can have many lost calls open (no spread over a big array).
  const from = lost.reduce((least, m) => Math.min(least, m.recordedAt), Number.POSITIVE_INFINITY);
  // A call can still be carried out until VOTE_LANDING_MS after it was sent (a clock stepped back reads as not yet).
  const landing = lost.filter((m) => !(now - m.recordedAt >= VOTE_LANDING_MS));
  const own = ownSpending(input, rewards);
  const counters = record(after, prices);
  if (moved !== undefined && own.can(moved.spent) && moved.spent - own.least < lost.reduce((least, m) => Math.min(least, leastSpending(m)), Number.POSITIVE_INFINITY)) {
    // The counters prove the lost calls spent nothing so far: those that can still land stay open.
    return { recovered: [], open: landing, counters };
  }
  const only = lost.length === 1 ? lost[0] : undefined;
  const recovered = only === undefined || moved === undefined ? undefined : recover(only, input, rewards, prices, moved, own);
  if (recovered !== undefined) return { recovered: [{ mark: only as JournalVoteClaim, reward: recovered }], open: [], counters };
  const reward = [...new Set(lost.map((m) => m.reward))].join(',');
  // A window named them already and this answer cannot rule them out either: a last window
  // that runs until they can no longer land, points unknown (what they spend later cannot
  // be told now), and they are settled: at most two windows per lost call.
  if (landing.length > 0 && landing.every((m) => m.window !== undefined)) return { recovered: [], open: [], window: { from, reward, until: landing.reduce((last, m) => Math.max(last, m.recordedAt), 0) + VOTE_LANDING_MS }, counters };
  // Not identified: staff check it; calls that can still land stay open for the next answer.
  const stake = moved === undefined ? 0 : moved.spent - own.least;
  return { recovered: [], open: landing, window: { from, reward, ...(stake > 0 ? { points: stake } : {}) }, counters };
}

/** The least a lost call can have spent if the service carried it out: one point per unit asked. */
function leastSpending(mark: JournalVoteClaim): number {
  return typeof mark.amount === 'number' ? mark.amount : 1;
}

/** What this call's own answer can have spent, whatever the price: at least a point a unit. */
interface OwnSpending {
  least: number;
  can: (points: number) => boolean;
}

function ownSpending(input: VoteRewardInput, rewards: readonly VoteReward[]): OwnSpending {
  // Read only with the counters of this answer, so of a reward row (a message row carries none).
  const amount = input.amount;
  const row = rewards[0] as VoteReward;
  // A number of units of one reward: that many units at one whole price each.
  if (typeof amount === 'number' && rewards.length === 1 && String(row.reward_id) === String(input.reward)) return { least: amount, can: (points) => points >= amount && points % amount === 0 };
  return { least: 1, can: (points) => points >= 1 };
}

/**
 * The lost call's row, when the numbers leave no doubt: this call's answer alone cannot
 * have spent what the counters moved (at any whole price per unit), the rest is a whole
 * price for the lost call's units, and the units one unit gives is confirmed twice: by
 * the price learned before and by this answer, for the same reward. Otherwise undefined.
 */
function recover(mark: JournalVoteClaim, input: VoteRewardInput, rewards: readonly VoteReward[], prices: readonly VoteRewardPrice[], moved: { after: Counters; spent: number }, own: OwnSpending): VoteReward | undefined {
  const amount = mark.amount;
  const { after, spent } = moved;
  if (typeof amount !== 'number' || typeof input.amount !== 'number' || own.can(spent)) return undefined;
  if (mark.window !== undefined || mark.reward !== String(input.reward) || rewards.length !== 1) return undefined;
  const row = rewards[0] as VoteReward;
  const price = prices.find((p) => p.reward === mark.reward);
  // The row is of the lost call's reward: another one makes `own.can` true for any points spent above.
  if (price === undefined || row.give_amount !== input.amount * price.give) return undefined;
  const units = amount * price.give;
  if (units > MAX_SERVICE_COUNT) return undefined;
  // Some whole price of this call's units leaves a whole price for the lost call's; if one
  // does, one of the first `amount` does (the remainders repeat), so the search is short.
  let paid = false;
  for (let k = 1; k <= Math.min(amount, MAX_PRICE_SEARCH) && k * input.amount <= spent - amount && !paid; k++) paid = (spent - k * input.amount) % amount === 0;
  if (!paid) return undefined;
  return { total_points: String(after.total), vote_points: after.left, votes_month: row.votes_month, give_amount: units, reward_id: row.reward_id, reward_name: price.name };
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
