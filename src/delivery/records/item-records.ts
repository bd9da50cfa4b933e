/**
 * The delivery core's records for a give that writes to the journal itself: the bridge's
 * RCON sink marks an item `sending` before a command and writes an `unknownCommand` window
 * when the command's outcome is unknown. Every such write goes through here, over the
 * journal and the memory every client of it shares (shared.ts), so the sink gets what the
 * engines have: records read back checked like an answer from the network, writes that
 * report a failure instead of throwing (but the mark, which must be durable before the game
 * is touched), a window the journal refuses kept in memory (shown by `status(player)`, written
 * again by the player's next delivery), and memory's copy of a record kept in step with the
 * journal's.
 *
 * @module
 * @internal
 */
import type { DeliveryJournal, JournalEntry, JournalLine, JournalWindow } from '../../journals/contract.js';
import type { JournalVoteReward } from '../../journals/vote-entries.js';
import { checked } from './checked.js';
import { rememberedOf, sharedOf } from '../core/index.js';

/** A record a give writes: a purchase line or a vote reward row. */
export type ItemRecord = JournalLine | JournalVoteReward;

/** The core's records of one journal, for a give that writes to it. @internal */
export class ItemRecords {
  readonly #journal: DeliveryJournal;

  constructor(journal: DeliveryJournal) {
    this.#journal = journal;
  }

  /** The journal's node id, for the records written. */
  get nodeId(): string | undefined {
    return this.#journal.nodeId;
  }

  /**
   * What the journal holds for `player`, each record checked, with what only memory holds
   * (memory's copy first: the journal has yet to take it). Rejects when the journal cannot
   * be read or holds a damaged record: nothing may be sent on a record nobody can trust.
   */
  async entriesOf(player: string): Promise<JournalEntry[]> {
    const entries = checked(await this.#journal.pending(player));
    const inMemory = rememberedOf(sharedOf(this.#journal), player);
    const held = new Set(inMemory.map((e) => e.deliveryId));
    return [...entries.filter((e) => !held.has(e.deliveryId)), ...inMemory];
  }

  /**
   * Writes the record that must be durable before the game is touched (the `sending` mark):
   * rejects when the journal refuses it, and then nothing may be sent.
   */
  async mark(record: ItemRecord): Promise<void> {
    await this.#journal.append([record]);
    this.#inStep(record);
  }

  /** Writes a record again (the mark removed: nothing was sent); never throws: the journal's failure is returned. */
  async rewrite(record: ItemRecord): Promise<unknown> {
    try {
      await this.#journal.append([record]);
    } catch (error) {
      return error ?? new Error('the journal refused the record');
    }
    this.#inStep(record);
    return undefined;
  }

  /** A window this process holds in memory, not written yet (the journal refused it): what memory holds under a window's id is one. */
  unwritten(windowId: string): JournalWindow | undefined {
    return sharedOf(this.#journal).unjournaled.get(windowId) as JournalWindow | undefined;
  }

  /**
   * Writes a window for staff; never throws: a window the journal refuses is kept in memory
   * (written by the player's next delivery, or by the next call here) and the failure returned.
   */
  async window(window: JournalWindow): Promise<unknown> {
    const { unjournaled } = sharedOf(this.#journal);
    try {
      await this.#journal.append([window]);
    } catch (error) {
      unjournaled.set(window.deliveryId, window);
      return error ?? new Error('the journal refused the window');
    }
    unjournaled.delete(window.deliveryId);
    return undefined;
  }

  /** Memory's copy of a record the journal refused earlier follows what was written, so that rewriting it never undoes a mark. */
  #inStep(record: ItemRecord): void {
    const { unjournaled, unwrittenVotes } = sharedOf(this.#journal);
    const memory = record.state === 'voteClaimed' ? unwrittenVotes : unjournaled;
    if (memory.has(record.deliveryId)) memory.set(record.deliveryId, record);
  }
}

/** The core's records of `journal`, for a give that writes to it. */
export function itemRecordsOf(journal: DeliveryJournal): ItemRecords {
  return new ItemRecords(journal);
}
