/**
 * The journal's records of vote rewards ({@link StorefrontClient.deliverVoteReward}): the
 * mark of a vote claim about to be sent, the reward rows its answer granted, and the
 * player's counters from the last answer that carried them. Stored like every other
 * {@link JournalEntry} (one JSON record per `deliveryId`), checked as strictly.
 *
 * @module
 */
import { describe } from '../internal/validate.js';
import type { VoteReward } from '../wire/vote-reward.js';
import type { GrantFailureNote } from './grant-failure.js';

/** A vote record of the journal: {@link JournalVoteClaim}, {@link JournalVoteReward} or {@link JournalVoteCounters}. */
export type JournalVoteEntry = JournalVoteClaim | JournalVoteReward | JournalVoteCounters;

/**
 * The mark written before a vote reward claim is sent. Once the answer's rows are
 * journaled it is settled (in the same append) and then acknowledged. A mark still open
 * means the answer never reached the journal (lost on the way, or the process died): the
 * player's next {@link StorefrontClient.deliverVoteReward} works out from the service's
 * counters what it spent, and grants it or reports a window.
 */
export interface JournalVoteClaim {
  /** `vote:<uuid>`; the rows of its answer get `vote:<uuid>:<index>`. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** Always `voteClaiming`. */
  state: 'voteClaiming';
  /** The reward id, as sent. */
  reward: string;
  /** The amount, as asked: a positive integer or `'all'`. */
  amount: number | 'all';
  /** When the claim was about to be sent, epoch ms of the client's clock. */
  recordedAt: number;
  /** The node that sent it, in a journal shared by several nodes. */
  node?: string;
  /** Set in the same append as the rows of its answer: nothing left to work out. */
  settled?: boolean;
  /**
   * The window that already names this lost call, while it is kept open because the
   * service could still carry it out: it is never recovered then, and whatever it spends
   * later is another window.
   */
  window?: string;
}

/**
 * A reward row to give in game, journaled before the give function runs and acknowledged
 * after it returned; a give that throws leaves it here, given again by the next call.
 */
export interface JournalVoteReward {
  /** `vote:<uuid>:<index>`: the game's dedupe key. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** Always `voteClaimed`. */
  state: 'voteClaimed';
  /** The row as the service answered it (wire names), or as recovered from the counters. */
  reward: VoteReward;
  /** When it was written, epoch ms. */
  recordedAt: number;
  /** Set when the row was not in an answer but worked out from the counters after a lost answer. */
  recovered?: boolean;
  /** The last failed give, for staff. */
  lastError?: GrantFailureNote;
  /**
   * Rows given by a command that cannot be deduped (the bridge's RCON delivery): when the
   * command was about to be sent, epoch ms, as {@link JournalLine.sending}.
   */
  sending?: number;
}

/**
 * What the SDK learned about one reward from a clean answer (a number of units asked, the
 * counters before and after known, nothing lost in between).
 */
export interface VoteRewardPrice {
  /** The reward id, as sent. */
  reward: string;
  /** Its name, as the service answered it. */
  name: string;
  /** Points spent per unit asked, as last seen: never used to recover a lost call (the owner may change it on the dashboard at any time). */
  cost: number;
  /** Units given per unit asked (`give_amount / amount`): a recovery gives the lost call this many a unit when the answer that finds it gives as many. */
  give: number;
  /** When it was learned, epoch ms. */
  learnedAt: number;
}

/**
 * The player's counters from the last answer that carried them, kept (never acknowledged)
 * so that the next answer tells how many points a lost call spent: what has been spent is
 * `totalPoints − votePoints`, and votes earned meanwhile raise both alike.
 */
