/**
 * The file journal's lock when the file system says no (src/journals/file/lock.ts): every
 * failure to write, link, read or move a lock file is a JournalError that says what to do,
 * leaves no lock and no draft behind, and the next attempt takes the lock once the cause is
 * gone; a lock that is not ours (another process's, replaced meanwhile) is never removed,
 * at close or at exit; and the low-level calls the journal relies on (writes of every byte,
 * reads of a journal larger than one read, the directory sync) hold what they promise.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { fsCalls, inspectLock } from '../../src/journals/file/lock.js';
import { JournalError } from '../../src/errors.js';
import { journalLine } from '../support/journal.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'teamgames-file-lock-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
/** A journal path in a directory of its own. */
const file = () => {
  const dir = join(root, `case-${++n}`);
  mkdirSync(dir);
  return join(dir, 'journal.jsonl');
};
const lockOf = (path: string) => `${path}.lock`;
const beside = (path: string) => readdirSync(dirname(path)).sort();
const plant = (path: string, holder: object | string) => writeFileSync(lockOf(path), typeof holder === 'string' ? holder : JSON.stringify(holder));
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;
const fsError = (code: string) => Object.assign(new Error(`${code}: injected failure`), { code });

const opened: FileJournal[] = [];
function journal(path: string): FileJournal {
  const made = new FileJournal(path);
  opened.push(made);
  return made;
}
afterEach(async () => {
  vi.restoreAllMocks();
  for (const j of opened.splice(0)) await j.close().catch(() => undefined);
});

/** The process's registry of held journal files, whose `onExit` runs at process exit. */
const registry = () => (globalThis as Record<symbol, { onExit: () => void; held: Map<string, () => void> }>)[Symbol.for('teamgames-sdk.FileJournal.locks')]!;

