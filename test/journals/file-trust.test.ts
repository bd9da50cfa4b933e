/**
 * The journal is the bridge's own (issue #34 point 1; src/journals/file/trust.ts): new
 * journals and their locks are owner-only whatever the umask (or group-readable when
 * asked), a compaction keeps the file's mode and group, and what another local user could
 * have planted (a journal, a lock, a symbolic link on the way, a directory they can write
 * into or own) is refused before anything is read or written, saying the path, the owner,
 * the mode and what to do. The cases about another user chown files to a second Unix
 * user, so they need root (CI runs as root).
 */
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, JournalError } from '../../src/errors.js';
import { FileJournal } from '../../src/journals/file/journal.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { FileStore } from '../../src/journals/file/store.js';
import { OWNER_ONLY, bridgeTrust, checkJournalPath, checkOwnFile, isRefusal, readerTrust, staffLockOwner, staffTrust, walkTrusted, type Trust } from '../../src/journals/file/trust.js';
import { scratchJournals } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';
import { needsRoot, secondUser } from '../support/second-user.js';

const { file, journal } = scratchJournals('file-trust');
const mode = (path: string) => statSync(path).mode & 0o7777;
const put = (id: string, player = 'Ann') => `${JSON.stringify({ op: 'put', entry: journalLine(id, player) })}\n`;
const beside = (path: string) => readdirSync(dirname(path)).sort();

// A worker thread (StrykerJS runs the tests in one) may read the umask but not set it: there
// the process's own is used, and the one case that must set it is skipped.
let umask: number | undefined;
beforeAll(() => {
  if (isMainThread) umask = process.umask(0o022); // the usual umask, under which files were created 0644
});
afterAll(() => {
  if (umask !== undefined) process.umask(umask);
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** The journal's refusal of `path`: a JournalError naming it, and nothing created beside it. */
async function refused(path: string, message: RegExp, opened = path): Promise<JournalError> {
  const before = beside(path);
  const error = await journal(opened).pending().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JournalError);
  expect((error as JournalError).path).toBe(opened);
  expect((error as Error).message).toMatch(message);
  expect((error as Error).message).toContain('nothing was read or written');
  expect(beside(path)).toEqual(before); // no lock, no journal created
  return error as JournalError;
}

describe('modes of what the journal creates', () => {
  it('a new journal and its lock are owner-only (0600) under umask 022', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    expect(mode(path)).toBe(0o600);
    expect(mode(`${path}.lock`)).toBe(0o600);
  });

  it.skipIf(!isMainThread)('with mode 0o640 the group may read them too; under umask 077 as well', async () => {
    const path = file();
    process.umask(0o077);
    try {
      await journal(path, { mode: 0o640 }).append([journalLine('a')]);
    } finally {
      process.umask(0o022);
    }
    expect(mode(path)).toBe(0o640);
    expect(mode(`${path}.lock`)).toBe(0o640);
  });

  it('an existing journal keeps its mode, and its lock is readable by whom the journal is', async () => {
    const path = file();
    writeFileSync(path, put('a'), { mode: 0o640 });
    chmodSync(path, 0o640);
    await journal(path).pending();
    expect(mode(path)).toBe(0o640);
    expect(mode(`${path}.lock`)).toBe(0o640);
  });

  it.each([['0600', 0o600], ['0640', 0o640]])('a compaction keeps the mode the owner gave (%s), never 0644', async (_name, kept) => {
    const path = file();
    const j = journal(path, { compactAfter: 2 });
    await j.append([journalLine('a')]);
    chmodSync(path, kept);
    await j.append([journalLine('b')]);
    await j.acknowledge(['b']);
    await j.append([journalLine('c')]);
    await j.acknowledge(['c']); // 5 lines, 1 pending: compacted
    expect(beside(path)).toEqual(['journal.jsonl', 'journal.jsonl.lock']);
    expect(mode(path)).toBe(kept);
    await j.close();
    expect((await journal(path).pending()).map((e) => e.deliveryId)).toEqual(['a']);
  });

  it.each<[string, unknown, RegExp]>([
    ['0o644', 0o644, /must be 0o600 \(owner only, the default\) or 0o640 \(its group may read it too\), got 0o644/],
    ['0o666', 0o666, /got 0o666/],
    ['the string "0600"', '0600', /got "0600"/],
    ['384.5', 384.5, /got 384.5/],
  ])('mode %s: an InvalidInputError naming options.mode and the rule', (_name, value, rule) => {
    const error = (() => {
      try {
        new FileJournal(file(), { mode: value as 0o600 });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).argument).toBe('options.mode');
    expect((error as Error).message).toMatch(rule);
  });
});

describe('directories another user can write into', () => {
  it.each<[string, number]>([
    ['writable by everyone, no sticky bit', 0o777],
    ['writable by its group, no sticky bit', 0o770],
  ])('the journal directory %s: refused before anything is created, saying what to do', async (_what, dirMode) => {
    const path = file();
    chmodSync(dirname(path), dirMode);
    const error = await refused(path, /the directory .* can be written by its group or others and has no sticky bit/);
    expect(error.message).toContain(`mode 0${dirMode.toString(8)}`);
    expect(error.message).toContain(`chmod go-w ${dirname(path)}`);
  });

  it('a directory above it that everyone can write: refused too (it could be renamed away)', async () => {
    const path = file();
    const deep = join(dirname(path), 'deeper', 'journal.jsonl');
    mkdirSync(dirname(deep), { mode: 0o700 });
    chmodSync(dirname(path), 0o777);
    await refused(deep, new RegExp(`the directory ${dirname(path)} .*can be written by its group or others`));
  });

  it('a sticky directory everyone can write (as /tmp): used, the journal and lock owner-only', async () => {
    const path = file();
    chmodSync(dirname(path), 0o1777);
    await journal(path).append([journalLine('a')]);
    expect(mode(path)).toBe(0o600);
  });

  it('a journal its group or others may write: refused, nothing read', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    chmodSync(path, 0o666);
    await refused(path, /the journal .* \(owner \d+, mode 0666\) can be written by its group or others.*chmod go-w/);
  });
});

