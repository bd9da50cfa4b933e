import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// The journal modules themselves, not the package entry: these tests need no client.
import { FileJournal } from '../../src/journals/file/journal.js';
import { MemoryJournal } from '../../src/journals/memory.js';
import { JournalError } from '../../src/errors.js';
import { journalLine } from '../support/journal.js';

const dir = mkdtempSync(join(tmpdir(), 'teamgames-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `journal-${++n}.jsonl`);

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');

describe('FileJournal before its first use', () => {
  it('loads its implementation on first use and runs the calls made meanwhile in call order', async () => {
    const journal = new FileJournal(file());
    const appended = journal.append([journalLine('a')]);
    const listed = journal.pending();
    const acked = journal.acknowledge(['a']);
    const after = journal.pending();
    await appended;
    expect((await listed).map((e) => e.deliveryId)).toEqual(['a']);
    await acked;
    expect(await after).toEqual([]);
    await journal.close(); // else its file handle is closed by the garbage collector (DEP0137)
  });

  it('copies entries when append is called, not when the write happens', async () => {
    const journal = new FileJournal(file());
    const e = journalLine('a');
    const appended = journal.append([e]);
    e.playerName = 'Mallory';
    await appended;
    expect((await journal.pending()).map((p) => p.playerName)).toEqual(['Ann']);
    await journal.close();
  });

  it('close() before any use touches no file', async () => {
    const path = file();
    await new FileJournal(path).close();
    expect(existsSync(path)).toBe(false);
  });
});

describe.each([
  ['MemoryJournal', () => new MemoryJournal()],
  ['FileJournal', () => new FileJournal(file())],
])('%s', (_name, make) => {
  it('lists pending entries oldest first, per player, replaces by deliveryId and forgets acknowledged ones', async () => {
    const journal = make();
    await journal.append([journalLine('a'), journalLine('b', 'Bob'), journalLine('c')]);
    await journal.append([{ ...journalLine('a'), state: 'intended' }]);
    expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a', 'b', 'c']);
    expect((await journal.pending('Ann')).map((e) => [e.deliveryId, e.state])).toEqual([
      ['a', 'intended'],
      ['c', 'claimed'],
    ]);
    await journal.acknowledge(['a', 'zzz']);
    expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['b', 'c']);
    if (journal instanceof FileJournal) await journal.close();
  });
});

describe('FileJournal on disk', () => {
  it('survives a restart: a new instance reads the same pending entries', async () => {
    const path = file();
    const first = new FileJournal(path);
    await first.append([journalLine('a'), journalLine('b')]);
    await first.acknowledge(['a']);
    await first.close();
    const second = new FileJournal(path);
    expect((await second.pending()).map((e) => e.deliveryId)).toEqual(['b']);
    await second.close();
  });

  it('ignores a torn last line and cuts it off, so the next write starts on a clean line', async () => {
    const path = file();
    const journal = new FileJournal(path);
    await journal.append([journalLine('a'), journalLine('b')]);
    await journal.close();
    // The process died in the middle of writing the next line.
    appendFileSync(path, '{"op":"ack","ids":["a"');

    const reopened = new FileJournal(path);
    expect((await reopened.pending()).map((e) => e.deliveryId)).toEqual(['a', 'b']);
    await reopened.append([journalLine('c')]);
    await reopened.close();
    for (const line of lines(path)) expect(() => JSON.parse(line)).not.toThrow();
    const third = new FileJournal(path);
    expect((await third.pending()).map((e) => e.deliveryId)).toEqual(['a', 'b', 'c']);
    await third.close();
  });

  it('keeps a complete last record whose newline was lost', async () => {
    const path = file();
    writeFileSync(path, `${JSON.stringify({ op: 'put', entry: journalLine('a') })}\n${JSON.stringify({ op: 'put', entry: journalLine('b') })}`);
    const journal = new FileJournal(path);
    await journal.append([journalLine('c')]);
    expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a', 'b', 'c']);
    expect(lines(path)).toHaveLength(3);
    await journal.close();
  });

  it('refuses a damaged line in the middle rather than dropping entries silently', async () => {
    const path = file();
    writeFileSync(path, `${JSON.stringify({ op: 'put', entry: journalLine('a') })}\nnot json\n${JSON.stringify({ op: 'put', entry: journalLine('b') })}\n`);
    const damaged = new FileJournal(path);
    const error = await damaged.pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({ code: 'JOURNAL_FAILED', path, message: expect.stringMatching(/line 2 .*damaged/) });
    await damaged.close();
    // Nothing was changed on disk.
    expect(lines(path)).toHaveLength(3);
  });

  it('compacts once it grows: only pending entries are rewritten', async () => {
    const path = file();
    const journal = new FileJournal(path, { compactAfter: 20 });
    await journal.append([journalLine('keep-1'), journalLine('keep-2')]);
    for (let i = 0; i < 30; i++) {
      await journal.append([journalLine(`tmp-${i}`)]);
      await journal.acknowledge([`tmp-${i}`]);
    }
    expect(lines(path).length).toBeLessThanOrEqual(21);
    await journal.close();
    const reopened = new FileJournal(path, { compactAfter: 20 });
    expect((await reopened.pending()).map((e) => e.deliveryId)).toEqual(['keep-1', 'keep-2']);
    await reopened.close();
  });

  it('creates the file only on first use', async () => {
    const path = file();
    const journal = new FileJournal(path);
    expect(() => readFileSync(path)).toThrow();
    expect(await journal.pending()).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe('');
    await journal.close();
  });
});
