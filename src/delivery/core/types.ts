/**
 * The public types of {@link StorefrontClient.deliver} and
 * {@link StorefrontClient.resumeDeliveries}: the grant callback, the options and the
 * reports.
 *
 * @module
 */
import type { JournalError, StorefrontError } from '../../errors.js';
import type { ClaimCode, Transaction } from '../../wire/claim.js';

/**
 * A purchase line handed to your grant function: the {@link Transaction} plus its
 * `deliveryId`.
 * @see [Delivering purchases in game: the dedupe check](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#deliveryid-the-games-dedupe-check)
 */
export interface DeliveredItem extends Transaction {
  /**
   * Stable id of this purchase line; use it as the dedupe key of the grant in the game.
   *
   * A crash after the grant but before its acknowledgement reaches the journal repeats
   * that one grant call with the same `deliveryId`: record the ids you granted (in the
   * same transaction as the item, ideally) and skip known ones, and the effect is
   * exactly once.
   *
   * - `exactlyOnce` mode: `invoice:<invoice>`, the service's invoice of the line.
   * - `default` mode: the claim answer carries no invoice, so the id is
   *   `claim:<uuid>:<index>`: a random id for the claim call plus the line's index in
   *   its answer, written to the journal with the line (hence stable across retries and
   *   restarts, but not derived from the purchase itself).
   */
  deliveryId: string;
}

/**
 * Your code that gives one item to the player in game. Throw (or reject) when it could
 * not: the item stays in the journal and is granted again later. An error with
 * `staff: true` (e.g. the item names a product the game has no command for) marks the
 * item for staff at once (`lastError.stuck`, a `stuck` event) instead of after the delivery
 * loop's `staffAfterAttempts`. An error with `unverified: { from, to }` (epoch ms) says the
 * give may or may not have happened and that it wrote a window for staff itself (the
 * bridge's RCON sink does, for a command whose reply never came): the item is
 * acknowledged and never given again, reported in {@link DeliveryReport.unverified} (and
 * an `unverified` event), neither in `granted` nor in `failed`. Anything it returns is
 * ignored; a returned promise is awaited.
 */
export type GrantFunction = (item: DeliveredItem) => unknown;

/**
 * The delivery strategy; see {@link DeliverOptions.mode}.
 * - `exactlyOnce` (the default): preview, journal the intent, wait out the 10 s window,
 *   claim. A lost claim answer loses nothing that was previewed.
 * - `fast`: one claim call, no wait. A lost claim answer (or a crash before its lines are
 *   journaled) loses what that claim delivered, reported as an {@link UnverifiedWindow}.
 */
export type DeliveryMode = 'exactlyOnce' | 'fast';

/**
 * Waits `ms` milliseconds. Inject one that moves a mock clock to make the 10 s windows
 * free in tests: `sleep: async (ms) => { mock.clock.advance(ms); }`.
 */
export type SleepFunction = (ms: number) => Promise<void>;

/** Options of {@link StorefrontClient.resumeDeliveries}. */
export interface ResumeOptions {
  /** Aborts the run: the current wait or request rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** How to wait out a rate window. Default: a real timer (`setTimeout`). */
  sleep?: SleepFunction;
  /**
   * How many times a call refused with `RATE_LIMIT` is retried after waiting
   * `retryAfterMs`. Default `3`; `0` reports `RATE_LIMIT` at once.
   */
  maxRateLimitWaits?: number;
  /**
   * How long one call of your grant function may take, in ms, before the delivery moves
   * on: the item is reported in `failed` with a {@link GrantTimeoutError} and stays
   * pending, and the player's other calls are no longer blocked by it. The grant is not
   * cancelled: if it later resolves, the item is acknowledged then; while it runs, no
   * other call grants that item again. Default `60000`.
   */
  grantTimeoutMs?: number;
}

/**
 * Options of {@link StorefrontClient.deliver}.
 *
 * @see [Delivering purchases in game: which mode](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#what-can-go-wrong-and-what-each-mode-guards-against)
 */
export interface DeliverOptions extends ResumeOptions {
  /**
   * - `exactlyOnce` (the default): preview, journal the intent, wait ~10 s, claim,
   *   reconcile. Nothing previewed is lost even when the claim's answer is; costs one more
   *   call and the wait.
   * - `fast`: claim, journal, grant. One call; a claim whose answer is lost loses what it
   *   delivered (reported in {@link DeliveryReport.unverified}, never silently).
   *
   * A player with intents left by an earlier exactly-once run is always reconciled the
   * exactly-once way, whatever the mode.
   */
  mode?: DeliveryMode;
}

/**
 * The error of a grant that did not settle within {@link ResumeOptions.grantTimeoutMs}
 * (found in {@link DeliveryFailure.error}). The item stays pending; if the grant still
 * resolves, the item is acknowledged then, otherwise a later call grants it again.
 *
 * @example
 * ```ts
 * for (const { item, error } of report.failed) {
 *   if (error instanceof GrantTimeoutError) log.warn(`grant of ${item.deliveryId} is stuck`);
 * }
 * ```
 */
export class GrantTimeoutError extends Error {
  /** The item's `deliveryId`. */
  readonly deliveryId: string;
  /** The limit that elapsed, in ms. */
  readonly timeoutMs: number;

  /** @internal */
  constructor(operation: string, deliveryId: string, timeoutMs: number) {
    super(`${operation}: the grant of ${deliveryId} did not settle within ${timeoutMs} ms; the item stays pending (acknowledged if the grant still succeeds, granted again later otherwise)`);
    this.name = 'GrantTimeoutError';
    this.deliveryId = deliveryId;
    this.timeoutMs = timeoutMs;
  }
}

