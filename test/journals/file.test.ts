/**
 * FileJournal against real failure: short writes, a full disk at every step, a skipped
 * flush, a failed compaction, and other processes (real ones, SIGKILLed) on the same file.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileJournal, type FileJournalOptions } from '../../src/journals/file/journal.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { InvalidInputError, JournalError } from '../../src/errors.js';
import { fileHandlePrototype, fsError, type FileHandleMethods, type Write, reload, scratchJournals } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

const { root, file, journal } = scratchJournals('file-journal');

const ids = async (j: FileJournal) => (await j.pending()).map((e) => e.deliveryId);

let handles: FileHandleMethods;
let realWrite: Write;
beforeAll(async () => {
  handles = await fileHandlePrototype(root);
  realWrite = handles.write;
});

/** Writes at most `max` bytes of what it is asked, as a real short write does. */
function shortWrite(max: number): Write {
  return function (this: FileHandle, data, offset = 0, length, position = null) {
    const buffer = typeof data === 'string' ? Buffer.from(data) : data;
    const rest = length ?? buffer.length - offset;
    return realWrite.call(this, buffer, offset, Math.min(rest, max), position);
  };
}

const children: ChildProcess[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

describe('FileJournal writes', () => {
  it('loops on short writes until every byte is written', async () => {
    const path = file();
    const j = journal(path);
    await j.pending();
    const write = vi.spyOn(handles, 'write').mockImplementation(shortWrite(7));
    await j.append([journalLine('a'), journalLine('b'), journalLine('c')]);
    await j.acknowledge(['b']);
    expect(write.mock.calls.length).toBeGreaterThan(50);
    vi.restoreAllMocks();

    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    for (const line of text.split('\n').slice(0, -1)) expect(() => JSON.parse(line)).not.toThrow();
    await j.close();
    expect(await reload(path)).toEqual(['a', 'c']);
  });

  it('flushes (fdatasync) every append and acknowledgement after its last byte is written', async () => {
    const j = journal(file());
    await j.pending();
    const write = vi.spyOn(handles, 'write');
    const datasync = vi.spyOn(handles, 'datasync');

    await j.append([journalLine('a')]);
    expect(datasync).toHaveBeenCalledTimes(1);
    await j.acknowledge(['a']);
    expect(datasync).toHaveBeenCalledTimes(2);
    // Each flush follows its write, on the same handle.
    expect(datasync.mock.invocationCallOrder[0]).toBeGreaterThan(write.mock.invocationCallOrder[0] as number);
    expect(datasync.mock.invocationCallOrder[1]).toBeGreaterThan(write.mock.invocationCallOrder[1] as number);
    expect(datasync.mock.contexts).toEqual([write.mock.contexts[0], write.mock.contexts[0]]);
  });

  it('does not flush with fsync: false', async () => {
    const j = journal(file(), { fsync: false });
    await j.pending();
    const datasync = vi.spyOn(handles, 'datasync');
    await j.append([journalLine('a')]);
    await j.acknowledge(['a']);
    expect(datasync).not.toHaveBeenCalled();
  });
});

describe('FileJournal when a write fails', () => {
  const failures = {
    'write refused (ENOSPC)': () => vi.spyOn(handles, 'write').mockRejectedValueOnce(fsError('ENOSPC')),
    'short write, then ENOSPC': () =>
      vi
        .spyOn(handles, 'write')
        .mockImplementationOnce(shortWrite(9))
        .mockRejectedValueOnce(fsError('ENOSPC')),
    'datasync failing (EIO) after the whole write': () => vi.spyOn(handles, 'datasync').mockRejectedValueOnce(fsError('EIO')),
  };

  const cases: Array<[string, keyof typeof failures, string[]]> = [
    ['the first write after load', 'write refused (ENOSPC)', []],
    ['a write after successful ones', 'write refused (ENOSPC)', ['a', 'b']],
    ['a write after successful ones', 'short write, then ENOSPC', ['a', 'b']],
    ['a write after successful ones', 'datasync failing (EIO) after the whole write', ['a', 'b']],
    ['the first write after load', 'datasync failing (EIO) after the whole write', []],
  ];

  it.each(cases)('append: %s, %s: rejects, changes nothing, and the journal goes on', async (_when, failure, before) => {
    const path = file();
    const j = journal(path);
    if (before.length > 0) await j.append(before.map((id) => journalLine(id)));
    await j.pending();
    const good = readFileSync(path);
    failures[failure]();

    const error = await j.append([journalLine('lost')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect(((error as JournalError).cause as NodeJS.ErrnoException).code).toMatch(/ENOSPC|EIO/);
    expect(await ids(j)).toEqual(before);
    expect(readFileSync(path).equals(good)).toBe(true); // no torn line left behind

    await j.append([journalLine('next')]);
    expect(await ids(j)).toEqual([...before, 'next']);
    await j.close();
    expect(await reload(path)).toEqual([...before, 'next']);
  });

  it('reads the file again when the torn write cannot even be cut off', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    failures['short write, then ENOSPC']();
    vi.spyOn(handles, 'truncate').mockRejectedValueOnce(fsError('EIO'));

    await expect(j.append([journalLine('lost')])).rejects.toBeInstanceOf(JournalError);
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(false); // the torn line is still there
    await j.append([journalLine('next')]); // the reload cut it off first
    await j.close();
    expect(await reload(path)).toEqual(['a', 'next']);
  });

  it.each(Object.keys(failures) as Array<keyof typeof failures>)('acknowledge, %s: rejects, keeps the entries, and the next acknowledgement works', async (failure) => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a'), journalLine('b')]);
    const good = readFileSync(path);
    failures[failure]();

    await expect(j.acknowledge(['a'])).rejects.toBeInstanceOf(JournalError);
    expect(await ids(j)).toEqual(['a', 'b']);
    expect(readFileSync(path).equals(good)).toBe(true);

    await j.acknowledge(['a']);
    expect(await ids(j)).toEqual(['b']);
    await j.close();
    expect(await reload(path)).toEqual(['b']);
  });
});

describe('FileJournal reading its file back', () => {
  const put = (id: string) => `${JSON.stringify({ op: 'put', entry: journalLine(id) })}\n`;
  const ack = (...acked: string[]) => `${JSON.stringify({ op: 'ack', ids: acked })}\n`;

  /** Opens a journal on `text` and expects damage at `line`, with the file left as it was. */
  async function damaged(text: string, line: number, problem: RegExp): Promise<void> {
    const path = file();
    writeFileSync(path, text);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(new RegExp(`line ${line} is not a journal record \\(.*\\); the journal is damaged`));
    expect((error as Error).message).toMatch(problem);
    expect(readFileSync(path, 'utf8')).toBe(text); // nothing changed: not even the last line cut off
    expect(existsSync(`${path}.lock`)).toBe(false);
  }

  // #21 point 4: only a last line without its newline is a torn write.
  it.each([
    ['not JSON', 'not json\n', /not JSON/],
    ['JSON cut short, but with its newline', `${put('b').slice(0, 40)}\n`, /not JSON/],
    ['a JSON string', '"hello"\n', /not an object/],
    ['an unknown op', `${JSON.stringify({ op: 'del', ids: ['a'] })}\n`, /op is not 'put' or 'ack'/],
    ['NUL bytes (a block the disk never wrote)', `${'\0'.repeat(30)}\n`, /not JSON/],
  ])('a complete last line that is %s is damage, not a torn write', async (_name, last, problem) => {
    await damaged(put('a') + last, 2, problem);
  });

  it('a complete last line of bytes that are not UTF-8 is damage', async () => {
    const path = file();
    const text = Buffer.concat([Buffer.from(put('a')), Buffer.from('{"op":"ack","ids":["'), Buffer.from([0xff, 0xfe]), Buffer.from('"]}\n')]);
    writeFileSync(path, text);
    await expect(journal(path).pending()).rejects.toThrow(/line 2 is not a journal record \(not UTF-8 text\)/);
    expect(readFileSync(path).equals(text)).toBe(true);
  });

  // #21 point 6: records of the wrong shape are damage, never items to grant.
  const { item: _item, ...noItem } = journalLine('x');
  it.each<[string, unknown, RegExp]>([
    ['an entry that is a string', { op: 'put', entry: 'garbage' }, /entry: not an object \("garbage"\)/],
    ['an entry that is an array', { op: 'put', entry: ['g', 'a'] }, /entry: not an object/],
    ['no entry at all', { op: 'put' }, /entry: not an object \(undefined\)/],
    ['an unknown state', { op: 'put', entry: { ...journalLine('x'), state: 'granted' } }, /state is not .*\("granted"\)/],
    ['a line without its item', { op: 'put', entry: noItem }, /item is not an object/],
    ['an item with a missing field', { op: 'put', entry: { ...journalLine('x'), item: { ...journalLine('x').item, quantity_to_grant: undefined } } }, /item.quantity_to_grant is not a number/],
    ['an item that is a string', { op: 'put', entry: { ...journalLine('x'), item: 'garbage' } }, /item is not an object/],
    ['no deliveryId', { op: 'put', entry: { ...journalLine('x'), deliveryId: 7 } }, /deliveryId/],
    ['an acknowledgement of a number', { op: 'ack', ids: ['a', 7] }, /ids\[1\] is not a string \(7\)/],
    ['an acknowledgement without ids', { op: 'ack', ids: 'a' }, /ids is not an array/],
  ])('%s is damage: in the middle, as the last line, and as the last line without its newline', async (_name, record, problem) => {
    const text = JSON.stringify(record);
    await damaged(put('a') + `${text}\n` + put('b'), 2, problem);
    await damaged(put('a') + `${text}\n`, 2, problem);
    // Valid JSON is no torn write: a tear leaves a prefix, never a whole JSON value.
    await damaged(put('a') + text, 2, problem);
  });

  // #21 point 3: a power cut keeps any prefix of an unsynced write, a line boundary too.
  it('an append of several entries is one line: every prefix of its bytes on disk loads with all of its entries or none', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    const before = readFileSync(path);
    await j.append([journalLine('b'), journalLine('c', 'Bob'), { ...journalLine('d'), state: 'intended', previewedAt: 5 }]);
    await j.close();
    const written = readFileSync(path).subarray(before.length);

    const cuts = new Set([0, written.length]);
    for (let i = 0; i < written.length; i++) {
      if (written[i] === 0x0a) [i - 1, i, i + 1].forEach((cut) => cuts.add(cut));
      if (i % 97 === 0) cuts.add(i);
    }
    for (const cut of cuts) {
      const disk = file();
      writeFileSync(disk, Buffer.concat([before, written.subarray(0, cut)]));
      const loaded = await reload(disk);
      expect(loaded, `power cut after ${cut} of ${written.length} bytes`).toEqual(cut >= written.length - 1 ? ['a', 'b', 'c', 'd'] : ['a']);
      // The torn line is cut off: the file ends on a whole line.
      expect(readFileSync(disk).equals(cut >= written.length - 1 ? Buffer.concat([before, written]) : before)).toBe(true);
    }
    expect(written.indexOf(0x0a)).toBe(written.length - 1); // one line, its newline last
  });

  it('a torn batch as the last line (no newline) loads with none of its entries, and the next append starts on a clean line', async () => {
    const path = file();
    const batch = JSON.stringify({ op: 'put', entries: [journalLine('b'), journalLine('c')] });
    writeFileSync(path, `${put('a')}${batch.slice(0, batch.indexOf('"deliveryId":"c"'))}`);
    const j = journal(path);
    expect(await ids(j)).toEqual(['a']);
    await j.append([journalLine('e'), journalLine('f')]);
    await j.close();
    expect(await reload(path)).toEqual(['a', 'e', 'f']);
  });

  it('opens a file written by 0.1.0 (one put line per entry, ack lines) unchanged', async () => {
    const path = file();
    // As 0.1.0 wrote an append of [a, b], then [c], then acknowledged a.
    const old = `${put('a')}${put('b')}${put('c')}${ack('a')}`;
    writeFileSync(path, old);
    const j = journal(path);
    expect(await j.pending()).toEqual([journalLine('b'), journalLine('c')]);
    expect(readFileSync(path, 'utf8')).toBe(old);
    await j.append([journalLine('d'), journalLine('e')]);
    await j.close();
    expect(await reload(path)).toEqual(['b', 'c', 'd', 'e']);
  });

  it('a batch holding one record of the wrong shape is damage, naming the record', async () => {
    const batch = JSON.stringify({ op: 'put', entries: [journalLine('b'), { ...journalLine('c'), state: 'lost' }] });
    await damaged(`${put('a')}${batch}\n${put('d')}`, 2, /entries\[1\]: state is not/);
    await damaged(`${put('a')}${JSON.stringify({ op: 'put', entries: 'b' })}\n`, 2, /entries is not an array/);
    await damaged(`${put('a')}${JSON.stringify({ op: 'put', entry: journalLine('b'), entries: [journalLine('c')] })}\n`, 2, /both entry and entries/);
  });

  /** The handles `sync` was called on, as what they are, in call order. */
  function syncs(): Array<{ dir: boolean; ino: number; size: number }> {
    const seen: Array<{ dir: boolean; ino: number; size: number }> = [];
    const realSync = handles.sync;
    vi.spyOn(handles, 'sync').mockImplementation(async function (this: FileHandle) {
      const stats = await this.stat();
      seen.push({ dir: stats.isDirectory(), ino: stats.ino, size: stats.size });
      return realSync.call(this);
    });
    return seen;
  }

  // #27: a cut that is not synced can come back after a power cut, glued to the next line.
  it('cuts a torn last line durably: the file is synced after the cut, before any write', async () => {
    const path = file();
    writeFileSync(path, `${put('a')}${put('b').slice(0, 30)}`);
    const seen = syncs();
    const truncate = vi.spyOn(handles, 'truncate');
    const j = journal(path);
    expect(await ids(j)).toEqual(['a']);
    expect(truncate).toHaveBeenCalledWith(put('a').length);
    expect(seen.filter((s) => s.ino === statSync(path).ino)).toEqual([{ dir: false, ino: statSync(path).ino, size: put('a').length }]);
  });

  it('adds the lost newline of a complete last record durably', async () => {
    const path = file();
    writeFileSync(path, put('a').trimEnd());
    const seen = syncs();
    expect(await ids(journal(path))).toEqual(['a']);
    expect(seen.filter((s) => s.ino === statSync(path).ino)).toEqual([{ dir: false, ino: statSync(path).ino, size: put('a').length }]);
  });

  // #27: a new file's name is durable only once its directory is synced.
  it('syncs the directory of a journal it creates, and nothing for a file already there', async () => {
    const path = file();
    const seen = syncs();
    await journal(path).pending();
    expect(existsSync(path)).toBe(true);
    // The lock file's own sync and its directory's, then the new journal's directory.
    expect(seen.at(-1)).toMatchObject({ dir: true, ino: statSync(dirname(path)).ino });
    expect(seen.filter((s) => s.dir)).toHaveLength(2);

    const other = file();
    writeFileSync(other, put('a'));
    const before = seen.length;
    await journal(other).pending();
    expect(seen.slice(before).filter((s) => s.dir)).toHaveLength(1); // the lock's only
  });

  it('a torn last line (no newline, not JSON) is dropped and cut off; blank lines are skipped', async () => {
    const path = file();
    writeFileSync(path, `${put('a')}\n${put('b')}${ack('a')}${put('c').slice(0, 50)}`);
    expect(await ids(journal(path))).toEqual(['b']);
    expect(readFileSync(path, 'utf8')).toBe(`${put('a')}\n${put('b')}${ack('a')}`);
  });
});

