/**
 * The DeliveryJournal contract as one list of tests, for every journal: call
 * `journalContract(make)` inside a `describe` of the journal (the database suites do;
 * the memory and file journals can too). `make` returns a fresh, empty journal.
 */
import { expect, it } from 'vitest';
import { resolveWindow } from '../../src/delivery/staff/staff.js';
import { InvalidInputError, WindowAlreadyResolvedError } from '../../src/errors.js';
import type { DeliveryJournal, JournalClaimMark, JournalEntry, JournalLine, JournalWindow } from '../../src/journals/contract.js';
import { journalLine, journalWindow } from './journal.js';

export function journalContract(make: () => DeliveryJournal | Promise<DeliveryJournal>, close: (journal: DeliveryJournal) => Promise<void> = async () => undefined): void {
  const ids = (entries: JournalEntry[]) => entries.map((e) => e.deliveryId);

  it('lists pending entries oldest first, per player, replaces by deliveryId in place and forgets acknowledged ones', async () => {
    const journal = await make();
    await journal.append([journalLine('a'), journalLine('b', 'Bob'), journalLine('c')]);
    await journal.append([{ ...journalLine('a'), state: 'intended' }]);
    expect(ids(await journal.pending())).toEqual(['a', 'b', 'c']);
    expect((await journal.pending('Ann')).map((e) => [e.deliveryId, e.state])).toEqual([
      ['a', 'intended'],
      ['c', 'claimed'],
    ]);
    await journal.acknowledge(['a', 'zzz']);
    expect(ids(await journal.pending())).toEqual(['b', 'c']);
    await close(journal);
  });

  it('gives back every field of every kind of entry as written', async () => {
    const journal = await make();
    const intended: JournalLine = {
      ...journalLine('invoice:INV-1', 'Ann', 'intended'),
      invoice: 'INV-1',
      node: 'node-a',
      previewedAt: 1_767_225_600_123,
      recordedAt: 1_767_225_600_456,
      item: { ...journalLine('x').item, product_name: 'Épée “dragon” 🐉', product_price: 4.99, quantity_to_grant: 3 },
    };
    const mark: JournalClaimMark = { deliveryId: 'claim:00000000-0000-4000-8000-000000000000', playerName: 'Ann', state: 'claiming', recordedAt: 7 };
    await journal.append([intended, mark]);
    expect(await journal.pending()).toEqual([intended, mark]);
    await close(journal);
  });

  it('keeps one entry per deliveryId within one append: the last one, at the first one\'s place', async () => {
    const journal = await make();
    await journal.append([journalLine('a'), journalLine('b'), { ...journalLine('a'), state: 'intended' }]);
    expect((await journal.pending()).map((e) => [e.deliveryId, e.state])).toEqual([
      ['a', 'intended'],
      ['b', 'claimed'],
    ]);
    await close(journal);
  });

  it('matches player names exactly: case, spaces and accents count', async () => {
    const journal = await make();
    const names = ['Ann', 'ann', 'Ann ', 'Änn', 'A_n%'];
    await journal.append(names.map((name, i) => journalLine(`id-${i}`, name)));
    for (const [i, name] of names.entries()) expect(ids(await journal.pending(name))).toEqual([`id-${i}`]);
    expect(await journal.pending('A%')).toEqual([]);
    await close(journal);
  });

  it('takes empty appends and acknowledgements, and lists nothing for an unknown player', async () => {
    const journal = await make();
    await journal.append([]);
    await journal.acknowledge([]);
    expect(await journal.pending('Nobody')).toEqual([]);
    expect(await journal.pending()).toEqual([]);
    await close(journal);
  });

  it('refuses an append holding anything that is not an entry, naming it and the rule, and records nothing of it', async () => {
    const journal = await make();
    await journal.append([journalLine('a')]);
    const line = journalLine('b');
    const refused = notEntries(line);
    for (const [entries, argument, rule] of refused) {
      const error = await journal.append(entries as JournalEntry[]).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument, message: expect.stringContaining(rule) });
    }
    expect(await journal.pending()).toEqual([journalLine('a')]);
    await close(journal);
  });

  it('refuses an acknowledgement that is not a list of ids, removing nothing; holes and ids that are not text are ignored', async () => {
    const journal = await make();
    await journal.append([journalLine('a'), journalLine('b')]);
    // A string would be taken id by character ('a', 'b'), an array-like not at all.
    for (const ids of ['ab', { length: 1, 0: 'a' }, null, undefined, new Set(['a'])]) {
      const error = await journal.acknowledge(ids as unknown as string[]).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument: 'deliveryIds', message: expect.stringContaining('must be an array of deliveryIds') });
    }
    expect(ids(await journal.pending())).toEqual(['a', 'b']);
    await journal.acknowledge(Object.assign(new Array(3), { 1: 'a' }) as string[]);
    await journal.acknowledge([7, null, 'zzz'] as unknown as string[]);
    expect(ids(await journal.pending())).toEqual(['b']);
    await close(journal);
  });

  it('returns copies: changing what it returned or what was appended changes nothing stored', async () => {
    const journal = await make();
    const line = journalLine('a');
    await journal.append([line]);
    line.playerName = 'Mallory';
    const [listed] = await journal.pending();
    (listed as JournalLine).state = 'intended';
    expect(await journal.pending('Ann')).toEqual([journalLine('a')]);
    await close(journal);
  });
  resolutionContract(make, close);
}

