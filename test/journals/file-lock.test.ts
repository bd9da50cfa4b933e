/**
 * The file journal's lock when the file system says no (src/journals/file/lock.ts): every
 * failure to write, link, read or move a lock file is a JournalError that says what to do,
 * leaves no lock and no draft behind, and the next attempt takes the lock once the cause is
 * gone; a lock that is not ours (another process's, replaced meanwhile) is never removed,
 * at close or at exit; and the low-level calls the journal relies on (writes of every byte,
 * reads of a journal larger than one read, the directory sync) hold what they promise.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { type FileHandle } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { fsCalls, notRegular } from '../../src/journals/file/files.js';
import { inspectLock } from '../../src/journals/file/lock.js';
import { JournalError } from '../../src/errors.js';
import { fileHandlePrototype, fsError, scratchJournals, type FileHandleMethods } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

const { root, file, journal } = scratchJournals('file-lock');
const lockOf = (path: string) => `${path}.lock`;
const beside = (path: string) => readdirSync(dirname(path)).sort();
const plant = (path: string, holder: object | string) => writeFileSync(lockOf(path), typeof holder === 'string' ? holder : JSON.stringify(holder));
/** The pid of a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;
afterEach(() => {
  vi.restoreAllMocks();
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
    expect((error as JournalError).path).toBe(path);
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('EPERM');
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
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain(`could not read the lock file ${lockOf(path)}: EACCES`);
    expect((error as JournalError).path).toBe(path);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('a directory where the lock file goes: refused, naming it and saying to remove it', async () => {
    const path = file();
    mkdirSync(lockOf(path));
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain(`the lock file ${lockOf(path)} of ${path} is a directory, not a lock file; remove it`);
    expect((error as JournalError).path).toBe(path);
    expect(statSync(lockOf(path)).isDirectory()).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('a stale lock that cannot be moved aside: a JournalError, the stale lock left for the user to remove', async () => {
    const path = file();
    plant(path, { pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const before = readFileSync(lockOf(path), 'utf8');
    vi.spyOn(fsCalls, 'rename').mockRejectedValueOnce(fsError('EACCES'));
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain(`could not remove the stale lock ${lockOf(path)}: EACCES`);
    expect((error as JournalError).path).toBe(path);
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
    const error = await j.pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain(`could not take the lock ${lockOf(path)} of ${path}: it kept changing`);
    expect((error as JournalError).path).toBe(path);
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
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain(`is locked by ${lockOf(path)}, which does not name its holder`);
    expect((error as JournalError).path).toBe(path);
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

let handleProto: FileHandleMethods;
beforeAll(async () => {
  handleProto = await fileHandlePrototype(root);
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

describe('what is not a journal file, named for what it is', () => {
  const blockDevice = readdirSync('/dev')
    .map((name) => join('/dev', name))
    .find((path) => {
      try {
        return statSync(path).isBlockDevice();
      } catch {
        return false;
      }
    });

  it('a socket: refused, naming the path once and saying what to give instead', async () => {
    const path = file();
    const server = createServer();
    await new Promise<void>((done) => server.listen(path, done));
    try {
      const error = await journal(path).pending().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toContain(`FileJournal: ${path} is a socket, not a regular file; a journal is a regular file: give FileJournal the path of one`);
      expect(beside(path)).toEqual(['journal.jsonl']); // no lock taken
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it.skipIf(blockDevice === undefined)('a link to a block device: refused, naming the device behind the link', async () => {
    const path = file();
    symlinkSync(blockDevice as string, path);
    await expect(journal(path).pending()).rejects.toThrow(`FileJournal: ${path} (${blockDevice}) is a block device, not a regular file`);
    expect(existsSync(`${blockDevice}.lock`)).toBe(false);
  });

  it('a file of no type Node names: "not a regular file"', () => {
    const no = () => false;
    const stats = { isFile: no, isDirectory: no, isFIFO: no, isCharacterDevice: no, isBlockDevice: no, isSocket: no } as unknown as Stats;
    expect(notRegular(stats)).toBe('not a regular file');
  });

  it('a file with another name (a hard link): refused, saying how to find the other names', async () => {
    const path = file();
    writeFileSync(path, '');
    linkSync(path, join(dirname(path), 'other.jsonl'));
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain(`find / -samefile ${path}`);
    expect(beside(path)).toEqual(['journal.jsonl', 'other.jsonl']);
  });
});

describe('the names of one file', () => {
  /** `count` links in a row in the journal's directory, the last naming `journal.jsonl` (not created). */
  function chain(path: string, count: number): string {
    for (let i = 0; i < count; i++) symlinkSync(i === count - 1 ? 'journal.jsonl' : `link-${i + 1}`, join(dirname(path), `link-${i}`));
    return join(dirname(path), 'link-0');
  }

  it('follows 40 dangling links to the file the last one names, and creates and locks it; 41 are refused (ELOOP)', async () => {
    const path = file();
    const j = journal(chain(path, 40));
    await j.append([journalLine('a')]);
    expect(existsSync(lockOf(path))).toBe(true);
    expect(readFileSync(path, 'utf8')).toContain('"a"');

    const other = file();
    await expect(journal(chain(other, 41)).pending()).rejects.toThrow(/ELOOP/);
    expect(existsSync(other)).toBe(false);
  });

  it('a held journal whose file was removed does not stop another journal from opening', async () => {
    const [a, b] = [file(), file()];
    await journal(a).append([journalLine('a')]);
    rmSync(a);
    const j = journal(b);
    await j.append([journalLine('b')]);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['b']);
  });

  it('a second FileJournal of this process on the same path: refused, saying to close the other one', async () => {
    const path = file();
    await journal(path).pending();
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `FileJournal: ${path} is in use by process ${process.pid} on host ${hostname()} (lock file ${lockOf(path)}); close the other FileJournal of this process on that file first, or use one FileJournal per file.`,
    );
  });
});

