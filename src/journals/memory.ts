/**
 * The journal in memory, for tests.
 *
 * @module
 */
import { checkEntries, checkIds, type DeliveryJournal, type JournalEntry } from './contract.js';

/**
 * A journal in memory: for tests and for games whose own state is not durable either.
 * It does not survive the process; use {@link FileJournal} (or a database) in production.
 *
 * @example
 * ```ts
 * const client = new StorefrontClient({ apiKey: 'test-key', journal: new MemoryJournal() });
 * ```
 * @see [Delivering purchases in game: the journals](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#the-journals)
 */
export class MemoryJournal implements DeliveryJournal {
  readonly #entries = new Map<string, JournalEntry>();

  /**
   * Records entries (copies); an entry with a known `deliveryId` replaces it in place.
   *
   * @throws InvalidInputError when an entry is not a {@link JournalEntry}; nothing was recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    for (const entry of checkEntries(entries)) this.#entries.set(entry.deliveryId, structuredClone(entry));
  }

  /** The entries not acknowledged (copies), oldest first. */
  async pending(playerName?: string): Promise<JournalEntry[]> {
    const out: JournalEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (playerName === undefined || entry.playerName === playerName) out.push(structuredClone(entry));
    }
    return out;
  }

  /**
   * Removes entries. Unknown ids are ignored.
   *
   * @throws InvalidInputError when `deliveryIds` is not an array; nothing was removed.
   */
  async acknowledge(deliveryIds: readonly string[]): Promise<void> {
    for (const id of checkIds(deliveryIds)) this.#entries.delete(id);
  }

  /** How many entries are pending, for tests and metrics. */
  get size(): number {
    return this.#entries.size;
  }
}
