/**
 * The file journal's low-level calls (src/journals/file/files.ts) in the cases the suites
 * through FileJournal on Linux never meet: a platform without Unix owners (Windows, where
 * `process.geteuid` does not exist: the real path comes from realpath, dangling links are
 * followed one by one, at most 40, and nothing is checked), an error other than "missing"
 * passed on, a journal path that is a symbolic link when it is opened (O_NOFOLLOW, a
 * module-level constant: the module is loaded afresh). Node's realpath and readlink are
 * the real ones, made to fail in a few tests as a race or another platform's would.
 */
import { chmodSync, existsSync, lchownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JournalError } from '../../src/errors.js';
import { checkRegular, fsCalls, realFile } from '../../src/journals/file/files.js';
import type { Trust } from '../../src/journals/file/trust.js';
import { fsError, scratchJournals } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';
import { needsRoot, secondUser } from '../support/second-user.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, realpath: vi.fn(actual.realpath), readlink: vi.fn(actual.readlink) };
});
const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
const realpath = vi.mocked(fsp.realpath);
const readlink = vi.mocked(fsp.readlink);

const { file, journal } = scratchJournals('file-files');
const put = (id: string) => `${JSON.stringify({ op: 'put', entry: journalLine(id) })}\n`;
const ids = async (j: ReturnType<typeof journal>) => (await j.pending()).map((e) => e.deliveryId);
/** What a platform without Unix owners trusts: nothing is checked. */
const NO_OWNERS: Trust = { uid: undefined, reader: false };
const rejection = (work: Promise<unknown>): Promise<NodeJS.ErrnoException> => work.then(() => new Error('expected a rejection'), (error: unknown) => error as NodeJS.ErrnoException);

/** `count` links in `dir`, `link0` → `link1` → … → `link<count-1>` → `end` (a name in `dir`, missing or not). */
function chain(dir: string, count: number, end: string): string {
  for (let i = 0; i < count; i++) symlinkSync(i === count - 1 ? end : `link${i + 1}`, join(dir, `link${i}`));
  return join(dir, 'link0');
}

afterEach(() => {
  realpath.mockImplementation(actual.realpath as never);
  readlink.mockImplementation(actual.readlink as never);
  vi.restoreAllMocks();
});

describe('without Unix owners (Windows: no process.geteuid)', () => {
  let geteuid: typeof process.geteuid;
  beforeEach(() => {
    geteuid = process.geteuid;
    (process as { geteuid?: unknown }).geteuid = undefined;
  });
  afterEach(() => {
    (process as { geteuid?: unknown }).geteuid = geteuid;
  });

  it('every name of one journal (links, relative and absolute) meets one lock, at the real path', async () => {
    const path = file();
    const dir = dirname(path);
    writeFileSync(path, put('a'));
    symlinkSync('journal.jsonl', join(dir, 'a.jsonl'));
    symlinkSync(join(dir, 'a.jsonl'), join(dir, 'b.jsonl'));
    const j = journal(join(dir, 'b.jsonl'));
    expect(await ids(j)).toEqual(['a']);
    expect(existsSync(`${path}.lock`)).toBe(true);
    await expect(ids(journal(join(dir, 'a.jsonl')))).rejects.toThrow(/in use by process/);
  });

  it('a dangling link: the journal is created where it points (through 40 links); a missing name: created there', async () => {
    const path = file();
    const dir = dirname(path);
    await journal(chain(dir, 40, 'journal.jsonl')).append([journalLine('a')]);
    expect(readFileSync(path, 'utf8')).toContain('"a"');
    expect(existsSync(`${path}.lock`)).toBe(true);
    const plain = join(dir, 'plain.jsonl');
    await journal(plain).append([journalLine('b')]);
    expect(existsSync(`${plain}.lock`)).toBe(true);
  });

  it('nothing is checked: a journal anyone may write, in a directory anyone may write, is used', async () => {
    const path = file();
    chmodSync(dirname(path), 0o777);
    writeFileSync(path, put('a'));
    chmodSync(path, 0o666);
    expect(await ids(journal(path))).toEqual(['a']);
  });

  const user = secondUser();
  it.skipIf(user === undefined)(needsRoot('a link of another user is followed (no owners to check)', user), async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const link = join(dirname(path), 'link.jsonl');
    symlinkSync('journal.jsonl', link);
    lchownSync(link, user?.uid ?? -1, user?.gid ?? -1);
    expect(await ids(journal(link))).toEqual(['a']);
    expect(existsSync(`${path}.lock`)).toBe(true);
  });
});

