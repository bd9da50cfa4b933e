/**
 * The public face of automatic delivery ({@link StorefrontClient.startDeliveryLoop}): its
 * options, the loop's methods, what `stats()` counts and what `status(player)` tells
 * staff; and the check of the options.
 *
 * @module
 */
import type { JournalError } from '../../errors.js';
import { checkIntegerInRange, checkOptionsObject, checkSignal, describe, fail } from '../../internal/validate.js';
import type { JournalWindow } from '../../journals/contract.js';
import { CLAIM_WINDOW_MS } from '../../wire/claim.js';
import type { PendingDelivery } from '../inspect/index.js';
import { checkGrantTimeout, type DeliveryCode, type DeliveryMode, type DeliveryReport, type GrantFunction } from '../core/index.js';
import type { VoteDeliveryCode, VoteDeliveryReport, VoteRewardGiveFunction } from '../votes/index.js';
import type { DeliveryEngine } from '../engine/index.js';
import type { RunVia } from '../engine/index.js';
import type { VoteDeliveries, VoteVia } from '../votes/index.js';
import type { CheckoutHint, CheckoutHintOutcome } from './hints.js';

/** Options of {@link StorefrontClient.startDeliveryLoop}. */
export interface DeliveryLoopOptions {
  /** Gives an item in game, as the `grant` of {@link StorefrontClient.deliver}; never called for a player who is offline. */
  give: GrantFunction;
  /** How often each online player is previewed, in ms. Default `30000`; at least `10000` (the service's window). */
  pollIntervalMs?: number;
  /** The most calls the loop makes in any one second, `claim()` included. Default `10`. */
  maxCallsPerSecond?: number;
  /** Aborting it stops the loop, like {@link DeliveryLoop.stop}. */
  signal?: AbortSignal;
  /** As {@link ResumeOptions.grantTimeoutMs}, for `give` and `giveVoteReward` alike. Default `60000`. */
  grantTimeoutMs?: number;
  /**
   * How {@link DeliveryLoop.claim} (a `/claim` typed in game) delivers:
   * - `exactlyOnce` (the default), as every other run of the loop: a purchase no preview
   *   has listed yet is previewed, journaled, and claimed one window (10 s) later; a lost
   *   answer loses nothing that was previewed. The player waits up to about 20 s when
   *   they type `/claim` right after buying.
   * - `fast`: one claim call as soon as the service's window allows. Quicker for the
   *   player, but a claim whose answer is lost takes what it took unseen: a window for
   *   staff (from the player's last preview to the loss), never a silent loss.
   */
  claimMode?: DeliveryMode;
  /**
   * How a hinted player ({@link DeliveryLoop.expect}) is claimed, once per window until the
   * purchase arrives. Default: the loop's `claimMode`.
   * - `exactlyOnce`: a preview each window, and the claim one window after the preview that
   *   lists the purchase: the purchase reaches the player 10 to 20 s after its payment; a
   *   lost answer loses nothing that was previewed.
   * - `fast`: one claim call each window: the purchase reaches the player within one
   *   window of its payment (about 5 s at the median); a claim whose answer is lost takes
   *   what it took unseen, a window for staff (from the player's last look, at most a
   *   window before, to the loss), never a silent loss, never a second give.
   *
   * Set `hintClaimMode: 'fast'` with the default `claimMode` to have hinted purchases in
   * hand one window after payment while every other run stays exactly once.
   */
  hintClaimMode?: DeliveryMode;
  /**
   * After this many failed `give` (or `giveVoteReward`) calls for one item, the item is marked for staff
   * (`lastError.stuck` in the journal, shown by `teamgames journal pending`) and a `stuck`
   * event is emitted. It is never dropped: the loop keeps giving it, backing off per item
   * (10 s, doubling, at most 1 h), and at once on the player's next join. Default `5`.
   */
  staffAfterAttempts?: number;
  /**
   * Gives a vote reward row in game, as the `give` of {@link StorefrontClient.deliverVoteReward};
   * needed by {@link DeliveryLoop.claimVote}, never called for a player who is offline. With it,
   * the loop's first run after a player joins also gives the vote reward rows the journal holds
   * for them (claimed, not given: a crash, a give that threw), without a call to the store.
   * A row whose give fails while the player is online is given again by the loop on the
   * purchases' give backoff (10 s, doubling, at most 1 h; no store call: it was paid), at
   * their next `claimVote` and at their next join, its attempts and last error in the
   * journal, marked for staff after `staffAfterAttempts` failures as a purchase is.
   */
  giveVoteReward?: VoteRewardGiveFunction;
}

