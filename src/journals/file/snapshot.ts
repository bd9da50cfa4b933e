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
import { MAX_JOURNAL_BYTES, NOFOLLOW, checkRegular, fsCalls, manyNames, notRegular, readAtMost, realFile } from './files.js';
import { checkJournalPath, checkOwnFile, readerTrust } from './trust.js';
import { parseJournal } from './store.js';
import type { JournalEntry } from '../contract.js';

/** What {@link readFileSnapshot} read. @internal */
export interface FileSnapshot {
  /** The path as given. */
  path: string;
  /** Its real path (symbolic links resolved): the lock is `<realPath>.lock`. */
  realPath: string;
  /** The owner of its directory, whom a reader trusts too (the bridge's user); `undefined` without Unix owners. */
  dirOwner: number | undefined;
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
 * What another local user could have planted is refused before it is read, by the file
 * journal's rules (src/journals/file/trust.ts) with one difference: staff may run this as
 * their own user (the group of a `mode: 0o640` journal), so the owner of the journal's
 * directory (the bridge's user) is trusted too, besides root and the reader's own user.
 * A file with several names (hard links) is refused as the file journal refuses it: its
 * lock could be under any of them.
 *
 * @throws JournalError when there is no file at `path` (nothing is created), it is not a
 *   regular file, it is not the bridge's own (owner, mode, a link or a directory another
 *   user could change), it has several names, it is larger than the journal's limit,
 *   cannot be read, or a complete line is not a journal record (the message names the line).
 * @internal
 */
export async function readFileSnapshot(path: string): Promise<FileSnapshot> {
  let file: FileHandle;
  let realPath: string;
  let dirOwner: number | undefined;
  const trust = readerTrust();
  try {
    realPath = await realFile(path, trust);
    ({ dirOwner } = await checkJournalPath(realPath, path, trust));
    await checkRegular(realPath, path);
    // Read only, never created, never blocking on a FIFO swapped in after the check, nor following a link.
    file = await fsCalls.open(realPath, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | NOFOLLOW);
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
    checkOwnFile(stats, 'journal', realPath, path, trust, dirOwner);
    if (stats.nlink > 1) throw manyNames(path, stats.nlink);
    const data = stats.size > MAX_JOURNAL_BYTES ? undefined : await readAtMost(file, MAX_JOURNAL_BYTES);
    if (data === undefined) {
      throw new JournalError(`FileJournal: ${path} is larger than ${MAX_JOURNAL_BYTES / 1024 / 1024} MiB: not a journal this SDK wrote, or a damaged one (nothing was read)`, { path });
    }
    const parsed = parseJournal(data, path);
    return { path, realPath, dirOwner, entries: [...parsed.entries.values()], lines: parsed.count, bytes: data.length, tornBytes: data.length - parsed.good };
  } catch (error) {
    if (error instanceof JournalError) throw error;
    throw new JournalError(`FileJournal: could not read ${path}: ${(error as Error).message}`, { path, cause: error });
  } finally {
    await file.close().catch(() => undefined);
  }
}
