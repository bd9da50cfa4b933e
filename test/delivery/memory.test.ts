/**
 * What the delivery engine keeps in memory when the journal cannot take a claimed line
 * (src/delivery/engine/engine.ts), judged by what players get and what survives a restart: the
 * line is written on the next call that can, so a restart still has it; it is counted
 * once; its failures are counted across calls; a line the journal took while saying it
 * failed is granted once; another player's lines are neither given nor written by this
 * player's call; and a claim mark stays until every line of its claim is granted or
 * journaled, so a restart reports what memory lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, type DeliveredItem, type DeliveryJournal, type JournalEntry, type JournalLine } from '../../src/index.js';
import { Game, KEY, inProcessStore, processView } from '../support/reliability.js';

const { mock, sleep, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
});

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
const hasClaimedLine = (entries: readonly JournalEntry[]) => entries.some((e) => e.state === 'claimed');

/**
 * A journal over `inner` whose appends of claimed lines fail while `full` is set (a full
 * disk), or, with `writesThenFails`, are written and then reported failed (the data reached
 * the disk, its sync did not). Records every append, with the entries' players.
 */
function flakyJournal(inner: DeliveryJournal) {
  const state = { full: false, writesThenFails: false, appended: [] as string[][] };
  const journal: DeliveryJournal = {
    ...processView(inner),
    append: async (entries) => {
      state.appended.push(entries.map((e) => e.playerName));
      if (state.full && hasClaimedLine(entries)) throw enospc();
      await inner.append(entries);
      if (state.writesThenFails && hasClaimedLine(entries)) throw Object.assign(new Error('EIO: fsync failed'), { code: 'EIO' });
    },
  };
  return { journal, state };
}

const linesOf = async (journal: DeliveryJournal, player: string) => (await journal.pending(player)).filter((e): e is JournalLine => e.state === 'claimed');