/** What {@link DeliveryLoop.claimVote} resolves to: a {@link VoteDeliveryReport}, whose `code` may also be `OFFLINE` or `STOPPED` (as {@link LoopClaimCode}). */
export interface LoopVoteReport extends Omit<VoteDeliveryReport, 'code'> {
  /** The outcome: a {@link VoteDeliveryCode}, or `OFFLINE` / `STOPPED`. */
  code: VoteDeliveryCode | 'OFFLINE' | 'STOPPED';
}

/** What {@link DeliveryLoop.claimVote} claims: the reward and how many units (a number, or `'all'` the points pay for). */
export interface LoopVoteInput {
  /** The reward's id, as in {@link VoteRewardInput.reward}. */
  reward: string | number;
  /** Units: a positive integer, or `'all'`. Numbers let a lost answer be recovered (see the guide's "Vote rewards"). */
  amount: number | 'all';
}

/** What {@link DeliveryLoop.stats} counts since the loop started. */
export interface DeliveryLoopStats {
  /** Players online on this node (joined, not left). */
  online: number;
  /** Checkout hints held (see {@link DeliveryLoop.expect}), for players online or not. */
  hints: number;
  /**
   * The last failure reading the checkout hints of a shared journal (see
   * {@link expectCheckout}: a database down, its hints table missing, a row that is not a
   * hint), until a read succeeds with none; absent without one. Reads are retried with
   * backoff, and never stop nor slow deliveries: the purchases of those hints come with the
   * routine polls meanwhile. A row that is not a hint is left out, the others read. Each
   * change is also a `sharedHintsError` event.
   */
  sharedHintsError?: unknown;
  /** Calls sent to the service. */
  calls: number;
  /** Of which previews. */
  previews: number;
  /** Of which claims. */
  claims: number;
  /** Items granted. */
  granted: number;
  /** Items pending in the journal for online players, as last seen. */
  pending: number;
  /** Unverified windows reported (see {@link UnverifiedWindow}). */
  unverified: number;
  /** Runs that ended in an error (network, service, journal). */
  errors: number;
  /** The last of those errors. */
  lastError: unknown;
  /** The poll interval in force: `pollIntervalMs`, or longer when the budget cannot cover every player. */
  intervalMs: number;
  /** The most calls sent in one second. */
  maxCallsInOneSecond: number;
  /** True while the service refuses the key (`SERVER_NOT_FOUND`): the loop waits and tries again now and then. */
  paused: boolean;
  /** Online players whose deliveries are blocked (see {@link PlayerDeliveryStatus.blocked}); `status(player)` says why. */
  blocked: number;
  /** Items whose `give` failed and that wait for their next attempt (per-item backoff). */
  backingOff: number;
}

/** A pending item as {@link DeliveryLoop.status} shows it. */
export interface LoopPendingItem extends PendingDelivery {
  /** When the loop gives it again, epoch ms, while its `give` failures hold it back. */
  retryAt?: number;
}

/**
 * The `code` of what {@link DeliveryLoop.claim} resolves to: a {@link DeliveryCode}, or
 * - `OFFLINE`: the loop does not hold the player online (never joined, or they left before
 *   the delivery finished): nothing was called or given for them; what they are owed waits
 *   for their next join, here or on another node;
 * - `STOPPED`: the loop stopped first; what they are owed is delivered after the next start.
 */
export type LoopClaimCode = DeliveryCode | 'OFFLINE' | 'STOPPED';

/** What {@link DeliveryLoop.claim} resolves to: a {@link DeliveryReport}, whose `code` may also be `OFFLINE` or `STOPPED`. */
export interface LoopClaimReport extends Omit<DeliveryReport, 'code'> {
  /** The outcome; see {@link LoopClaimCode}. */
  code: LoopClaimCode;
}