// #21 point 11: a FIFO hung the load, a device was read forever into memory.
describe('FileJournal on what is not a regular file', () => {
  const mkfifo = (path: string) => execFileSync('mkfifo', [path]);
  const put = (id: string) => `${JSON.stringify({ op: 'put', entry: journalLine(id) })}\n`;

  async function refused(path: string, what: RegExp): Promise<JournalError> {
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toMatch(what);
    expect(existsSync(`${path}.lock`)).toBe(false); // the lock was released
    return error as JournalError;
  }

  it('refuses a FIFO at once, without opening it for reading', { timeout: 5_000 }, async () => {
    const path = file();
    mkfifo(path);
    await refused(path, /is a FIFO, not a regular file/);
    expect(lstatSync(path).isFIFO()).toBe(true);
  });

  it.each(['/dev/zero', '/dev/full', '/dev/null'])('refuses a symlink to %s, naming the device behind it', { timeout: 5_000 }, async (device) => {
    const path = file();
    symlinkSync(device, path);
    await refused(path, new RegExp(`\\(${device}\\) is a character device, not a regular file`));
    expect(existsSync(`${device}.lock`)).toBe(false); // no lock taken beside the device
  });

  it('refuses a directory', async () => {
    const path = file();
    mkdirSync(path);
    await refused(path, /is a directory, not a regular file/);
  });

  it('refuses a FIFO swapped in between the check and the open (checked again on the handle)', { timeout: 5_000 }, async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const realOpen = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (target, flags, mode) => {
      if (target === path) {
        unlinkSync(path);
        mkfifo(path);
      }
      return realOpen(target, flags, mode);
    });
    await refused(path, /is a FIFO, not a regular file/);
  });

  it('refuses a journal larger than 256 MiB without reading it, and leaves it as it is', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    truncateSync(path, 256 * 1024 * 1024 + 1); // sparse: NUL bytes that 0.1.0 read whole, then cut off as a torn line
    const read = vi.spyOn(handles as unknown as { read: () => Promise<unknown> }, 'read');
    await refused(path, /is larger than 256 MiB/);
    expect(read).not.toHaveBeenCalled();
    expect(statSync(path).size).toBe(256 * 1024 * 1024 + 1);
  });

  it.each<[string, (lock: string) => void, RegExp]>([
    ['a FIFO', (lock) => mkfifo(lock), /the lock file .*\.lock of .* is a FIFO, not a lock file/],
    // Never followed (it would be to where whoever planted it chooses): refused as a link.
    ['a symlink to /dev/zero', (lock) => symlinkSync('/dev/zero', lock), /the lock file .*\.lock is a symbolic link, which this SDK never makes/],
    ['a directory', (lock) => mkdirSync(lock), /the lock file .*\.lock of .* is a directory/],
    // Not checked as a lock file (its owner and mode): what it is decides, and says so.
    ['a directory anyone can write', (lock) => {
      mkdirSync(lock);
      chmodSync(lock, 0o777);
    }, /the lock file .*\.lock of .* is a directory/],
  ])('refuses a lock file that is %s, at once', { timeout: 5_000 }, async (_name, plant, message) => {
    const path = file();
    plant(`${path}.lock`);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toMatch(message);
    expect(existsSync(path)).toBe(false); // the journal was not even opened
  });

  it('reads at most 4 KiB of a lock file: a huge one does not name its holder', async () => {
    const path = file();
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), since: '' }));
    truncateSync(`${path}.lock`, 64 * 1024 * 1024);
    await expect(journal(path).pending()).rejects.toThrow(/does not name its holder/);
  });
});

