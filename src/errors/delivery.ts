/**
 * The errors of delivery and of what staff do: the journal failing, a player not
 * reconciled, a second loop on one journal, a window already resolved.
 *
 * @module
 */
import { StorefrontError, type Operation } from './base.js';

/**
 * The delivery journal could not be read or written, or is in use by another process.
 *
 * {@link StorefrontClient.deliver} reports it on the report (`journalError`, and an
 * `onEvent` event of type `journalError`) rather than throwing: before a claim it means
 * nothing was claimed (code `ERROR`); after a claim succeeded, the claimed items were
 * granted from memory all the same and the failure is reported so that staff can free the
 * disk or fix the file. {@link FileJournal} throws it when its file is locked by another
 * process. `cause` holds the underlying error (an `ENOSPC` from the file system, your
 * journal's own error).
 *
 * @example
 * ```ts
 * const report = await client.deliver(player, grant);
 * if (report.journalError) log.error(`journal failing, deliveries paused: ${report.journalError.message}`);
 * ```
 * @see [Delivering purchases in game: when the journal fails](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#when-the-journal-fails)
 */
export class JournalError extends StorefrontError {
  /** The journal file, for {@link FileJournal}; `undefined` for other journals. */
  readonly path: string | undefined;

  /** @internal */
  constructor(message: string, options: { operation?: Operation; path?: string; cause?: unknown } = {}) {
    // The base class takes the details it knows from `options` (the operation) and nothing else.
    super('JOURNAL_FAILED', message, options);
    this.name = 'JournalError';
    this.path = options.path;
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A player's entries that {@link StorefrontClient.resumeDeliveries} could not reconcile
 * because the service answered the preview with an outcome rather than the list
 * (`RATE_LIMIT` after the allowed waits, `PRODUCT_NOT_FOUND`, `INVALID_PLAYER`, a code this
 * SDK does not know). Found in {@link ResumeReport.errors}; the entries stay in the
 * journal and the next run (or the player's next `deliver`) tries again.
 *
 * @example
 * ```ts
 * const { errors } = await client.resumeDeliveries(grant);
 * for (const { playerName, error } of errors) log.warn(`${playerName}: ${error.message}`);
 * ```
 */
export class NotReconciledError extends StorefrontError {
  /** The player, exact name. */
  readonly playerName: string;
  /** The preview's outcome code, e.g. `RATE_LIMIT`. */
  readonly claimCode: string;

  /** @internal */
  constructor(operation: Operation, playerName: string, claimCode: string) {
    super('NOT_RECONCILED', `${operation}: player ${JSON.stringify(playerName)} was not reconciled: the preview answered ${claimCode}; the entries stay in the journal for the next run`, { operation });
    this.name = 'NotReconciledError';
    this.playerName = playerName;
    this.claimCode = claimCode;
  }
}

/**
 * A second delivery loop refused: one already runs on the same journal in this process
 * (on this client, a client derived from it, or another client given the same journal).
 * Two loops would poll every player twice and together spend twice `maxCallsPerSecond`.
 * Stop the running loop first, or share it.
 *
 * @example
 * ```ts
 * try {
 *   loop = client.startDeliveryLoop({ give });
 * } catch (error) {
 *   if (isStorefrontError(error, 'LOOP_RUNNING')) loop = existingLoop; // one per journal
 *   else throw error;
 * }
 * ```
 */
export class LoopRunningError extends StorefrontError {
  /** @internal */
  constructor() {
    super('LOOP_RUNNING', 'startDeliveryLoop: a delivery loop already runs on this journal in this process (this client, a client derived from it, or another client on the same journal); stop() it first, or share the running loop', { operation: 'startDeliveryLoop' });
    this.name = 'LoopRunningError';
  }
}

/**
 * {@link resolveWindow} found the window already resolved: another staff member (another
 * admin command, another node, the `teamgames journal resolve` command) closed it first.
 * Nothing was written; the first resolution stands, and this error says who made it, when
 * and what they noted. Resolving is compare-and-set on every journal: of several resolves
 * of one window at once, exactly one succeeds and every other gets this error.
 *
 * @example
 * ```ts
 * try {
 *   await resolveWindow(journal, { windowId, by: 'mod:bob', note: 'granted VIP by hand' });
 * } catch (error) {
 *   if (isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')) {
 *     reply(`already handled by ${error.resolution.by} at ${new Date(error.resolution.at).toISOString()}: ${error.resolution.note}`);
 *   } else throw error;
 * }
 * ```
 * @see [Delivering purchases in game: what staff do](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#unverified-what-staff-do)
 */
export class WindowAlreadyResolvedError extends StorefrontError {
  /** The window's id (`window:…`). */
  readonly windowId: string;
  /** The player whose window it is, exact name. */
  readonly playerName: string;
  /** The first resolution, as the journal keeps it. */
  readonly resolution: {
    /** Who resolved it first. */
    readonly by: string;
    /** When, epoch ms. */
    readonly at: number;
    /** What they found and did. */
    readonly note: string;
  };

  /** @internal */
  constructor(windowId: string, playerName: string, resolution: { by: string; at: number; note: string }) {
    // Bounded: a record written before the bounds (or by another tool) may hold anything; the fields keep it whole.
    super(
      'WINDOW_ALREADY_RESOLVED',
      `resolveWindow: window ${excerpt(windowId)} of player ${excerpt(playerName)} was already resolved by ${excerpt(resolution.by)} at ${timeText(resolution.at)} (note: ${excerpt(resolution.note)}); nothing was written, the first resolution stands`,
    );
    this.name = 'WindowAlreadyResolvedError';
    this.windowId = windowId;
    this.playerName = playerName;
    this.resolution = { by: resolution.by, at: resolution.at, note: resolution.note };
  }
}

/** A text as a JSON string of at most 200 characters (then `…`). */
function excerpt(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** An epoch time as ISO 8601, or the number as it is when no date has it (1e16). */
function timeText(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? `${ms} (epoch ms, not a date)` : date.toISOString();
}
