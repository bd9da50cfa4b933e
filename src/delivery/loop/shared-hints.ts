/**
 * The checkout hints of a shared journal (#47): a web shop on another machine writes them
 * with `expectCheckout`, and every node's loop reads them here, every few seconds, into
 * the same book of hints `loop.expect` fills (hints.ts), with the same bounds. The node
 * holding the player online acts on a hint; the others only hold it.
 *
 * @module
 * @internal
 */
import { JournalError } from '../../errors.js';
import type { DeliveryJournal } from '../../journals/contract.js';
import { HINT_LIMIT, type SharedCheckoutHint } from '../../journals/checkout-hints.js';
import type { LoopTimers } from './call-budget.js';
import type { CheckoutHintOutcome, HeldHint } from './hints.js';

/**
 * How often a loop reads the shared hints: one query per node per 5 s, whatever the number
 * of players. A hint is written at checkout and the payment follows about a minute later
 * (the median the simulation draws), so a hint is held long before its purchase can be
 * claimed; reading more often would only cost the database.
 */
export const SHARED_HINTS_POLL_MS = 5_000;
/** The longest wait after failed reads (doubling from the poll interval, full jitter over its upper half). */
const BACKOFF_CAP_MS = 60_000;
/**
 * A read not answered by then is reported (`lastError`), and the next waits for it: at most
 * one read in flight, so a database that never answers holds one connection, not one per poll.
 */
export const SHARED_HINTS_READ_TIMEOUT_MS = 30_000;
/**
 * Two reads of one row place its start this close on the loop's clock (the reads' round
 * trips differ): the same hint. A row written anew (after it expired: at least a window of
 * 10 s later) is another.
 */
const SAME_HINT_MS = 2_000;

/** What the loop does with a hint read: its book's outcome. */
type Hold = (name: string, hint: HeldHint, now: number) => CheckoutHintOutcome;
/** What the loop does when a row handed over is gone (delivered elsewhere, or expired): its book ends what it named. */
type Drop = (name: string, transactionId: string | undefined, now: number) => void;
/** What the loop does when the reads start failing (the error) or work again (`undefined`): its `sharedHintsError` event. */
type Report = (error: unknown) => void;

/** A row handed to the book: its start on the loop's clock, and what it names. */
interface Handed {
  since: number;
  name: string;
  transactionId: string | undefined;
}

/** Reads a journal's shared hints now and then, and hands each to `hold` (the loop's book). */
export class SharedHints {
  readonly #read: (onBadRow: (error: JournalError) => void) => Promise<SharedCheckoutHint[]>;
  readonly #timers: LoopTimers;
  readonly #hold: Hold;
  readonly #drop: Drop;
  readonly #report: Report;
  readonly #journal: DeliveryJournal;
  /**
   * The rows of the last read handed to the book, by player and transaction: their start on
   * the loop's clock. A row is handed over once, however many reads see it: the book's
   * memory of ended hints (an hour, at most 10,000) then never has to stop a hint delivered
   * already from coming back while its row lives. At most the rows of one read.
   */
  #handed = new Map<string, Handed>();
  #timer: unknown;
  /** The timer that reports a read not answered in time, while one is in flight. */
  #slow: unknown;
  #stopped = false;
  #failures = 0;
  #lastError: unknown;

  /**
   * The last read's failure (a database down, a missing table, a row that is not a hint),
   * until a read succeeds (with no such row).
   */
  get lastError(): unknown {
    return this.#lastError;
  }

  /**
   * Starts reading `journal`'s hints at once, then every {@link SHARED_HINTS_POLL_MS}, or
   * returns `undefined` when the journal carries none (no `liveCheckoutHints`).
   */
  static start(journal: DeliveryJournal, timers: LoopTimers, hold: Hold, drop: Drop, report: Report): SharedHints | undefined {
    const read = journal.liveCheckoutHints;
    if (typeof read !== 'function') return undefined;
    // A row that is not a hint is left out and reported: it never stops the others.
    const hints = new SharedHints(journal, (onBadRow) => read.call(journal, onBadRow), timers, hold, drop, report);
    hints.#arm(0);
    return hints;
  }

  private constructor(journal: DeliveryJournal, read: (onBadRow: (error: JournalError) => void) => Promise<SharedCheckoutHint[]>, timers: LoopTimers, hold: Hold, drop: Drop, report: Report) {
    this.#journal = journal;
    this.#read = read;
    this.#timers = timers;
    this.#hold = hold;
    this.#drop = drop;
    this.#report = report;
  }