describe('a lock file that is a symbolic link', () => {
  it('a lock file that is a symbolic link (to a file of root): refused, never followed, nothing written', async () => {
    const path = file();
    const target = join(dirname(path), 'elsewhere');
    writeFileSync(target, JSON.stringify({ pid: process.ppid, host: 'h' }));
    symlinkSync(target, `${path}.lock`);
    const opened = vi.spyOn(fsCalls, 'open');
    await refused(path, /the lock file .*\.lock is a symbolic link, which this SDK never makes/);
    expect(opened).not.toHaveBeenCalled();
  });
});

const user = secondUser();
describe.skipIf(user === undefined)(needsRoot('files of another Unix user', user), () => {
  const other = user ?? { uid: -1, gid: -1 };

  it("a journal another user created first in a sticky directory (/tmp): refused before it is read, naming its owner and mode; no lock taken", async () => {
    const path = file();
    chmodSync(dirname(path), 0o1777);
    writeFileSync(path, put('invoice:planted', 'Mallory')); // a grant that user chose
    chownSync(path, other.uid, other.gid);
    const error = await refused(path, new RegExp(`the journal ${path} is owned by user ${other.uid} \\(mode 0644\\), not by this process's user \\(0\\) or root`));
    expect(error.message).toMatch(/move it away, and keep the journal in a directory only user 0 can write/);
  });

  it('a symbolic link another user planted where the journal goes: refused, never followed, nothing created where it points', async () => {
    const path = file();
    chmodSync(dirname(path), 0o1777);
    const target = join(dirname(path), 'victim.txt');
    symlinkSync(target, path);
    lchownSync(path, other.uid, other.gid);
    const error = await refused(path, new RegExp(`the symbolic link ${path} on the way to the journal is owned by user ${other.uid}`));
    expect(error.message).toMatch(/Give the journal's real path instead, or remove the link \(or have it owned by user 0\)\.$/);
    expect(existsSync(target)).toBe(false);
  });

  it("a symbolic link of another user as a folder on the way: refused", async () => {
    const path = file();
    const folder = join(dirname(path), 'folder');
    symlinkSync(dirname(path), folder);
    lchownSync(folder, other.uid, other.gid);
    await refused(path, /the symbolic link .*folder on the way to the journal is owned by user/, join(folder, 'journal.jsonl'));
  });

  it("staff's store as root, on a journal of root's whose group is the other user's: the lock stays root's (only another user's journal has its lock given to that user)", async () => {
    const path = file();
    writeFileSync(path, put('a'));
    chownSync(path, 0, other.gid);
    chmodSync(path, 0o640);
    const store = new FileStore(path, 1_000, true, OWNER_ONLY, true);
    try {
      expect((await store.pending()).map((e) => e.deliveryId)).toEqual(['a']);
      const lock = statSync(`${path}.lock`);
      expect({ uid: lock.uid, gid: lock.gid, mode: lock.mode & 0o7777 }).toEqual({ uid: 0, gid: process.getegid?.(), mode: 0o640 });
    } finally {
      await store.close();
    }
  });

  it("a link of root or of this user is followed as before", async () => {
    const path = file();
    const link = join(dirname(path), 'link.jsonl');
    symlinkSync('journal.jsonl', link);
    await journal(link).append([journalLine('a')]);
    expect(existsSync(`${path}.lock`)).toBe(true);
  });

  it('a lock file of another user naming a live process: refused as not ours (not "in use by"), and left alone', async () => {
    const path = file();
    chmodSync(dirname(path), 0o1777);
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.ppid, host: (await import('node:os')).hostname(), since: '2026-01-01T00:00:00Z' }));
    chownSync(`${path}.lock`, other.uid, other.gid);
    const opened = vi.spyOn(fsCalls, 'open');
    const error = await refused(path, new RegExp(`the lock file ${path}\\.lock is owned by user ${other.uid} \\(mode 0644\\)`));
    expect(error.message).not.toMatch(/in use by process/);
    expect(opened).not.toHaveBeenCalled(); // not even a draft of our own lock was written
  });

  it('a lock file of another user naming a dead process: refused too, never taken over as stale', async () => {
    const path = file();
    chmodSync(dirname(path), 0o1777);
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 2 ** 22 + 1, host: (await import('node:os')).hostname() }));
    chownSync(`${path}.lock`, other.uid, other.gid);
    await refused(path, /the lock file .*\.lock is owned by user/);
    expect(statSync(`${path}.lock`).uid).toBe(other.uid);
  });

  it("the journal's directory owned by another user: refused (that user could swap the journal)", async () => {
    const path = file();
    chownSync(dirname(path), other.uid, other.gid);
    const error = await refused(path, new RegExp(`the directory ${dirname(path)} is owned by user ${other.uid} \\(mode 0755\\)`));
    expect(error.message).toMatch(/Keep the journal in a directory that belongs to user 0 \(or root\), all the way up\.$/);
  });

  it('a journal given to another user between the check and the open: refused on what was opened, nothing read', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === path) chownSync(path, other.uid, other.gid);
      return realOpen(target, ...rest);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(`the journal ${path} is owned by user ${other.uid}`);
    expect(existsSync(`${path}.lock`)).toBe(false); // released
  });

  it('a journal another user creates between "missing" and our exclusive create: that one is opened and refused, never written', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    let first = true;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === path && first) {
        first = false;
        const missing = await realOpen(target, ...rest).catch((e: unknown) => e); // ENOENT
        writeFileSync(path, put('invoice:planted', 'Mallory'));
        chownSync(path, other.uid, other.gid);
        throw missing;
      }
      return realOpen(target, ...rest);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(`the journal ${path} is owned by user ${other.uid}`);
    expect(readFileSync(path, 'utf8')).toBe(put('invoice:planted', 'Mallory'));
  });

  it('a compaction keeps the group a reader is in (chgrp), and the mode', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 2, mode: 0o640 });
    await j.append([journalLine('a')]);
    chownSync(path, 0, other.gid);
    await j.append([journalLine('b')]);
    await j.acknowledge(['b']);
    await j.append([journalLine('c')]);
    await j.acknowledge(['c']);
    expect(beside(path)).toEqual(['journal.jsonl', 'journal.jsonl.lock']);
    expect(statSync(path).gid).toBe(other.gid);
    expect(mode(path)).toBe(0o640);
  });
});