describe('FileJournal compaction', () => {
  /** Appends and acknowledges `count` entries, one at a time: two lines each. */
  async function churn(j: FileJournal, from: number, count: number): Promise<void> {
    for (let i = from; i < from + count; i++) {
      await j.append([journalLine(`tmp-${i}`)]);
      await j.acknowledge([`tmp-${i}`]);
    }
  }
  const leftovers = (path: string) => readdirSync(join(path, '..')).filter((name) => name !== 'journal.jsonl' && name !== 'journal.jsonl.lock');

  it('renames a synced temporary file over the journal', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 4 });
    await j.append([journalLine('keep')]);
    const rename = vi.spyOn(fsCalls, 'rename');
    await churn(j, 0, 3);
    expect(rename).toHaveBeenCalled();
    const [from, to] = rename.mock.calls[0] as [string, string];
    expect(from).toMatch(new RegExp(`^${path.replace(/[.\\]/g, '\\$&')}\\.${process.pid}\\.[0-9a-f]{12}\\.compact$`));
    expect(to).toBe(path);
    expect(leftovers(path)).toEqual([]);
    await j.close();
    expect(await reload(path)).toEqual(['keep']);
  });

  const failures = {
    'opening the temporary file': () =>
      vi.spyOn(fsCalls, 'open').mockImplementation(async (path, flags) => {
        if (String(path).endsWith('.compact')) throw fsError('ENOSPC');
        return open(path, flags);
      }),
    'syncing the temporary file': () => vi.spyOn(handles, 'sync').mockRejectedValueOnce(fsError('EIO')),
    'renaming it over the journal': () => vi.spyOn(fsCalls, 'rename').mockRejectedValueOnce(fsError('EACCES')),
  };

  it.each(Object.keys(failures) as Array<keyof typeof failures>)(
    'that fails %s leaves no temporary file, keeps the journal usable and compacts later',
    async (failure) => {
      const path = file();
      const j = journal(path, { compactAfter: 4 });
      await j.append([journalLine('keep')]);
      await churn(j, 0, 1);
      await j.append([journalLine('tmp-1')]); // 4 lines: the next acknowledgement compacts
      const spy = failures[failure]();

      await j.acknowledge(['tmp-1']); // its own write was durable: it resolves
      expect(spy).toHaveBeenCalled();
      expect(leftovers(path)).toEqual([]);
      expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(5); // not compacted
      vi.restoreAllMocks();

      await j.append([journalLine('more')]);
      await j.acknowledge(['tmp-0']); // compacts now
      expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
      await j.append([journalLine('after')]);
      expect(await ids(j)).toEqual(['keep', 'more', 'after']);
      await j.close();
      expect(await reload(path)).toEqual(['keep', 'more', 'after']);
    },
  );

  it('removes the temporary files of a compaction a crash interrupted, and only those', async () => {
    const path = file();
    const beside = ['journal.jsonl.4242.0123456789ab.compact', 'journal.jsonl.compact', 'journal.jsonl.notes.compact', 'other.jsonl.1.0123456789ab.compact'];
    for (const name of beside) writeFileSync(join(path, '..', name), 'x');
    await journal(path).pending();
    expect(leftovers(path).sort()).toEqual(['journal.jsonl.notes.compact', 'other.jsonl.1.0123456789ab.compact']);
  });

  it('a second instance on the same file is refused, so the two can never compact over each other', async () => {
    const path = file();
    const first = journal(path, { compactAfter: 4 });
    const second = journal(path, { compactAfter: 4 });
    await first.append([journalLine('keep')]);
    await expect(second.append([journalLine('other')])).rejects.toBeInstanceOf(JournalError);
    await churn(first, 0, 5);
    await expect(second.acknowledge(['keep'])).rejects.toBeInstanceOf(JournalError);
    expect(await ids(first)).toEqual(['keep']);
    await first.close();
    expect(await ids(second)).toEqual(['keep']); // free once the first is closed
  });
});

