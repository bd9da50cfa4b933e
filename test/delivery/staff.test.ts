/**
 * What staff see (issue #24): windows are journal records written before they are
 * reported and kept until resolved (compaction included), the player's texts follow them,
 * and the bridge's API lists and resolves them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, InvalidInputError, MemoryJournal, inspectJournal, resolveWindow, type DeliveryJournal, type JournalEntry, type StorefrontEvent } from '../../src/index.js';
import { KEY, inProcessStore } from '../support/reliability.js';

const { mock, sleep, client } = inProcessStore();
const dirs: string[] = [];

afterEach(async () => {
  mock.reset();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A claim whose answer is lost, then the reconciling call: one window for the player. */
async function lostClaim(journal: DeliveryJournal, player: string, events: StorefrontEvent[] = []): Promise<void> {
  mock.addPurchase(KEY, { playerName: player, id: 1, quantity: 1 });
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
  const c = client(journal, { onEvent: (e) => events.push(e) });
  expect((await c.deliver(player, () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
  expect((await c.deliver(player, () => {}, { sleep })).unverified).toBeDefined();
}

describe('a window is a journal record', () => {
  it('written before it is reported: onEvent finds it in the journal', async () => {
    const journal = new MemoryJournal();
    let seenInJournal: JournalEntry[] | undefined;
    const c = client(journal, {
      onEvent: (e) => {
        if (e.type === 'unverified') void journal.pending('Ann').then((entries) => (seenInJournal = entries));
      },
    });
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    await c.deliver('Ann', () => {}, { sleep });
    await c.deliver('Ann', () => {}, { sleep });
    expect(seenInJournal?.filter((e) => e.state === 'unverified')).toHaveLength(1);
    const [window] = (await inspectJournal(journal)).openWindows;
    expect(window).toMatchObject({ playerName: 'Ann', state: 'unverified', cause: 'lostClaim', deliveryId: expect.stringMatching(/^window:/) });
  });

  it('kept through compactions and a restart until resolved, then kept as resolved (the audit trail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-staff-'));
    dirs.push(dir);
    const path = join(dir, 'journal.jsonl');
    const journal = new FileJournal(path, { compactAfter: 3 });
    await lostClaim(journal, 'Bo');
    // Many more deliveries for others: the file is compacted several times.
    for (let i = 0; i < 6; i++) {
      mock.addPurchase(KEY, { playerName: `Other${i}`, id: 1, quantity: 1 });
      await client(journal).deliver(`Other${i}`, () => {}, { sleep, mode: 'fast' });
    }
    await journal.close();
    const reopened = new FileJournal(path);
    const seen = await inspectJournal(reopened);
    expect(seen.openWindows.map((w) => w.playerName)).toEqual(['Bo']);
    expect(seen.pending).toEqual([]);
    const resolved = await resolveWindow(reopened, { playerName: 'Bo', by: 'mod:alice', note: 'granted by hand' }, { now: 123 });
    expect(resolved.resolution).toEqual({ by: 'mod:alice', at: 123, note: 'granted by hand' });
    await reopened.close();
    // Closed after reading: a FileJournal left open has its file closed by the garbage collector (DEP0137).
    const third = new FileJournal(path);
    const again = await inspectJournal(third);
    await third.close();
    expect(again.openWindows).toEqual([]);
    expect(again.resolvedWindows).toMatchObject([{ playerName: 'Bo', state: 'resolved', resolution: { by: 'mod:alice' } }]);
  });
});

describe("the player's texts follow the journal", () => {
  it('staff are checking while a window is open, on this client or another on the journal; normal texts once resolved', async () => {
    const journal = new MemoryJournal();
    await lostClaim(journal, 'Cy');
    const other = client(journal);
    const next = await other.deliver('Cy', () => {}, { sleep });
    expect(next.message).toMatch(/staff can check/);
    await resolveWindow(journal, { playerName: 'Cy', by: 'staff', note: 'checked: nothing missing' });
    mock.clock.advance(10_000);
    const after = await other.deliver('Cy', () => {}, { sleep });
    expect(after.message).not.toMatch(/staff can check/);
  });
});

describe('inspectJournal', () => {
  it('lists pending lines with their age and last grant failure', async () => {
    const journal = new MemoryJournal();
    mock.addPurchase(KEY, { playerName: 'Dee', id: 4, quantity: 1 });
    const failing = () => {
      throw new Error('unknown item rank_vip');
    };
    await client(journal).deliver('Dee', failing, { sleep, mode: 'fast' });
    mock.clock.advance(10_000);
    await client(journal).deliver('Dee', failing, { sleep, mode: 'fast' });
    const seen = await inspectJournal(journal, { now: mock.clock.now() + 60_000 });
    expect(seen.pending).toHaveLength(1);
    expect(seen.pending[0]).toMatchObject({ playerName: 'Dee', state: 'claimed', lastError: { message: 'unknown item rank_vip', attempts: 2 } });
    expect(seen.pending[0]?.ageMs).toBeGreaterThanOrEqual(60_000);
    expect(seen.oldestPendingMs).toBe(seen.pending[0]?.ageMs);
  });
});

describe('resolveWindow', () => {
  it('refuses a player with no open window, and asks which when there are several', async () => {
    const journal = new MemoryJournal();
    await expect(resolveWindow(journal, { playerName: 'Eve', by: 'x', note: 'y' })).rejects.toThrow(InvalidInputError);
    await lostClaim(journal, 'Eve');
    mock.clock.advance(10_000);
    await lostClaim(journal, 'Eve');
    const error = await resolveWindow(journal, { playerName: 'Eve', by: 'x', note: 'y' }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/input\.windowId.*2 open windows/);
    const [first] = (await inspectJournal(journal)).openWindows;
    await resolveWindow(journal, { playerName: 'Eve', windowId: first?.deliveryId as string, by: 'x', note: 'y' });
    expect((await inspectJournal(journal)).openWindows).toHaveLength(1);
    await expect(resolveWindow(journal, { playerName: 'Eve', by: ' ', note: 'y' })).rejects.toThrow(/input\.by/);
  });
});
