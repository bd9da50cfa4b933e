/**
 * Whose files the file journal trusts (issue #34 point 1): a journal, its lock and every
 * symbolic link on the way to them belong to the bridge's user or to root, and sit in
 * directories no other user can write into (unless they have the sticky bit, as `/tmp`),
 * as OpenSSH treats `authorized_keys`. What another local user could have planted is
 * refused before it is read or written. The journal resolves links itself (one file, one
 * lock, whatever its name), so the kernel's `protected_symlinks` never applies: each link
 * is checked here as it is followed.
 *
 * On a platform without Unix owners (Windows) nothing is checked.
 *
 * @module
 * @internal
 */
import type { BigIntStats, Stats } from 'node:fs';
import { lstat, readlink, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { JournalError } from '../../errors.js';

/** The mode of a new journal and its lock: owner only. */
export const OWNER_ONLY = 0o600;

/** Who may own what a reader trusts. */
export interface Trust {
  /** The user the files must belong to (root is trusted too); `undefined`: no Unix owners, nothing checked. */
  readonly uid: number | undefined;
  /**
   * A read-only reader (`teamgames journal`, run by staff as another user) also trusts the
   * owner of the journal's directory, and a link owned by the owner of the directory it
   * sits in (the kernel's `protected_symlinks` rule); the bridge itself trusts only its
   * user and root.
   */
  readonly reader: boolean;
  /**
   * Staff writing the bridge's journal (`teamgames journal resolve` as root): a reader's
   * trust, except that a symbolic link must belong to this user or root. A link of the
   * bridge's user could send root's writes to any file root owns.
   */
  readonly writer?: boolean;
}

/** What the bridge trusts: its own user and root. */
export function bridgeTrust(): Trust {
  return { uid: process.geteuid?.(), reader: false };
}

/** What a read-only reader trusts: see {@link Trust.reader}. */
export function readerTrust(): Trust {
  return { uid: process.geteuid?.(), reader: true };
}

/** What staff writing the bridge's journal trust: see {@link Trust.writer}. */
export function staffTrust(): Trust {
  return { uid: process.geteuid?.(), reader: true, writer: true };
}

/** S_ISVTX: in a sticky directory only a file's owner may rename or remove it. */
const STICKY = 0o1000;
function octal(mode: number | bigint): string {
  return `0${(Number(mode) & 0o7777).toString(8).padStart(3, '0')}`;
}
/** Writable by its group or others, without the sticky bit that stops them renaming or removing what is not theirs. */
function othersCanWrite(mode: number | bigint): boolean {
  return (Number(mode) & 0o022) !== 0 && (Number(mode) & STICKY) === 0;
}

/** The errors {@link refuse} made: a reader tells a refusal from a failure to read. */
const refusals = new WeakSet<object>();

/** Whether `error` is a refusal of a file another user could have planted (not a failure to read it). */
export function isRefusal(error: unknown): boolean {
  // A WeakSet holds objects only: has() is false for anything else, null included.
  return refusals.has(error as object);
}

function refuse(name: string, what: string, todo: string): JournalError {
  return remember(new JournalError(`FileJournal: ${name}: ${what}; another local user could have planted or changed it, so nothing was read or written. ${todo}`, { path: name }));
}

/** Marks a refusal made elsewhere (a lock file that is a link, a file with several names). */
export function remember(error: JournalError): JournalError {
  refusals.add(error);
  return error;
}

function trusts(trust: Trust, uid: number | bigint, also?: number | bigint): boolean {
  // Without `also`, Number(undefined) is NaN, equal to no uid.
  return Number(uid) === trust.uid || Number(uid) === 0 || Number(uid) === Number(also);
}

/**
 * The real path of `path` (absolute), every symbolic link followed as the kernel would,
 * each checked as it is met: owned by the trusted user or root. A missing last name ends
 * the walk (the journal creates it); a dangling link is followed to the file it names.
 */
export async function walkTrusted(path: string, name: string, trust: Trust): Promise<string> {
  let done: string = sep;
  let rest = path.split(sep).filter((part) => part !== '');
  for (let links = 0; rest.length > 0; ) {
    const part = rest.shift() as string;
    // '.' and '..' need no case of their own: join() resolves them, and `done` never holds
    // a link, so its parent by name is its real parent (the kernel's '..').
    const next = join(done, part);
    const found = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' && rest.length === 0) return undefined; // created on first use
      throw error;
    });
    if (found === undefined) return next;
    if (!found.isSymbolicLink()) {
      done = next;
      continue;
    }
    if (++links > 40) throw Object.assign(new Error(`ELOOP: too many levels of symbolic links resolving ${path}`), { code: 'ELOOP' });
    await checkLink(next, found, done, name, trust);
    const target = await readlink(next);
    if (target.startsWith(sep)) done = sep;
    rest = [...target.split(sep).filter((p) => p !== ''), ...rest];
  }
  return done;
}