describe('a claimed line the journal could not take', () => {
  it('is written by the next call once the disk has room, counted once, its failures counted across calls, and a restart grants it', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    const { journal, state } = flakyJournal(storage);
    const c = client(journal);
    const refuse = () => Promise.reject(new Error('inventory full'));

    state.full = true;
    const first = await c.deliver('Ann', refuse, { mode: 'fast', sleep });
    expect(first).toMatchObject({ code: 'PARTIAL', pending: 2 }); // the claim mark in the journal, the line in memory
    expect(first.journalError?.message).toMatch(/ENOSPC/);
    expect(first.message).not.toMatch(/staff/); // nothing unverified: the line is known
    expect(await linesOf(storage, 'Ann')).toEqual([]);

    // The disk has room again; the game still refuses. The line is now on disk, once.
    state.full = false;
    mock.clock.advance(5_000);
    const second = await c.deliver('Ann', refuse, { mode: 'fast', sleep });
    expect(second).toMatchObject({ code: 'PARTIAL', pending: 1 });
    const [line] = await linesOf(storage, 'Ann');
    expect(line?.lastError).toMatchObject({ message: 'inventory full', attempts: 2 });

    // The bridge restarts (memory gone): the line is granted from the journal, once.
    const game = new Game();
    const after = await client(processView(storage)).deliver('Ann', game.grant(), { mode: 'fast', sleep });
    expect(after.granted).toHaveLength(1);
    expect(after.unverified).toBeUndefined();
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
    expect(await storage.pending()).toEqual([]);
  });

  it('a line on disk and another in memory: both granted on the next call, the journal still refusing new lines', async () => {
    mock.addPurchase(KEY, { playerName: 'Ivo', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    // Refuses lines it does not hold yet (a quota reached): notes on the lines it holds still go in.
    let refuseNew = false;
    const journal: DeliveryJournal = {
      ...processView(storage),
      append: async (entries) => {
        const held = new Set((await storage.pending()).map((e) => e.deliveryId));
        if (refuseNew && entries.some((e) => e.state === 'claimed' && !held.has(e.deliveryId))) throw Object.assign(new Error('EDQUOT: quota exceeded'), { code: 'EDQUOT' });
        await storage.append(entries);
      },
    };
    const c = client(journal);
    const refuse = () => Promise.reject(new Error('offline'));
    await c.deliver('Ivo', refuse, { mode: 'fast', sleep }); // the whip's line on disk
    mock.addPurchase(KEY, { playerName: 'Ivo', id: 3, quantity: 1 });
    mock.clock.advance(10_000);
    refuseNew = true;
    await c.deliver('Ivo', refuse, { mode: 'fast', sleep }); // the sword's line in memory only
    expect((await linesOf(storage, 'Ivo')).map((l) => l.item.product_id_string)).toEqual(['42']);
    expect(mock.purchases(KEY, 'Ivo').every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    const game = new Game();
    const next = await c.deliver('Ivo', game.grant(), { mode: 'fast', sleep });
    expect(next.granted.map((i) => i.product_id_string).sort()).toEqual(['42', '7']);
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
  });

  it('taken by the journal although it said it failed (the sync failed, the data was written): granted once', async () => {
    mock.addPurchase(KEY, { playerName: 'Bea', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    const { journal, state } = flakyJournal(storage);
    state.writesThenFails = true;
    const c = client(journal);
    const first = await c.deliver('Bea', () => Promise.reject(new Error('offline')), { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    expect(await linesOf(storage, 'Bea')).toHaveLength(1); // on disk, and in memory

    const game = new Game();
    const second = await c.deliver('Bea', game.grant(), { mode: 'fast', sleep });
    expect(second.granted).toHaveLength(1);
    expect(second.pending).toBe(0);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it("another player's lines held in memory are not given, written or counted by this player's call", async () => {
    mock.addPurchase(KEY, { playerName: 'Cal', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Dot', id: 3, quantity: 1 });
    const storage = new MemoryJournal();
    const { journal, state } = flakyJournal(storage);
    const c = client(journal);
    state.full = true;
    expect((await c.deliver('Cal', () => Promise.reject(new Error('offline')), { mode: 'fast', sleep })).code).toBe('PARTIAL');

    // The disk has room again; Dot's call must leave Cal's line to Cal's calls.
    state.full = false;
    state.appended = [];
    const given: DeliveredItem[] = [];
    const game = new Game();
    const dot = await c.deliver('Dot', (item) => (given.push(item), game.grant()(item)), { mode: 'fast', sleep });
    expect(given.map((i) => i.product_id_string)).toEqual(['7']);
    expect(dot).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(state.appended.flat().every((player) => player === 'Dot')).toBe(true);

    const cal = await c.deliver('Cal', game.grant(), { mode: 'fast', sleep });
    expect(cal.granted.map((i) => i.product_id_string)).toEqual(['42']);
    expect(outcome(game)).toMatchObject({ lost: 0, duplicated: 0 });
  });

  it('the disk still full at resumeDeliveries: no false window, every line and its claim mark counted and kept, the marks dropped once the game has the lines', async () => {
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Fin', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    const { journal, state } = flakyJournal(storage);
    const c = client(journal);
    state.full = true;
    for (const player of ['Eve', 'Fin']) await c.deliver(player, () => Promise.reject(new Error('offline')), { mode: 'fast', sleep });
    // Nothing can be written: both lines stay in memory, their marks on disk (a crash now is reported from them).
    const resumed = await c.resumeDeliveries(() => Promise.reject(new Error('offline')), { sleep });
    expect(resumed.unverified).toEqual([]);
    expect(resumed.pending).toBe(4);
    expect((await storage.pending()).map((e) => e.state)).toEqual(['claiming', 'claiming']);

    // The game takes them, the disk still full: nothing is left to verify.
    const game = new Game();
    const done = await c.resumeDeliveries(game.grant(), { sleep });
    expect(done).toMatchObject({ pending: 0, unverified: [] });
    expect(await storage.pending()).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
  });

  it('a claim whose lines memory kept and whose grant failed for one of them: its mark stays, so a restart reports the window', async () => {
    mock.addPurchase(KEY, { playerName: 'Gil', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Gil', id: 3, quantity: 1 });
    const storage = new MemoryJournal();
    const { journal, state } = flakyJournal(storage);
    state.full = true;
    const first = await client(journal).deliver('Gil', (item) => (item.product_id_string === '7' ? Promise.reject(new Error('no room')) : undefined), { mode: 'fast', sleep });
    expect(first.granted).toHaveLength(1);
    expect((await storage.pending('Gil')).map((e) => e.state)).toEqual(['claiming']);

    // The bridge dies with the sword's line in memory only: the next process must say so.
    const after = await client(processView(storage)).deliver('Gil', () => {}, { mode: 'fast', sleep });
    expect(after.unverified).toMatchObject({ playerName: 'Gil' });
    expect(after.message).toMatch(/staff/);
  });

  it('a window memory holds is never handed to the game, even when the journal cannot be read', async () => {
    mock.addPurchase(KEY, { playerName: 'Hana', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    let unreadable = false;
    const journal: DeliveryJournal = {
      ...processView(storage),
      append: async (entries) => {
        if (entries.some((e) => e.state === 'unverified')) throw enospc();
        await storage.append(entries);
      },
      pending: async (player) => {
        if (unreadable) throw new Error('EIO: bad sector');
        return storage.pending(player);
      },
    };
    const c = client(journal);
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const lost = await c.deliver('Hana', () => {}, { mode: 'fast', sleep });
    expect(lost.unverified).toMatchObject({ playerName: 'Hana' }); // reported, kept in memory
    const given: DeliveredItem[] = [];
    mock.clock.advance(10_000);
    await c.deliver('Hana', (item) => void given.push(item), { mode: 'fast', sleep }); // the window still refused
    expect(given).toEqual([]);
    unreadable = true;
    const next = await c.deliver('Hana', (item) => void given.push(item), { mode: 'fast', sleep });
    expect(given).toEqual([]);
    expect(next.journalError).toBeDefined(); // the window still cannot be written, the journal not read
  });
});