/** One resolution per window (issue #34): the journal's compare-and-set, through resolveWindow. */
function resolutionContract(make: () => DeliveryJournal | Promise<DeliveryJournal>, close: (journal: DeliveryJournal) => Promise<void>): void {
  it('resolves a window once: of 6 resolves at once exactly one writes, the others learn who came first, and the first resolution is kept', async () => {
    const journal = await make();
    await journal.append([journalWindow('window:w1'), journalLine('a')]);
    const staff = ['mod:alice', 'mod:bob', 'mod:cid', 'mod:dee', 'mod:eve', 'mod:fay'];
    const results = await Promise.allSettled(staff.map((by, i) => resolveWindow(journal, { playerName: 'Ann', windowId: 'window:w1', by, note: `note of ${by}` }, { now: 1_000 + i })));
    const won = results.filter((r): r is PromiseFulfilledResult<JournalWindow> => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const first = (won[0] as PromiseFulfilledResult<JournalWindow>).value.resolution;
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
    expect(lost).toHaveLength(5);
    for (const error of lost) {
      expect(error).toBeInstanceOf(WindowAlreadyResolvedError);
      expect(error).toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', windowId: 'window:w1', playerName: 'Ann', resolution: first });
    }
    expect(await journal.pending('Ann')).toEqual([{ ...journalWindow('window:w1'), state: 'resolved', resolution: first }, journalLine('a')]);
    await close(journal);
  });

  it("refuses a resolution it would read back as damage, or no window's id, naming the argument and the rule, and writes nothing", async () => {
    const journal = await make();
    await journal.append([journalWindow('window:w1')]);
    const resolution = { by: 'mod:alice', at: 5, note: 'granted by hand' };
    const refused = (windowId: unknown, given: unknown) => journal.resolveWindow?.(windowId as string, given as typeof resolution).catch((error: unknown) => error);
    for (const windowId of ['', 7]) {
      const error = await refused(windowId, resolution);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument: 'windowId', rule: `must be a non-empty string, got ${windowId === '' ? '""' : '7'}` });
    }
    // A function carrying the three fields is code, not a resolution.
    for (const given of [null, { ...resolution, by: 1 }, { ...resolution, at: Number.NaN }, { ...resolution, note: undefined }, Object.assign(() => undefined, resolution)]) {
      const error = await refused('window:w1', given);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument: 'resolution', rule: expect.stringMatching(/^must be \{ by: string, at: finite number, note: string \}, got /) });
    }
    expect(await journal.pending()).toEqual([journalWindow('window:w1')]);
    await close(journal);
  });

  it('resolves by the id alone; an id of no window (unknown, a line) writes nothing', async () => {
    const journal = await make();
    const name = 'Ann\u001b[2J\u202e';
    await journal.append([journalWindow('window:w1', name), journalLine('a')]);
    const resolved = await resolveWindow(journal, { windowId: 'window:w1', by: 'mod:alice', note: 'checked\ngranted' }, { now: 5 });
    expect(resolved).toEqual({ ...journalWindow('window:w1', name), state: 'resolved', resolution: { by: 'mod:alice', at: 5, note: 'checked\ngranted' } });
    for (const windowId of ['window:none', 'a']) {
      await expect(resolveWindow(journal, { windowId, by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: expect.stringContaining('must name a window in the journal') });
    }
    expect(await journal.pending()).toEqual([resolved, journalLine('a')]);
    // The journal's own compare-and-set, as resolveWindow calls it.
    expect(await journal.resolveWindow?.('window:w1', { by: 'mod:bob', at: 6, note: 'late' })).toEqual({ outcome: 'alreadyResolved', window: resolved });
    expect(await journal.resolveWindow?.('a', { by: 'mod:bob', at: 6, note: 'late' })).toEqual({ outcome: 'notFound' });
    expect(await journal.pending()).toEqual([resolved, journalLine('a')]);
    await close(journal);
  });

  it("refuses a resolution the next read would refuse as damage, and writes nothing", async () => {
    const journal = await make();
    await journal.append([journalWindow('window:w1')]);
    const bad: Array<[unknown, unknown, string]> = [
      ['window:w1', { by: 'x', at: Number.NaN, note: 'y' }, 'resolution'],
      ['window:w1', { by: 5, at: 1, note: 'y' }, 'resolution'],
      ['window:w1', null, 'resolution'],
      ['', { by: 'x', at: 1, note: 'y' }, 'windowId'],
    ];
    for (const [id, resolution, argument] of bad) {
      const error = await journal.resolveWindow?.(id as string, resolution as never).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument });
    }
    expect(await journal.pending()).toEqual([journalWindow('window:w1')]);
    await close(journal);
  });
}

