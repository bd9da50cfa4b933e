/**
 * A journal file read as it is, without its lock and without changing a byte: what
 * `teamgames journal` shows beside a bridge that holds the file. The bridge appends one
 * whole line per call and renames a compacted file over the old one, so a read from one
 * open handle is a state the journal was in; a last line it is still writing (not JSON
 * yet) is left out, never cut off.
 *
 * @module
 * @internal
 */
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { JournalError } from '../../errors.js';
import { MAX_JOURNAL_BYTES, checkRegular, fsCalls, notRegular, readAtMost, realFile } from './lock.js';
import { parseJournal } from './store.js';
import type { JournalEntry } from '../contract.js';

/** What {@link readFileSnapshot} read. @internal */
export interface FileSnapshot {
  /** The path as given. */
  path: string;
  /** Its real path (symbolic links resolved): the lock is `<realPath>.lock`. */
  realPath: string;
  /** The pending entries, oldest first, as the file journal would list them. */
  entries: JournalEntry[];
  /** How many lines are records. */
  lines: number;
  /** The file's size when read, in bytes. */
  bytes: number;
  /** Bytes of a torn last line left out (a write in progress, or a crash's); `0` when none. */
  tornBytes: number;
}

/**
 * Reads a journal file without its lock and without changing it. Every record is
 * validated as the file journal does; a last line that is not JSON and has no newline
 * is a torn write, left out (and left in the file).
 *
 * @throws JournalError when there is no file at `path` (nothing is created), it is not a
 *   regular file, it is larger than the journal's limit, cannot be read, or a complete
 *   line is not a journal record (the message names the line).
 * @internal
 */
export async function readFileSnapshot(path: string): Promise<FileSnapshot> {
  let file: FileHandle;
  let realPath: string;
  try {
    realPath = await realFile(path);
    await checkRegular(realPath, path);
    // Read only, never created, never blocking on a FIFO swapped in after the check.
    file = await fsCalls.open(realPath, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (error instanceof JournalError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new JournalError(`FileJournal: there is no journal file at ${path} (nothing was created)`, { path, cause: error });
    throw new JournalError(`FileJournal: could not read ${path}: ${(error as Error).message}`, { path, cause: error });
  }
  try {
    const stats = await file.stat();
    const what = notRegular(stats);
    if (what !== undefined) throw new JournalError(`FileJournal: ${path} is ${what}, not a regular file; a journal is a regular file (nothing was read)`, { path });
    const data = stats.size > MAX_JOURNAL_BYTES ? undefined : await readAtMost(file, MAX_JOURNAL_BYTES);
    if (data === undefined) {
      throw new JournalError(`FileJournal: ${path} is larger than ${MAX_JOURNAL_BYTES / 1024 / 1024} MiB: not a journal this SDK wrote, or a damaged one (nothing was read)`, { path });
    }
    const parsed = parseJournal(data, path);
    return { path, realPath, entries: [...parsed.entries.values()], lines: parsed.count, bytes: data.length, tornBytes: data.length - parsed.good };
  } catch (error) {
    if (error instanceof JournalError) throw error;
    throw new JournalError(`FileJournal: could not read ${path}: ${(error as Error).message}`, { path, cause: error });
  } finally {
    await file.close().catch(() => undefined);
  }
}
