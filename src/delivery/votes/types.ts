/**
 * The public types of {@link StorefrontClient.deliverVoteReward} and
 * {@link StorefrontClient.resumeVoteRewards}: the give callback, the options and the reports.
 *
 * @module
 */
import type { JournalError, StorefrontError } from '../../errors.js';
import type { VoteReward } from '../../wire/vote-reward.js';
import type { ResumeError, UnverifiedWindow } from '../core/index.js';

/**
 * A reward row handed to your give function: the {@link VoteReward} (wire names:
 * `reward_id`, `reward_name`, `give_amount` …) plus the player and a `deliveryId`.
 */
export interface GivenVoteReward extends VoteReward {
  /** The player, exact name (the service's reward rows do not carry it). */
  playerName: string;
  /**
   * Stable id of this reward row, `vote:<uuid>:<index>`: a random id for the claim call plus
   * the row's index in its answer, journaled with the row before your give function runs.
   * Use it as the dedupe key in the game, as {@link DeliveredItem.deliveryId}: a crash
   * after the give but before its acknowledgement repeats that one call with the same id.
   */
  deliveryId: string;
  /**
   * Set when the row was not in an answer (the answer was lost) but the next answer's
   * counters proved the call was carried out (see the delivery guide, "Vote rewards"). Its
   * `message` is absent and its counters are those of the answer that revealed it.
   */
  recovered?: boolean;
}

/**
 * Your code that gives one vote reward row in game. Throw (or reject) when it could not:
 * the row stays in the journal and is given again by the player's next
 * `deliverVoteReward` or by {@link StorefrontClient.resumeVoteRewards}. An error with
 * `unverified: { from, to }` says it may or may not have given the row and wrote a window
 * for staff itself, as for purchases (`GrantFunction`). A returned promise is
 * awaited; anything it returns is ignored.
 */
export type VoteRewardGiveFunction = (reward: GivenVoteReward) => unknown;

/** Options of {@link StorefrontClient.deliverVoteReward} and {@link StorefrontClient.resumeVoteRewards}. */
export interface VoteRewardDeliveryOptions {
  /** Aborts the call while it waits for the player's turn or for the service; a give that started settles on its own. */
  signal?: AbortSignal;
  /**
   * How long one call of your give function may take, in ms, before the delivery moves on:
   * the row is reported in `failed` with a {@link GrantTimeoutError} and stays pending, and
   * the player's other calls (purchases included: they share the player's turn) are no
   * longer blocked by it. The give is not cancelled: if it later returns, the row is
   * acknowledged then; while it runs, no call gives that row again. Default `60000`.
   */
  giveTimeoutMs?: number;
}

/**
 * The `code` of a {@link VoteDeliveryReport}:
 * - `SUCCESS`: at least one row given, none failed; `PARTIAL`: a give threw (the row is
 *   pending), or ended in a window of its own (`unverified: { from, to }` on what it threw:
 *   the row is settled, never given again, and reported in `unverified`).
 * - otherwise nothing was given now and the code says why: `NOT_VOTED` ("You have not voted
 *   yet"), `INSUFFICIENT_POINTS` (a message starting "Insufficient Points"),
 *   `REWARD_NOT_FOUND`, `INVALID_AMOUNT`, `INVALID_PLAYER` (the service's message rows,
 *   matched on their leading words), `UNKNOWN` (any other message row, its text kept in
 *   `message`; never a reward), `OUTCOME_UNKNOWN` (the claim was sent, its answer lost or
 *   unreadable, e.g. a number out of bounds: the next call works out what it spent) or `ERROR` (the call or the journal failed: see
 *   `error` / `journalError`; nothing was claimed when the journal failed first).
 */
export type VoteDeliveryCode =
  | 'SUCCESS'
  | 'PARTIAL'
  | 'NOT_VOTED'
  | 'INSUFFICIENT_POINTS'
  | 'REWARD_NOT_FOUND'
  | 'INVALID_AMOUNT'
  | 'INVALID_PLAYER'
  | 'UNKNOWN'
  | 'OUTCOME_UNKNOWN'
  | 'ERROR';

/** A give that threw; the row stays in the journal and is given again. */
export interface VoteRewardFailure {
  /** The row whose give failed. */
  reward: GivenVoteReward;
  /** What the give function threw. */
  error: unknown;
}

/**
 * A window in which a lost vote reward answer spent points the SDK could not turn into
 * rows: the {@link UnverifiedWindow} of purchases, plus the reward and the points.
 */
export interface VoteUnverifiedWindow extends UnverifiedWindow {
  /** The reward id(s) the lost call(s) asked for (comma-separated when several). */
  reward: string;
  /**
   * The most points the lost call(s) can have spent and no row given accounts for (what
   * the counters moved, less a point for each unit of the call that found it); absent
   * when the counters could not tell.
   */
  points?: number;
}

/**
 * What {@link StorefrontClient.deliverVoteReward} resolves to: the shape of
 * {@link DeliveryReport}, with vote reward rows.
 */
export interface VoteDeliveryReport {
  /** The overall outcome; see {@link VoteDeliveryCode}. */
  code: VoteDeliveryCode;
  /** The text to show the player (the service's own text when it sent one; the key never appears in it). */
  message: string;
  /** Rows given and acknowledged by this call (earlier rows given again and recovered rows included). */
  granted: GivenVoteReward[];
  /** Rows whose give threw; still pending. */
  failed: VoteRewardFailure[];
  /** This player's vote records still to do after this call (rows to give, lost answers to work out: one stays open until it can no longer land). */
  pending: number;
  /** The failure of the vote call, when there was one. */
  error?: StorefrontError;
  /** Set when a lost answer's spending could not be identified: staff check it (`teamgames journal windows`). */
  unverified?: VoteUnverifiedWindow;
  /** Set when the journal failed during this call; rows already claimed were given from memory all the same. */
  journalError?: JournalError;
}

/** What {@link StorefrontClient.resumeVoteRewards} resolves to. */
export interface VoteResumeReport {
  /** Rows given and acknowledged. */
  granted: GivenVoteReward[];
  /** Rows whose give threw; still pending. */
  failed: VoteRewardFailure[];
  /** Vote records still to do, all players (lost answers wait for the player's next claim). */
  pending: number;
  /** Players whose rows could not be had (their lock, the journal), and why. */
  errors: ResumeError[];
  /** Set when the journal failed during the run. */
  journalError?: JournalError;
}
