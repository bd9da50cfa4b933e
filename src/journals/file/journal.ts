/**
 * The file journal: append-only JSON lines, flushed to disk (`fdatasync`) before
 * {@link StorefrontClient.deliver} starts a grant, tolerant of a torn last line after a
 * crash, compacted when it grows, and locked to one process.
 *
 * @module
 */
import { resolve } from 'node:path';
import { lazy } from '../../internal/lazy.js';
import { checkBoolean, checkNonBlank, checkOptionsObject, checkPositiveInteger, describe, fail } from '../../internal/validate.js';
import type { FileStore } from './store.js';
import { checkIds, checkResolution, copyEntries, type DeliveryJournal, type JournalEntry, type WindowResolution, type WindowResolveOutcome } from '../contract.js';

const fileStore = lazy(() => import('./store.js'));

const OPTIONS = ['compactAfter', 'fsync', 'mode'] as const;

/** The modes a new journal may be created with: owner only, or readable by its group too. */
const MODES = [0o600, 0o640] as const;

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
  /**
   * The permissions of a new journal file and of its lock file: `0o600` (the default: only
   * the bridge's user reads them: player names, purchases and staff notes are nobody
   * else's business) or `0o640` (the file's group may read them too, e.g. staff who run
   * `teamgames journal status` as their own user). Applied whatever the umask. An existing
   * journal keeps its mode, through compactions too (`chmod` it to change it).
   */
  mode?: 0o600 | 0o640;
}

/**
 * A {@link DeliveryJournal} in one file of JSON lines, one line per call:
 * `{"op":"put","entries":[…]}` records the entries of one append (`{"op":"put","entry":…}`
 * when it holds one, as 0.1.0 wrote every entry), `{"op":"ack","ids":[…]}` acknowledges
 * entries. A call resolves once every byte of its line is written and flushed
 * (`fdatasync`). An append of several entries is all-or-nothing: after a crash or a power
 * cut the file holds all of them or none. A write that fails (a full disk) rejects with
 * {@link JournalError}, changes nothing and is cut off the file, so the journal stays
 * usable. A crash can only tear the last line: a last line without its newline that is
 * not JSON is dropped and cut off by the next start. Every other line is validated like
 * an answer from the network; a line that is not a valid record is damage, and the
 * journal fails loudly (a {@link JournalError} naming the file, the line and the problem)
 * with nothing changed.
 *
 * One process per file, and one file is one journal whatever its name: on first use the
 * journal resolves the file's real path (every symbolic link followed, also a link to a
 * file not created yet), takes the lock file `<real path>.lock` (holding its pid and host)
 * and rejects with {@link JournalError} while another process, or another `FileJournal`
 * of this process, holds it under any name. A file with more than one name (a hard link)
 * is refused, as is anything but a regular file (a FIFO, a device, a directory) and a file
 * over 256 MiB. The lock of a process that died (killed, crashed, or before a reboot: on
 * Linux the lock records the boot and the holder's start time, so a pid since reused does
 * not keep it) is taken over;
 * {@link FileJournal.close} and the process's exit release it. Give each API key its own
 * file (invoice numbers are per game server).
 *
 * The file is the bridge's own. A new journal and its lock are created owner-only (`0o600`,
 * or `0o640` with the option `mode`), whatever the umask; a compaction keeps the file's
 * mode and group. Before anything is read or written, the journal refuses with a
 * {@link JournalError} (naming the path, its owner's uid and its mode, and what to do) what
 * another local user could have planted: a journal or lock file owned by another user than
 * this process's (root's files are trusted) or writable by its group or others, a symbolic
 * link on the way owned by another user, a lock file that is a symbolic link, and a
 * journal in a directory (or under one) that another user owns or that its group or
 * others can write without the sticky bit (as OpenSSH checks `authorized_keys`). A lock
 * file of another user is never taken for a holder, live or stale: it is refused.
 *
 * It carries no checkout hints (no `addCheckoutHint`): a file belongs to one process, so a
 * web shop elsewhere cannot write into it. A shop in the same process calls `loop.expect`;
 * one in another process posts to `teamgames bridge`; one on another machine needs a
 * journal shared with the game ({@link expectCheckout}).
 *
 * @example
 * ```ts
 * import { FileJournal, StorefrontClient } from 'teamgames-sdk';
 *
 * // The key from TEAMGAMES_API_KEY.
 * const client = new StorefrontClient({ journal: new FileJournal('/var/lib/my-game/teamgames-journal.jsonl') });
 * await client.resumeDeliveries(grant); // at startup: finish what a crash interrupted
 * ```
 * @see [Delivering purchases in game: the journals](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#the-journals)
 */
