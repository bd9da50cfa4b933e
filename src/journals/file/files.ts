/**
 * The low-level file calls the journal, its lock and the staff's reader share: opening a
 * journal file (regular files only, never through a link swapped in), creating a file
 * that must not exist, bounded reads, complete writes, directory sync, and the real path
 * of a journal file. Loaded with the file journal's store.
 *
 * @module
 * @internal
 */
import { constants, type BigIntStats, type Stats } from 'node:fs';
import { link, open, readdir, readlink, realpath, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { JournalError } from '../../errors.js';
import { OWNER_ONLY, bridgeTrust, checkOwnFile, remember, walkTrusted, type Trust } from './trust.js';


/**
 * The file system calls the journal makes through this object rather than directly, so
 * tests can make one of them fail (a rename refused, an open that runs out of space).
 * @internal
 */
export const fsCalls = { open, rename, link, unlink, readdir };

/** The largest journal file read: a larger one is refused, never read into memory. */
export const MAX_JOURNAL_BYTES = 256 * 1024 * 1024;

/**
 * Flags that never block on opening a FIFO (or a device waiting for a carrier): what is
 * opened is checked to be a regular file before it is read.
 */
export const NONBLOCK = constants.O_NONBLOCK ?? 0;
/**
 * Never follows a symbolic link at the last name: the journal opens real paths
 * ({@link realFile}), so a link there was swapped in after the check.
 */
export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Creates a file that must not exist yet (a planted file or link makes it fail), with
 * `mode` whatever the umask (owner-only unless the journal's group may read it).
 * `flags` are the access flags (write, append). @internal
 */
export async function createFile(path: string, flags: number, mode: number): Promise<FileHandle> {
  const file = await fsCalls.open(path, flags | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);
  try {
    await file.chmod(mode); // the umask narrows the mode given to open; some are wider than 022
  } catch (error) {
    await file.close().catch(() => undefined);
    await fsCalls.unlink(path).catch(() => undefined);
    throw error;
  }
  return file;
}

/** What a file is when it is not a regular file, for error messages; `undefined` for a regular file. */
export function notRegular(stats: Stats | BigIntStats): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function notAJournal(path: string, name: string, what: string): JournalError {
  const shown = path === name ? name : `${name} (${path})`;
  return new JournalError(`FileJournal: ${shown} is ${what}, not a regular file; a journal is a regular file: give FileJournal the path of one (nothing was read or changed)`, { path: name });
}

/**
 * Refuses a journal path (its real path) that exists and is not a regular file; checked
 * before the lock is taken beside it (not in /dev for a link to /dev/zero) and before it
 * is opened (opening a device can block or act).
 */
export async function checkRegular(path: string, name: string): Promise<void> {
  const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined; // created on first use
    throw error;
  });
  const what = found === undefined ? undefined : notRegular(found);
  if (what !== undefined) throw notAJournal(path, name, what);
}

/**
 * Opens the journal file for reading and appending (creating it when missing), refusing
 * anything but a regular file: it is checked before opening (opening a device can block
 * or act) and again on the open handle (it may have been swapped in between).
 * `name` is the path the journal was given, for messages.
 */
export async function openJournalFile(path: string, name: string, mode = OWNER_ONLY, trust: Trust = bridgeTrust(), dirOwner?: number): Promise<FileHandle> {
  await checkRegular(path, name);
  const flags = constants.O_RDWR | constants.O_APPEND | NONBLOCK | NOFOLLOW;
  let file: FileHandle | undefined;
  // Twice at most: a file that appears between the two opens is opened, then checked.
  for (let round = 0; file === undefined; round++) {
    try {
      file = await fsCalls.open(path, flags);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || round > 0) throw error;
      file = await createFile(path, flags, mode).catch((created: NodeJS.ErrnoException) => {
        if (created.code === 'EEXIST') return undefined;
        throw created;
      });
    }
  }
  try {
    const stats = await file.stat();
    const what = notRegular(stats);
    if (what !== undefined) throw notAJournal(path, name, what);
    // The check before opening, again on what was opened: it may have been swapped in between.
    checkOwnFile(stats, 'journal', path, name, trust, dirOwner);
  } catch (error) {
    await file.close().catch(() => undefined);
    throw error;
  }
  return file;
}

/**
 * Reads a file from its start, at most `max` bytes: `undefined` when it holds more.
 * Bounded whatever the file claims its size is (a file of /proc says 0).
 */
export async function readAtMost(file: FileHandle, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, max + 1 - total));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) return undefined;
  }
}

/**
 * The real path of a journal file: symbolic links (of the file and of its directories)
 * resolved, so that every name of one file gives one path, one lock and one entry in this
 * process's registry. The file may not exist yet (it is created on first use): its
 * directory is resolved and a dangling link followed to the file it will create.
 */
export async function realFile(path: string, trust: Trust = bridgeTrust()): Promise<string> {
  // Each link's owner is checked as it is followed; without Unix owners, realpath does it.
  if (trust.uid !== undefined) return walkTrusted(resolve(path), path, trust);
  let current = path;
  for (let links = 0; links <= 40; links++) {
    try {
      return await realpath(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const real = join(await realpath(dirname(current)), basename(current));
    let target: string;
    try {
      target = await readlink(real);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EINVAL') return real; // missing, or not a link
      throw error;
    }
    current = resolve(dirname(real), target);
  }
  throw Object.assign(new Error(`too many levels of symbolic links resolving ${path}`), { code: 'ELOOP' });
}

/** A journal file with more than one name: refused by the journal, and by the staff's reader (its lock could be under any name). */
export function manyNames(name: string, nlink: number | bigint): JournalError {
  return remember(new JournalError(
    `FileJournal: ${name} has ${nlink} names (hard links): another process could hold the same file under another name, and the two would overwrite each other's records. Give the journal one name (remove the other links: find / -samefile ${name}); nothing was read or changed`,
    { path: name },
  ));
}

/**
 * Writes all of `data` at the file's current end (the handle is opened in append mode,
 * or new): `write` may write fewer bytes than asked, so it loops on the rest.
 */
export async function writeAll(file: FileHandle, data: Buffer): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const { bytesWritten } = await file.write(data, offset, data.length - offset, null);
    if (bytesWritten <= 0) throw new Error(`the file system accepted no bytes (${data.length - offset} left to write)`);
    offset += bytesWritten;
  }
}

/** Makes a created or renamed file's name durable; not supported on every platform. */
export async function syncDirectory(path: string): Promise<void> {
  let dir: FileHandle | undefined;
  try {
    dir = await fsCalls.open(path, 'r');
    await dir.sync();
  } catch {
    // Windows cannot open a directory; a rename is still atomic there.
  } finally {
    await dir?.close().catch(() => undefined);
  }
}
