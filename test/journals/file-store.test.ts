/**
 * The file journal's store (src/journals/file/store.ts) at its edges: compaction happens
 * exactly when the documented rule says (more lines than `compactAfter`, and more than
 * twice the pending entries), a compacted file keeps working through a failed write and a
 * restart, and every kind of damaged line is refused with its line number and its problem.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { JournalError } from '../../src/errors.js';
import { FileStore } from '../../src/journals/file/store.js';
import { OWNER_ONLY } from '../../src/journals/file/trust.js';
import { fileHandlePrototype, reload, scratchJournals, type FileHandleMethods } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

const { root, file, journal } = scratchJournals('file-store');
const lineCount = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).length;

afterEach(() => {
  vi.restoreAllMocks();
});

let handleProto: FileHandleMethods;
beforeAll(async () => {
  handleProto = await fileHandlePrototype(root);
});

describe('what one append writes', () => {
  it('one entry: the line 0.1.0 wrote, {"op":"put","entry":…}; several: one line {"op":"put","entries":[…]}, all of them back after a restart', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    await j.append([journalLine('b'), journalLine('c', 'Bob'), journalLine('d')]);
    await j.close();
    expect(readFileSync(path, 'utf8')).toBe(
      `${JSON.stringify({ op: 'put', entry: journalLine('a') })}\n${JSON.stringify({ op: 'put', entries: [journalLine('b'), journalLine('c', 'Bob'), journalLine('d')] })}\n`,
    );
    expect(await reload(path)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a last record that lost only its newline counts as a line: the compaction rule sees it', async () => {
    const path = file();
    const put = (id: string) => JSON.stringify({ op: 'put', entry: journalLine(id) });
    writeFileSync(path, `${put('a')}\n${put('b')}\n${put('c')}`, { mode: 0o600 });
    const j = journal(path, { compactAfter: 3 });
    await j.acknowledge(['a', 'b']); // 4 lines, 1 pending: compacted
    expect(lineCount(path)).toBe(1);
    await j.close();
    expect(await reload(path)).toEqual(['c']);
  });
});

describe('compaction follows its rule to the line', () => {
  it('not at exactly compactAfter lines; at one more', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 4 });
    await j.append([journalLine('a')]);
    await j.append([journalLine('b')]);
    await j.append([journalLine('c')]);
    await j.acknowledge(['b', 'c']); // 4 lines, 1 pending
    expect(lineCount(path)).toBe(4);
    await j.append([journalLine('d')]);
    await j.acknowledge(['d']); // 6 lines, 1 pending: compacted
    expect(lineCount(path)).toBe(1);
    await j.close();
    expect(await reload(path)).toEqual(['a']);
  });

  it('not at exactly twice the pending entries; at one more', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 1 });
    await j.append([journalLine('a'), journalLine('b'), journalLine('c')]);
    await j.append([journalLine('d')]);
    await j.acknowledge(['d']); // 3 lines, 3 pending
    expect(lineCount(path)).toBe(3);
    await j.acknowledge(['c']); // 4 lines, 2 pending
    expect(lineCount(path)).toBe(4);
    await j.acknowledge(['b']); // 5 lines, 1 pending: compacted
    expect(lineCount(path)).toBe(1);
  });

  it('after a compaction, counts from the compacted file: the next one comes as late as the rule says', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 4 });
    const churn = async (id: string) => {
      await j.append([journalLine(id)]);
      await j.acknowledge([id]);
    };
    await j.append([journalLine('a'), journalLine('b')]);
    await churn('x'); // 3 lines, 2 pending
    await churn('y'); // 5 lines, 2 pending: compacted to 2 lines
    expect(lineCount(path)).toBe(2);
    await churn('z'); // 4 lines, 2 pending: not yet
    expect(lineCount(path)).toBe(4);
    await churn('w'); // 6 lines: compacted again
    expect(lineCount(path)).toBe(2);
    await j.close();
    expect(await reload(path)).toEqual(['a', 'b']);
  });

  it('a write that fails after a compaction is cut off at the compacted size: every entry survives, the next write lands on a clean line', async () => {
    const path = file();
    const j = journal(path, { compactAfter: 2 });
    await j.append([journalLine('a')]);
    await j.append([journalLine('x')]);
    await j.acknowledge(['x']); // 3 lines, 1 pending: compacted
    expect(lineCount(path)).toBe(1);
    const compacted = readFileSync(path, 'utf8');
    // Part of the line written, then the disk is full.
    const write = handleProto.write;
    vi.spyOn(handleProto, 'write').mockImplementationOnce(async function (this: FileHandle, data: unknown) {
      await write.call(this, (data as Buffer).subarray(0, 10), 0, 10, null);
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    });
    await expect(j.append([journalLine('lost')])).rejects.toBeInstanceOf(JournalError);
    expect(readFileSync(path, 'utf8')).toBe(compacted);
    await j.append([journalLine('c')]);
    await j.close();
    expect(await reload(path)).toEqual(['a', 'c']);
  });
});

describe('a damaged line is refused, naming its number and its problem', () => {
  const good = JSON.stringify({ op: 'put', entry: journalLine('a') });
  it.each<[string, string, RegExp]>([
    ['an array', '[1,2]', /line 2 is not a journal record \(not an object/],
    ['null', 'null', /line 2 is not a journal record \(not an object \(null\)\)/],
    ['an unknown op', '{"op":"drop","ids":["a"]}', /line 2 .*op is not 'put' or 'ack' \("drop"\)/],
    ['an unknown op with entries', JSON.stringify({ op: 'drop', entries: [journalLine('b')] }), /line 2 .*op is not 'put' or 'ack' \("drop"\)/],
    ['a put with entry and entries', JSON.stringify({ op: 'put', entry: journalLine('b'), entries: [journalLine('c')] }), /line 2 .*both entry and entries/],
    ['entries that are not a list', '{"op":"put","entries":{"a":1}}', /line 2 .*entries is not an array/],
    ['a put whose entry is not one', '{"op":"put","entry":{"deliveryId":"b"}}', /line 2 .*entry: playerName is not a non-empty string/],
    ['an ack whose ids are not a list', '{"op":"ack","ids":"a"}', /line 2 .*ids is not an array/],
    ['an ack with an id that is not text', '{"op":"ack","ids":["a",7]}', /line 2 .*ids\[1\] is not a string \(7\)/],
  ])('%s', async (_name, bad, message) => {
    const path = file();
    writeFileSync(path, `${good}\n${bad}\n${good}\n`);
    const before = readFileSync(path);
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/damaged .*nothing was changed/);
    expect(readFileSync(path)).toEqual(before);
  });

  it('a complete record on the last line without its newline is kept, and the next append starts a line of its own', async () => {
    const path = file();
    writeFileSync(path, `${good}\n${JSON.stringify({ op: 'ack', ids: ['a'] })}`);
    const j = journal(path);
    expect(await j.pending()).toEqual([]);
    await j.append([journalLine('b')]);
    await j.close();
    expect(await reload(path)).toEqual(['b']);
    expect(lineCount(path)).toBe(3);
  });

  it('blank lines anywhere are skipped, a last blank line without newline too', async () => {
    const path = file();
    const batch = JSON.stringify({ op: 'put', entries: [journalLine('b'), journalLine('c')] });
    writeFileSync(path, `\n${good}\n   \n${batch}\n  `);
    const j = journal(path);
    expect((await j.pending()).map((e) => e.deliveryId)).toEqual(['a', 'b', 'c']);
    // The blank tail is cut off (no newline added to it): the next append lands on a clean line.
    expect(readFileSync(path, 'utf8')).toBe(`\n${good}\n   \n${batch}\n`);
    await j.append([journalLine('d')]);
    await j.close();
    expect(await reload(path)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a power cut inside a character of several bytes (an accented name, an emoji) is a torn write: cut off, every line before it kept', async () => {
    const path = file();
    const j = journal(path);
    await j.append([journalLine('a')]);
    await j.close();
    const before = readFileSync(path);
    const entry = { ...journalLine('b', 'Zoë'), item: { ...journalLine('b', 'Zoë').item, product_name: 'Épée 🐉' } };
    const torn = Buffer.from(`${JSON.stringify({ op: 'put', entry })}\n`);
    // Every cut that splits a character: after its first byte, and inside the emoji.
    const cuts = [torn.indexOf('ë') + 1, torn.indexOf('É') + 1, torn.indexOf('🐉') + 1, torn.indexOf('🐉') + 2, torn.indexOf('🐉') + 3];
    for (const cut of cuts) {
      writeFileSync(path, Buffer.concat([before, torn.subarray(0, cut)]));
      expect(await reload(path), `power cut after ${cut} bytes`).toEqual(['a']);
      expect(readFileSync(path).equals(before)).toBe(true);
    }
  });
});

describe('opening a journal removes its own compaction leftovers, never anything else', () => {
  it('keeps the files of other journals in the same directory (a name of the same length, a name that extends its own) and the user\'s own files', async () => {
    const dir = dirname(file());
    const path = join(dir, 'game-1.jsonl');
    const ours = ['game-1.jsonl.4242.0123456789ab.compact', 'game-1.jsonl.compact'];
    const others = [
      'game-2.jsonl.4242.0123456789ab.compact', // game-2.jsonl's compaction, maybe running in another process
      'game-1.jsonl.2.4242.0123456789ab.compact', // the journal game-1.jsonl.2's
      'game-1.jsonl.4242.0123456789ab.compact.bak',
      'game-1.jsonl.compact.bak',
      'game-1.jsonl.x4242.0123456789ab.compact',
    ];
    for (const name of [...ours, ...others]) writeFileSync(join(dir, name), 'x');
    await journal(path).pending();
    expect(readdirSync(dir).sort()).toEqual(['game-1.jsonl', 'game-1.jsonl.lock', ...others].sort());
  });
});

describe("staff's store (teamgames journal resolve, in the file itself)", () => {
  it('on a journal removed since it was read: refused, naming the path, and nothing created, not the journal nor its lock', async () => {
    const path = file();
    const store = new FileStore(path, 1_000, true, OWNER_ONLY, true);
    try {
      const error = await store.pending().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as JournalError).message).toBe(`FileJournal: there is no journal file at ${path} (nothing was created)`);
      expect((error as JournalError).path).toBe(path);
      expect(existsSync(path)).toBe(false);
      expect(existsSync(`${path}.lock`)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
