/**
 * The journal in memory, for tests.
 *
 * @module
 */
import { checkIds, checkResolution, copyEntries, resolvedWindow, unresolvedOutcome, type DeliveryJournal, type JournalEntry, type WindowResolution, type WindowResolveOutcome } from './contract.js';
import { entryChecks } from './lazy-checks.js';

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
  // Every call waits once for the entries' checks to load (at hand after the first): calls
  // take effect in the order they were made.
  readonly #entries = new Map<string, JournalEntry>();

  /**
   * Records entries (copies); an entry with a known `deliveryId` replaces it in place.
   *
   * @throws InvalidInputError when an entry is not a {@link JournalEntry}; nothing was recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    const copies = copyEntries(entries);
    const { checkEntries } = await entryChecks();
    for (const entry of checkEntries(copies)) this.#entries.set(entry.deliveryId, entry);
  }

  /** The entries not acknowledged (copies), oldest first. */
  async pending(playerName?: string): Promise<JournalEntry[]> {
    await entryChecks();
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
    const ids = checkIds(deliveryIds);
    await entryChecks();
    for (const id of ids) this.#entries.delete(id);
  }

  /**
   * Closes the window `windowId` only while it is open (compare-and-set: the check and the
   * change happen in one synchronous step); see {@link DeliveryJournal.resolveWindow}.
   *
   * @throws InvalidInputError when `resolution` is not `{ by, at, note }`; nothing was written.
   */
  async resolveWindow(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
    const checked = checkResolution(windowId, resolution);
    await entryChecks();
    const entry = this.#entries.get(windowId);
    const window = resolvedWindow(entry, checked);
    if (window === undefined) return structuredClone(unresolvedOutcome(entry));
    this.#entries.set(windowId, structuredClone(window));
    return { outcome: 'resolved', window };
  }

  /** How many entries are pending, for tests and metrics. */
  get size(): number {
    return this.#entries.size;
  }
}