describe('how much of a lock file is read', () => {
  const holder = () => JSON.stringify({ pid: process.ppid, host: hostname(), since: '' });

  it('4096 bytes (a holder and blanks) name their holder; 4097 bytes do not', async () => {
    const path = file();
    plant(path, holder().padEnd(4096, ' '));
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${process.ppid} on host ${hostname()} (lock file`);
    plant(path, holder().padEnd(4097, ' '));
    await expect(journal(path).pending()).rejects.toThrow('which does not name its holder');
    expect(statSync(lockOf(path)).size).toBe(4097); // left as it is
  });

  it('read in several short reads, still never past byte 4097', async () => {
    const path = file();
    const realRead = handleProto.read;
    const ends: number[] = [];
    vi.spyOn(handleProto, 'read').mockImplementation(function (this: FileHandle, buffer, offset, length, position) {
      ends.push(position + length);
      return realRead.call(this, buffer, offset, Math.min(length, 1000), position);
    });
    plant(path, holder().padEnd(4096, ' '));
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${process.ppid}`);
    expect(ends.length).toBeGreaterThan(4);
    plant(path, 'x'.repeat(64 * 1024));
    await expect(journal(path).pending()).rejects.toThrow('which does not name its holder');
    expect(Math.max(...ends)).toBe(4097);
  });
});

describe('the exit listener and the process registry', () => {
  const key = Symbol.for('teamgames-sdk.FileJournal.locks');

  it('one listener while any journal is held, kept until the last one closes', async () => {
    const listeners = process.listenerCount('exit');
    const [a, b] = [file(), file()];
    const [ja, jb] = [journal(a), journal(b)];
    await ja.pending();
    await jb.pending();
    expect(process.listenerCount('exit')).toBe(listeners + 1);
    await ja.close();
    expect(process.listenerCount('exit')).toBe(listeners + 1);
    expect(process.listeners('exit')).toContain(registry().onExit);
    await jb.close();
    expect(process.listenerCount('exit')).toBe(listeners);
  });

  it("the first journal of a process (a fresh registry, under the key every copy of the SDK shares): its lock is removed at exit", async () => {
    const global = globalThis as Record<symbol, { held: Map<string, unknown> } | undefined>;
    expect(global[key]?.held.size ?? 0).toBe(0); // nothing held: as in a process that just started
    delete global[key];
    const path = file();
    await journal(path).pending();
    expect(global[key]?.held.has(path)).toBe(true);
    registry().onExit();
    expect(existsSync(lockOf(path))).toBe(false);
  });
});