describe('the real path without Unix owners (realFile)', () => {
  it('follows 40 dangling links to the name they end in; 41 are a loop (ELOOP), as the kernel counts', async () => {
    const dir = dirname(file());
    expect(await realFile(chain(dir, 40, 'end'), NO_OWNERS)).toBe(join(dir, 'end'));
    const longer = join(dir, 'longer');
    mkdirSync(longer);
    expect((await rejection(realFile(chain(longer, 41, 'end'), NO_OWNERS))).code).toBe('ELOOP');
  });

  it('counts links on the way to a link too, as the kernel does: 20 links each through a link to their directory are followed (40), 21 are a loop', async () => {
    for (const [count, loops] of [[20, false], [21, true]] as const) {
      const dir = join(dirname(file()), 'chain');
      mkdirSync(dir);
      symlinkSync('.', join(dir, 'here'));
      for (let i = 0; i < count; i++) symlinkSync(join('here', i === count - 1 ? 'end' : `link${i + 1}`), join(dir, `link${i}`));
      const found = await realFile(join(dir, 'link0'), NO_OWNERS).catch((error: NodeJS.ErrnoException) => error.code);
      expect(found).toBe(loops ? 'ELOOP' : join(dir, 'end'));
    }
  });

  it('passes on what is not "missing": a name under a file (ENOTDIR)', async () => {
    const path = file();
    writeFileSync(path, '');
    expect((await rejection(realFile(join(path, 'journal.jsonl'), NO_OWNERS))).code).toBe('ENOTDIR');
  });

  it('a file that appears after realpath found it missing (a race): its own path, not a link to follow', async () => {
    const path = file();
    writeFileSync(path, '');
    realpath.mockImplementation((async (p: string) => (p === path ? Promise.reject(fsError('ENOENT')) : actual.realpath(p))) as never);
    expect(await realFile(path, NO_OWNERS)).toBe(path);
    expect(readlink).toHaveBeenCalledWith(path);
  });

  it('a link that cannot be read (EIO): the error is passed on', async () => {
    const dir = dirname(file());
    const link = chain(dir, 1, 'end');
    readlink.mockImplementation((async () => Promise.reject(fsError('EIO'))) as never);
    expect((await rejection(realFile(link, NO_OWNERS))).code).toBe('EIO');
  });

  it('on a realpath that never reports a loop, it stops itself: 40 links followed, the 41st refused (ELOOP, naming the path)', async () => {
    const dir = dirname(file());
    realpath.mockImplementation((async (p: string) => (basename(p).startsWith('link') ? Promise.reject(fsError('ENOENT')) : actual.realpath(p))) as never);
    expect(await realFile(chain(dir, 40, 'end'), NO_OWNERS)).toBe(join(dir, 'end'));
    const longer = join(dir, 'longer');
    mkdirSync(longer);
    const start = chain(longer, 41, 'end');
    const error = await rejection(realFile(start, NO_OWNERS));
    expect(error.code).toBe('ELOOP');
    expect(error.message).toBe(`too many levels of symbolic links resolving ${start}`);
  });
});

describe('checks before a journal is opened', () => {
  it('checkRegular passes on what is not "missing" (ENOTDIR, a link loop), and lets a missing file be created', async () => {
    const path = file();
    writeFileSync(path, '');
    expect((await rejection(checkRegular(join(path, 'x.jsonl'), 'x.jsonl'))).code).toBe('ENOTDIR');
    const loop = join(dirname(path), 'loop');
    symlinkSync('loop', loop);
    expect((await rejection(checkRegular(loop, 'loop'))).code).toBe('ELOOP');
    await expect(checkRegular(join(dirname(path), 'missing.jsonl'), 'missing.jsonl')).resolves.toBeUndefined();
  });

  it('a journal that cannot be opened (EIO, not "missing"): a JournalError saying so, nothing created or changed', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const realOpen = fsCalls.open;
    let failed = false;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, ...rest) => {
      if (target === path && !failed) {
        failed = true;
        throw fsError('EIO');
      }
      return realOpen(target, ...rest);
    });
    const error = await rejection(journal(path).pending());
    expect(error).toBeInstanceOf(JournalError);
    expect(error.message).toContain('EIO');
    expect(readFileSync(path, 'utf8')).toBe(put('a'));
  });

  it('a journal path that is a symbolic link when it is opened (swapped in after the check): never opened through it (ELOOP)', async () => {
    vi.resetModules();
    try {
      const fresh = await import('../../src/journals/file/files.js');
      const path = file();
      writeFileSync(path, put('a'));
      const swapped = join(dirname(path), 'swapped.jsonl');
      symlinkSync('journal.jsonl', swapped);
      const error = await fresh.openJournalFile(swapped, swapped).then(async (opened) => {
        await opened.close();
        return undefined;
      }, (e: unknown) => e as NodeJS.ErrnoException);
      expect(error?.code).toBe('ELOOP');
    } finally {
      vi.resetModules();
    }
  });
});