/** What `append` must refuse, with the argument and rule it names: `line` is a valid entry. */
function notEntries(line: JournalLine): Array<[unknown, string, string]> {
  // Each would be written as a record the next start refuses as damage (NaN becomes null in JSON).
  return [
    [[line, undefined], 'entries[1]', 'not an object (undefined)'],
    [[line, { ...journalLine('c'), state: 'lost' }], 'entries[1]', "state is not 'claimed'"],
    [[{ ...line, recordedAt: Number.NaN }], 'entries[0]', 'recordedAt is not a number'],
    [[line, { ...journalLine('c'), lastError: { message: 'full', at: Number.NaN, attempts: 1 } }], 'entries[1]', 'lastError is not { message, at, attempts }'],
    [[{ ...journalLine('c'), lastError: { message: 'full', at: 1, attempts: Number.POSITIVE_INFINITY } }], 'entries[0]', 'lastError is not { message, at, attempts }'],
    [[{ deliveryId: 'window:1', playerName: 'Ann', state: 'resolved', from: 1, to: 2, cause: 'lostClaim', recordedAt: 2, resolution: { by: 'staff', at: Number.NaN, note: 'ok' } }], 'entries[0]', 'resolution is not { by, at, note }'],
    [[line, { ...journalLine('c'), item: { ...line.item, quantity_to_grant: '3' } }], 'entries[1]', 'item.quantity_to_grant is not a number'],
    [[line, { ...journalLine('c'), deliveryId: '' }], 'entries[1]', 'deliveryId is not a non-empty string'],
    [line, 'entries', 'must be an array of journal entries, got an object'],
    // A JavaScript caller's mistakes: holes read as undefined, wherever they are; an array-like is not a list.
    [new Array(1), 'entries[0]', 'not an object (undefined)'],
    [[line, , journalLine('c')], 'entries[1]', 'not an object (undefined)'],
    [Object.assign(new Array(3), { 2: journalLine('c') }), 'entries[0]', 'not an object (undefined)'],
    [{ length: 1, 0: line }, 'entries', 'must be an array of journal entries, got an object'],
    ['ab', 'entries', 'must be an array of journal entries, got "ab"'],
    [null, 'entries', 'must be an array of journal entries, got null'],
    [undefined, 'entries', 'must be an array of journal entries, got undefined'],
  ];
}