describe('taking the lock when the file system refuses', () => {
  it('a lock file that cannot be written (a full disk): a JournalError, no draft left, nothing held, and the next call takes it', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (String(target).endsWith('.new')) throw fsError('ENOSPC');
      return realOpen(target, ...rest);
    });
    const j = journal(path);
    const error = await j.append([journalLine('a')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toMatch(/could not write the lock file .*\.new: ENOSPC/);
    expect(beside(path)).toEqual([]);
    vi.restoreAllMocks();
    await j.append([journalLine('a')]);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a']);
  });

  it('a lock file whose holder cannot be synced: the same, and the draft removed', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      const handle = await realOpen(target, ...rest);
      if (String(target).endsWith('.new')) vi.spyOn(handle, 'sync').mockRejectedValue(fsError('EIO'));
      return handle;
    });
    await expect(journal(path).pending()).rejects.toThrow(/could not write the lock file .*EIO/);
    expect(beside(path)).toEqual([]);
  });

  it('a lock that cannot be linked into place (not "it exists"): a JournalError naming the lock, no draft left, nothing held', async () => {
    const path = file();
    vi.spyOn(fsCalls, 'link').mockRejectedValueOnce(fsError('EPERM'));
    const j = journal(path);
    const error = await j.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(`could not create the lock file ${lockOf(path)}: EPERM`);
    expect(beside(path)).toEqual([]);
    expect(await j.pending()).toEqual([]);
    expect(JSON.parse(readFileSync(lockOf(path), 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('a lock file that cannot be read: a JournalError naming it, the lock left as it is', async () => {
    const path = file();
    plant(path, { pid: process.ppid, host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === lockOf(path)) throw fsError('EACCES');
      return realOpen(target, ...rest);
    });
    await expect(journal(path).pending()).rejects.toThrow(`could not read the lock file ${lockOf(path)}: EACCES`);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('a directory where the lock file goes: refused, naming it and saying to remove it', async () => {
    const path = file();
    mkdirSync(lockOf(path));
    await expect(journal(path).pending()).rejects.toThrow(`the lock file ${lockOf(path)} of ${path} is a directory, not a lock file; remove it`);
    expect(statSync(lockOf(path)).isDirectory()).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('a stale lock that cannot be moved aside: a JournalError, the stale lock left for the user to remove', async () => {
    const path = file();
    plant(path, { pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const before = readFileSync(lockOf(path), 'utf8');
    vi.spyOn(fsCalls, 'rename').mockRejectedValueOnce(fsError('EACCES'));
    await expect(journal(path).pending()).rejects.toThrow(`could not remove the stale lock ${lockOf(path)}: EACCES`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(before);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('a stale lock another process removed first: the lock is taken on the next round', async () => {
    const path = file();
    plant(path, { pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const realRename = fsCalls.rename;
    vi.spyOn(fsCalls, 'rename').mockImplementationOnce(async () => {
      rmSync(lockOf(path));
      throw fsError('ENOENT');
    });
    vi.spyOn(fsCalls, 'rename').mockImplementation(realRename);
    expect(await journal(path).pending()).toEqual([]);
    expect(JSON.parse(readFileSync(lockOf(path), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
  });

  it('a lock that keeps appearing and vanishing (processes starting on one journal): refused after a few rounds, nothing held', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    // Every round: the link finds a lock in place, which is gone when read.
    vi.spyOn(fsCalls, 'link').mockRejectedValue(fsError('EEXIST'));
    const reads = vi.fn();
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === lockOf(path)) {
        reads();
        throw fsError('ENOENT');
      }
      return realOpen(target, ...rest);
    });
    const j = journal(path);
    await expect(j.pending()).rejects.toThrow(`could not take the lock ${lockOf(path)} of ${path}: it kept changing`);
    expect(reads).toHaveBeenCalledTimes(5);
    expect(beside(path)).toEqual([]);
    vi.restoreAllMocks();
    expect(await j.pending()).toEqual([]);
  });
});

describe('what a lock file must hold to name its holder', () => {
  it.each([
    ['a pid of 0', { pid: 0, host: hostname() }],
    ['a negative pid', { pid: -4, host: hostname() }],
    ['a fractional pid', { pid: 1.5, host: hostname() }],
    ['a pid as text', { pid: String(process.ppid), host: hostname() }],
    ['no host', { pid: process.ppid }],
    ['a host that is not text', { pid: process.ppid, host: 7 }],
    ['JSON null', null],
  ])('%s: no holder, refused, left alone', async (_name, holder) => {
    const path = file();
    plant(path, JSON.stringify(holder));
    await expect(journal(path).pending()).rejects.toThrow('which does not name its holder');
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('a live holder without a start time is named without one; with one, since when', async () => {
    const path = file();
    plant(path, { pid: process.ppid, host: hostname() });
    const without = (await journal(path).pending().catch((e: unknown) => e)) as Error;
    expect(without.message).toContain(`in use by process ${process.ppid} on host ${hostname()} (lock file`);
    plant(path, { pid: process.ppid, host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const withSince = (await journal(path).pending().catch((e: unknown) => e)) as Error;
    expect(withSince.message).toContain(`on host ${hostname()} since 2020-01-01T00:00:00.000Z (lock file`);
  });
});

describe('releasing the lock', () => {
  it('at process exit, without close: every lock this process holds is removed', async () => {
    const [a, b] = [file(), file()];
    await journal(a).pending();
    await journal(b).pending();
    expect(existsSync(lockOf(a)) && existsSync(lockOf(b))).toBe(true);
    registry().onExit();
    expect(existsSync(lockOf(a))).toBe(false);
    expect(existsSync(lockOf(b))).toBe(false);
  });

  it('never removes a lock file that is no longer ours (replaced by another process), at close or at exit', async () => {
    const path = file();
    const j = journal(path);
    await j.pending();
    const theirs = JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString() });
    // Another process's lock renamed over ours (another inode, created while ours existed).
    writeFileSync(`${lockOf(path)}.theirs`, theirs);
    renameSync(`${lockOf(path)}.theirs`, lockOf(path));
    registry().onExit();
    expect(readFileSync(lockOf(path), 'utf8')).toBe(theirs);
    await j.close();
    expect(readFileSync(lockOf(path), 'utf8')).toBe(theirs);
  });

  it('close after the lock file vanished: nothing to remove, and the journal can be opened again', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    rmSync(lockOf(path));
    await j.close();
    expect(registry().held.size).toBe(0);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a']);
  });
});

describe('who holds a journal, read beside it (inspectLock)', () => {
  it('free, unknown, held by this process, by a live or a dead process of this host, or by another host', async () => {
    const path = file();
    expect(await inspectLock(path)).toEqual({ state: 'free', path: lockOf(path) });
    plant(path, 'not a holder');
    expect(await inspectLock(path)).toEqual({ state: 'unknown', path: lockOf(path) });
    plant(path, { pid: process.ppid, host: hostname(), since: 'then' });
    expect(await inspectLock(path)).toEqual({ state: 'held', path: lockOf(path), pid: process.ppid, host: hostname(), since: 'then', running: true });
    const dead = deadPid();
    plant(path, { pid: dead, host: hostname(), since: 'then' });
    expect(await inspectLock(path)).toMatchObject({ state: 'held', pid: dead, running: false });
    plant(path, { pid: process.ppid, host: 'elsewhere.invalid', since: 'then' });
    expect(await inspectLock(path)).toMatchObject({ state: 'held', host: 'elsewhere.invalid', running: undefined });
    // This process's pid: running only while a journal of this process holds the file.
    plant(path, { pid: process.pid, host: hostname(), since: 'then' });
    expect(await inspectLock(path)).toMatchObject({ state: 'held', pid: process.pid, running: false });
    rmSync(lockOf(path));
    await journal(path).pending();
    expect(await inspectLock(path)).toMatchObject({ state: 'held', pid: process.pid, running: true });
  });
});

// FileHandle's methods live on its prototype: spying there reaches the journal's handles.
let handleProto: { write: (...args: unknown[]) => Promise<{ bytesWritten: number }> };
beforeAll(async () => {
  const probe: FileHandle = await open(join(root, 'probe'), 'w');
  handleProto = Object.getPrototypeOf(probe) as typeof handleProto;
  await probe.close();
});

describe('the file calls the journal relies on', () => {
  it('a write the file system accepts no byte of fails the append (nothing recorded), instead of looping forever', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    vi.spyOn(handleProto, 'write').mockResolvedValueOnce({ bytesWritten: 0 });
    await expect(j.append([journalLine('b')])).rejects.toThrow(/accepted no bytes .*nothing was recorded/);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a']);
    const fresh = new FileJournal(path);
    await j.close();
    expect((await fresh.pending()).map((e) => e.deliveryId)).toEqual(['a']);
    await fresh.close();
  });

  it('reads a journal larger than one read (over 1 MiB) whole', async () => {
    const path = file();
    const big = 'x'.repeat(4_000);
    const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ op: 'put', entry: { ...journalLine(`id-${i}`), item: { ...journalLine('x').item, product_name: big } } })).join('\n');
    writeFileSync(path, `${lines}\n`);
    expect(statSync(path).size).toBeGreaterThan(1024 * 1024);
    const entries = await journal(path).pending();
    expect(entries).toHaveLength(400);
    expect(entries.at(-1)?.deliveryId).toBe('id-399');
  });

  it('a directory that cannot be opened for its sync (Windows): the journal works all the same', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === dirname(path)) throw fsError('EISDIR');
      return realOpen(target, ...rest);
    });
    const j = journal(path);
    await j.append([journalLine('a')]);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a']);
  });
});
