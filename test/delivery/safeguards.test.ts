/**
 * The delivery engine's safeguards, each by what a user relies on (issue #27 point 4): a
 * claim mark left by a crash is reported, a mark whose lines were journaled is not, a
 * refused claim is not an unknown outcome, the intents a lost claim took are granted and
 * the others claimed, and a player's queue is freed once the player is done.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationError, MemoryJournal, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { Crash, CrashingJournal, Game, KEY, inProcessStore, processView } from '../support/reliability.js';

const { mock, sleep, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
});

/** The states left in a journal, in order. */
const states = async (journal: DeliveryJournal) => (await journal.pending()).map((e) => e.state);

/** A fast-mode process that dies right after its claim succeeded, before the claimed lines reach the journal. */
async function crashAfterFastClaim(disk: DeliveryJournal, player: string, game: Game): Promise<void> {
  const crashing = new CrashingJournal(disk, (point, entries) => point === 'appendBefore' && (entries as readonly JournalEntry[])[0]?.state === 'claimed');
  await expect(crashing.run(client(crashing).deliver(player, game.grant(), { mode: 'fast', sleep }))).rejects.toBeInstanceOf(Crash);
}

describe('fast mode, a crash between the claim and the journal', () => {
  it('the next deliver reports an unverified window covering what the claim could take (a process that never saw the list: since 0), keeps it for staff, and tells the player staff can check', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const disk = new MemoryJournal();
    const game = new Game();
    // The purchase was completed before the mark: a window from the mark would not cover it.
    const markedAt = 0;
    await crashAfterFastClaim(disk, 'Ann', game);
    // The service delivered the line; the journal holds only the mark.
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Delivered');
    expect(await states(disk)).toEqual(['claiming']);

    mock.clock.advance(60_000);
    const report = await client(processView(disk)).deliver('Ann', game.grant(), { mode: 'fast', sleep });
    expect(report.unverified).toEqual({ playerName: 'Ann', from: markedAt, to: mock.clock.now() });
    expect(report.message).toMatch(/staff can check/);
    expect(report.message).not.toMatch(/already claimed/i);
    // The mark is gone, the window stays until staff resolve it.
    expect(await disk.pending()).toEqual([expect.objectContaining({ state: 'unverified', cause: 'claimMark', from: markedAt, playerName: 'Ann' })]);
    expect(outcome(game)).toMatchObject({ paid: 1, granted: 0, lost: 1 });
  });

  it('a process that had seen the list (a NO_ITEMS answer) writes that moment on its mark: the window after its crash starts there, not at 0', async () => {
    const disk = new MemoryJournal();
    const game = new Game();
    const crashing = new CrashingJournal(disk, (point, entries) => point === 'appendBefore' && (entries as readonly JournalEntry[])[0]?.state === 'claimed');
    const c = client(crashing);
    const lookAt = mock.clock.now();
    expect((await crashing.run(c.deliver('Dot', game.grant(), { mode: 'fast', sleep }))).code).toBe('NO_ITEMS');
    mock.addPurchase(KEY, { playerName: 'Dot', id: 1, quantity: 1 });
    mock.clock.advance(10_000);
    await expect(crashing.run(c.deliver('Dot', game.grant(), { mode: 'fast', sleep }))).rejects.toBeInstanceOf(Crash);
    expect(await disk.pending()).toEqual([expect.objectContaining({ state: 'claiming', since: lookAt })]);

    mock.clock.advance(30_000);
    const report = await client(processView(disk)).deliver('Dot', game.grant(), { mode: 'fast', sleep });
    expect(report.unverified).toEqual({ playerName: 'Dot', from: lookAt, to: mock.clock.now() });
  });

  it('resumeDeliveries at startup reports the same window, from the earliest of two marks (each from the list it followed)', async () => {
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const disk = new MemoryJournal();
    const game = new Game();
    await crashAfterFastClaim(disk, 'Bo', game);
    // And a mark another process on the journal left, a minute earlier.
    const first = mock.clock.now() - 60_000;
    await disk.append([{ deliveryId: 'claim:earlier', playerName: 'Bo', state: 'claiming', recordedAt: first, since: first - 5_000 }]);
    expect(await states(disk)).toEqual(['claiming', 'claiming']);

    mock.clock.advance(30_000);
    const resumed = await client(processView(disk)).resumeDeliveries(game.grant(), { sleep });
    // The crashed process had never seen Bo's list: its mark has no `since`, the window starts at 0.
    expect(resumed.unverified).toEqual([{ playerName: 'Bo', from: 0, to: mock.clock.now() }]);
    expect(resumed.pending).toBe(0);
    expect(await states(disk)).toEqual(['unverified']);
  });

  it('a mark whose lines were journaled is no window: a crash before the mark is dropped grants the lines, reports nothing', async () => {
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Cy', id: 3, quantity: 1 });
    const disk = new MemoryJournal();
    const game = new Game();
    // Dies as it drops the mark, its two lines journaled.
    const crashing = new CrashingJournal(disk, (point, ids) => point === 'ackBefore' && /^claim:[^:]+$/.test(String((ids as readonly string[])[0])));
    await expect(crashing.run(client(crashing).deliver('Cy', game.grant(), { mode: 'fast', sleep }))).rejects.toBeInstanceOf(Crash);
    expect(await states(disk)).toEqual(['claiming', 'claimed', 'claimed']);

    const report = await client(processView(disk)).deliver('Cy', game.grant(), { mode: 'fast', sleep });
    expect(report.unverified).toBeUndefined();
    expect(report.granted).toHaveLength(2);
    expect(report.message).not.toMatch(/staff/);
    expect(await disk.pending()).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
  });
});

describe("where a lost claim's window starts: the list counts as seen only once its lines are journaled", () => {
  it("a preview that listed a purchase whose intent the journal refused: a later lost fast claim's window starts at 0, which covers it", async () => {
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    class NoIntents extends MemoryJournal {
      override async append(entries: readonly JournalEntry[]): Promise<void> {
        if (entries.some((e) => e.state === 'intended')) throw new Error('disk full');
        return super.append(entries);
      }
    }
    const journal = new NoIntents();
    const c = client(journal);
    mock.clock.advance(5_000);
    const refused = await c.deliver('Fay', new Game().grant(), { sleep });
    expect(refused.journalError).toBeDefined();
    expect(mock.purchases(KEY, 'Fay')[0]?.deliverystatus).toBe('Undelivered');
    mock.clock.advance(10_000);
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const lost = await c.deliver('Fay', new Game().grant(), { mode: 'fast', sleep });
    // The preview at +5 s saw the purchase, but nothing of it was journaled: a window from
    // that preview would leave out the purchase paid before it.
    expect(lost.unverified).toEqual({ playerName: 'Fay', from: 0, to: mock.clock.now() });
  });
});

describe('a claim refused outright is not an unknown outcome', () => {
  it('fast mode, a 401 on the claim: ERROR, no window, the mark dropped, the purchase claimed by the next call', async () => {
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 401, times: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    const refused = await client(journal).deliver('Eve', game.grant(), { mode: 'fast', sleep });
    expect(refused.code).toBe('ERROR');
    expect(refused.error).toBeInstanceOf(AuthenticationError);
    expect(refused.unverified).toBeUndefined();
    expect(refused.message).not.toMatch(/did not answer in time|staff/);
    expect(await journal.pending()).toEqual([]);

    const next = await client(journal).deliver('Eve', game.grant(), { mode: 'fast', sleep });
    expect(next.code).toBe('SUCCESS');
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });
});
