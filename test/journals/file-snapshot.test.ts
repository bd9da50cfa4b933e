/**
 * The journal file read as it is, without its lock (src/journals/file/snapshot.ts: what
 * `teamgames journal` shows beside a running bridge), by what staff rely on: it changes
 * nothing and creates nothing, a torn last line is left out and counted, and every reason
 * it cannot read says which: no file, not a regular file (also one swapped in after the
 * check, never blocking on a FIFO), larger than the limit, a damaged line, a failed read;
 * the file it opened is closed whatever happens.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JournalError } from '../../src/errors.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { readFileSnapshot } from '../../src/journals/file/snapshot.js';
import { fileHandlePrototype, fsError, scratchJournals, underSizeLimit, type FileHandleMethods } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

const { root, file } = scratchJournals('file-snapshot');
let handles: FileHandleMethods;
beforeAll(async () => {
  handles = await fileHandlePrototype(root);
});
afterEach(() => {
  vi.restoreAllMocks();
});

const put = (id: string) => `${JSON.stringify({ op: 'put', entry: journalLine(id) })}\n`;
const ack = (id: string) => `${JSON.stringify({ op: 'ack', ids: [id] })}\n`;

/**
 * Counts the closes of the files the snapshot opens (`close` is a property of each
 * handle, not of the prototype); `before` runs ahead of each open.
 */
function countCloses(before: () => void = () => {}): { closes: () => number } {
  const realOpen = fsCalls.open;
  let closes = 0;
  vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof realOpen>) => {
    before();
    const handle = await realOpen(...args);
    const close = handle.close.bind(handle);
    handle.close = () => {
      closes += 1;
      return close();
    };
    return handle;
  });
  return { closes: () => closes };
}

/** The JournalError `readFileSnapshot(path)` rejects with. */
async function refusal(path: string): Promise<JournalError> {
  const error = await readFileSnapshot(path).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(JournalError);
  expect((error as JournalError).path).toBe(path);
  return error as JournalError;
}

describe('a journal file read beside the bridge', () => {
  it('lists the pending entries, counts the records and bytes, leaves a torn last line out, and changes nothing', async () => {
    const path = file();
    const text = `${put('a')}${put('b')}${ack('a')}{"op":"put","ent`;
    writeFileSync(path, text);
    const link = join(dirname(path), 'through-a-link.jsonl');
    symlinkSync(path, link);
    const opened = countCloses();
    const snapshot = await readFileSnapshot(link);
    expect(snapshot).toMatchObject({ path: link, realPath: path, lines: 3, bytes: Buffer.byteLength(text), tornBytes: '{"op":"put","ent'.length });
    expect(snapshot.entries.map((e) => e.deliveryId)).toEqual(['b']);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(opened.closes()).toBe(1);
  });
});

describe('what it cannot read, it says', () => {
  it('no file: says so, with the cause, and creates nothing', async () => {
    const path = join(root, 'missing', 'journal.jsonl');
    mkdirSync(dirname(path));
    const error = await refusal(path);
    expect(error.message).toBe(`FileJournal: there is no journal file at ${path} (nothing was created)`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(existsSync(path)).toBe(false);
  });

  it('a directory at the path: refused as such, not as a failed read', async () => {
    const path = file();
    mkdirSync(path);
    const error = await refusal(path);
    expect(error.message).toMatch(new RegExp(`^FileJournal: ${path} is a directory, not a regular file`));
  });

  it('a journal its group or others could write: refused, naming it as the journal, nothing read; also when made so after the check', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    chmodSync(path, 0o646);
    const read = vi.spyOn(handles, 'read');
    const rule = `the journal ${path} (owner ${process.getuid?.()}, mode 0646) can be written by its group or others`;
    expect((await refusal(path)).message).toContain(rule);
    chmodSync(path, 0o600);
    const opened = countCloses(() => chmodSync(path, 0o646)); // between the path's check and the open
    expect((await refusal(path)).message).toContain(rule);
    expect(opened.closes()).toBe(1);
    expect(read).not.toHaveBeenCalled();
  });

  it('a file that cannot be opened (permissions): a failed read, with the cause', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    vi.spyOn(fsCalls, 'open').mockRejectedValueOnce(fsError('EACCES'));
    const error = await refusal(path);
    expect(error.message).toBe(`FileJournal: could not read ${path}: EACCES: injected failure`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EACCES');
  });

  it('a FIFO swapped in after the check: refused without blocking, nothing read', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    const opened = countCloses(() => {
      renameSync(path, `${path}.aside`);
      execFileSync('mkfifo', [path]);
    });
    const error = await refusal(path);
    expect(error.message).toBe(`FileJournal: ${path} is a FIFO, not a regular file; a journal is a regular file (nothing was read)`);
    expect(opened.closes()).toBe(1);
  });

  it('a read that fails part of the way: a failed read, with the cause, and the file closed', async () => {
    const path = file();
    writeFileSync(path, put('a'));
    vi.spyOn(handles, 'read').mockRejectedValueOnce(fsError('EIO'));
    const opened = countCloses();
    const error = await refusal(path);
    expect(error.message).toBe(`FileJournal: could not read ${path}: EIO: injected failure`);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('EIO');
    expect(opened.closes()).toBe(1);
  });

  it('a damaged complete line: the journal\'s own message naming the line, not wrapped', async () => {
    const path = file();
    writeFileSync(path, `${put('a')}not json\n`);
    const error = await refusal(path);
    expect(error.message).toMatch(/line 2/);
    expect(error.message).not.toMatch(/could not read/);
  });

  it('larger than the journal limit: refused, never read; at the limit exactly it is read', async () => {
    await underSizeLimit(4096, async () => {
      const { readFileSnapshot: limited } = await import('../../src/journals/file/snapshot.js');
      const path = file();
      writeFileSync(path, put('a'));
      truncateSync(path, 4096); // zeros after the line: what a power cut can leave
      expect((await limited(path)).entries.map((e) => e.deliveryId)).toEqual(['a']);
      truncateSync(path, 4097);
      const read = vi.spyOn(handles, 'read');
      const error = await limited(path).catch((e: unknown) => e);
      expect(read).not.toHaveBeenCalled(); // refused by its size, never read into memory
      read.mockRestore();
      expect((error as Error).message).toBe(`FileJournal: ${path} is larger than ${4096 / 1024 / 1024} MiB: not a journal this SDK wrote, or a damaged one (nothing was read)`);
      expect((error as { path?: string }).path).toBe(path);
      // Grown past the limit between its size and its read (the bridge appending): refused the same.
      truncateSync(path, 4096);
      const proto = handles as unknown as { stat: (this: unknown) => Promise<{ size: number }> };
      const realStat = proto.stat;
      vi.spyOn(proto, 'stat').mockImplementationOnce(async function (this: unknown) {
        const stats = await realStat.call(this);
        truncateSync(path, 4097);
        return stats;
      });
      await expect(limited(path)).rejects.toThrow(`FileJournal: ${path} is larger than`);
    });
  });
});
