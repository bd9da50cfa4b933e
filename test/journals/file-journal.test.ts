/**
 * FileJournal (src/journals/file/journal.ts and store.ts) on what a user relies on that the
 * other suites leave open: a call that changes nothing writes nothing, opening a healthy
 * journal changes nothing, a record that lost its newline survives a failed write, the
 * lock is kept while the file is read again, close() lets go of the file, every error
 * says what it is (wrapped once, with its cause), the size limit is exact, and every kind
 * of entry comes back field by field after a restart.
 */
import { constants, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { MemoryJournal } from '../../src/journals/memory.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { JournalError } from '../../src/errors.js';
import type { JournalClaimMark, JournalEntry, JournalLine, JournalWindow } from '../../src/journals/contract.js';
import { fileHandlePrototype, fsError, type FileHandleMethods, type Write, reload, scratchJournals, underSizeLimit } from '../support/file-journals.js';
import { journalLine, journalWindow } from '../support/journal.js';

const { root, file, journal, closing } = scratchJournals('file-journal-more');
afterEach(() => {
  vi.restoreAllMocks();
});

const ids = async (j: FileJournal) => (await j.pending()).map((e) => e.deliveryId);

const put = (id: string) => `${JSON.stringify({ op: 'put', entry: journalLine(id) })}\n`;
const ack = (...acked: string[]) => `${JSON.stringify({ op: 'ack', ids: acked })}\n`;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let handles: FileHandleMethods;
let realWrite: Write;
beforeAll(async () => {
  handles = await fileHandlePrototype(root);
  realWrite = handles.write;
});

/** The disk fills up in the middle of the next write: 9 bytes of it land, then ENOSPC. */
function tornWrite(): void {
  vi.spyOn(handles, 'write')
    .mockImplementationOnce(function (this: FileHandle, data) {
      const buffer = typeof data === 'string' ? Buffer.from(data) : data;
      return realWrite.call(this, buffer, 0, Math.min(buffer.length, 9), null);
    })
    .mockRejectedValueOnce(fsError('ENOSPC'));
}

/** The inodes `sync` is called on, in call order. */
function syncedInodes(): number[] {
  const seen: number[] = [];
  const realSync = handles.sync;
  vi.spyOn(handles, 'sync').mockImplementation(async function (this: FileHandle) {
    seen.push((await this.stat()).ino);
    return realSync.call(this);
  });
  return seen;
}

describe('FileJournal: a call that changes nothing writes nothing', () => {
  it('an empty append, an empty acknowledgement and one of ids that are not text touch no file', async () => {
    const path = file();
    const j = journal(path);
    await j.append([]);
    await j.acknowledge([]);
    await j.acknowledge([7, null, undefined] as unknown as string[]);
    expect(readdirSync(dirname(path))).toEqual([]); // not even created, nor locked
  });

  it('close() of a journal never used resolves and touches no file; the journal works after it', async () => {
    const path = file();
    const j = journal(path);
    await j.close();
    await j.close();
    expect(readdirSync(dirname(path))).toEqual([]);
    await j.append([journalLine('a')]);
    expect(await ids(j)).toEqual(['a']);
    await j.close();
  });

  it('on a journal in use, they leave the file byte for byte as it was', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    const before = readFileSync(path);
    await j.append([]);
    await j.acknowledge([]);
    await j.acknowledge([7, { deliveryId: 'a' }] as unknown as string[]);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(await ids(j)).toEqual(['a']);
  });

  it('an append holding something that is not an entry is refused whole: the file stays byte for byte as it was, and readable after a restart', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    const before = readFileSync(path);
    // Written, the NaN would read back as null: the next start would refuse the whole file as damaged.
    await expect(j.append([journalLine('b'), { ...journalLine('c'), recordedAt: Number.NaN }])).rejects.toThrow('invalid entries[1]: must be a journal entry: recordedAt is not a number');
    await expect(j.append([undefined] as unknown as JournalEntry[])).rejects.toThrow('invalid entries[0]: must be a journal entry: not an object (undefined)');
    // Holes: before, the line {"op":"put","entries":[null]} was written, and the next start refused the file.
    await expect(j.append(new Array(1))).rejects.toThrow('invalid entries[0]: must be a journal entry: not an object (undefined)');
    await expect(j.append(Object.assign(new Array(2), { 1: journalLine('d') }))).rejects.toThrow('invalid entries[0]: must be a journal entry: not an object (undefined)');
    // What JSON cannot keep: bad input, named, as the memory journal says it too.
    const withFunction = [journalLine('e'), { ...journalLine('f'), note: () => 1 }] as unknown as JournalEntry[];
    await expect(j.append(withFunction)).rejects.toThrow('invalid entries[1]: must be a journal entry: it holds a value JSON cannot keep');
    await expect(new MemoryJournal().append(withFunction)).rejects.toThrow('invalid entries[1]: must be a journal entry: it holds a value JSON cannot keep');
    expect(readFileSync(path).equals(before)).toBe(true);
    await j.close();
    expect(await reload(path)).toEqual(['a']);
  });

  it('ids that are not text among real ones are left out: the acknowledgement is written and the file stays readable', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a'), journalLine('b')]);
    await j.acknowledge([7, 'a', null] as unknown as string[]);
    expect(await ids(j)).toEqual(['b']);
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ op: 'put', entries: [journalLine('a'), journalLine('b')] })}\n${ack('a')}`);
    await j.close();
    expect(await reload(path)).toEqual(['b']);
  });
});

describe('FileJournal: the lines it writes', () => {
  it('an append of one entry is one put line with `entry`, as 0.1.0 wrote (and reads); an append of several, one line with `entries`', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    await j.append([journalLine('b'), journalLine('c', 'Bob')]);
    expect(readFileSync(path, 'utf8')).toBe(`${put('a')}${JSON.stringify({ op: 'put', entries: [journalLine('b'), journalLine('c', 'Bob')] })}\n`);
  });

  it('a failed append says nothing was recorded, a failed acknowledgement that nothing was acknowledged', async () => {
    const j = journal(file());
    await j.append([journalLine('a')]);
    vi.spyOn(handles, 'datasync').mockRejectedValueOnce(fsError('EIO')).mockRejectedValueOnce(fsError('EIO'));
    await expect(j.append([journalLine('b')])).rejects.toThrow(/^FileJournal: could not write .*: EIO: injected failure; nothing was recorded$/);
    await expect(j.acknowledge(['a'])).rejects.toThrow(/^FileJournal: could not write .*: EIO: injected failure; nothing was acknowledged$/);
    expect(await ids(j)).toEqual(['a']);
  });

  it('a failed resolution says nothing was recorded, and the window stays open', async () => {
    const j = journal(file());
    await j.append([journalWindow('window:1')]);
    vi.spyOn(handles, 'datasync').mockRejectedValueOnce(fsError('EIO'));
    await expect(j.resolveWindow('window:1', { by: 'mod:bob', at: 5, note: 'granted by hand' })).rejects.toThrow(/^FileJournal: could not write .*: EIO: injected failure; nothing was recorded$/);
    expect((await j.pending()).map((e) => e.state)).toEqual(['unverified']);
  });
});

describe('FileJournal: opening a healthy journal changes nothing', () => {
  it('neither its bytes nor its modification time, and it flushes nothing', async () => {
    const path = file();
    const text = `${put('a')}${put('b')}${ack('a')}`;
    writeFileSync(path, text);
    const past = new Date('2020-01-01T00:00:00.000Z');
    utimesSync(path, past, past);
    const synced = syncedInodes();
    expect(await ids(journal(path))).toEqual(['b']);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(statSync(path).mtime.getTime()).toBe(past.getTime()); // not even a truncate to its own size
    expect(synced.filter((ino) => ino === statSync(path).ino)).toEqual([]);
  });
});

describe('FileJournal: a record that lost its newline', () => {
  it('survives a write that fails after it: the failed write is cut off after the newline added, never into the record', async () => {
    const path = file();
    writeFileSync(path, `${put('a')}${put('b').trimEnd()}`);
    const j = journal(path);
    expect(await ids(j)).toEqual(['a', 'b']);
    tornWrite();
    await expect(j.append([journalLine('lost')])).rejects.toBeInstanceOf(JournalError);
    expect(readFileSync(path, 'utf8')).toBe(`${put('a')}${put('b')}`);
    await j.append([journalLine('c')]);
    await j.close();
    expect(await reload(path)).toEqual(['a', 'b', 'c']);
  });
});

describe('FileJournal: errors on opening say what they are, wrapped once', () => {
  it('a path it cannot resolve (a symbolic link loop): a JournalError naming the path, with the system error as its cause, and no lock left', async () => {
    const path = file();
    symlinkSync('journal.jsonl', path); // a link to itself
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toMatch(new RegExp(`^FileJournal: could not open ${escape(path)}: ELOOP`));
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('ELOOP');
    expect(readdirSync(dirname(path))).toEqual(['journal.jsonl']);
  });

  it('a file it cannot open (EIO): a JournalError with the cause, the lock released, and the next call opens it', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, flags, mode) => {
      if (target === path) throw fsError('EIO');
      return realOpen(target, flags, mode);
    });
    const j = journal(path);
    const error = await j.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toBe(`FileJournal: could not open ${path}: EIO: injected failure`);
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('EIO');
    expect(existsSync(`${path}.lock`)).toBe(false);
    vi.restoreAllMocks();
    expect(await ids(j)).toEqual(['a']);
  });

  it('a file that vanishes again after another process created it first: opened twice at most, then the failure (no endless retry)', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    let calls = 0;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, flags, mode) => {
      if (target !== path) return realOpen(target, flags, mode);
      calls += 1;
      // The exclusive create finds it there (created meanwhile); each plain open finds it gone.
      throw fsError(((flags as number) & constants.O_EXCL) !== 0 ? 'EEXIST' : 'ENOENT');
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(calls).toBe(3);
  });

  it('a new file it may not create (EACCES): that failure, not a retry', async () => {
    const path = file();
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, flags, mode) => {
      if (target !== path) return realOpen(target, flags, mode);
      throw fsError(((flags as number) & constants.O_EXCL) !== 0 ? 'EACCES' : 'ENOENT');
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(`FileJournal: could not open ${path}: EACCES: injected failure`);
  });

  it('a new file whose mode cannot be set (chmod refused): that failure, and the file it created removed', async () => {
    const path = file();
    const realChmod = handles.chmod;
    let chmods = 0;
    // The lock file is created first (its chmod goes through), then the journal.
    vi.spyOn(handles, 'chmod').mockImplementation(function (this: FileHandle, mode: number) {
      chmods += 1;
      return chmods === 2 ? Promise.reject(fsError('EPERM')) : realChmod.call(this, mode);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(chmods).toBe(2);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(`FileJournal: could not open ${path}: EPERM: injected failure`);
    expect(existsSync(path)).toBe(false);
  });

  it('what is not a regular file: its own message, not wrapped in "could not open"', async () => {
    const path = file();
    mkdirSync(path);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(
      `FileJournal: ${path} is a directory, not a regular file; a journal is a regular file: give FileJournal the path of one (nothing was read or changed)`,
    );
    expect((error as Error).cause).toBeUndefined();
  });

  it('a damaged line: its own message, not wrapped in "could not open"', async () => {
    const path = file();
    writeFileSync(path, `${put('a')}not json\n${put('b')}`);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(`FileJournal: ${path} line 2 is not a journal record (not JSON); the journal is damaged (fix or move the file; nothing was changed)`);
    expect((error as Error).cause).toBeUndefined();
  });
});

describe('FileJournal: its lock while it reads the file again', () => {
  it('is kept when a write could not be cut off and the next read fails: no other journal gets the file in between', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    tornWrite();
    vi.spyOn(handles, 'truncate').mockRejectedValueOnce(fsError('EIO'));
    await expect(j.append([journalLine('lost')])).rejects.toBeInstanceOf(JournalError);

    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, flags, mode) => {
      if (target === path) throw fsError('EIO');
      return realOpen(target, flags, mode);
    });
    await expect(j.pending()).rejects.toThrow(`FileJournal: could not open ${path}: EIO`);
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await expect(journal(path).pending()).rejects.toThrow(/another FileJournal of this process|in use/);

    vi.restoreAllMocks();
    expect(await ids(j)).toEqual(['a']); // read again: the torn write cut off
    expect(readFileSync(path, 'utf8')).toBe(put('a'));
  });
});

// Where /proc shows a process's open files (Linux).
describe.skipIf(!existsSync('/proc/self/fd'))('FileJournal: close() lets go of the file', () => {
  /** How many descriptors of this process are open on `path` (or on a file renamed over it). */
  const openOn = (path: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
      } catch {
        return false;
      }
    }).length;

  it('one descriptor while in use, also after a compaction replaced the file; none once closed', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 2 });
    await j.append([journalLine('a')]);
    expect(openOn(path)).toBe(1);
    await j.append([journalLine('b')]);
    await j.acknowledge(['b']); // 3 lines, 1 pending: compacted
    expect(readFileSync(path, 'utf8')).toBe(put('a'));
    expect(openOn(path)).toBe(1);
    await j.close();
    expect(openOn(path)).toBe(0);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('FileJournal: the size limit', () => {
  // Reading 256 MiB takes seconds: the same rule under a limit lowered to 4 KiB (the real
  // limit's refusal is in file.test.ts).
  it('reads a journal of exactly the limit (its zero-filled torn tail cut off); one byte more is refused', async () => {
    await underSizeLimit(4096, async () => {
      const { FileJournal: Limited } = await import('../../src/journals/file/journal.js');
      const path = file();
      writeFileSync(path, put('a'));
      truncateSync(path, 4096); // zeros: what a power cut can leave after the last write
      const j = closing(new Limited(path));
      expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a']);
      expect(readFileSync(path, 'utf8')).toBe(put('a'));
      await j.close();

      truncateSync(path, 4097);
      await expect(new Limited(path).pending()).rejects.toThrow(`FileJournal: ${path} is larger than ${4096 / 1024 / 1024} MiB`);
      expect(statSync(path).size).toBe(4097);
    });
  });
});

/**
 * The journal's modules loaded afresh inside the test, so that what they set up when
 * loaded (the valid states and causes, the strict UTF-8 decoder) is part of what the test
 * checks.
 */
async function freshModules(): Promise<{ FileJournal: typeof FileJournal; JournalError: typeof JournalError; DEFAULT_JOURNAL_PATH: string }> {
  vi.resetModules();
  const [{ FileJournal: Fresh }, { JournalError: FreshError }, { DEFAULT_JOURNAL_PATH }] = await Promise.all([
    import('../../src/journals/file/journal.js'),
    import('../../src/errors.js'),
    import('../../src/journals/contract.js'),
  ]);
  return { FileJournal: Fresh, JournalError: FreshError, DEFAULT_JOURNAL_PATH };
}

describe('FileJournal after a restart', () => {
  it('gives back every kind of entry, field by field', async () => {
    const { FileJournal: Fresh } = await freshModules();
    const path = file();
    const claimed: JournalLine = { ...journalLine('invoice:1'), invoice: '1', lastError: { message: 'inventory full', at: 5, attempts: 2 } };
    const intended: JournalLine = { ...journalLine('invoice:2', 'Bob', 'intended'), invoice: '2', node: 'node-a', previewedAt: 3, settled: true, item: { ...journalLine('x').item, message: 'a gift' } };
    const mark: JournalClaimMark = { deliveryId: 'claim:1', playerName: 'Ann', state: 'claiming', recordedAt: 4 };
    const window: JournalWindow = { deliveryId: 'window:1', playerName: 'Ann', state: 'unverified', from: 1, to: 2, cause: 'lostClaim', recordedAt: 6 };
    const resolved: JournalWindow = { deliveryId: 'window:2', playerName: 'Bob', state: 'resolved', from: 1, to: 2, cause: 'claimMark', recordedAt: 7, node: 'node-b', resolution: { by: 'staff', at: 8, note: 'granted by hand' } };
    const written: JournalEntry[] = [claimed, intended, mark, window, resolved];
    const first = closing(new Fresh(path));
    await first.append(written.slice(0, 2));
    for (const entry of written.slice(2)) await first.append([entry]);
    await first.close();

    const second = closing(new Fresh(path));
    expect(await second.pending()).toEqual(written);
  });

  it('a complete line that is not UTF-8 is damage, never a name with replacement characters', async () => {
    const { FileJournal: Fresh, JournalError: FreshError } = await freshModules();
    const path = file();
    const bad = Buffer.concat([Buffer.from(put('a').slice(0, put('a').indexOf('Ann'))), Buffer.from([0x41, 0xff, 0x6e]), Buffer.from(put('a').slice(put('a').indexOf('Ann') + 3))]);
    writeFileSync(path, Buffer.concat([Buffer.from(put('b')), bad]));
    const j = closing(new Fresh(path));
    const error = await j.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FreshError);
    expect((error as Error).message).toMatch(/line 2 is not a journal record \(not UTF-8 text\)/);
  });

  it('the default journal is .teamgames-journal.jsonl, the name 0.1.0 used: an upgrade finds its journal', async () => {
    const { DEFAULT_JOURNAL_PATH } = await freshModules();
    expect(DEFAULT_JOURNAL_PATH).toBe('.teamgames-journal.jsonl');
  });
});
