/**
 * The file journal's implementation, loaded by {@link FileJournal} on its first use so
 * that importing the SDK does not load it.
 *
 * @module
 * @internal
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { JournalError } from '../../errors.js';
import { describe } from '../../internal/validate.js';
import { MAX_JOURNAL_BYTES, checkRegular, createFile, fsCalls, openJournalFile, readAtMost, realFile, syncDirectory, writeAll } from './files.js';
import { FileLock, checkOneName } from './lock.js';
import { OWNER_ONLY, bridgeTrust, checkJournalPath, staffLockOwner, staffTrust, type Trust } from './trust.js';
import { checkEntries, entryProblem } from '../entry-checks.js';
import { resolvedWindow, unresolvedOutcome, type JournalEntry, type WindowResolution, type WindowResolveOutcome } from '../contract.js';

/**
 * One line of the file. `put` with `entry` records one entry (the only form 0.1.0 wrote;
 * still written for a one-entry append and by compaction), `put` with `entries` records
 * the entries of one append of several, `ack` acknowledges entries. One append is one
 * line, so a crash keeps all of it or none of it: a prefix of a line is not JSON.
 */
type Line = { op: 'put'; entry: JournalEntry } | { op: 'put'; entries: JournalEntry[] } | { op: 'ack'; ids: string[] };

/**
 * One journal file: its pending entries in memory, every change appended and flushed.
 * The file holds exactly `#size` good bytes between operations: a write that fails is cut
 * off again, so the journal stays usable and no torn line is left before the next one.
 */
export class FileStore {
  readonly #path: string;
  readonly #compactAfter: number;
  readonly #fsync: boolean;
  /** The mode of a new journal file (an existing one keeps its own). */
  readonly #mode: number;
  readonly #staff: boolean;
  /** The owner of the journal's directory (staff trust it too); known once the lock is held. */
  #dirOwner: number | undefined;
  #entries = new Map<string, JournalEntry>();
  #lines = 0;
  #size = 0;
  #file: FileHandle | undefined;
  #lock: FileLock | undefined;
  #loaded: Promise<void> | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Touches no file: the first call locks and reads it. `staff` (`journal resolve`): staffTrust,
   * the journal must exist, and as root the lock is given to the journal's owner and group.
   */
  constructor(path: string, compactAfter: number, fsync: boolean, mode = OWNER_ONLY, staff = false) {
    this.#path = path;
    this.#compactAfter = compactAfter;
    this.#fsync = fsync;
    this.#mode = mode;
    this.#staff = staff;
  }

