/**
 * The DeliveryJournal contract as one list of tests, for every journal: call
 * `journalContract(make)` inside a `describe` of the journal (the database suites do;
 * the memory and file journals can too). `make` returns a fresh, empty journal.
 */
import { expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import type { DeliveryJournal, JournalClaimMark, JournalEntry, JournalLine } from '../../src/journals/contract.js';
import { journalLine } from './journal.js';

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