/** What a platform without Unix owners trusts: nothing is checked. */
const NO_OWNERS: Trust = { uid: undefined, reader: false };
/** The rejection of `work` (it must reject). */
const rejection = (work: Promise<unknown>): Promise<NodeJS.ErrnoException> => work.then(() => new Error('expected a rejection'), (error: unknown) => error as NodeJS.ErrnoException);
/** The error `work` throws, or `undefined`. */
function thrown(work: () => void): Error | undefined {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('the rules one by one (trust.ts)', () => {
  it('whom each trusts: the bridge its user and root; a reader the directory\'s owner too; staff writing, as a reader but their own links only', () => {
    const uid = process.geteuid?.();
    expect(bridgeTrust()).toStrictEqual({ uid, reader: false });
    expect(readerTrust()).toStrictEqual({ uid, reader: true });
    expect(staffTrust()).toStrictEqual({ uid, reader: true, writer: true });
  });

  it('without Unix owners (no process.geteuid): the same, with no user to check', () => {
    const geteuid = process.geteuid;
    (process as { geteuid?: unknown }).geteuid = undefined;
    try {
      expect([bridgeTrust(), readerTrust(), staffTrust()].map((trust) => trust.uid)).toEqual([undefined, undefined, undefined]);
    } finally {
      (process as { geteuid?: unknown }).geteuid = geteuid;
    }
  });

  it('isRefusal: a refusal of a planted file, not any other error or value', async () => {
    const path = file();
    chmodSync(dirname(path), 0o777);
    const refusal = await journal(path).pending().catch((e: unknown) => e);
    expect(isRefusal(refusal)).toBe(true);
    for (const other of [new JournalError('FileJournal: could not open it'), new Error('EIO'), null, undefined, 'a refusal', 0]) expect(isRefusal(other)).toBe(false);
  });

  describe('checkOwnFile, for a process of user 4242', () => {
    const stats = (uid: number, mode = 0o100600) => ({ uid, mode }) as Stats;
    const bridge: Trust = { uid: 4242, reader: false };
    const reader: Trust = { uid: 4242, reader: true };

    it('trusts a file of its user or root; a reader also one of the directory\'s owner', () => {
      expect(thrown(() => checkOwnFile(stats(4242), 'journal', '/j', 'j', bridge))).toBeUndefined();
      expect(thrown(() => checkOwnFile(stats(0), 'journal', '/j', 'j', bridge))).toBeUndefined();
      expect(thrown(() => checkOwnFile(stats(999), 'journal', '/j', 'j', reader, 999))).toBeUndefined();
      expect(thrown(() => checkOwnFile({ uid: 4242n, mode: 0o100600n } as never, 'journal', '/j', 'j', bridge))).toBeUndefined();
    });

    it('refuses a file of another user: the bridge even one of the directory\'s owner, a reader one of a user who owns nothing here', () => {
      const refusal = thrown(() => checkOwnFile(stats(999), 'lock file', '/j.lock', 'j', bridge, 999));
      expect(refusal?.message).toBe(
        "FileJournal: j: the lock file /j.lock is owned by user 999 (mode 0600), not by this process's user (4242) or root; another local user could have planted or changed it, so nothing was read or written. If it is really the bridge's, give it to user 4242 (chown 4242 /j.lock); otherwise move it away, and keep the journal in a directory only user 4242 can write.",
      );
      expect(isRefusal(refusal)).toBe(true);
      expect(thrown(() => checkOwnFile(stats(999), 'journal', '/j', 'j', reader, 998))?.message).toContain('is owned by user 999');
      expect(thrown(() => checkOwnFile(stats(999), 'journal', '/j', 'j', reader))?.message).toContain('is owned by user 999');
    });

    it('refuses one its group or others may write, showing the mode in four octal digits', () => {
      expect(thrown(() => checkOwnFile(stats(4242, 0o100066), 'journal', '/j', 'j', bridge))?.message).toContain('the journal /j (owner 4242, mode 0066) can be written by its group or others');
    });

    it('without Unix owners checks nothing', () => {
      expect(thrown(() => checkOwnFile(stats(999, 0o100666), 'journal', '/j', 'j', NO_OWNERS))).toBeUndefined();
    });
  });

  describe('walkTrusted: the real path, link by link', () => {
    it("resolves '.', '..', doubled and trailing '/'; a missing last name is where the journal goes", async () => {
      const dir = dirname(file());
      mkdirSync(join(dir, 'sub'));
      expect(await walkTrusted(`${dir}/./sub/../journal.jsonl`, 'j', bridgeTrust())).toBe(join(dir, 'journal.jsonl'));
      expect(await walkTrusted(`${dir}//sub//journal.jsonl/`, 'j', bridgeTrust())).toBe(join(dir, 'sub', 'journal.jsonl'));
      expect(await walkTrusted(`${dir}/sub/..`, 'j', bridgeTrust())).toBe(dir);
    });

    it("follows relative and absolute links, a doubled or trailing '/' in the target too; '..' after a link is its target's parent, as the kernel's", async () => {
      const dir = dirname(file());
      mkdirSync(join(dir, 'a', 'b'), { recursive: true });
      symlinkSync('a//b/', join(dir, 'rel'));
      symlinkSync(join(dir, 'a', 'b'), join(dir, 'abs'));
      symlinkSync('a/b//new.jsonl/', join(dir, 'dangling'));
      expect(await walkTrusted(join(dir, 'rel', 'journal.jsonl'), 'j', bridgeTrust())).toBe(join(dir, 'a', 'b', 'journal.jsonl'));
      expect(await walkTrusted(`${dir}/abs/../journal.jsonl`, 'j', bridgeTrust())).toBe(join(dir, 'a', 'journal.jsonl'));
      expect(await walkTrusted(join(dir, 'dangling'), 'j', bridgeTrust())).toBe(join(dir, 'a', 'b', 'new.jsonl'));
    });

    it('a missing directory on the way, or a name under a file: the error is passed on (only a missing last name is created)', async () => {
      const path = file();
      writeFileSync(path, '');
      expect((await rejection(walkTrusted(join(dirname(path), 'missing', 'journal.jsonl'), 'j', bridgeTrust()))).code).toBe('ENOENT');
      expect((await rejection(walkTrusted(join(path, 'journal.jsonl'), 'j', bridgeTrust()))).code).toBe('ENOTDIR');
    });
  });

  describe('checkJournalPath: before anything is read or written', () => {
    it('refuses an existing journal its group or others may write, before it is opened', async () => {
      const path = file();
      writeFileSync(path, '');
      chmodSync(path, 0o666);
      const error = await rejection(checkJournalPath(path, 'j', bridgeTrust()));
      expect(error.message).toContain(`the journal ${path} (owner ${statSync(path).uid}, mode 0666) can be written by its group or others`);
    });

    it('passes on an error other than "missing" (ENOTDIR); a missing journal: its directory\'s owner, nothing found', async () => {
      const path = file();
      writeFileSync(path, '');
      expect((await rejection(checkJournalPath(join(path, 'x.jsonl'), 'j', bridgeTrust()))).code).toBe('ENOTDIR');
      expect(await checkJournalPath(join(dirname(path), 'new.jsonl'), 'j', bridgeTrust())).toStrictEqual({ dirOwner: statSync(dirname(path)).uid, found: undefined });
    });

    it('without Unix owners: nothing checked, the file as found', async () => {
      const path = file();
      chmodSync(dirname(path), 0o777);
      writeFileSync(path, '');
      chmodSync(path, 0o666);
      const checked = await checkJournalPath(path, 'j', NO_OWNERS);
      expect(Object.keys(checked).sort()).toEqual(['dirOwner', 'found']);
      expect(checked.dirOwner).toBeUndefined();
      expect(checked.found?.isFile()).toBe(true);
    });
  });

  it('staffLockOwner: the journal must be there; root gives the lock to the journal\'s owner, and only root', () => {
    const stats = (uid: number, gid: number) => ({ uid, gid }) as Stats;
    const missing = thrown(() => staffLockOwner(undefined, { uid: 0, reader: true, writer: true }, '/srv/j.jsonl'));
    expect(missing).toBeInstanceOf(JournalError);
    expect(missing?.message).toBe('FileJournal: there is no journal file at /srv/j.jsonl (nothing was created)');
    expect(staffLockOwner(stats(4242, 77), { uid: 0, reader: true, writer: true }, '/j')).toStrictEqual({ uid: 4242, gid: 77 });
    expect(staffLockOwner(stats(0, 77), { uid: 0, reader: true, writer: true }, '/j')).toBeUndefined();
    expect(staffLockOwner(stats(4242, 77), { uid: 555, reader: true, writer: true }, '/j')).toBeUndefined();
  });
});

describe.skipIf(user === undefined)(needsRoot("a link of the directory's owner (trust.ts, checkLink)", user), () => {
  const other = user ?? { uid: -1, gid: -1 };

  it('in a directory of another user, a link of that user: a reader follows it (as protected_symlinks would); the bridge and staff writing refuse it', async () => {
    const dir = join(dirname(file()), 'theirs');
    mkdirSync(dir, { mode: 0o755 });
    const link = join(dir, 'journal.jsonl');
    symlinkSync('../journal.jsonl', link);
    lchownSync(link, other.uid, other.gid);
    chownSync(dir, other.uid, other.gid);
    expect(await walkTrusted(link, 'j', readerTrust())).toBe(join(dirname(dir), 'journal.jsonl'));
    for (const trust of [bridgeTrust(), staffTrust()]) {
      const error = await rejection(walkTrusted(link, 'j', trust));
      expect(error.message).toContain(`the symbolic link ${link} on the way to the journal is owned by user ${other.uid}`);
      expect(isRefusal(error)).toBe(true);
    }
  });
});