/** What {@link DeliveryLoop.status} tells about one player: what a store's staff would ask. */
export interface PlayerDeliveryStatus {
  /** The player, exact name. */
  playerName: string;
  /** Joined on this node and not left. */
  online: boolean;
  /** A delivery for the player is running now. */
  running: boolean;
  /** When the loop checks the player next, epoch ms; absent when offline or while a run is in flight. */
  nextCheckAt?: number;
  /**
   * Set while the player's deliveries are blocked: their last `runs` runs (3 or more) ended
   * with `code` (`PRODUCT_NOT_FOUND`, `RATE_LIMIT`, `INVALID_PLAYER`, `UNKNOWN`, `ERROR`…)
   * and nothing was delivered since `since` (epoch ms).
   */
  blocked?: {
    /** The code the player's runs end with. */
    code: DeliveryCode;
    /** How many runs in a row ended so. */
    runs: number;
    /** Since when, epoch ms (the run that made the player count as blocked). */
    since: number;
  };
  /** The error of the player's last run, when it failed. */
  lastError?: unknown;
  /** What the journal holds for the player still to do, oldest first, with age, attempts and last error. */
  pending: LoopPendingItem[];
  /** The player's unverified windows staff have not resolved yet. */
  openWindows: JournalWindow[];
  /** Set when the journal could not be read: `pending` and `openWindows` are then what memory holds. */
  journalError?: JournalError;
}

/**
 * A running delivery loop; see {@link StorefrontClient.startDeliveryLoop}.
 *
 * @example
 * ```ts
 * const loop = client.startDeliveryLoop({ give });
 * game.on('join', (player) => loop.join(player));
 * game.on('quit', (player) => loop.leave(player));
 * game.onCommand('claim', async (player) => tell(player, (await loop.claim(player)).message));
 * process.on('SIGTERM', () => void loop.stop());
 * ```
 */