describe('FileJournal lock', () => {
  const lockOf = (path: string) => `${path}.lock`;
  const plant = (path: string, holder: object | string) => writeFileSync(lockOf(path), typeof holder === 'string' ? holder : JSON.stringify(holder));
  const holderOf = (path: string) => JSON.parse(readFileSync(lockOf(path), 'utf8')) as { pid: number; host: string; since: string };
  /** The pid of a process that has exited. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid as number;
  /** On Linux a lock also records this boot's id and the holder's start time (src/journals/file/holder.ts). */
  const incarnation = existsSync('/proc/self/stat') ? { boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), start: expect.stringMatching(/^\d+$/) } : {};

  // Regression (found by the crash campaign): the lock file was created empty, then
  // written; a kill in between left an empty lock that refused every later start.
  it('never exists without its holder: written to a file of its own, then linked into place', async () => {
    const path = file();
    const open = vi.spyOn(fsCalls, 'open');
    const seen: string[] = [];
    const realLink = fsCalls.link;
    vi.spyOn(fsCalls, 'link').mockImplementation(async (from, to) => {
      seen.push(readFileSync(from, 'utf8'));
      expect(existsSync(to)).toBe(false);
      return realLink(from, to);
    });
    const j = journal(path);
    await j.pending();
    expect(JSON.parse(seen[0] ?? '')).toEqual({ pid: process.pid, host: hostname(), since: expect.any(String), ...incarnation });
    expect(open.mock.calls.filter(([target, flags]) => target === lockOf(path) && flags === 'wx')).toEqual([]);
    expect(readdirSync(dirname(path)).filter((name) => name.endsWith('.new'))).toEqual([]);
    await j.close();
  });

  it('is taken on first use with pid, host and time, and released (with its exit listener) on close', async () => {
    const path = file();
    const listeners = process.listenerCount('exit');
    const j = journal(path);
    expect(existsSync(lockOf(path))).toBe(false);
    await j.pending();
    const holder = holderOf(path);
    expect(holder).toEqual({ pid: process.pid, host: hostname(), since: expect.any(String), ...incarnation });
    expect(Date.parse(holder.since)).not.toBeNaN();
    const other = journal(file());
    await other.pending();
    expect(process.listenerCount('exit')).toBe(listeners + 1); // one for all journals

    await j.close();
    expect(existsSync(lockOf(path))).toBe(false);
    await other.close();
    expect(process.listenerCount('exit')).toBe(listeners);
    await j.pending(); // taken again on next use
    expect(holderOf(path).pid).toBe(process.pid);
  });

  it('refuses a second FileJournal of this process on the same file until the first closes', async () => {
    const path = file();
    const first = journal(path);
    await first.append([journalLine('a')]);
    const second = journal(path);
    const error = await second.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain(lockOf(path));
    expect((error as Error).message).toContain(`process ${process.pid} on host ${hostname()}`);
    await second.close(); // closing the refused one does not release the first one's lock
    expect(holderOf(path).pid).toBe(process.pid);
    await expect(second.pending()).rejects.toBeInstanceOf(JournalError);

    await first.close();
    expect(await ids(second)).toEqual(['a']);
  });

  it('takes over the lock of a process that is gone', async () => {
    const path = file();
    const pid = deadPid();
    plant(path, { pid, host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const j = journal(path);
    expect(await ids(j)).toEqual([]);
    expect(holderOf(path).pid).toBe(process.pid);
    expect(readdirSync(join(path, '..')).sort()).toEqual(['journal.jsonl', 'journal.jsonl.lock']);
  });

  it('takes over a lock with its own pid that no journal of this process holds (an earlier life of a restarted container)', async () => {
    const path = file();
    plant(path, { pid: process.pid, host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const j = journal(path);
    await j.pending();
    expect(holderOf(path).since).not.toBe('2020-01-01T00:00:00.000Z');
  });

  it.each([
    ['a live process of this host', () => ({ pid: process.ppid, host: hostname() }), () => `process ${process.ppid} on host ${hostname()}`],
    ['another host (whose processes it cannot see)', () => ({ pid: deadPid(), host: 'elsewhere.invalid' }), () => 'on host elsewhere.invalid'],
  ])('refuses a lock held by %s, and leaves it alone', async (_name, holder, named) => {
    const path = file();
    plant(path, { ...holder(), since: '2020-01-01T00:00:00.000Z' });
    const before = readFileSync(lockOf(path), 'utf8');
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(named());
    expect((error as Error).message).toContain(`remove ${lockOf(path)} if process`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(before);
    expect(existsSync(path)).toBe(false); // the journal was not even read
  });

  it('refuses a lock that does not name its holder', async () => {
    const path = file();
    plant(path, '');
    await expect(journal(path).pending()).rejects.toThrow(new RegExp(`remove ${lockOf(path).replace(/[.\\]/g, '\\$&')} if no process`));
  });

  it('puts back a fresh lock that another process created while it removed the stale one', async () => {
    const path = file();
    plant(path, { pid: deadPid(), host: hostname(), since: '2020-01-01T00:00:00.000Z' });
    const fresh = JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString() });
    const rename = fsCalls.rename;
    // Another process removes the same stale lock and takes its own just before our rename.
    vi.spyOn(fsCalls, 'rename').mockImplementationOnce(async (from, to) => {
      rmSync(lockOf(path));
      writeFileSync(lockOf(path), fresh);
      return rename(from, to);
    });
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(`process ${process.ppid}`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(fresh);
    expect(readdirSync(join(path, '..'))).toEqual(['journal.jsonl.lock']);
  });

  it('releases the lock when a damaged file fails the load', async () => {
    const path = file();
    writeFileSync(path, `not json\n${JSON.stringify({ op: 'put', entry: journalLine('a') })}\n`);
    await expect(journal(path).pending()).rejects.toThrow(/line 1 .*damaged/);
    expect(existsSync(lockOf(path))).toBe(false);
    await expect(journal(path).pending()).rejects.toThrow(/damaged/); // not "in use"
  });
});

// #21 point 2: a second name of a held file was not refused, and compaction erased its lines.
describe('FileJournal: one file, one journal, whatever its name', () => {
  const lockOf = (path: string) => `${path}.lock`;

  /** Expects `second` refused while `first` holds the file, naming both. */
  async function refusedBeside(first: FileJournal, second: FileJournal, named: RegExp = /./): Promise<void> {
    await first.append([journalLine('a'), journalLine('b')]);
    const error = await second.append([journalLine('other')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(second.path);
    expect((error as Error).message).toContain(second.path);
    expect((error as Error).message).toContain(first.path);
    expect((error as Error).message).toMatch(named);
    expect(await ids(first)).toEqual(['a', 'b']);
  }

  it('refuses a symbolic link to a file another FileJournal of this process holds, and locks the real file', async () => {
    const path = file();
    const link = join(dirname(path), 'link.jsonl');
    symlinkSync(path, link);
    const first = journal(path, { compactAfter: 2 });
    const second = journal(link);
    await refusedBeside(first, second, /another FileJournal of this process holds as/);
    await first.acknowledge(['a']); // compacts: a refused second name cannot lose its lines
    await first.close();
    expect(await ids(second)).toEqual(['b']); // free once the first is closed
    expect(existsSync(lockOf(path))).toBe(true); // the lock of the real file
    expect(existsSync(lockOf(link))).toBe(false);
    await expect(journal(path).pending()).rejects.toThrow(/in use by process/);
  });

  it('refuses a path through a symbolic link to the directory', async () => {
    const path = file();
    const dirLink = join(root, `dir-link-${basename(dirname(path))}`);
    symlinkSync(dirname(path), dirLink);
    await refusedBeside(journal(path), journal(join(dirLink, 'journal.jsonl')));
  });

  it('refuses a dir/sub/../ path to the same file', async () => {
    const path = file();
    mkdirSync(join(dirname(path), 'sub'));
    await refusedBeside(journal(path), journal(join(dirname(path), 'sub', '..', 'journal.jsonl')));
  });

  it('follows a link to a file not created yet: it creates the file the link names, and locks that', async () => {
    const path = file();
    const link = join(dirname(path), 'link.jsonl');
    symlinkSync('journal.jsonl', link); // relative, dangling
    const first = journal(link);
    await first.append([journalLine('a')]);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(existsSync(lockOf(path))).toBe(true);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(new RegExp(`holds as ${link.replace(/[.\\]/g, '\\$&')}`));
  });

  it('refuses a hard link to a file another FileJournal of this process holds, naming both', async () => {
    const path = file();
    const first = journal(path);
    await first.pending();
    const other = join(dirname(path), 'hard.jsonl');
    linkSync(path, other);
    await refusedBeside(first, journal(other), /is the same file as .* \(a hard link\)/);
    expect(existsSync(lockOf(other))).toBe(false); // its lock was released
  });

  it('refuses a file with another name (a hard link) even when nothing holds it, and changes nothing', async () => {
    const path = file();
    writeFileSync(path, `${JSON.stringify({ op: 'put', entry: journalLine('a') })}\n{"op":"put","ent`);
    linkSync(path, join(dirname(path), 'hard.jsonl'));
    const before = readFileSync(path);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toMatch(/has 2 names \(hard links\)/);
    expect(readFileSync(path).equals(before)).toBe(true); // the torn line was not even cut off
    expect(existsSync(lockOf(path))).toBe(false);
  });

  it('compacts the real file through a symbolic link: the link stays a link, nothing is left beside it', async () => {
    const path = file();
    const linkDir = join(root, `elsewhere-${basename(dirname(path))}`);
    mkdirSync(linkDir);
    const link = join(linkDir, 'journal.jsonl');
    symlinkSync(path, link);
    const j = journal(link, { compactAfter: 4 });
    await j.append([journalLine('keep')]);
    for (let i = 0; i < 4; i++) {
      await j.append([journalLine(`tmp-${i}`)]);
      await j.acknowledge([`tmp-${i}`]);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean).length).toBeLessThan(5); // compacted
    expect(readdirSync(linkDir)).toEqual(['journal.jsonl']);
    await j.close();
    expect(await reload(path)).toEqual(['keep']);
  });
});

describe('FileJournal and another process', () => {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const moduleUrl = new URL('../../src/journals/file/journal.ts', import.meta.url).href;

  /** A process that opens the journal, appends one entry, says `ready`, and exits when its stdin ends. */
  async function holder(path: string): Promise<ChildProcess> {
    const code = `
      const { FileJournal } = await import(${JSON.stringify(moduleUrl)});
      const journal = new FileJournal(${JSON.stringify(path)});
      await journal.append([${JSON.stringify(journalLine('from-child'))}]);
      process.stdout.write('ready\\n');
      process.stdin.resume();
      process.stdin.on('end', () => process.stdin.pause());
    `;
    const child = spawn(process.execPath, ['--import', loader, '--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      child.once('exit', (status) => reject(new Error(`the child exited (${status}) before it was ready: ${stderr}`)));
    });
    return child;
  }
  const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));

  it('is refused while another process holds the file, and takes over once it is SIGKILLed', { timeout: 30_000 }, async () => {
    const path = file();
    const child = await holder(path);
    const j = journal(path);
    const error = await j.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(path);
    expect((error as Error).message).toContain(`process ${child.pid} on host ${hostname()}`);
    expect((error as Error).message).toContain(`remove ${path}.lock if process ${child.pid} is gone`);

    child.kill('SIGKILL');
    await exited(child);
    expect(existsSync(`${path}.lock`)).toBe(true); // a killed process cannot clean up
    expect(await ids(j)).toEqual(['from-child']); // the same journal, on its next call
    expect(JSON.parse(readFileSync(`${path}.lock`, 'utf8')).pid).toBe(process.pid);
  });

  it('is refused through a symbolic link while another process holds the real file, and takes over once it is SIGKILLed', { timeout: 30_000 }, async () => {
    const path = file();
    const link = join(root, `link-${basename(dirname(path))}.jsonl`);
    symlinkSync(path, link);
    const child = await holder(path);
    const j = journal(link);
    const error = await j.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).path).toBe(link);
    expect((error as Error).message).toContain(`${link} (the file ${path}) is in use by process ${child.pid} on host ${hostname()}`);
    expect((error as Error).message).toContain(`lock file ${path}.lock`);
    expect(existsSync(`${link}.lock`)).toBe(false);

    child.kill('SIGKILL');
    await exited(child);
    expect(await ids(j)).toEqual(['from-child']);
  });

  it('is refused through a hard link while another process holds the file under its other name', { timeout: 30_000 }, async () => {
    const path = file();
    const child = await holder(path);
    const other = join(dirname(path), 'hard.jsonl');
    linkSync(path, other);
    const error = await journal(other).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toMatch(/has 2 names \(hard links\)/);
    child.stdin?.end();
    await exited(child);
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ op: 'put', entry: journalLine('from-child') })}\n`);
  });

  it('is released when the holding process exits without closing the journal', { timeout: 30_000 }, async () => {
    const path = file();
    const child = await holder(path);
    child.stdin?.end();
    expect(await exited(child)).toBe(0);
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(await ids(journal(path))).toEqual(['from-child']);
  });
});

describe('new FileJournal', () => {
  it.each<[string, unknown, unknown, string, RegExp]>([
    ['a number path', 42, undefined, 'path', /must be a string, got 42/],
    ['an object path', {}, undefined, 'path', /must be a string, got an object/],
    ['an empty path', '', undefined, 'path', /must not be blank/],
    ['a blank path', '   ', undefined, 'path', /must not be blank/],
    ['null options', 'j.jsonl', null, 'options', /must be an object, got null/],
    ['string options', 'j.jsonl', 'x'.repeat(100), 'options', /must be an object, got a string of 100 characters/],
    ['an unknown option', 'j.jsonl', { fsynk: true }, 'options.fsynk', /unknown option; known: compactAfter, fsync/],
    ['a miscased option', 'j.jsonl', { compactafter: 5 }, 'options.compactafter', /did you mean compactAfter\?/],
    ['compactAfter 0', 'j.jsonl', { compactAfter: 0 }, 'options.compactAfter', /must be a positive integer, got 0/],
    ['compactAfter negative', 'j.jsonl', { compactAfter: -1 }, 'options.compactAfter', /positive integer/],
    ['compactAfter fractional', 'j.jsonl', { compactAfter: 1.5 }, 'options.compactAfter', /positive integer/],
    ['compactAfter NaN', 'j.jsonl', { compactAfter: NaN }, 'options.compactAfter', /positive integer/],
    ['compactAfter unsafe', 'j.jsonl', { compactAfter: 2 ** 53 }, 'options.compactAfter', /positive integer/],
    ['compactAfter a string', 'j.jsonl', { compactAfter: '10' }, 'options.compactAfter', /positive integer, got a string of 2 characters/],
    ['fsync a string', 'j.jsonl', { fsync: 'yes' }, 'options.fsync', /must be a boolean, got a string of 3 characters/],
    ['fsync a number', 'j.jsonl', { fsync: 1 }, 'options.fsync', /must be a boolean, got 1/],
    ['fsync null', 'j.jsonl', { fsync: null }, 'options.fsync', /must be a boolean, got null/],
  ])('refuses %s', (_name, path, options, argument, rule) => {
    const make = () => new FileJournal(path as string, options as object);
    expect(make).toThrow(InvalidInputError);
    expect(make).toThrow(rule);
    let error: unknown;
    try {
      make();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).argument).toBe(argument);
    expect((error as Error).message).toMatch(/^StorefrontClient: invalid /);
  });

  it('accepts valid options, and touches no file', () => {
    const path = file();
    expect(new FileJournal(path, { compactAfter: 1, fsync: false }).path).toBe(path);
    // As JavaScript callers may write it.
    expect(new FileJournal(path, { compactAfter: undefined, fsync: undefined } as unknown as FileJournalOptions).path).toBe(path);
    expect(existsSync(path)).toBe(false);
  });
});
