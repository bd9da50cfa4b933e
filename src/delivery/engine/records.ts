/**
 * The delivery engine's side of the journal: the journal itself (the default file journal
 * opened on first use), what every client on it shares, and the writes of a run that never
 * throw (a failure is reported on the run, and claimed lines the journal refused are kept
 * in memory and granted from there), the windows reported, the moments each player's list
 * was seen, the events. `DeliveryEngine` (engine.ts) runs the modes over it.
 *
 * @module
 * @internal
 */
import type { JournalError } from '../../errors.js';
import type { DeliveryJournal, JournalEntry, JournalLine, JournalWindow, WindowCause } from '../../journals/contract.js';
import type { ClaimResult, Transaction } from '../../wire/claim.js';
import { linesOf, type Run } from './report.js';
import { checked } from '../records/index.js';
import { SEEN_LIMIT, defaultJournal, journalErrorOf, rememberedOf, sharedOf, type SeenAt, type Shared } from '../core/index.js';
import type { DeliveryEvent, UnverifiedWindow } from '../core/index.js';


/** What the engine needs from the clients that share it. @internal */
export interface DeliveryEngineConfig {
  /** Epoch ms, for the timestamps written to the journal and reported. */
  now: () => number;
  /** A monotonic clock for intervals (the client's: `now` when injected, `performance.now()` otherwise). */
  monotonic: () => number;
  journal: DeliveryJournal | undefined;
}

/**
 * The journal side of a {@link DeliveryEngine}: one per client and the clients derived
 * from it; what it shares with every other engine on the journal is in `shared.ts`.
 * @internal
 */
export class EngineRecords {
  readonly config: DeliveryEngineConfig;
  readonly monotonic: () => number;
  #journal: DeliveryJournal | undefined;

  constructor(config: DeliveryEngineConfig) {
    this.config = config;
    this.monotonic = config.monotonic;
    this.#journal = config.journal;
  }

  /** What every user of this engine's journal shares. */
  get shared(): Shared {
    return sharedOf(this.journal);
  }

  /**
   * What is still to do for `player`, every kind of item: the journal's entries, and what
   * only memory holds (records of purchases and of vote rewards the journal refused), memory's
   * copy first (it is the newer: the journal has yet to take it). Rejects with the journal's
   * failure, checked entries only.
   */
  async entriesOf(player: string): Promise<JournalEntry[]> {
    const entries = checked(await this.journal.pending(player));
    const inMemory = rememberedOf(this.shared, player);
    const held = new Set(inMemory.map((e) => e.deliveryId));
    return [...entries.filter((e) => !held.has(e.deliveryId)), ...inMemory];
  }

  /** The journal; the default file journal is opened on first use, never at construction. */
  get journal(): DeliveryJournal {
    return (this.#journal ??= defaultJournal());
  }

  /**
   * Journals claimed lines (and the intents they settle). When the journal fails they are
   * kept in memory (the lines granted from there, everything written again on the next
   * call) and the failure is reported: once the service delivered them, a failed write
   * must not drop them.
   */
  async record(run: Run, player: string, entries: readonly JournalEntry[]): Promise<boolean> {
    if (await this.write(run, player, (journal) => journal.append(entries))) return true;
    const { unjournaled } = this.shared;
    for (const entry of entries) unjournaled.set(entry.deliveryId, entry);
    return false;
  }

  /** Runs one journal change; a failure is reported on the run, never thrown. */
  async write(run: Run, player: string, change: (journal: DeliveryJournal) => Promise<void>): Promise<boolean> {
    try {
      await change(this.journal);
      return true;
    } catch (error) {
      this.journalFailed(run, player, error);
      return false;
    }
  }

  journalFailed(run: Run, player: string | undefined, error: unknown): JournalError {
    const journalError = journalErrorOf(run.operation, error, run.via.redact);
    run.journalError ??= journalError;
    if (player !== undefined) this.emit(run, { type: 'journalError', operation: run.operation, playerName: player, error: journalError });
    return journalError;
  }

  /**
   * Writes the window to the journal (kept until staff resolve it), then reports it. A
   * window the journal could not take is kept in memory and written on the next call; it
   * is reported all the same.
   */
  async reportUnverified(run: Run, player: string, start: number | SeenAt, cause: WindowCause): Promise<void> {
    // Stamped with the wall clock once; a start this process saw is measured back from it
    // on the monotonic clock, a start read from the journal is kept (never after `to`, even
    // when the wall clock stepped back since).
    const to = this.config.now();
    const from = typeof start === 'number' ? Math.min(start, to) : to - Math.max(0, this.monotonic() - start.mono);
    const node = this.journal.nodeId;
    const record: JournalWindow = { deliveryId: `window:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'unverified', from, to, cause, recordedAt: to, ...(node === undefined ? {} : { node }) };
    await this.record(run, player, [record]);
    const window: UnverifiedWindow = { playerName: player, from, to };
    run.unverified.push(window);
    this.emit(run, { type: 'unverified', operation: run.operation, window });
  }

  /** Now, on both clocks. */
  moment(): SeenAt {
    return { wall: this.config.now(), mono: this.monotonic() };
  }

  /** The player's whole list was seen at `at`: a later lost claim can only have taken what came after. */
  seen(player: string, at: SeenAt): void {
    const { seen } = this.shared;
    seen.delete(player);
    seen.set(player, at);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.keys().next().value as string);
  }

  emit(run: Run, event: DeliveryEvent): void {
    try {
      // Stryker disable next-line OptionalChaining: calling a missing listener throws inside the try that ignores listeners' failures: the same outcome
      run.via.onEvent?.(event);
    } catch {
      // A listener's failure must not change the outcome of a delivery.
    }
  }

  async pendingCount(run: Run, player: string | undefined): Promise<number> {
    const inMemory = [...this.shared.unjournaled.values()].filter((e) => isClaimed(e) && (player === undefined || e.playerName === player)).length;
    try {
      return (await this.journal.pending(player)).filter(isWork).length + inMemory;
    } catch (error) {
      this.journalFailed(run, player, error);
      return inMemory;
    }
  }

  /** The lines of a claim answer: by invoice when the raw rows line up, else by claim and index. */
  claimedLines(player: string, result: ClaimResult): JournalLine[] {
    const rows = linesOf(result);
    if (rows === undefined) {
      const batch = `claim:${globalThis.crypto.randomUUID()}`;
      return result.claims.map((item, index) => this.line(`${batch}:${index}`, player, 'claimed', item));
    }
    return [...rows].map(([invoice, item]) => this.line(`invoice:${invoice}`, player, 'claimed', item, invoice));
  }

  line(deliveryId: string, playerName: string, state: JournalLine['state'], item: Transaction, invoice?: string): JournalLine {
    return { deliveryId, playerName, state, item, ...(invoice === undefined ? {} : { invoice }), recordedAt: this.config.now() };
  }
}

/** An entry that is work still to do (not a window kept for staff, not a settled intent). */
export function isWork(entry: JournalEntry): boolean {
  return entry.state === 'claimed' || entry.state === 'claiming' || isOpenIntent(entry);
}

export function isClaimed(entry: JournalEntry): entry is JournalLine {
  return entry.state === 'claimed';
}

/** An intent still to reconcile (not settled by a claim whose lines were journaled). */
export function isOpenIntent(entry: JournalEntry): entry is JournalLine {
  return entry.state === 'intended' && entry.settled !== true;
}
