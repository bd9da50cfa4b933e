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
import { GrantTimeoutError, windowOfGive, type DeliveredItem, type GrantFunction } from '../core/index.js';

/** The grants of one engine, over its journal side. @internal */
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
    const { unjournaled, granting, given } = this.#records.shared;
    for (const line of lines) {
      if (granting.has(line.deliveryId) || run.extras.defer?.(line) === true) continue;
      // Given already by this process; only its acknowledgement is missing: never given twice.
      if (given.has(line.deliveryId)) {
        await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
        continue;
      }
      const item: DeliveredItem = { ...line.item, deliveryId: line.deliveryId };
      const error = await this.#grantWithin(run, item, grant, control.grantTimeoutMs);
      const window = error === undefined ? undefined : windowOfGive(error.thrown);
      if (window !== undefined) {
        await this.#settleInWindow(run, line, window);
        continue;
      }
      if (error !== undefined) {
        run.failed.push({ item, error: error.thrown });
        if (!(error.thrown instanceof GrantTimeoutError)) await this.#noteFailure(run, line, error.thrown);
        continue;
      }
      run.granted.push(item);
      unjournaled.delete(line.deliveryId);
      given.add(line.deliveryId);
      await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
    }
  }

  /**
   * A line whose grant may or may not have happened, in a window its grant wrote: reported
   * (the run's `unverified`, an `unverified` event) and acknowledged like a line given, so
   * that it is never given again.
   */
  async #settleInWindow(run: Run, line: JournalLine, span: { from: number; to: number }): Promise<void> {
    const { unjournaled, given } = this.#records.shared;
    unjournaled.delete(line.deliveryId);
    given.add(line.deliveryId);
    await this.#acknowledgeGiven(run, line.playerName, line.deliveryId);
    const window = { playerName: line.playerName, from: span.from, to: span.to };
    run.unverified.push(window);
    run.windowed = (run.windowed ?? 0) + 1;
    this.#records.emit(run, { type: 'unverified', operation: run.operation, window });
  }

  /** Acknowledges a line the game was given; until the journal takes it, the line is remembered as given. */
  async #acknowledgeGiven(run: Run, player: string, deliveryId: string): Promise<void> {
    if (await this.#records.write(run, player, (journal) => journal.acknowledge([deliveryId]))) this.#records.shared.given.delete(deliveryId);
  }

  /**
   * Keeps the grant's failure on the line, for staff (`teamgames journal pending`): on the
   * line as the journal holds it now, since the give may have written it since it was read
   * (the bridge's RCON sink marks it `sending` before a command, and a note written over
   * that mark from the engine's copy would let the next process send the command again).
   */
  async #noteFailure(run: Run, line: JournalLine, thrown: unknown): Promise<void> {
    const { unjournaled } = this.#records.shared;
    if (unjournaled.has(line.deliveryId)) {
      unjournaled.set(line.deliveryId, this.#noted(run, line, thrown));
      return;
    }
    await this.#records.write(run, line.playerName, async (journal) => {
      const current = (await journal.pending(line.playerName)).find((entry) => entry.deliveryId === line.deliveryId);
      // Acknowledged meanwhile (a grant still running succeeded): nothing left to note.
      if (current?.state === 'claimed') await journal.append([this.#noted(run, current, thrown)]);
    });
  }

  /** The line with the failure noted (and marked for staff once it must be). */
  #noted(run: Run, line: JournalLine, thrown: unknown): JournalLine {
    const message = String((thrown as Error | undefined)?.message ?? thrown).slice(0, 300);
    const attempts = (line.lastError?.attempts ?? 0) + 1;
    const limit = run.extras.staffAfterAttempts;
    // A give that refuses for good (`staff: true` on what it threw, as the bridge's RCON
    // sink does for an item it has no safe command for) marks the line for staff at once.
    const forStaff = (thrown as { staff?: unknown } | null | undefined)?.staff === true;
    const stuck = line.lastError?.stuck === true || forStaff || (limit !== undefined && attempts >= limit);
    if (stuck && line.lastError?.stuck !== true) {
      this.#records.emit(run, { type: 'stuck', operation: run.operation, playerName: line.playerName, item: { ...line.item, deliveryId: line.deliveryId }, attempts, error: thrown });
    }
    return { ...line, lastError: { message, at: this.#records.config.now(), attempts, ...(stuck ? { stuck } : {}) } };
  }

  /** One grant, bounded: what it threw, its timeout, or `undefined` once it returned. */
  async #grantWithin(run: Run, item: DeliveredItem, grant: GrantFunction, ms: number): Promise<{ thrown: unknown } | undefined> {
    let attempt: Promise<unknown>;
    try {
      attempt = Promise.resolve(grant(item));
    } catch (thrown) {
      return { thrown };
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
    try {
      if ((await Promise.race([attempt, late])) !== 'late') return undefined;
    } catch (thrown) {
      return { thrown };
    } finally {
      clearTimeout(timer);
    }
    // Still running: the player's other calls go on, and this line waits for it.
    const { granting, unjournaled } = this.#records.shared;
    const journal = this.#records.journal;
    granting.add(item.deliveryId);
    const { given } = this.#records.shared;
    attempt.then(
      async () => {
        granting.delete(item.deliveryId);
        unjournaled.delete(item.deliveryId);
        given.add(item.deliveryId);
        // Not acknowledged now: the next call for the player acknowledges it, never gives it again.
        await journal.acknowledge([item.deliveryId]).then(() => given.delete(item.deliveryId), () => undefined);
      },
      () => granting.delete(item.deliveryId),
    );
    return { thrown: new GrantTimeoutError(run.operation, item.deliveryId, ms) };
  }
}