  /**
   * A delivery here satisfied what a hint named: if it came from the journal, its row is
   * deleted, so that the other nodes drop it at their next read (a player moving to one of
   * them is not claimed for it) and a loop starting later never holds it. A failed delete
   * only shows in `lastError`: the row expires anyway.
   */
  satisfied(name: string, transactionId: string | undefined): void {
    const end = this.#journal.endCheckoutHint;
    if (this.#stopped || typeof end !== 'function' || !this.#handed.has(keyOf(name, transactionId))) return;
    end.call(this.#journal, name, transactionId).catch((error: unknown) => {
      this.#failed(error);
    });
  }

  /** Stops reading: the timer is cleared, and a read in flight is ignored when it ends. */
  stop(): void {
    this.#stopped = true;
    this.#timers.clearTimeout(this.#timer);
    this.#timers.clearTimeout(this.#slow);
    this.#timer = undefined;
    this.#slow = undefined;
  }

  #arm(ms: number): void {
    this.#timer = this.#timers.setTimeout(() => void this.#poll(), ms);
  }

  async #poll(): Promise<void> {
    let next = SHARED_HINTS_POLL_MS;
    this.#slow = this.#timers.setTimeout(() => {
      this.#failed(new JournalError(`startDeliveryLoop: the journal's checkout hints were not read within ${SHARED_HINTS_READ_TIMEOUT_MS} ms (the database does not answer); read again once it answers`, { operation: 'startDeliveryLoop' }));
    }, SHARED_HINTS_READ_TIMEOUT_MS);
    let badRow: JournalError | undefined;
    let badRows = 0;
    try {
      const hints = await this.#read((error) => {
        badRow ??= error;
        badRows += 1;
      });
      if (this.#stopped) return;
      const now = this.#timers.now();
      // Oldest first: the book keeps the order hints were given in. Since and until come from
      // the database's age and remaining life, placed on this loop's monotonic clock.
      const handed = new Map<string, Handed>();
      for (const hint of hints) {
        const key = keyOf(hint.playerName, hint.transactionId);
        const since = now - hint.ageMs;
        const before = this.#handed.get(key);
        if (before !== undefined && Math.abs(before.since - since) < SAME_HINT_MS) {
          handed.set(key, before);
          continue;
        }
        const held: HeldHint = { transactionIds: hint.transactionId === undefined ? [] : [hint.transactionId], any: hint.transactionId === undefined, since, until: now + hint.remainingMs };
        // A hint the book had no room for is offered again at the next read.
        if (this.#hold(hint.playerName, held, now) !== 'full') handed.set(key, { since, name: hint.playerName, transactionId: hint.transactionId });
      }
      // A row handed over and gone was delivered on another node (or expired): the book ends
      // it. Not when the read was cut at its bound (rows not hints count): a row left out may still be there.
      if (hints.length + badRows < HINT_LIMIT) for (const [key, row] of this.#handed) if (!handed.has(key)) this.#drop(row.name, row.transactionId, now);
      this.#handed = handed;
      this.#failures = 0;
      if (badRow === undefined) this.#recovered();
      else this.#failed(badRow);
    } catch (error) {
      // Hints are an accelerator: a failed read never stops nor slows deliveries (the
      // routine polls bring the purchases); it is retried later, backing off.
      this.#failures += 1;
      this.#failed(error);
      const ceiling = Math.min(BACKOFF_CAP_MS, SHARED_HINTS_POLL_MS * 2 ** this.#failures);
      next = ceiling / 2 + (Math.random() * ceiling) / 2;
    } finally {
      this.#timers.clearTimeout(this.#slow);
      this.#slow = undefined;
    }
    if (!this.#stopped) this.#arm(next);
  }

  /** Holds a failure for `stats()`; reported when the reads were working until now. */
  #failed(error: unknown): void {
    const before = this.#lastError;
    this.#lastError = error;
    if (before === undefined && !this.#stopped) this.#report(error);
  }

  /** A read worked (no row left out): the failure held, if any, is over, and reported so. */
  #recovered(): void {
    if (this.#lastError === undefined) return;
    this.#lastError = undefined;
    this.#report(undefined);
  }
}

/** A row's key: the player and the transaction ('\u0000' is in no player name nor transaction id). */
function keyOf(name: string, transactionId: string | undefined): string {
  return `${name}\u0000${transactionId ?? ''}`;
}
