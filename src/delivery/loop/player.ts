/**
 * What the delivery loop knows of one online player, and what it works out from it: the
 * reports of a `claim()` that delivered nothing, a `give` backed off per item, a player
 * whose runs keep ending blocked, and `status(player)` for staff. No scheduling here: that
 * is scheduler.ts.
 *
 * @module
 * @internal
 */
import { CLAIM_WINDOW_MS } from '../../wire/claim.js';
import type { JournalEntry } from '../../journals/contract.js';
import type { LoopClaimReport, LoopPendingItem, LoopVoteReport, PlayerDeliveryStatus } from './types.js';
import { inspectEntries } from '../inspect/index.js';
import type { DeliveryCode } from '../core/index.js';

/** A failed `give` waits this long before the item is given again, doubling per failure up to the cap. */
const GIVE_BACKOFF_BASE_MS = CLAIM_WINDOW_MS;
const GIVE_BACKOFF_CAP_MS = 3_600_000;
/** Runs in a row that end with a code that delivers nothing before a player counts as blocked. */
const BLOCKED_AFTER_RUNS = 3;

/** Why a wait of the loop ended early: the player left, or the loop stopped. */
export class Interrupted extends Error {
  readonly why: 'left' | 'stopped';
  constructor(why: 'left' | 'stopped') {
    const messages = {
      left: 'the player left',
      // Stryker disable next-line StringLiteral: never shown: a stopped loop's interruption always ends as a STOPPED report (the client returns an abort's reason as it is, before sending, and a lost outcome after)
      stopped: 'the delivery loop stopped',
    };
    super(messages[why]);
    this.name = 'Interrupted';
    this.why = why;
  }
}

/** What the loop knows of one online player. */
export interface Player {
  readonly name: string;
  /** Aborted when the player leaves (or the loop stops): ends the player's waits. */
  readonly gone: AbortController;
  /** The delivery running now, if any. */
  running: Promise<LoopClaimReport> | undefined;
  /** `claimVote` calls running now (their gives included). */
  voting: number;
  /** When the answer to our last call for the player came back (or the call failed), monotonic: the service's window for them opened before. */
  lastCallAt: number;
  /** The next run: when, and whether it is urgent (a join, a `/claim`, a follow-up); `urgent` and `hinted` are the planned run's, read only while `scheduled`. */
  due: number;
  urgent: boolean;
  /** The next run is a hinted player's ({@link DeliveryLoop.expect}): it goes first, its calls too. */
  hinted: boolean;
  /** Set when the next run is a `/claim` that may go in one call. */
  fast: boolean;
  /** Callers of `claim()` waiting for the next run. */
  waiting: Array<(report: LoopClaimReport) => void>;
  /** Callers of `claim()` waiting for the run in flight. */
  joined: Array<(report: LoopClaimReport) => void>;
  /** Bumped at each reschedule: stale heap entries are skipped. */
  version: number;
  /** A run is in the heap, not started yet. */
  scheduled: boolean;
  /** The running delivery's preview listed items: its claim is still to come. */
  claimAhead: boolean;
  /** The last run failed (network, service, journal): the next one comes a window later, not an interval. */
  failed: boolean;
  /** Items pending for the player, as the last report said. */
  pending: number;
  /** Vote records pending for the player (rows to give, lost answers to work out), as the last vote report said. */
  votePending: number;
  /**
   * Items (and vote reward rows, `vote`) whose give failed since the join: how often, and when
   * (monotonic) each may be given again. Made on the first failure: an empty Map for every
   * online player would cost about 190 bytes each (`npm run simulate`'s heap line: 451 → 637 B
   * a player at 10,000).
   */
  backoff: Map<string, { failures: number; at: number; vote: boolean }> | undefined;
  /** Runs in a row that delivered nothing and ended with a blocking code; the code and since when (epoch ms) once blocked. */
  blockedRuns: number;
  blocked: { code: DeliveryCode; runs: number; since: number } | undefined;
  lastError: unknown;
  /** The vote reward rows the journal held for the player at the join were given (or none were held). */
  votesResumed: boolean;
}

/** A player just joined: nothing known yet. */
export function newPlayer(name: string): Player {
  return {
    name,
    gone: new AbortController(),
    running: undefined,
    voting: 0,
    lastCallAt: Number.NEGATIVE_INFINITY,
    due: 0,
    // Stryker disable next-line BooleanLiteral: never read before the join's first schedule sets it
    urgent: false,
    hinted: false,
    fast: false,
    waiting: [],
    joined: [],
    version: 0,
    // Stryker disable next-line BooleanLiteral: read only with urgent (false here) by the join's schedule, which cannot return early for an urgent run; then set
    scheduled: false,
    claimAhead: false,
    failed: false,
    pending: 0,
    votePending: 0,
    backoff: undefined,
    blockedRuns: 0,
    blocked: undefined,
    lastError: undefined,
    votesResumed: false,
  };
}

/** What `stats()` sums over the players online: items pending, players blocked, items backing off now (monotonic `now`). */
export function totalsOf(players: Iterable<Player>, now: number): { pending: number; blocked: number; backingOff: number } {
  const totals = { pending: 0, blocked: 0, backingOff: 0 };
  for (const player of players) {
    totals.pending += player.pending + player.votePending;
    if (player.blocked !== undefined) totals.blocked += 1;
    if (player.backoff !== undefined) for (const { at } of player.backoff.values()) if (at > now) totals.backingOff += 1;
  }
  return totals;
}