export interface DeliveryLoop {
  /** The player is online on this node: what is pending for them is granted, then they are previewed soon. */
  join(playerName: string): void;
  /** The player left: nothing more is granted to them here, nothing more is called for them; their `claim()` calls resolve `OFFLINE`. */
  leave(playerName: string): void;
  /**
   * A `/claim` typed by the player. Resolves to the report of the delivery that answers it,
   * never rejects for anything but a bad name or a call from inside a `give` for the same
   * player (an {@link InvalidInputError}, at once):
   * - the player is online: the next delivery for them, exactly once by default (see
   *   {@link DeliveryLoopOptions.claimMode}), or the one in flight when its claim is still
   *   to come;
   * - the loop does not hold the player online (never joined, or left before the delivery
   *   finished): `code: 'OFFLINE'`, nothing called or given; they are never joined by it;
   * - the loop stopped first: `code: 'STOPPED'`.
   */
  claim(playerName: string): Promise<LoopClaimReport>;
  /**
   * A checkout hint: the player just checked out (`transactionId` from
   * {@link StorefrontClient.checkout}), so their purchase may be paid any moment. While the
   * loop holds the player online, it spends their 10 s window on them each time, ahead of
   * joins and routine polls, in the loop's {@link DeliveryLoopOptions.hintClaimMode} (by
   * default its `claimMode`): exactly once (the default), a preview each
   * window and the claim one window after the preview that lists the purchase (given 10 to
   * 20 s after payment, a lost answer loses nothing); `fast`, one claim call each window
   * (given within about 10 s; a claim whose answer is lost is a window for staff). Until a
   * claim delivers the transaction or the hint expires (default 10 minutes; every 20 s once
   * it is 5 minutes old); a delivered purchase whose give failed, or whose player left
   * mid-delivery, is given again in a hinted run while the hint would have lived. A hint's
   * life runs only while the loop holds the player online here (within an hour of the hint;
   * a hint read from a shared journal ends with its row): a hint for a player not online
   * here, or who left, waits for their join, and nothing is called or given for them
   * meanwhile. One hint per player (a newer one joins it:
   * up to 8 transactions, the later expiry), at most 10,000 held, and hinted runs spend at
   * most 30 % of `maxCallsPerSecond`: a flood of hints waits its turn and never starves the
   * routine polls; the same hint sent again extends nothing, and once a hint has ended, one
   * for what it named answers `expired` for an hour (a shop that sends hints in a loop never
   * keeps a player claimed for ever). See the guide's "Checkout hints". Returns at once;
   * throws only an {@link InvalidInputError} (a bad name or hint).
   *
   * @example
   * ```ts
   * const result = await client.checkout({ username: 'Player123', items: [{ id: 42, quantity: 1 }] });
   * if (result.outcome === 'PAYMENT_REQUIRED') {
   *   loop.expect('Player123', { transactionId: result.transactionId });
   *   redirectTo(result.redirect);
   * }
   * ```
   */
  expect(playerName: string, hint?: CheckoutHint): CheckoutHintOutcome;
  /**
   * A `::vote` / `::reward` command typed by the player: {@link StorefrontClient.deliverVoteReward}
   * through the loop's budget of calls and the player's turn (after the purchase delivery
   * in flight, if any), given with `giveVoteReward`. Resolves for every outcome, `OFFLINE`
   * and `STOPPED` as {@link DeliveryLoop.claim}; rejects only with an {@link InvalidInputError}
   * (a bad name or input, no `giveVoteReward` option, or a call from inside a give for the
   * same player).
   */
  claimVote(playerName: string, input: LoopVoteInput): Promise<LoopVoteReport>;
  /** Counts since the start. */
  stats(): DeliveryLoopStats;
  /**
   * One player as the store's staff would ask about them: online or not, the next check,
   * pending items with their age, attempts and last error (and when the loop gives them
   * again), why deliveries are blocked, open windows. Reads the journal; never rejects for
   * a journal failure (see `journalError`).
   */
  status(playerName: string): Promise<PlayerDeliveryStatus>;
  /**
   * Stops scheduling, aborts waits, waits (bounded) for deliveries in flight; resolves once
   * nothing more is called or granted. Safe to call from inside `give` (it does not wait for
   * the delivery it is called from) and more than once.
   */
  stop(): Promise<void>;
}

/** What a loop runs on: the client's engine, its claim and `onEvent`, its vote rewards. @internal */
export interface LoopHost {
  engine: DeliveryEngine;
  via: () => RunVia;
  /** The client's vote rewards, for `claimVote` (a host without them, such as the simulation's, has no votes). */
  votes?: { deliveries: () => VoteDeliveries | Promise<VoteDeliveries>; via: () => VoteVia };
}

/**
 * The settings of a delivery loop: its options but the callbacks and the signal, what a
 * config file can hold (the bridge's `loop` section). {@link checkDeliveryLoopSettings} checks them.
 */
export type DeliveryLoopSettings = Pick<DeliveryLoopOptions, 'pollIntervalMs' | 'maxCallsPerSecond' | 'grantTimeoutMs' | 'claimMode' | 'hintClaimMode' | 'staffAfterAttempts'>;

/** The options once checked. @internal */
export interface CheckedLoopOptions {
  give: GrantFunction;
  pollIntervalMs: number;
  maxCallsPerSecond: number;
  signal: AbortSignal | undefined;
  grantTimeoutMs: number;
  claimMode: DeliveryMode;
  hintClaimMode: DeliveryMode;
  staffAfterAttempts: number;
  giveVoteReward: VoteRewardGiveFunction | undefined;
}

const DEFAULT_POLL_MS = 30_000;
const DEFAULT_CALLS_PER_SECOND = 10;
const DEFAULT_STAFF_AFTER_ATTEMPTS = 5;
// The names are the keys; the values (0) say nothing (`satisfies` keeps the lists complete).
const OPTIONS = Object.keys({ give: 0, pollIntervalMs: 0, maxCallsPerSecond: 0, signal: 0, grantTimeoutMs: 0, claimMode: 0, hintClaimMode: 0, staffAfterAttempts: 0, giveVoteReward: 0 } satisfies Record<keyof DeliveryLoopOptions, 0>);
const SETTINGS = Object.keys({ pollIntervalMs: 0, maxCallsPerSecond: 0, grantTimeoutMs: 0, claimMode: 0, hintClaimMode: 0, staffAfterAttempts: 0 } satisfies Record<keyof DeliveryLoopSettings, 0>);