async function checkLink(link: string, found: Stats, dir: string, name: string, trust: Trust): Promise<void> {
  const dirOwner = trust.reader && trust.writer !== true ? (await stat(dir)).uid : undefined;
  if (trusts(trust, found.uid, dirOwner)) return;
  throw refuse(
    name,
    `the symbolic link ${link} on the way to the journal is owned by user ${found.uid}, not by this process's user (${trust.uid}) or root, and points where that user chooses`,
    `Give the journal's real path instead, or remove the link (or have it owned by user ${trust.uid}).`,
  );
}

/**
 * Refuses a journal whose directory, or any directory above it, another user could write
 * into (writable by its group or others without the sticky bit) or owns (it could rename
 * the folder and put another in its place). `real` is the journal's real path. Returns
 * the owner of the journal's own directory.
 */
export async function checkDirectories(real: string, name: string, trust: Trust): Promise<number> {
  const home = dirname(real);
  const homeOwner = Number((await stat(home)).uid);
  for (let dir = home; ; dir = dirname(dir)) {
    const found = await stat(dir);
    if (!trusts(trust, found.uid, trust.reader ? homeOwner : undefined)) {
      throw refuse(
        name,
        `the directory ${dir} is owned by user ${found.uid} (mode ${octal(found.mode)}), not by this process's user (${trust.uid}) or root`,
        `Keep the journal in a directory that belongs to user ${trust.uid} (or root), all the way up.`,
      );
    }
    if (othersCanWrite(found.mode)) {
      throw refuse(
        name,
        `the directory ${dir} (owner ${found.uid}, mode ${octal(found.mode)}) can be written by its group or others and has no sticky bit`,
        `Make it writable by its owner only (chmod go-w ${dir}), or keep the journal in a directory of its own that only user ${trust.uid} can write.`,
      );
    }
    if (dirname(dir) === dir) return homeOwner;
  }
}

/**
 * Refuses a journal or lock file (`what` says which, with its path) that belongs to
 * another user than the trusted one, root or (for a reader) `dirOwner`, or that its group
 * or others may write. Checked on what was opened (or, before opening, on the name).
 */
export function checkOwnFile(stats: Stats | BigIntStats, kind: 'journal' | 'lock file', path: string, name: string, trust: Trust, dirOwner?: number): void {
  if (trust.uid === undefined) return;
  if (!trusts(trust, stats.uid, trust.reader ? dirOwner : undefined)) {
    throw refuse(
      name,
      `the ${kind} ${path} is owned by user ${stats.uid} (mode ${octal(stats.mode)}), not by this process's user (${trust.uid}) or root`,
      `If it is really the bridge's, give it to user ${trust.uid} (chown ${trust.uid} ${path}); otherwise move it away, and keep the journal in a directory only user ${trust.uid} can write.`,
    );
  }
  if ((Number(stats.mode) & 0o022) !== 0) {
    throw refuse(name, `the ${kind} ${path} (owner ${stats.uid}, mode ${octal(stats.mode)}) can be written by its group or others`, `Make it writable by its owner only: chmod go-w ${path}.`);
  }
}

/** What {@link checkJournalPath} found. */
export interface CheckedPath {
  /** The owner of the journal's directory (what a reader also trusts); `undefined` when nothing is checked. */
  dirOwner: number | undefined;
  /** The journal file as it is now (not following a link); `undefined` when it does not exist yet. */
  found: Stats | undefined;
}

/**
 * Checks a journal's real path before anything is read or written: its directories, and
 * the file when it exists (its owner and mode, not following a link swapped in).
 */
export async function checkJournalPath(real: string, name: string, trust: Trust): Promise<CheckedPath> {
  const found = await lstat(real).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (trust.uid === undefined) return { dirOwner: undefined, found };
  const dirOwner = await checkDirectories(real, name, trust);
  // What is not a regular file is refused as such by the caller (a device is never a journal, whoever owns it).
  if (found?.isFile() === true) checkOwnFile(found, 'journal', real, name, trust, dirOwner);
  return { dirOwner, found };
}

/**
 * Staff's rules for the journal they resolve in (`teamgames journal resolve`, in the file
 * itself): it must be there (it was read a moment ago; staff never create one), and root
 * gives the lock to the journal's owner (the bridge's user could not remove a lock of
 * root's in a sticky folder). Returns that owner, or `undefined`: the lock stays this
 * process's.
 */
export function staffLockOwner(found: Stats | undefined, trust: Trust, path: string): { uid: number; gid: number } | undefined {
  if (found === undefined) throw new JournalError(`FileJournal: there is no journal file at ${path} (nothing was created)`, { path });
  // Only root gives files away.
  return trust.uid === 0 && found.uid !== 0 ? { uid: found.uid, gid: found.gid } : undefined;
}
