/**
 * The file journal: append-only JSON lines, flushed to disk (`fsync`) before
 * {@link StorefrontClient.deliver} starts a grant, tolerant of a torn last line after a
 * crash, and compacted when it grows.
 *
 * @module
 */
import { resolve } from 'node:path';
import { lazy } from '../internal/lazy.js';
import type { FileStore } from './file-store.js';
import type { DeliveryJournal, JournalEntry } from './journal.js';

const fileStore = lazy(() => import('./file-store.js'));

/** Options of {@link FileJournal}. */
export interface FileJournalOptions {
  /**
   * Rewrites the file with only the pending entries once it holds more than this many
   * lines and more than twice as many lines as pending entries. Default `1000`.
   */
  compactAfter?: number;
  /**
   * Flush every write to the disk before resolving (`fsync`). Default `true`; turn it off
   * only for throwaway runs (it is what makes the journal survive a power cut).
   */
  fsync?: boolean;
}

/**
 * A {@link DeliveryJournal} in one file of JSON lines: `{"op":"put","entry":…}` records an
 * entry, `{"op":"ack","ids":[…]}` acknowledges entries. Each write is one `write` call
 * followed by `fsync`; a crash can only tear the last line, which the next start
 * ignores and cuts off. Any other unreadable line is corruption and fails loudly.
 *
 * One process per file: two processes appending to one file would compact over each
 * other. Give each API key its own file (invoice numbers are per game server).
 *
 * @example
 * ```ts
 * import { FileJournal, StorefrontClient } from 'teamgames-sdk';
 *
 * const client = new StorefrontClient({
 *   apiKey: process.env.TEAMGAMES_API_KEY!,
 *   journal: new FileJournal('/var/lib/my-game/teamgames-journal.jsonl'),
 * });
 * await client.resumeDeliveries(grant); // at startup: finish what a crash interrupted
 * ```
 * @see [Delivering purchases in game: the journals](../../docs/delivering-purchases.md#the-journals)
 */
export class FileJournal implements DeliveryJournal {
  /** Absolute path of the journal file. */
  readonly path: string;
  readonly #compactAfter: number;
  readonly #fsync: boolean;
  #store: FileStore | undefined;

  /**
   * Opens nothing yet: the file is read (and created) on first use.
   *
   * @throws RangeError when `compactAfter` is not a positive integer.
   */
  constructor(path: string, options: FileJournalOptions = {}) {
    this.path = resolve(path);
    this.#compactAfter = options.compactAfter ?? 1_000;
    if (!Number.isSafeInteger(this.#compactAfter) || this.#compactAfter < 1) {
      throw new RangeError(`FileJournal: compactAfter must be a positive integer, got ${String(options.compactAfter)}`);
    }
    this.#fsync = options.fsync ?? true;
  }

  /** Records entries and flushes them to disk before resolving. */
  append(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    // Copied now: what the caller changes after this call is not what gets written.
    const copies = entries.map((e) => structuredClone(e));
    return this.#with((store) => store.append(copies));
  }

  /** The entries not acknowledged (copies), oldest first. */
  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.#with((store) => store.pending(playerName));
  }

  /** Acknowledges entries (unknown ids are ignored) and flushes to disk. */
  acknowledge(deliveryIds: readonly string[]): Promise<void> {
    const ids = deliveryIds.filter((id) => typeof id === 'string');
    if (ids.length === 0) return Promise.resolve();
    return this.#with((store) => store.acknowledge(ids));
  }

  /** Closes the file; the journal reopens it on next use. */
  close(): Promise<void> {
    return this.#store === undefined ? Promise.resolve() : this.#with((store) => store.close());
  }

  /**
   * The implementation is loaded on first use: most programs that import the SDK never
   * journal, and its file handling is most of this class's code. Calls made before it
   * loads run in the order they were made (they resume in the order they awaited it).
   */
  async #with<T>(run: (store: FileStore) => Promise<T>): Promise<T> {
    const { FileStore } = await fileStore();
    this.#store ??= new FileStore(this.path, this.#compactAfter, this.#fsync);
    return run(this.#store);
  }

}