export interface JournalVoteCounters {
  /** `votes:<playerName>`: one record per player. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** Always `voteCounters`. */
  state: 'voteCounters';
  /**
   * `total_points` of that answer (points ever earned). Absent (with `votePoints`) once a
   * lost answer was reported as a window and no answer since carried counters: the next
   * answer starts a new count then.
   */
  totalPoints?: number;
  /** `vote_points` of that answer (points left); present exactly when `totalPoints` is. */
  votePoints?: number;
  /** When that answer came, epoch ms. */
  recordedAt: number;
  /** What the SDK learned about each reward's price, newest knowledge per reward. */
  prices: VoteRewardPrice[];
}

/** The states of the vote records. @internal */
export const VOTE_STATES: ReadonlySet<unknown> = new Set(['voteClaiming', 'voteClaimed', 'voteCounters']);

const REWARD_STRINGS = ['total_points', 'reward_name'] as const;
const REWARD_INTEGERS = ['vote_points', 'votes_month', 'give_amount', 'reward_id'] as const;

/**
 * What is wrong with a vote record (its `state` one of {@link VOTE_STATES}; the common
 * fields already checked), or `undefined`. @internal
 */
export function voteEntryProblem(e: Record<string, unknown>): string | undefined {
  if (e['state'] === 'voteClaiming') {
    if (typeof e['reward'] !== 'string' || e['reward'] === '') return 'reward is not a non-empty string';
    if (e['amount'] !== 'all' && !isCount(e['amount'], 1)) return `amount is not a positive integer or 'all' (${describe(e['amount'])})`;
    if (e['node'] !== undefined && typeof e['node'] !== 'string') return 'node is not a string';
    if (e['settled'] !== undefined && typeof e['settled'] !== 'boolean') return 'settled is not a boolean';
    if (e['window'] !== undefined && (typeof e['window'] !== 'string' || e['window'] === '')) return 'window is not a non-empty string';
    return undefined;
  }
  if (e['state'] === 'voteClaimed') return rewardLineProblem(e);
  if (e['totalPoints'] !== undefined || e['votePoints'] !== undefined) {
    if (!isCount(e['totalPoints'], 0)) return 'totalPoints is not a non-negative integer';
    if (!isCount(e['votePoints'], 0)) return 'votePoints is not a non-negative integer';
    if ((e['votePoints'] as number) > (e['totalPoints'] as number)) return 'votePoints is above totalPoints';
  }
  if (!Array.isArray(e['prices'])) return 'prices is not an array';
  for (const [i, price] of (e['prices'] as unknown[]).entries()) {
    const p = price as Record<string, unknown> | null;
    if (typeof p !== 'object' || p === null || typeof p['reward'] !== 'string' || typeof p['name'] !== 'string' || !isCount(p['cost'], 1) || !isCount(p['give'], 1) || !Number.isFinite(p['learnedAt'])) {
      return `prices[${i}] is not { reward, name, cost, give, learnedAt }`;
    }
  }
  return undefined;
}

function rewardLineProblem(e: Record<string, unknown>): string | undefined {
  const reward = e['reward'];
  if (typeof reward !== 'object' || reward === null || Array.isArray(reward)) return `reward is not an object (${describe(reward)})`;
  const r = reward as Record<string, unknown>;
  for (const key of REWARD_STRINGS) if (typeof r[key] !== 'string') return `reward.${key} is not a string`;
  for (const key of REWARD_INTEGERS) if (!Number.isSafeInteger(r[key])) return `reward.${key} is not an integer`;
  if (r['message'] !== undefined && typeof r['message'] !== 'string') return 'reward.message is not a string';
  if (e['recovered'] !== undefined && typeof e['recovered'] !== 'boolean') return 'recovered is not a boolean';
  if (e['sending'] !== undefined && !Number.isFinite(e['sending'])) return 'sending is not a number';
  const lastError = e['lastError'] as Record<string, unknown> | undefined;
  if (lastError !== undefined && (typeof lastError !== 'object' || lastError === null || typeof lastError['message'] !== 'string' || typeof lastError['at'] !== 'number' || typeof lastError['attempts'] !== 'number')) return 'lastError is not { message, at, attempts }';
  return undefined;
}

/** A safe integer at least `min`. */
function isCount(value: unknown, min: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min;
}
