/**
 * The file journal's lock (src/journals/file/lock.ts, and files.ts' realFile) when resolving or identifying the file
 * meets what a real file system rarely shows on demand: an I/O error from lstat, readlink
 * or stat, a file created between two looks, a cycle of links, two files with one inode
 * number on two devices. (On Unix the path is resolved one name at a time,
 * src/journals/file/trust.ts, checking each link's owner: realpath is Windows' way.) Each is made by one call of
 * node:fs/promises answering otherwise, once; every other call is the real one.
 */
import * as fsSync from 'node:fs';
import { existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalError } from '../../src/errors.js';
import { fsError, scratchJournals } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

// The calls lock.ts imports directly (not through fsCalls): spies that make the real call
// unless a test says otherwise.
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, lstat: vi.fn(real.lstat), readlink: vi.fn(real.readlink), stat: vi.fn(real.stat) };
});
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, statSync: vi.fn(real.statSync) };
});
const realStatSync = (await vi.importActual<typeof import('node:fs')>('node:fs')).statSync;
const real = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
const mocked = {
  lstat: vi.mocked(fs.lstat as (path: string) => Promise<unknown>),
  readlink: vi.mocked(fs.readlink as (path: string) => Promise<string>),
  stat: vi.mocked(fs.stat as (path: string, options?: { bigint?: boolean }) => Promise<unknown>),
  statSync: vi.mocked(fsSync.statSync as (path: string, options?: { bigint?: boolean }) => unknown),
};
/** `stats` as another device's: the same inode number, another file. */
const onAnotherDevice = (stats: fsSync.BigIntStats) =>
  Object.assign(Object.create(Object.getPrototypeOf(stats) as object) as object, stats, { dev: stats.dev + 1n });

const { file, journal } = scratchJournals('file-lock-resolve');
const beside = (path: string) => readdirSync(dirname(path)).sort();
afterEach(async () => {
  mocked.lstat.mockReset().mockImplementation(real.lstat as (path: string) => Promise<unknown>);
  mocked.readlink.mockReset().mockImplementation(real.readlink as (path: string) => Promise<string>);
  mocked.stat.mockReset().mockImplementation(real.stat as (path: string) => Promise<unknown>);
  mocked.statSync.mockReset().mockImplementation(realStatSync as (path: string) => unknown);
});

/** The journal's refusal: a JournalError naming the path, with nothing taken or created. */
async function refused(path: string, message: string | RegExp): Promise<JournalError> {
  const error = await journal(path).pending().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JournalError);
  expect((error as JournalError).path).toBe(path);
  expect((error as Error).message).toMatch(message);
  expect(beside(path)).toEqual([]);
  return error as JournalError;
}

describe('resolving the journal path when a call fails', () => {
  it('lstat failing with an I/O error (not "missing"): refused with that error, nothing locked', async () => {
    const path = file();
    mocked.lstat.mockImplementation(async (target) => {
      if (target === path) throw fsError('EIO');
      return real.lstat(target);
    });
    await refused(path, `FileJournal: could not open ${path}: EIO`);
  });

  it('readlink failing with an I/O error: refused with that error', async () => {
    const path = file();
    const link = join(dirname(path), 'link.jsonl');
    symlinkSync('journal.jsonl', link);
    mocked.readlink.mockRejectedValueOnce(fsError('EIO'));
    const error = await journal(link).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(`FileJournal: could not open ${link}: EIO: injected failure`);
    expect(beside(path)).toEqual(['link.jsonl']);
  });

  it('a file created between resolving its name (missing) and opening it: opened and locked as itself', async () => {
    const path = file();
    writeFileSync(path, `${JSON.stringify({ op: 'put', entry: journalLine('a') })}\n`);
    let once = true;
    mocked.lstat.mockImplementation(async (target) => {
      if (target !== path || !once) return real.lstat(target);
      once = false;
      throw fsError('ENOENT');
    });
    expect((await journal(path).pending()).map((e) => e.deliveryId)).toEqual(['a']);
    expect(beside(path)).toEqual(['journal.jsonl', 'journal.jsonl.lock']);
  });

  it('a cycle of links: refused after 40 links (ELOOP), never looping forever', async () => {
    const path = file();
    const other = join(dirname(path), 'other.jsonl');
    symlinkSync(basename(other), path);
    symlinkSync(basename(path), other);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(`FileJournal: could not open ${path}: ELOOP: too many levels of symbolic links resolving ${path}`);
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('ELOOP');
    expect(mocked.readlink).toHaveBeenCalledTimes(40);
    expect(beside(path)).toEqual(['journal.jsonl', 'other.jsonl']);
  });

  it('stat of the resolved path failing with an I/O error: refused with that error, nothing locked', async () => {
    const path = file();
    mocked.stat.mockImplementationOnce(async () => {
      throw fsError('EIO');
    });
    await refused(path, `FileJournal: could not open ${path}: EIO`);
  });
});

describe('one file, one journal: what counts as the same file', () => {
  it('a file with the inode number of a held journal on another device is another file: both open', async () => {
    const [first, second] = [file(), file()];
    await journal(first).append([journalLine('a')]);
    const j = journal(second);
    // The held journal's file, seen by the second's check: its inode, another device.
    mocked.stat.mockImplementation(async (target, options) => {
      if (target !== first) return real.stat(target, options);
      return onAnotherDevice(await real.stat(second, { bigint: true }));
    });
    await j.append([journalLine('b')]);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['b']);
  });
});

describe('releasing only the lock file that was taken', () => {
  it('a lock file now of another device (the same inode number, another file): left in place at exit and at close', async () => {
    const path = file();
    const lock = `${path}.lock`;
    const j = journal(path);
    await j.pending();
    mocked.statSync.mockImplementation((target, options) =>
      target === lock ? onAnotherDevice(realStatSync(target, { bigint: true })) : realStatSync(target, options),
    );
    mocked.stat.mockImplementation(async (target, options) => (target === lock ? onAnotherDevice(await real.stat(target, { bigint: true })) : real.stat(target, options)));
    const registry = (globalThis as Record<symbol, { onExit: () => void }>)[Symbol.for('teamgames-sdk.FileJournal.locks')];
    registry?.onExit();
    expect(existsSync(lock)).toBe(true);
    await j.close();
    expect(existsSync(lock)).toBe(true);
  });
});