/** A grant that threw; the item stays in the journal and will be granted again. */
export interface DeliveryFailure {
  /** The item whose grant failed. */
  item: DeliveredItem;
  /** What the grant function threw. */
  error: unknown;
}

/**
 * The `code` of a {@link DeliveryReport}:
 * - `SUCCESS`: at least one item granted, none failed.
 * - `PARTIAL`: at least one grant threw (those items are pending and retried later), or
 *   ended in an unverified window of its own (see {@link GrantFunction}: not given, not
 *   retried, in `unverified` for staff).
 * - otherwise nothing was granted and the code says why: the claim's own code
 *   (`NO_ITEMS`, `ALREADY_CLAIMED`, `RATE_LIMIT` after the allowed waits,
 *   `PRODUCT_NOT_FOUND`, `INVALID_PLAYER`, `UNKNOWN`), `OUTCOME_UNKNOWN` (the claim was
 *   sent but its answer was lost: see `error`) or `ERROR` (the call failed: see `error`).
 */
export type DeliveryCode = 'SUCCESS' | 'PARTIAL' | Exclude<ClaimCode, 'SUCCESS' | 'PREVIEW'> | 'OUTCOME_UNKNOWN' | 'ERROR';

/** The player's text of an `ERROR` report, the engine's and the loop's. @internal */
export const ERROR_MESSAGE = 'The store is unavailable right now. Your purchase is safe; try again later.';

/**
 * What {@link StorefrontClient.deliver} resolves to.
 *
 * @see [Delivering purchases in game: never losing an item](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#never-losing-an-item)
 */
export interface DeliveryReport {
  /** The overall outcome; see {@link DeliveryCode}. */
  code: DeliveryCode;
  /** Items granted and acknowledged by this call (journal retries included). */
  granted: DeliveredItem[];
  /** Items whose grant threw; still pending. */
  failed: DeliveryFailure[];
  /** Journal entries of this player still pending after this call (failed grants, unreconciled intents). */
  pending: number;
  /** A text for the player. */
  message: string;
  /**
   * The failure of the claim or preview call, when there was one (`OUTCOME_UNKNOWN`,
   * `ERROR`, or alongside `SUCCESS` when journal retries were granted before it failed).
   */
  error?: StorefrontError;
  /**
   * Set when a claim whose answer was lost has been reconciled: purchases the player
   * completed in this window may have been delivered by that claim without anybody seeing
   * them. The lines the SDK knew about were granted; what else the player paid for in the
   * window needs a look by staff (see the delivery guide).
   */
  unverified?: UnverifiedWindow;
  /**
   * Set when the journal failed during this call. Before a claim, nothing was claimed
   * (`code: 'ERROR'`); after a claim, its items were granted from memory all the same.
   */
  journalError?: JournalError;
}

/**
 * The time window in which a claim whose answer was lost may have delivered purchases
 * that no journal line records, for one player. Epoch ms of the client's clock (`now`).
 *
 * Staff compare the player's purchases completed between `from` and `to` (the store
 * dashboard, or `teamgames preview`) with what the game granted (its `deliveryId` log)
 * and grant by hand what is missing.
 */
export interface UnverifiedWindow {
  /** The player, exact name. */
  playerName: string;
  /**
   * Start of the window: the last moment the SDK saw everything the player had still to
   * receive, so whatever the lost claim took unseen was completed after it. Exactly-once:
   * when the preview before the lost claim was sent. `fast`: the player's last preview or
   * claim this process saw (the claim mark's `since`), or `0` when it had seen none.
   * Never after `to`, even when the wall clock stepped back.
   */
  from: number;
  /** End of the window: when the loss was found out; the lost claim was processed before it. */
  to: number;
}

/** A player whose intents {@link StorefrontClient.resumeDeliveries} could not reconcile. */
export interface ResumeError {
  /** The player, exact name. */
  playerName: string;
  /**
   * Why the player was left unreconciled (the preview failed or was refused, the journal
   * or the player's lock could not be had); the entries stay in the journal for the next
   * run.
   */
  error: StorefrontError;
}

/** What {@link StorefrontClient.resumeDeliveries} resolves to. */
export interface ResumeReport {
  /** Items granted and acknowledged. */
  granted: DeliveredItem[];
  /** Items whose grant threw; still pending. */
  failed: DeliveryFailure[];
  /** Journal entries still pending after the run, all players. */
  pending: number;
  /** Every player whose entries could not be settled or reconciled in this run, and why. */
  errors: ResumeError[];
  /** One window per player whose lost claim was reconciled in this run; see {@link DeliveryReport.unverified}. */
  unverified: UnverifiedWindow[];
  /** Set when the journal failed during the run (the entries stay for the next run). */
  journalError?: JournalError;
}

/**
 * The window a give says it wrote (`unverified: { from, to }`, both finite, on what it
 * threw: its outcome unknown, e.g. an RCON command lost mid-way), or `undefined`. One rule
 * for purchases (engine/grants.ts) and vote rewards (votes/votes.ts).
 * @internal
 */
export function windowOfGive(thrown: unknown): { from: number; to: number } | undefined {
  const span = (thrown as { unverified?: { from?: unknown; to?: unknown } } | null | undefined)?.unverified;
  return Number.isFinite(span?.from) && Number.isFinite(span?.to) ? { from: span?.from as number, to: span?.to as number } : undefined;
}