/**
 * Checks the settings of a delivery loop by the rules {@link StorefrontClient.startDeliveryLoop}
 * applies (the same function: a config file that passes is a loop that starts), and returns
 * them with the defaults filled in. For a program that reads them from a file, as
 * `teamgames bridge` does its `loop` section.
 *
 * @example
 * ```ts
 * const settings = checkDeliveryLoopSettings(JSON.parse(text).loop ?? {});
 * const loop = client.startDeliveryLoop({ ...settings, give });
 * ```
 * @throws InvalidInputError naming the first setting that breaks its rule (`rule` says the rule), or a name that is not a setting.
 */
export function checkDeliveryLoopSettings(settings: unknown): Required<DeliveryLoopSettings> {
  return settingsOf(checkOptionsObject(settings as { [K in keyof DeliveryLoopSettings]?: unknown } | undefined, SETTINGS, 'options', 'startDeliveryLoop'));
}

function settingsOf(opts: { [K in keyof DeliveryLoopSettings]?: unknown }): Required<DeliveryLoopSettings> {
  const op = 'startDeliveryLoop';
  const claimMode = opts.claimMode ?? 'exactlyOnce';
  if (claimMode !== 'exactlyOnce' && claimMode !== 'fast') fail('options.claimMode', `must be 'exactlyOnce' (the default) or 'fast', got ${describe(opts.claimMode)}`, op);
  const hintClaimMode = opts.hintClaimMode ?? claimMode;
  if (hintClaimMode !== 'exactlyOnce' && hintClaimMode !== 'fast') fail('options.hintClaimMode', `must be 'exactlyOnce' or 'fast' (default: claimMode), got ${describe(opts.hintClaimMode)}`, op);
  return {
    pollIntervalMs: opts.pollIntervalMs === undefined ? DEFAULT_POLL_MS : checkIntegerInRange(opts.pollIntervalMs, CLAIM_WINDOW_MS, 24 * 3_600_000, 'options.pollIntervalMs', op),
    maxCallsPerSecond: opts.maxCallsPerSecond === undefined ? DEFAULT_CALLS_PER_SECOND : checkIntegerInRange(opts.maxCallsPerSecond, 1, 1_000, 'options.maxCallsPerSecond', op),
    grantTimeoutMs: checkGrantTimeout(opts.grantTimeoutMs, 'options.grantTimeoutMs', op),
    claimMode,
    hintClaimMode,
    staffAfterAttempts: opts.staffAfterAttempts === undefined ? DEFAULT_STAFF_AFTER_ATTEMPTS : checkIntegerInRange(opts.staffAfterAttempts, 1, 1_000, 'options.staffAfterAttempts', op),
  };
}

/** Checks the options of `startDeliveryLoop`: the callbacks and the signal here, the settings by {@link checkDeliveryLoopSettings}'s rules. @internal */
export function checkLoopOptions(options: unknown): CheckedLoopOptions {
  const op = 'startDeliveryLoop';
  if (options === undefined || options === null) fail('options', 'must be an object with at least { give }', op);
  const opts = checkOptionsObject(options as { [K in keyof DeliveryLoopOptions]?: unknown }, OPTIONS, 'options', op);
  if (typeof opts.give !== 'function') fail('options.give', `must be a function (item) => void | Promise<void>, got ${describe(opts.give)}`, op);
  if (opts.giveVoteReward !== undefined && typeof opts.giveVoteReward !== 'function') fail('options.giveVoteReward', `must be a function (reward) => void | Promise<void>, got ${describe(opts.giveVoteReward)}`, op);
  return { ...settingsOf(opts), give: opts.give as GrantFunction, signal: checkSignal(opts.signal, op), giveVoteReward: opts.giveVoteReward as VoteRewardGiveFunction | undefined };
}