/** The report of a `claim()` (or `claimVote()`) that delivered nothing because the player is not here or the loop stopped. */
export function undelivered(code: 'OFFLINE' | 'STOPPED', player: Player | undefined): LoopClaimReport & LoopVoteReport {
  const message = code === 'OFFLINE' ? 'You must be online in game to claim your purchases. They are safe and will be delivered when you are.' : 'Deliveries are paused for a moment. Your purchases are safe and will be delivered shortly.';
  return { code, granted: [], failed: [], pending: player?.pending ?? 0, message };
}

/** Whether the item's `give` failures hold it back at `now` (monotonic). */
export function backingOff(player: Player, deliveryId: string, now: number): boolean {
  return (player.backoff?.get(deliveryId)?.at ?? 0) > now;
}

/**
 * How many of the player's purchase items are held back at `now` (to weigh against their
 * `pending`), and when the run that gives the first item or vote reward row held back again
 * may come (its backoff over, a service window after the last call; infinite when none is).
 */
export function heldBack(player: Player, now: number): { held: number; retry: number } {
  let held = 0;
  let retry = Number.POSITIVE_INFINITY;
  for (const { at, vote } of player.backoff?.values() ?? []) {
    if (at <= now) continue;
    if (!vote) held += 1;
    retry = Math.min(retry, at);
  }
  return { held, retry: Math.max(retry, player.lastCallAt + CLAIM_WINDOW_MS) };
}

/** Whether a vote reward row whose give failed may be given again at `now` (monotonic): the run gives the player's vote rows then. */
export function votesDue(player: Player, now: number): boolean {
  for (const { at, vote } of player.backoff?.values() ?? []) if (vote && at <= now) return true;
  return false;
}

/** Forgets the vote rows due at `now` that a completed pass over the player's rows did not give again: gone from the journal (given elsewhere, settled by staff). */
export function forgetDueVotes(player: Player, now: number): void {
  for (const [id, { at, vote }] of player.backoff ?? []) if (vote && at <= now) player.backoff?.delete(id);
}

/**
 * Calls the game's `give` (or `giveVoteReward`, `vote` true); a failure backs the item
 * off (10 s, doubling, at most 1 h), a success clears it: one backoff for both kinds.
 */
export function giveBackingOff<T extends { deliveryId: string }>(player: Player, give: (item: T) => unknown, item: T, now: () => number, vote = false): unknown {
  const id = item.deliveryId;
  const failed = (error: unknown) => {
    player.backoff ??= new Map();
    const failures = (player.backoff.get(id)?.failures ?? 0) + 1;
    player.backoff.set(id, { failures, at: now() + Math.min(GIVE_BACKOFF_CAP_MS, GIVE_BACKOFF_BASE_MS * 2 ** (failures - 1)), vote });
    throw error;
  };
  // What a give returns is ignored (the core marks its own timeout with a value no give can
  // return); a success drops the item's entry, so the map holds only items still failing.
  const given = () => {
    player.backoff?.delete(id);
  };
  let result: unknown;
  try {
    result = give(item);
  } catch (error) {
    return failed(error);
  }
  // The engine awaits the give either way (Promise.resolve): one path for both.
  return Promise.resolve(result).then(given, failed);
}

/**
 * Counts a run's code towards the player being blocked: `blocked` the run that makes them so
 * (report it), `unblocked` the run that clears it, `undefined` otherwise.
 */
export function blockingAfter(player: Player, code: DeliveryCode, wallNow: number): 'blocked' | 'unblocked' | undefined {
  if (progressed(code)) {
    player.blockedRuns = 0;
    if (player.blocked === undefined) return undefined;
    player.blocked = undefined;
    return 'unblocked';
  }
  player.blockedRuns += 1;
  if (player.blocked !== undefined) {
    player.blocked = { ...player.blocked, code, runs: player.blockedRuns };
    return undefined;
  }
  if (player.blockedRuns < BLOCKED_AFTER_RUNS) return undefined;
  player.blocked = { code, runs: player.blockedRuns, since: wallNow };
  return 'blocked';
}

/** A run that went through (in code, not a module-level set, so that its mutants run in tests): the player is not blocked. */
function progressed(code: DeliveryCode): boolean {
  return code === 'SUCCESS' || code === 'PARTIAL' || code === 'NO_ITEMS' || code === 'ALREADY_CLAIMED';
}

/** What `status(player)` tells, from the journal's entries and what the loop knows (the player undefined when offline). */
export function statusOf(
  name: string,
  player: Player | undefined,
  entries: readonly JournalEntry[],
  clocks: { wall: number; mono: number; startAt: number | undefined },
  journalError: PlayerDeliveryStatus['journalError'],
): PlayerDeliveryStatus {
  const { wall, mono, startAt } = clocks;
  const seen = inspectEntries(entries, wall);
  const pending: LoopPendingItem[] = seen.pending.map((p) => {
    const at = player?.backoff?.get(p.deliveryId)?.at;
    return at === undefined || at <= mono ? p : { ...p, retryAt: wall + (at - mono) };
  });
  return {
    playerName: name,
    online: player !== undefined,
    running: player?.running !== undefined || (player?.voting ?? 0) > 0,
    ...(startAt === undefined ? {} : { nextCheckAt: wall + Math.max(0, startAt - mono) }),
    ...(player?.blocked === undefined ? {} : { blocked: { ...player.blocked } }),
    ...(player?.lastError === undefined ? {} : { lastError: player.lastError }),
    pending,
    openWindows: seen.openWindows,
    ...(journalError === undefined ? {} : { journalError }),
  };
}