describe('a holder that may still run', () => {
  it('a process of this host that runs as another user (kill says EPERM): alive, refused, its lock left', async () => {
    const path = file();
    const pid = deadPid();
    plant(path, { pid, host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const before = readFileSync(lockOf(path), 'utf8');
    const kill = process.kill.bind(process);
    vi.spyOn(process, 'kill').mockImplementation((target, signal) => {
      if (target === pid) throw fsError('EPERM');
      return kill(target, signal);
    });
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${pid} on host ${hostname()} since 2020-01-01T00:00:00.000Z`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(before);
  });
});

describe('files opened for the lock', () => {
  it('every one is closed: the lock read, the directory synced, refused or not', async () => {
    const path = file();
    const handles: FileHandle[] = [];
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      const handle = await realOpen(target, ...rest);
      handles.push(handle);
      return handle;
    });
    plant(path, { pid: process.ppid, host: hostname(), since: '' });
    await expect(journal(path).pending()).rejects.toThrow('in use by process');
    rmSync(lockOf(path));
    const j = journal(path);
    await j.append([journalLine('a')]);
    await j.close();
    expect(handles.length).toBeGreaterThanOrEqual(4); // the lock read, the draft, the directory, the journal
    expect(handles.filter((handle) => handle.fd !== -1)).toEqual([]);
  });
});

describe('a stale lock that changes while it is moved aside: never removed', () => {
  const stale = () => ({ pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z' });
  const live = (since: string) => JSON.stringify({ pid: process.ppid, host: hostname(), since });
  const asideName = /^journal\.jsonl\.lock\.\d+\.[0-9a-f]{12}\.stale$/;

  /** Runs `change` on the lock just before the journal moves it aside (every time, or once). */
  function beforeMove(path: string, change: () => void, times = Infinity): void {
    const realRename = fsCalls.rename;
    let left = times;
    vi.spyOn(fsCalls, 'rename').mockImplementation(async (from, to) => {
      if (from === lockOf(path) && left-- > 0) change();
      return realRename(from, to);
    });
  }

  it('rewritten in place by a live process (same file, other holder): put back, and that process named', async () => {
    const path = file();
    plant(path, stale());
    const theirs = live(new Date().toISOString());
    beforeMove(path, () => writeFileSync(lockOf(path), theirs), 1);
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${process.ppid}`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(theirs);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('the same, on a file system without hard links (link: EPERM): put back by rename', async () => {
    const path = file();
    plant(path, stale());
    const theirs = live(new Date().toISOString());
    beforeMove(path, () => writeFileSync(lockOf(path), theirs), 1);
    const realLink = fsCalls.link;
    vi.spyOn(fsCalls, 'link').mockImplementation(async (from, to) => {
      if (String(from).endsWith('.stale')) throw fsError('EPERM');
      return realLink(from, to);
    });
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${process.ppid}`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(theirs);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('replaced by a copy of itself every time (another file, same holder): put back every time, refused after a few rounds', async () => {
    const path = file();
    plant(path, stale());
    const text = readFileSync(lockOf(path), 'utf8');
    // A new file renamed over the lock: another inode, while the old one still exists.
    beforeMove(path, () => {
      writeFileSync(`${lockOf(path)}.copy`, text);
      renameSync(`${lockOf(path)}.copy`, lockOf(path));
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain('it kept changing');
    expect(readFileSync(lockOf(path), 'utf8')).toBe(text);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('moved aside as a file of another device (same inode number): put back every time, refused after a few rounds', async () => {
    const path = file();
    plant(path, stale());
    const text = readFileSync(lockOf(path), 'utf8');
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      const handle = await realOpen(target, ...rest);
      if (String(target).endsWith('.stale')) {
        const realStat = handle.stat.bind(handle);
        vi.spyOn(handle, 'stat').mockImplementation(async () => {
          const stats = await realStat({ bigint: true });
          return Object.assign(Object.create(Object.getPrototypeOf(stats) as object) as object, stats, { dev: stats.dev + 1n }) as never;
        });
      }
      return handle;
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toContain('it kept changing');
    expect(readFileSync(lockOf(path), 'utf8')).toBe(text);
    expect(beside(path)).toEqual(['journal.jsonl.lock']);
  });

  it('yet another lock in place when putting it back: that one kept, the moved one left aside, and the error says which to remove', async () => {
    const path = file();
    plant(path, stale());
    const [moved, newest] = [live('2030-01-01T00:00:00.000Z'), live('2030-01-02T00:00:00.000Z')];
    const realRename = fsCalls.rename;
    vi.spyOn(fsCalls, 'rename').mockImplementationOnce(async (from, to) => {
      writeFileSync(lockOf(path), moved);
      await realRename(from, to);
      writeFileSync(lockOf(path), newest);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    const aside = beside(path).find((name) => asideName.test(name)) as string;
    expect(beside(path)).toEqual(['journal.jsonl.lock', aside]);
    expect((error as Error).message).toContain(
      `while removing the stale lock ${lockOf(path)} of ${path}, another process locked the journal; its lock is now ${join(dirname(path), aside)}. Stop the other processes on this journal, then remove ${join(dirname(path), aside)}.`,
    );
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('EEXIST');
    expect(readFileSync(lockOf(path), 'utf8')).toBe(newest);
    expect(readFileSync(join(dirname(path), aside), 'utf8')).toBe(moved);
  });

  it('gone from where it was moved (another process took it away): a JournalError, nothing left behind', async () => {
    const path = file();
    plant(path, stale());
    const realRename = fsCalls.rename;
    vi.spyOn(fsCalls, 'rename').mockImplementationOnce(async (from, to) => {
      await realRename(from, to);
      rmSync(to);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain('Stop the other processes on this journal');
    expect(beside(path)).toEqual([]);
  });
});

describe('writing every byte', () => {
  it('a write that stops accepting bytes midway fails the append, saying how many bytes were left', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    const realWrite = handleProto.write;
    let asked = 0;
    vi.spyOn(handleProto, 'write')
      .mockImplementationOnce(function (this: FileHandle, data, offset, length, position) {
        asked = length as number;
        return realWrite.call(this, data, offset, 10, position);
      })
      .mockResolvedValueOnce({ bytesWritten: 0 });
    const error = await j.append([journalLine('b')]).catch((e: unknown) => e);
    expect(asked).toBeGreaterThan(10);
    expect((error as Error).message).toContain(`accepted no bytes (${asked - 10} left to write)`);
  });
});

describe('a second copy of the SDK in this process (ESM and CommonJS, or two versions)', () => {
  it('sees the journals the first copy holds, under the registry key every version shares', { timeout: 5_000 }, async () => {
    const path = file();
    await journal(path).pending();
    vi.resetModules();
    const copy = await import('../../src/journals/file/lock.js');
    expect((await import('../../src/journals/file/files.js')).fsCalls).not.toBe(fsCalls); // another copy indeed
    expect(await copy.inspectLock(path)).toMatchObject({ state: 'held', pid: process.pid, running: true });
    expect(registry().held.has(path)).toBe(true);
    // It too reads a lock file that is a FIFO without waiting for a writer.
    const other = file();
    execFileSync('mkfifo', [lockOf(other)]);
    await expect(copy.inspectLock(other)).rejects.toThrow(`the lock file ${lockOf(other)} of ${other} is a FIFO, not a lock file`);
  });
});