  /**
   * Records entries (the caller's copies, kept as they are) and flushes them, as one line:
   * all of them or, after a crash, none.
   */
  append(given: unknown): Promise<void> {
    // Checked before anything is written: a record the next start would refuse is never written.
    const entries = checkEntries(given);
    return this.#exclusive(async () => {
      // A checked list: entries[0] is an entry when there is one.
      await this.#write(entries.length === 1 ? { op: 'put', entry: entries[0] as JournalEntry } : { op: 'put', entries: [...entries] }, 'nothing was recorded');
      for (const entry of entries) this.#entries.set(entry.deliveryId, entry);
    });
  }

  /** Copies of the pending entries, oldest first; of one player when given. */
  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.#exclusive(async () => {
      const out: JournalEntry[] = [];
      for (const entry of this.#entries.values()) {
        if (playerName === undefined || entry.playerName === playerName) out.push(structuredClone(entry));
      }
      return out;
    });
  }

  /**
   * Resolves the window only if it is still open, checked and written in one turn of the
   * queue: no other operation of this journal runs between the check and the write.
   */
  resolveWindow(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
    return this.#exclusive(async () => {
      const entry = this.#entries.get(windowId);
      const window = resolvedWindow(entry, resolution);
      if (window === undefined) return structuredClone(unresolvedOutcome(entry));
      await this.#write({ op: 'put', entry: window }, 'nothing was recorded');
      this.#entries.set(windowId, window);
      return { outcome: 'resolved', window: structuredClone(window) };
    });
  }

  /** Records that entries are done with, flushes, and compacts the file when it grew. */
  acknowledge(ids: string[]): Promise<void> {
    return this.#exclusive(async () => {
      await this.#write({ op: 'ack', ids }, 'nothing was acknowledged');
      for (const id of ids) this.#entries.delete(id);
      await this.#maybeCompact();
    });
  }

  /** Closes the file and releases the lock; the next call opens both again. */
  close(): Promise<void> {
    return this.#exclusive(async () => {
      const file = this.#file;
      const lock = this.#lock;
      this.#file = undefined;
      this.#lock = undefined;
      this.#loaded = undefined;
      try {
        await file?.close();
      } finally {
        await lock?.release();
      }
    }, false);
  }

  /** Runs one operation at a time, after the file is loaded (unless `load` is false). */
  #exclusive<T>(run: () => Promise<T>, load = true): Promise<T> {
    const result = this.#tail.then(async () => {
      if (!load) return run();
      this.#loaded ??= this.#load();
      try {
        await this.#loaded;
      } catch (error) {
        this.#loaded = undefined;
        throw error;
      }
      return run();
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Takes the lock (unless held already), then reads the file. The file is identified by
   * what it is: its real path (every symbolic link resolved) is what is locked, opened,
   * compacted and renamed over, so two names of one file meet one lock, in this process
   * as in another; a hard link is refused once open.
   */
  async #load(): Promise<void> {
    const locked = this.#lock === undefined;
    const trust = this.#staff ? staffTrust() : bridgeTrust();
    if (this.#lock === undefined) {
      let real: string;
      let lockMode: number;
      let owner: { uid: number; gid: number } | undefined;
      try {
        // Whose it is, before anything is read or written (a lock file included).
        real = await realFile(this.#path, trust);
        const { found, dirOwner } = await checkJournalPath(real, this.#path, trust);
        this.#dirOwner = dirOwner;
        await checkRegular(real, this.#path);
        if (this.#staff) owner = staffLockOwner(found, trust, this.#path);
        // The lock is readable by whom the journal is (staff's `teamgames journal status`).
        lockMode = found === undefined ? this.#mode : (found.mode & 0o640) | OWNER_ONLY;
      } catch (error) {
        if (error instanceof JournalError) throw error;
        throw new JournalError(`FileJournal: could not open ${this.#path}: ${(error as Error).message}`, { path: this.#path, cause: error });
      }
      this.#lock = await FileLock.acquire(real, this.#path, lockMode, { trust, dirOwner: this.#dirOwner, owner });
    }
    const lock = this.#lock;
    try {
      await this.#read(lock.journal, trust, this.#dirOwner);
    } catch (error) {
      if (locked) {
        await lock.release();
        this.#lock = undefined;
      }
      if (error instanceof JournalError) throw error;
      throw new JournalError(`FileJournal: could not open ${this.#path}: ${(error as Error).message}`, { path: this.#path, cause: error });
    }
    // Its own compaction leftovers (a crash mid-compaction); none appear while the lock is held, so tidying again after a re-read finds nothing.
    await removeCompactionLeftovers(lock.journal);
  }

  /** The real path of the file: known once the lock is held. */
  get #real(): string {
    return (this.#lock as FileLock).journal;
  }

  async #read(real: string, trust: Trust, dirOwner: number | undefined): Promise<void> {
    const file = await openJournalFile(real, this.#path, this.#mode, trust, dirOwner);
    try {
      await checkOneName(file, real, this.#path);
      // Bounded: a journal is compacted long before this size; a larger file is refused.
      const { size } = await file.stat();
      const data = size > MAX_JOURNAL_BYTES ? undefined : await readAtMost(file, MAX_JOURNAL_BYTES);
      if (data === undefined) {
        throw new JournalError(
          `FileJournal: ${this.#path} is larger than ${MAX_JOURNAL_BYTES / 1024 / 1024} MiB: not a journal this SDK wrote, or a damaged one (fix or move the file; nothing was read or changed)`,
          { path: this.#path },
        );
      }
      const { entries, count, good, missingNewline } = parseJournal(data, this.#path);
      // A torn last line is cut off, and a complete last record gets its newline, so the
      // next write starts on a clean line.
      if (good < data.length) await file.truncate(good);
      if (missingNewline) await writeAll(file, Buffer.from('\n'));
      if (good < data.length || missingNewline) await file.sync();
      if (data.length === 0) await syncDirectory(dirname(real));
      this.#entries = entries;
      this.#lines = count;
      this.#size = good + (missingNewline ? 1 : 0);
      this.#file = file;
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Appends one line and flushes it. On failure nothing changes: the file is cut back to
   * its last good size, so the next write does not glue onto a torn line.
   */
  async #write(line: Line, unchanged: string): Promise<void> {
    const file = this.#file as FileHandle;
    // JSON.stringify escapes every newline in the strings: the line's only one is its last byte.
    const data = Buffer.from(`${JSON.stringify(line)}\n`);
    try {
      await writeAll(file, data);
      if (this.#fsync) await file.datasync();
    } catch (error) {
      await this.#rollBack(file);
      throw new JournalError(`FileJournal: could not write ${this.#path}: ${(error as Error).message}; ${unchanged}`, { path: this.#path, cause: error });
    }
    this.#size += data.length;
    this.#lines += 1;
  }

  async #rollBack(file: FileHandle): Promise<void> {
    try {
      await file.truncate(this.#size);
    } catch {
      // The file may end in a torn line: read it again on next use, which cuts it off.
      this.#file = undefined;
      this.#loaded = undefined;
      await file.close().catch(() => undefined);
    }
  }

  /**
   * Rewrites the file with only the pending entries, one line each (readable by 0.1.0 too):
   * to a unique temporary file, synced,
   * renamed over the journal, the directory synced. The temporary file's handle becomes
   * the journal's. If any step before the rename fails the old file stays in use (its
   * writes were durable) and the next acknowledgement tries again.
   */
  async #maybeCompact(): Promise<void> {
    if (this.#lines <= this.#compactAfter || this.#lines <= 2 * this.#entries.size) return;
    const real = this.#real;
    const temp = `${real}.${process.pid}.${randomBytes(6).toString('hex')}.compact`;
    const data = Buffer.from([...this.#entries.values()].map((entry) => `${JSON.stringify({ op: 'put', entry } satisfies Line)}\n`).join(''));
    let out: FileHandle | undefined;
    try {
      out = await this.#createLikeJournal(temp);
      await writeAll(out, data);
      await out.sync();
      await fsCalls.rename(temp, real);
    } catch {
      await out?.close().catch(() => undefined);
      await fsCalls.unlink(temp).catch(() => undefined);
      return;
    }
    await syncDirectory(dirname(real));
    const old = this.#file;
    this.#file = out;
    this.#size = data.length;
    this.#lines = this.#entries.size;
    // Always open here: a compaction follows a successful write, which needs the open file.
    await (old as FileHandle).close().catch(() => undefined);
  }

  /**
   * The compaction's temporary file, created exclusively (a planted file or link makes the
   * compaction fail, and the old file stays in use) with the journal's own mode and group,
   * so a compaction never widens or narrows who may read it (umask or not).
   */
  async #createLikeJournal(temp: string): Promise<FileHandle> {
    const { mode, uid, gid } = await (this.#file as FileHandle).stat();
    const out = await createFile(temp, constants.O_WRONLY | constants.O_APPEND, mode & 0o755);
    // The journal's owner and its staff group: kept when this process may (its own, or root).
    await out.chown(uid, gid).catch(() => undefined);
    return out;
  }
}

/** Temporary files of compactions a crash interrupted; the lock makes them ours. */
async function removeCompactionLeftovers(path: string): Promise<void> {
  const name = basename(path);
  const dir = dirname(path);
  try {
    for (const file of await fsCalls.readdir(dir)) {
      if (file.startsWith(`${name}.`) && /^\d+\.[0-9a-f]{12}\.compact$|^compact$/.test(file.slice(name.length + 1))) {
        await fsCalls.unlink(join(dir, file)).catch(() => undefined);
      }
    }
  } catch {
    // Only tidying.
  }
}

/** What {@link parseJournal} found in a journal file's bytes. @internal */
export interface ParsedJournal {
  /** The pending entries, oldest first (an entry written again keeps its place). */
  entries: Map<string, JournalEntry>;
  /** How many lines are records. */
  count: number;
  /** How many bytes from the start are good: after them comes at most a torn last line. */
  good: number;
  /** The last line is a complete record without its newline. */
  missingNewline: boolean;
}

/**
 * The records of a journal file, and how many of its bytes are good. Only a last line
 * without its newline can be a torn write: when it is not even JSON it is left out (the
 * file journal cuts it off; a read-only snapshot leaves it alone); a complete record that
 * lost only its newline is kept. Every other line must be a valid record: anything else
 * is damage, and fails loudly (`name` is the file as the user gave it, for the message).
 *
 * @throws JournalError naming the line and its problem for a complete line that is not a record.
 * @internal
 */
export function parseJournal(data: Buffer, name: string): ParsedJournal {
  const entries = new Map<string, JournalEntry>();
  const damaged = (number: number, problem: string) =>
    new JournalError(`FileJournal: ${name} line ${number} is not a journal record (${problem}); the journal is damaged (fix or move the file; nothing was changed)`, { path: name });
  let count = 0;
  let start = 0;
  let number = 1;
  // Every line up to its newline is complete: blank, or a valid record.
  for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, start)) {
    const read = readLine(data.subarray(start, newline));
    if (read.problem !== undefined) throw damaged(number, read.problem);
    if (!read.blank) {
      apply(entries, read.line);
      count += 1;
    }
    start = newline + 1;
    number += 1;
  }
  // What follows the last newline (nothing, when the file ends with one) is the only line a
  // crash mid-write can tear: dropped when blank or not JSON at all; a complete record that
  // lost only its newline is kept (the newline is added).
  const last = readLine(data.subarray(start));
  if (last.blank || (last.problem !== undefined && !last.json)) return { entries, count, good: start, missingNewline: false };
  if (last.problem !== undefined) throw damaged(number, last.problem);
  apply(entries, last.line);
  return { entries, count: count + 1, good: data.length, missingNewline: true };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One line of the file: blank, a valid record, or what is wrong with it (and whether it is JSON). */
type Read = { blank: true; problem?: undefined } | { blank: false; line: Line; problem?: undefined } | { blank: false; problem: string; json: boolean };

/** Reads one line (without its newline), validating it like an answer from the network. */
function readLine(bytes: Uint8Array): Read {
  let raw: string;
  try {
    raw = utf8.decode(bytes);
  } catch {
    return { blank: false, problem: 'not UTF-8 text', json: false };
  }
  if (raw.trim() === '') return { blank: true };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { blank: false, problem: 'not JSON', json: false };
  }
  const problem = lineProblem(value);
  return problem === undefined ? { blank: false, line: value as Line } : { blank: false, problem, json: true };
}

/** What is wrong with a line's JSON, or `undefined` when it is a {@link Line}. */
function lineProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `not an object (${describe(value)})`;
  const line = value as Record<string, unknown>;
  if (line['op'] === 'put' && 'entries' in line) {
    const entries = line['entries'];
    if ('entry' in line) return 'both entry and entries';
    if (!Array.isArray(entries)) return `entries is not an array (${describe(entries)})`;
    for (const [i, entry] of entries.entries()) {
      const problem = entryProblem(entry);
      if (problem !== undefined) return `entries[${i}]: ${problem}`;
    }
    return undefined;
  }
  if (line['op'] === 'put') {
    const problem = entryProblem(line['entry']);
    return problem === undefined ? undefined : `entry: ${problem}`;
  }
  if (line['op'] === 'ack') {
    const ids = line['ids'];
    if (!Array.isArray(ids)) return `ids is not an array (${describe(ids)})`;
    const bad = ids.findIndex((id) => typeof id !== 'string');
    return bad === -1 ? undefined : `ids[${bad}] is not a string (${describe(ids[bad])})`;
  }
  return `op is not 'put' or 'ack' (${describe(line['op'])})`;
}

function apply(entries: Map<string, JournalEntry>, line: Line): void {
  if (line.op === 'ack') for (const id of line.ids) entries.delete(id);
  else if ('entries' in line) for (const entry of line.entries) entries.set(entry.deliveryId, entry);
  else entries.set(line.entry.deliveryId, line.entry);
}