export class FileJournal implements DeliveryJournal {
  /** Absolute path of the journal file, as given (`..` resolved by name, links not followed). */
  readonly path: string;
  readonly #compactAfter: number;
  readonly #fsync: boolean;
  readonly #mode: number;
  #store: FileStore | undefined;

  /**
   * Opens nothing yet: the file is locked, read (and created) on first use.
   *
   * @throws InvalidInputError when `path` is not a non-blank string, or an option is
   *   unknown or invalid (`compactAfter` a positive integer, `fsync` a boolean, `mode`
   *   `0o600` or `0o640`).
   */
  constructor(path: string, options: FileJournalOptions = {}) {
    checkNonBlank(path, 'path');
    const { compactAfter, fsync, mode } = checkOptionsObject(options, OPTIONS, 'options');
    this.path = resolve(path);
    this.#compactAfter = compactAfter === undefined ? 1_000 : checkPositiveInteger(compactAfter, 'options.compactAfter');
    this.#fsync = checkBoolean(fsync, 'options.fsync') ?? true;
    if (mode !== undefined && !(MODES as readonly unknown[]).includes(mode)) {
      fail('options.mode', `must be 0o600 (owner only, the default) or 0o640 (its group may read it too), got ${Number.isInteger(mode) ? `0o${(mode as number).toString(8)}` : describe(mode)}`);
    }
    this.#mode = mode ?? 0o600;
  }

  /**
   * Records entries and flushes them to disk before resolving.
   *
   * @throws JournalError when the file is locked by another process or cannot be written;
   *   nothing was recorded then.
   * @throws InvalidInputError when an entry is not a {@link JournalEntry} (the next start
   *   would refuse the file as damaged); nothing was recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    if (Array.isArray(entries) && entries.length === 0) return;
    // Copied now: what the caller changes after this call is not what gets written. The
    // store checks the copies before it writes anything, in call order with the other calls.
    const copies = copyEntries(entries);
    return this.#with((store) => store.append(copies));
  }

  /**
   * The entries not acknowledged (copies), oldest first.
   *
   * @throws JournalError when the file is locked by another process, cannot be read, or
   *   is damaged.
   */
  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.#with((store) => store.pending(playerName));
  }

  /**
   * Acknowledges entries (unknown ids are ignored) and flushes to disk.
   *
   * @throws JournalError when the file cannot be written; nothing was acknowledged then.
   * @throws InvalidInputError when `deliveryIds` is not an array; nothing was acknowledged.
   */
  async acknowledge(deliveryIds: readonly string[]): Promise<void> {
    const ids = checkIds(deliveryIds);
    if (ids.length === 0) return;
    return this.#with((store) => store.acknowledge(ids));
  }

  /**
   * Closes the window `windowId` only while it is open, and flushes: the check and the
   * write run in the journal's one queue of operations (the file belongs to this process),
   * so of several resolves at once exactly one writes; see
   * {@link DeliveryJournal.resolveWindow}.
   *
   * @throws JournalError when the file is locked by another process or cannot be written;
   *   nothing was recorded then.
   * @throws InvalidInputError when `resolution` is not `{ by, at, note }`; nothing was written.
   */
  async resolveWindow(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
    // Checked and copied now: what the caller changes after this call is not what gets written.
    const checked = checkResolution(windowId, resolution);
    return this.#with((store) => store.resolveWindow(windowId, checked));
  }

  /** Closes the file and releases its lock; the journal takes both again on next use. */
  async close(): Promise<void> {
    // A store never used holds no file and no lock: nothing to close, no module to load.
    await this.#store?.close();
  }

  /**
   * The implementation is loaded on first use: most programs that import the SDK never
   * journal, and its file handling is most of this class's code. Calls made before it
   * loads run in the order they were made (they resume in the order they awaited it).
   */
  async #with<T>(run: (store: FileStore) => Promise<T>): Promise<T> {
    const { FileStore } = await fileStore();
    this.#store ??= new FileStore(this.path, this.#compactAfter, this.#fsync, this.#mode);
    return run(this.#store);
  }
}
