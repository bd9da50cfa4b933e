/**
 * The grant bounds of a delivery: each line granted and acknowledged right after; a grant
 * that throws leaves its line pending with the failure noted on it (for staff, `stuck`
 * after `staffAfterAttempts`); a grant that outlives `grantTimeoutMs` leaves it pending
 * too, is never granted again while it runs, and is acknowledged if it still succeeds; a
 * line given whose acknowledgement the journal refused is never given again by this
 * process; a grant that says its outcome is unknown and that it recorded a window for staff
 * (`unverified` on what it threw) settles its line into that window: acknowledged, never
 * given again, reported as a window, never as granted.
 *
 * @module
 * @internal
 */
import type { JournalLine } from '../../journals/contract.js';
import type { Control } from './options.js';
import type { EngineRecords } from './records.js';
import type { Run } from './report.js';
import { giveWithin, notedFailure, settleGiven, type DeliveredItem, type GiveFailure, type GrantFunction } from '../core/index.js';

/** The grants of one engine, over its journal side and the delivery core (give.ts). @internal */
export class GrantBounds {
  readonly #records: EngineRecords;

  constructor(records: EngineRecords) {
    this.#records = records;
  }

  /**
   * Grants each line, acknowledging it right after; a throwing grant leaves its line
   * pending, and so does one that outlives `grantTimeoutMs` (acknowledged if it still
   * succeeds; never granted again while it runs).
   */
  async grantAll(run: Run, lines: readonly JournalLine[], grant: GrantFunction, control: Control): Promise<void> {
    const { granting, given } = this.#records.shared;
    const journal = this.#records.journal;
    for (const line of lines) {
      if (granting.has(line.deliveryId) || run.extras.defer?.(line) === true) continue;
      // Given already by this process; only its acknowledgement is missing: never given twice.
      if (given.has(line.deliveryId)) {
        await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
        continue;
      }
      const item: DeliveredItem = { ...line.item, deliveryId: line.deliveryId };
      const failure = await giveWithin({ journal, deliveryId: line.deliveryId, operation: run.operation, timeoutMs: control.grantTimeoutMs, redact: run.via.redact }, () => grant(item));
      if (failure?.window !== undefined) {
        await this.#settleInWindow(run, line, failure.window);
        continue;
      }
      if (failure !== undefined) {
        run.failed.push({ item, error: failure.thrown });
        if (!failure.late) await this.#noteFailure(run, line, failure);
        continue;
      }
      run.granted.push(item);
      await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
    }
  }

  /**
   * A line whose grant may or may not have happened, in a window its grant wrote: reported
   * (the run's `unverified`, an `unverified` event) and acknowledged like a line given, so
   * that it is never given again.
   */
  async #settleInWindow(run: Run, line: JournalLine, span: { from: number; to: number }): Promise<void> {
    await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
    const window = { playerName: line.playerName, from: span.from, to: span.to };
    run.unverified.push(window);
    run.windowed = (run.windowed ?? 0) + 1;
    this.#records.emit(run, { type: 'unverified', operation: run.operation, window });
  }

  /** Acknowledges a line the game was given; until the journal takes it, the line is remembered as given. */
  async #acknowledgeGiven(run: Run, player: string, deliveryId: string): Promise<void> {
    await settleGiven(this.#records.journal, deliveryId, () => this.#records.write(run, player, (journal) => journal.acknowledge([deliveryId])));
  }

  /**
   * Keeps the grant's failure on the line, for staff (`teamgames journal pending`): on the
   * line as the journal holds it now, since the give may have written it since it was read
   * (the bridge's RCON sink marks it `sending` before a command, and a note written over
   * that mark from the engine's copy would let the next process send the command again).
   */
  async #noteFailure(run: Run, line: JournalLine, failure: GiveFailure): Promise<void> {
    const { unjournaled } = this.#records.shared;
    if (unjournaled.has(line.deliveryId)) {
      unjournaled.set(line.deliveryId, this.#noted(run, line, failure));
      return;
    }
    await this.#records.write(run, line.playerName, async (journal) => {
      const current = (await journal.pending(line.playerName)).find((entry) => entry.deliveryId === line.deliveryId);
      // Acknowledged meanwhile (a grant still running succeeded): nothing left to note.
      if (current?.state === 'claimed') await journal.append([this.#noted(run, current, failure)]);
    });
  }

  /** The line with the failure noted by the core's policy (and the `stuck` event once it is marked for staff). */
  #noted(run: Run, line: JournalLine, failure: GiveFailure): JournalLine {
    const noted = notedFailure(line, failure, this.#records.config.now(), run.extras.staffAfterAttempts);
    if (noted.stuckNow) {
      const item = { ...line.item, deliveryId: line.deliveryId };
      this.#records.emit(run, { type: 'stuck', operation: run.operation, playerName: line.playerName, deliveryId: line.deliveryId, item, attempts: noted.attempts, error: failure.thrown });
    }
    return noted.record;
  }
}
