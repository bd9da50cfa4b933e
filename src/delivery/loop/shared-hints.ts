/**
 * The checkout hints of a shared journal (#47): a web shop on another machine writes them
 * with `expectCheckout`, and every node's loop reads them here, every few seconds, into
 * the same book of hints `loop.expect` fills (hints.ts), with the same bounds. The node
 * holding the player online acts on a hint; the others only hold it.
 *
 * @module
 * @internal
 */
import type { DeliveryJournal } from '../../journals/contract.js';
import type { SharedCheckoutHint } from '../../journals/checkout-hints.js';
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
 * Two reads of one row place its start this close on the loop's clock (the reads' round
 * trips differ): the same hint. A row written anew (after it expired: at least a window of
 * 10 s later) is another.
 */
const SAME_HINT_MS = 2_000;

/** What the loop does with a hint read: its book's outcome. */
type Hold = (name: string, hint: HeldHint, now: number) => CheckoutHintOutcome;

/** Reads a journal's shared hints now and then, and hands each to `hold` (the loop's book). */
export class SharedHints {
  readonly #read: () => Promise<SharedCheckoutHint[]>;
  readonly #timers: LoopTimers;
  readonly #hold: Hold;
  /**
   * The rows of the last read handed to the book, by player and transaction: their start on
   * the loop's clock. A row is handed over once, however many reads see it: the book's
   * memory of ended hints (an hour, at most 10,000) then never has to stop a hint delivered
   * already from coming back while its row lives. At most the rows of one read.
   */
  #handed = new Map<string, number>();
  #timer: unknown;
  #stopped = false;
  #failures = 0;
  /** The last read's failure (a database down, a missing table), until a read succeeds. */
  lastError: unknown;

  /**
   * Starts reading `journal`'s hints at once, then every {@link SHARED_HINTS_POLL_MS}, or
   * returns `undefined` when the journal carries none (no `liveCheckoutHints`).
   */
  static start(journal: DeliveryJournal, timers: LoopTimers, hold: Hold): SharedHints | undefined {
    const read = journal.liveCheckoutHints;
    if (typeof read !== 'function') return undefined;
    const hints = new SharedHints(() => read.call(journal), timers, hold);
    hints.#arm(0);
    return hints;
  }

  private constructor(read: () => Promise<SharedCheckoutHint[]>, timers: LoopTimers, hold: Hold) {
    this.#read = read;
    this.#timers = timers;
    this.#hold = hold;
  }

  /** Stops reading: the timer is cleared, and a read in flight is ignored when it ends. */
  stop(): void {
    this.#stopped = true;
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = this.#timers.setTimeout(() => void this.#poll(), ms);
  }

  async #poll(): Promise<void> {
    let next = SHARED_HINTS_POLL_MS;
    try {
      const hints = await this.#read();
      if (this.#stopped) return;
      const now = this.#timers.now();
      // Oldest first: the book keeps the order hints were given in. Since and until come from
      // the database's age and remaining life, placed on this loop's monotonic clock.
      const handed = new Map<string, number>();
      for (const hint of hints) {
        const key = `${hint.playerName}\u0000${hint.transactionId ?? ''}`;
        const since = now - hint.ageMs;
        const before = this.#handed.get(key);
        if (before !== undefined && Math.abs(before - since) < SAME_HINT_MS) {
          handed.set(key, before);
          continue;
        }
        const held: HeldHint = { transactionIds: hint.transactionId === undefined ? [] : [hint.transactionId], any: hint.transactionId === undefined, since, until: now + hint.remainingMs };
        // A hint the book had no room for is offered again at the next read.
        if (this.#hold(hint.playerName, held, now) !== 'full') handed.set(key, since);
      }
      this.#handed = handed;
      this.#failures = 0;
      this.lastError = undefined;
    } catch (error) {
      // Hints are an accelerator: a failed read never stops nor slows deliveries (the
      // routine polls bring the purchases); it is retried later, backing off.
      this.#failures += 1;
      this.lastError = error;
      const ceiling = Math.min(BACKOFF_CAP_MS, SHARED_HINTS_POLL_MS * 2 ** this.#failures);
      next = ceiling / 2 + (Math.random() * ceiling) / 2;
    }
    if (!this.#stopped) this.#arm(next);
  }
}
