/**
 * The file journal's lock (one process per journal file): taking it (`<journal>.lock`
 * created exclusively, a stale one moved aside), releasing it (at `close()` and at the
 * process's exit), and reading who holds it without touching it (for staff). The file
 * calls it makes are `files.ts`'. Loaded with the file journal's store.
 *
 * @module
 * @internal
 */
import { randomBytes } from 'node:crypto';
import { constants, statSync, unlinkSync } from 'node:fs';
import { lstat, stat, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { JournalError } from '../../errors.js';
import { NOFOLLOW, NONBLOCK, createFile, fsCalls, manyNames, notRegular, readAtMost, syncDirectory, writeAll } from './files.js';
import { OWNER_ONLY, bridgeTrust, checkOwnFile, remember, type Trust } from './trust.js';
import { holderGone, ownIncarnation, readIncarnation, type Incarnation } from './holder.js';

/** The largest lock file read: a holder is about 80 bytes. */
const MAX_LOCK_BYTES = 4096;

/** What a lock file holds: on Linux also the holder's boot and start time (holder.ts). */
interface Holder extends Incarnation {
  pid: number;
  host: string;
  since: string;
}

/** A lock file as read: its identity, so a stale one is never confused with a fresh one. */
interface Found {
  holder: Holder | undefined;
  text: string;
  dev: bigint;
  ino: bigint;
}

const REGISTRY = Symbol.for('teamgames-sdk.FileJournal.locks');

/**
 * The journal files this process holds, and the one `exit` listener that frees them.
 * Global rather than per module: a second copy of the SDK (ESM and CJS) must see them too,
 * or it would take its own process's lock for a stale one.
 */
interface Registry {
  /** By real path (see {@link realFile}): how to release it at exit. */
  held: Map<string, () => void>;
  onExit: () => void;
  /** By real path: the path the holding FileJournal was given, for messages. */
  names?: Map<string, string>;
}

function registry(): Registry & { names: Map<string, string> } {
  const global = globalThis as { [REGISTRY]?: Registry };
  if (global[REGISTRY] === undefined) {
    const held = new Map<string, () => void>();
    global[REGISTRY] = { held, onExit: () => held.forEach((release) => release()) };
  }
  global[REGISTRY].names ??= new Map();
  return global[REGISTRY] as Registry & { names: Map<string, string> };
}

function hold(journal: string, name: string, releaseSync: () => void): void {
  const { held, names, onExit } = registry();
  if (held.size === 0) process.on('exit', onExit);
  held.set(journal, releaseSync);
  names.set(journal, name);
}

function unhold(journal: string): void {
  const { held, names, onExit } = registry();
  names.delete(journal);
  if (held.delete(journal) && held.size === 0) process.off('exit', onExit);
}

/**
 * Refuses an open journal file that is also another name's: a hard link to a file that
 * another FileJournal of this process holds (named), or to any other name (another
 * process could hold it under that name's lock, and the two would compact over each
 * other). `journal` is the real path, `name` the path the journal was given.
 */
export async function checkOneName(file: FileHandle, journal: string, name: string): Promise<void> {
  const own = await file.stat({ bigint: true });
  for (const [other, otherName] of registry().names) {
    if (other === journal) continue;
    const found = await stat(other, { bigint: true }).catch(() => undefined);
    if (found !== undefined && found.dev === own.dev && found.ino === own.ino) {
      throw new JournalError(
        `FileJournal: ${name} is the same file as ${otherName} (a hard link), which another FileJournal of this process holds; close that one first, or use one FileJournal per file`,
        { path: name },
      );
    }
  }
  if (own.nlink > 1n) throw manyNames(name, own.nlink);
}

/**
 * The lock of one journal file: `<journal>.lock`, created exclusively, holding the pid
 * and host of its holder (on Linux also its boot id and start time, holder.ts). A lock
 * whose holder is gone (this host: an earlier boot, a pid no longer running or now another
 * process's, a zombie, or this very pid with no journal of this process holding the file)
 * is stale and taken over; any other lock fails the journal loudly.
 */
export class FileLock {
  /** The lock file. */
  readonly path: string;
  /** The journal file it locks, its real path ({@link realFile}). */
  readonly journal: string;
  readonly #dev: bigint;
  readonly #ino: bigint;

  private constructor(journal: string, path: string, dev: bigint, ino: bigint) {
    this.journal = journal;
    this.path = path;
    this.#dev = dev;
    this.#ino = ino;
  }

  /**
   * Takes the lock of `journal` (its real path, {@link realFile}: the lock is
   * `<real path>.lock`, whatever name each process gave) or throws {@link JournalError}.
   * `name` is the path the journal was given, for messages.
   */
  static async acquire(journal: string, name: string, mode = OWNER_ONLY, as: LockOwner = {}): Promise<FileLock> {
    const trust = as.trust ?? bridgeTrust();
    const path = `${journal}.lock`;
    const shown = name === journal ? name : `${name} (the file ${journal})`;
    const { held, names } = registry();
    if (held.has(journal)) {
      const other = names.get(journal) ?? journal;
      const named = other === name ? shown : `${name} (the file ${journal}, which another FileJournal of this process holds as ${other})`;
      throw busy(named, name, path, { pid: process.pid, host: hostname(), since: '' }, 'close the other FileJournal of this process on that file first, or use one FileJournal per file');
    }
    hold(journal, name, () => {});
    try {
      // A lock another user planted is refused before anything is written (a draft included).
      await checkLockName(name, path, trust, as.dirOwner);
      // A few rounds: each either takes the lock, fails, or removes a stale lock that another
      // process may have replaced meanwhile.
      for (let round = 0; round < 5; round++) {
        const created = await create(name, path, mode, as.owner);
        if (created !== undefined) {
          const lock = new FileLock(journal, path, created.dev, created.ino);
          hold(journal, name, () => lock.#releaseSync());
          return lock;
        }
        const found = await read(name, path, trust, as.dirOwner);
        if (found === undefined) continue; // removed meanwhile
        if (found.holder === undefined) {
          throw new JournalError(
            `FileJournal: ${shown} is locked by ${path}, which does not name its holder. Run one process per journal file, or remove ${path} if no process uses the journal.`,
            { path: name },
          );
        }
        if (!isStale(found.holder)) {
          throw busy(shown, name, path, found.holder, `run one process per journal file, or remove ${path} if process ${found.holder.pid} is gone`);
        }
        await removeStale(name, path, found, trust, as.dirOwner);
      }
      throw taken(new JournalError(`FileJournal: could not take the lock ${path} of ${shown}: it kept changing (other processes are starting on the same journal). Run one process per journal file.`, { path: name }));
    } catch (error) {
      unhold(journal);
      throw error;
    }
  }

  /** Removes the lock file (when it is still this one) and forgets it. */
  async release(): Promise<void> {
    try {
      const now = await stat(this.path, { bigint: true });
      if (now.dev === this.#dev && now.ino === this.#ino) await fsCalls.unlink(this.path);
    } catch {
      // Already gone: nothing to release.
    } finally {
      unhold(this.journal);
    }
  }

  /** The same at process exit, where only synchronous calls run. */
  #releaseSync(): void {
    try {
      const now = statSync(this.path, { bigint: true });
      if (now.dev === this.#dev && now.ino === this.#ino) unlinkSync(this.path);
    } catch {
      // Already gone.
    }
  }
}

/**
 * Whose the lock is, when it is not simply this process's (staff resolving as root a
 * journal of the bridge's user): the trust its checks apply, and the owner every file
 * it creates is given, so the bridge can take over what a killed resolve left.
 * @internal
 */
export interface LockOwner {
  /** What the lock trusts ({@link bridgeTrust} by default). */
  trust?: Trust;
  /** The owner of the journal's directory, which a `reader` trust also trusts. */
  dirOwner?: number | undefined;
  /** The user and group the lock file is given (the journal's), before it takes the lock's name. */
  owner?: { uid: number; gid: number } | undefined;
}

/**
 * Who holds the lock of a journal file, read without touching it (for `teamgames journal`,
 * which reads beside a running bridge): `free`; `held` with the holder and whether it runs
 * (`undefined` for a process on another host, which cannot be told); `unknown` for a lock
 * file that does not name its holder. `journal` is the real path ({@link realFile}).
 * @internal
 */
export async function inspectLock(journal: string, trust: Trust = bridgeTrust(), dirOwner?: number): Promise<LockState> {
  const found = await read(journal, `${journal}.lock`, trust, dirOwner);
  if (found === undefined) return { state: 'free', path: `${journal}.lock` };
  if (found.holder === undefined) return { state: 'unknown', path: `${journal}.lock` };
  const { pid, host, since } = found.holder;
  const running = host !== hostname() ? undefined : pid === process.pid ? registry().held.has(journal) : !isStale(found.holder);
  return { state: 'held', path: `${journal}.lock`, pid, host, since, running };
}

/** What {@link inspectLock} found. @internal */
export type LockState =
  | { state: 'free'; path: string }
  | { state: 'unknown'; path: string }
  | { state: 'held'; path: string; pid: number; host: string; since: string; running: boolean | undefined };

function busy(shown: string, name: string, path: string, holder: Holder, todo: string): JournalError {
  const since = holder.since === '' ? '' : ` since ${holder.since}`;
  return taken(new JournalError(
    `FileJournal: ${shown} is in use by process ${holder.pid} on host ${holder.host}${since} (lock file ${path}); ${todo}.`,
    { path: name },
  ));
}

/** The errors of a lock another process holds (or was taking): `teamgames journal resolve` looks again. */
const takenErrors = new WeakSet<object>();

function taken(error: JournalError): JournalError {
  takenErrors.add(error);
  return error;
}

/**
 * Whether `error` says that another process holds the journal's lock (or was taking it
 * meanwhile). `WeakSet.prototype.has` answers `false` for a primitive, `null` included. @internal
 */
export function isLockTaken(error: unknown): boolean {
  return takenErrors.has(error as object);
}

function isStale(holder: Holder): boolean {
  if (holder.host !== hostname()) return false; // another machine's process: cannot tell
  // Our own pid: a previous life of this process (a restarted container often gets the same
  // pid); acquire() already failed if a journal of this process holds the file.
  if (holder.pid === process.pid) return true;
  // A running pid is no proof (PID 1 after a reboot, a reused pid): boot and start time decide where known.
  if (holderGone(holder.pid, holder)) return true;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'; // EPERM: alive, another user's
  }
}

/**
 * Creates the lock file with this process as holder; `undefined` when it exists. The
 * holder is written and synced to a file of its own first, then linked to the lock's name
 * (`link` fails when the name exists), so the lock is never seen without its holder: a
 * process killed between creating a lock file and writing it left an empty lock that no
 * later start could tell from a live one.
 */
async function create(journal: string, path: string, mode: number, owner?: { uid: number; gid: number }): Promise<{ dev: bigint; ino: bigint } | undefined> {
  const draft = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.new`;
  let identity: { dev: bigint; ino: bigint };
  let file: FileHandle | undefined;
  try {
    file = await createFile(draft, constants.O_WRONLY, mode);
    // Given to the journal's owner before it is the lock: root never leaves a lock the bridge could not remove.
    if (owner !== undefined) await file.chown(owner.uid, owner.gid);
    const holder: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), ...ownIncarnation() };
    await writeAll(file, Buffer.from(JSON.stringify(holder)));
    await file.sync();
    identity = await file.stat({ bigint: true });
  } catch (error) {
    await file?.close().catch(() => undefined);
    await fsCalls.unlink(draft).catch(() => undefined);
    throw new JournalError(`FileJournal: could not write the lock file ${draft}: ${(error as Error).message}`, { path: journal, cause: error });
  }
  await file.close().catch(() => undefined);
  try {
    await fsCalls.link(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw new JournalError(`FileJournal: could not create the lock file ${path}: ${(error as Error).message}`, { path: journal, cause: error });
  } finally {
    await fsCalls.unlink(draft).catch(() => undefined);
  }
  await syncDirectory(dirname(path));
  return { dev: identity.dev, ino: identity.ino };
}

/** Refuses an existing lock file that is a symbolic link or another user's, by its name (read() checks what it opens again). */
async function checkLockName(journal: string, path: string, trust: Trust, dirOwner: number | undefined): Promise<void> {
  const found = await lstat(path).catch(() => undefined);
  if (found === undefined) return;
  if (found.isSymbolicLink()) throw symlinkedLock(journal, path);
  if (found.isFile()) checkOwnFile(found, 'lock file', path, journal, trust, dirOwner);
}

function symlinkedLock(journal: string, path: string): JournalError {
  return remember(new JournalError(`FileJournal: ${journal}: the lock file ${path} is a symbolic link, which this SDK never makes: another local user could have planted it, so nothing was read or written. Remove it if no process uses the journal.`, { path: journal }));
}

/**
 * Reads a lock file and its identity from one open handle; `undefined` when it is gone.
 * A symbolic link, or a file of another user (`trust`), is refused before it is read:
 * its holder is not believed, and the file is never taken over as stale.
 */
async function read(journal: string, path: string, trust: Trust, dirOwner?: number): Promise<Found | undefined> {
  let file: FileHandle;
  try {
    file = await fsCalls.open(path, constants.O_RDONLY | NONBLOCK | NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' && NOFOLLOW !== 0) {
      throw symlinkedLock(journal, path);
    }
    throw new JournalError(`FileJournal: could not read the lock file ${path}: ${(error as Error).message}`, { path: journal, cause: error });
  }
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: these dev and ino are only compared with another read()'s, text included: as numbers they differ only past 2^53 with identical holders
    const stats = await file.stat({ bigint: true });
    const what = notRegular(stats);
    if (what !== undefined) {
      throw new JournalError(`FileJournal: the lock file ${path} of ${journal} is ${what}, not a lock file; remove it (nothing was read)`, { path: journal });
    }
    checkOwnFile(stats, 'lock file', path, journal, trust, dirOwner);
    // A holder is tiny: a larger file is not a lock of this SDK, and is never read whole.
    const data = await readAtMost(file, MAX_LOCK_BYTES);
    // Stryker disable next-line StringLiteral: a lock too large to read names no holder, whatever text stands for it
    const unread = '';
    const text = data === undefined ? unread : data.toString('utf8');
    return { holder: parseHolder(text), text, dev: stats.dev, ino: stats.ino };
  } finally {
    await file.close().catch(() => undefined);
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder> | null;
    // Stryker disable next-line OptionalChaining: JSON null then throws inside this try, whose catch gives the same undefined
    const pid = value?.pid;
    // Number.isSafeInteger is false for anything that is not a number; once a pid is found, value is an object.
    const found = value as Partial<Holder>;
    if (Number.isSafeInteger(pid) && (pid as number) > 0 && typeof found.host === 'string') {
      return { pid: pid as number, host: found.host, since: typeof found.since === 'string' ? found.since : '', ...readIncarnation(found) };
    }
  } catch {
    // Not JSON: a holder that died between creating the file and writing it, or not ours.
  }
  return undefined;
}

/**
 * Moves a stale lock out of the way. Another process may have removed the same stale lock
 * and created its own meanwhile: the lock is renamed aside first, and if what moved is not
 * the stale lock that was read (identity and content), it is put back.
 */
async function removeStale(journal: string, path: string, stale: Found, trust: Trust, dirOwner: number | undefined): Promise<void> {
  const aside = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await fsCalls.rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new JournalError(`FileJournal: could not remove the stale lock ${path}: ${(error as Error).message}`, { path: journal, cause: error });
  }
  const moved = await read(journal, aside, trust, dirOwner);
  if (moved !== undefined && moved.dev === stale.dev && moved.ino === stale.ino && moved.text === stale.text) {
    await fsCalls.unlink(aside).catch(() => undefined);
    return;
  }
  try {
    // link() fails if yet another lock appeared: that one is never overwritten.
    await fsCalls.link(aside, path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') throw error;
      return fsCalls.rename(aside, path); // a file system without hard links
    });
    await fsCalls.unlink(aside).catch(() => undefined);
  } catch (error) {
    throw new JournalError(
      `FileJournal: while removing the stale lock ${path} of ${journal}, another process locked the journal; its lock is now ${aside}. Stop the other processes on this journal, then remove ${aside}.`,
      { path: journal, cause: error },
    );
  }
}
