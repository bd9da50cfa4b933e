/**
 * Which intents a lost claim took, and what is left to whom (src/delivery/engine/engine.ts, the
 * reconcile and the modes' bookkeeping), by what the player gets and what the journal
 * keeps: an intent still pending is claimed, never granted from the journal; an intent
 * gone is granted and its window reported from its preview; the previewed lines another
 * claimer took leave no intent behind; a preview that cannot be tracked claims nothing;
 * a fast claim whose lines only memory kept leaves no false window; resume asks the
 * service nothing for players whose lines are all journaled.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry, type JournalLine } from '../../src/index.js';
import { BASE_URL, Game, KEY, inProcessStore } from '../support/reliability.js';
import { counting, withoutRawRows } from '../support/answers.js';

const { mock, sleep, fetch: mockFetch, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
});

const whip = (player: string) => ({ player_name: player, product_id: 1, product_id_string: '42', product_name: 'Whip', product_price: 10, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 });

describe('exactly-once: the intents an earlier run left', () => {
  it('an intent whose invoice is still pending is claimed normally: granted once, no window', async () => {
    const row = mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    // A run that died after journaling its intent, before its claim.
    await journal.append([{ deliveryId: `invoice:${row.invoice}`, playerName: 'Ann', state: 'intended', item: whip('Ann'), invoice: String(row.invoice), recordedAt: mock.clock.now(), previewedAt: mock.clock.now() }]);
    mock.clock.advance(10_000);
    const game = new Game();
    const report = await client(journal).deliver('Ann', game.grant(), { sleep });
    expect(report.code).toBe('SUCCESS');
    expect(report.unverified).toBeUndefined();
    expect(report.granted.map((i) => i.deliveryId)).toEqual([`invoice:${row.invoice}`]);
    expect(await journal.pending()).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('an intent no longer pending was delivered by the lost claim: granted from the journal, the window from its preview', async () => {
    const row = mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const previewedAt = mock.clock.now() - 3_000;
    await journal.append([{ deliveryId: `invoice:${row.invoice}`, playerName: 'Bo', state: 'intended', item: whip('Bo'), invoice: String(row.invoice), recordedAt: mock.clock.now(), previewedAt }]);
    // The lost claim took it.
    await client(new MemoryJournal()).claim('Bo');
    mock.clock.advance(10_000);
    const granted: string[] = [];
    const report = await client(journal).deliver('Bo', (item) => void granted.push(item.deliveryId), { sleep });
    expect(granted).toEqual([`invoice:${row.invoice}`]);
    expect(report.unverified).toEqual({ playerName: 'Bo', from: previewedAt, to: mock.clock.now() });
    expect((await journal.pending()).map((e) => e.state)).toEqual(['unverified']);
  });

  it('an intent without a preview time: the window starts when it was written', async () => {
    const journal = new MemoryJournal();
    const writtenAt = mock.clock.now() - 7_000;
    await journal.append([{ deliveryId: 'invoice:9', playerName: 'Cy', state: 'intended', item: whip('Cy'), invoice: '9', recordedAt: writtenAt }]);
    const report = await client(journal).deliver('Cy', () => {}, { sleep });
    expect(report.unverified).toMatchObject({ playerName: 'Cy', from: writtenAt });
  });

  it('an intent without an invoice cannot be matched to a pending line: it counts as taken, granted, and reported', async () => {
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    await journal.append([{ deliveryId: 'claim:old:0', playerName: 'Dee', state: 'intended', item: whip('Dee'), recordedAt: mock.clock.now() }]);
    const granted: string[] = [];
    const report = await client(journal).deliver('Dee', (item) => void granted.push(item.deliveryId), { sleep });
    expect(granted[0]).toBe('claim:old:0');
    expect(report.unverified).toMatchObject({ playerName: 'Dee' });
  });

  it('a line granted from a lost intent whose grant fails is kept as a claimed line (no preview time, not settled), granted on the next call', async () => {
    const journal = new MemoryJournal();
    await journal.append([{ deliveryId: 'invoice:77', playerName: 'Eve', state: 'intended', item: whip('Eve'), invoice: '77', recordedAt: 1, previewedAt: 1, settled: false }]);
    await client(journal).deliver('Eve', () => Promise.reject(new Error('offline')), { sleep });
    const line = (await journal.pending()).find((e) => e.deliveryId === 'invoice:77') as JournalLine;
    expect(line.state).toBe('claimed');
    expect(line).not.toHaveProperty('previewedAt');
    expect(line).not.toHaveProperty('settled');
    expect(line.recordedAt).toBe(mock.clock.now());
    const game = new Game();
    const next = await client(journal).deliver('Eve', game.grant(), { sleep });
    expect(next.granted.map((i) => i.deliveryId)).toEqual(['invoice:77']);
  });
});

describe('exactly-once: the claim after the wait', () => {
  it('finds the previewed lines gone (another claimer took them): the intents are dropped, nothing is granted or reported', async () => {
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    let intents: JournalEntry[] = [];
    const report = await client(journal).deliver('Fay', () => {}, {
      sleep: async (ms) => {
        intents = await journal.pending();
        // A claimer outside this journal takes the line during the wait.
        mock.clock.advance(10_000);
        await new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: mockFetch, now: mock.clock.now, retry: 0 }).claim('Fay');
        await sleep(ms);
      },
    });
    expect(intents.map((e) => e.state)).toEqual(['intended']);
    expect(['NO_ITEMS', 'ALREADY_CLAIMED']).toContain(report.code);
    expect(report.granted).toEqual([]);
    expect(report.unverified).toBeUndefined();
    expect(await journal.pending()).toEqual([]);
  });

  it('a claim still rate-limited after the allowed waits keeps the intents, which the next call claims', async () => {
    mock.addPurchase(KEY, { playerName: 'Gus', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    // The wait is skipped: the claim comes too early, and no rate-limit wait is allowed.
    const report = await c.deliver('Gus', () => {}, { maxRateLimitWaits: 0, sleep: async () => undefined });
    expect(report.code).toBe('RATE_LIMIT');
    expect((await journal.pending()).map((e) => e.state)).toEqual(['intended']);
    mock.clock.advance(10_000);
    const game = new Game();
    const next = await c.deliver('Gus', game.grant(), { sleep });
    expect(next.granted).toHaveLength(1);
    expect(next.unverified).toBeUndefined();
    expect(await journal.pending()).toEqual([]);
  });

  it('a preview that does not list an invoice for every line claims nothing: ERROR, the purchase left pending', async () => {
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const granted: unknown[] = [];
    const report = await client(journal, { fetch: withoutRawRows(mockFetch, 'previews') }).deliver('Hal', (item) => void granted.push(item), { sleep });
    expect(report.code).toBe('ERROR');
    expect(report.error?.message).toMatch(/did not list an invoice for every line/);
    expect(granted).toEqual([]);
    expect(await journal.pending()).toEqual([]);
    expect(mock.purchases(KEY, 'Hal')[0]?.deliverystatus).toBe('Undelivered');
  });
});

describe('fast mode: lines the journal could not take', () => {
  it('granted from memory, the claim mark dropped: no window is reported later, nothing is left', async () => {
    mock.addPurchase(KEY, { playerName: 'Ivy', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    // The second write (the claimed lines) fails once: a full disk.
    let writes = 0;
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (++writes === 2) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        await inner.append(entries);
      },
      pending: (p) => inner.pending(p),
      acknowledge: async (ids) => {
        writes += 1;
        await inner.acknowledge(ids);
      },
    };
    const game = new Game();
    const first = await client(journal).deliver('Ivy', game.grant(), { mode: 'fast', sleep });
    expect(first.granted).toHaveLength(1);
    expect(first.journalError).toBeDefined();
    expect(await inner.pending()).toEqual([]);
    mock.clock.advance(10_000);
    const next = await client(journal).deliver('Ivy', game.grant(), { mode: 'fast', sleep });
    expect(next.unverified).toBeUndefined();
    expect(next.message).not.toMatch(/staff/);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('a grant that fails too: the line stays in memory, counted as pending, and the mark stays until it is written', async () => {
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    let full = false;
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (full) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        await inner.append(entries);
        full = true; // every write after the claim mark fails
      },
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const c = client(journal);
    const first = await c.deliver('Jo', () => Promise.reject(new Error('offline')), { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    expect(first.pending).toBe(2); // the mark in the journal, the line in memory
    expect((await inner.pending()).map((e) => e.state)).toEqual(['claiming']);
    // The disk has room again: the line is written, granted, and the mark (whose line now exists) reports nothing.
    full = false;
    const game = new Game();
    const next = await c.deliver('Jo', game.grant(), { mode: 'fast', sleep });
    expect(next.granted).toHaveLength(1);
    expect(next.pending).toBe(0);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });
});

describe('resumeDeliveries at startup', () => {
  it('asks the service nothing for players whose lines are all journaled (no preview, no claim)', async () => {
    const journal = new MemoryJournal();
    await journal.append([{ deliveryId: 'claim:a:0', playerName: 'Kim', state: 'claimed', item: whip('Kim'), recordedAt: 1 }]);
    // A window kept for staff is no work either.
    await journal.append([{ deliveryId: 'window:w', playerName: 'Lou', state: 'unverified', from: 1, to: 2, cause: 'claimMark', recordedAt: 2 }]);
    const seen = counting(mockFetch);
    const granted: string[] = [];
    const resumed = await client(journal, { fetch: seen.fetch }).resumeDeliveries((item) => void granted.push(item.deliveryId), { sleep });
    expect(granted).toEqual(['claim:a:0']);
    expect(seen.calls()).toBe(0);
    expect(resumed).toMatchObject({ pending: 0, errors: [], unverified: [] });
    expect(resumed).not.toHaveProperty('journalError');
    expect((await journal.pending()).map((e) => e.state)).toEqual(['unverified']);
  });
});

describe("exactly-once: the wait for the service's 10 s window", () => {
  /** A journal whose appends take `ms` of the mock's clock (a slow disk between the preview and the wait). */
  const slowJournal = (ms: number): DeliveryJournal => {
    const inner = new MemoryJournal();
    return {
      append: async (entries) => {
        mock.clock.advance(ms);
        await inner.append(entries);
      },
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
  };

  it.each([
    [0, [10_000]],
    [4_000, [6_000]],
    [10_000, []],
    [15_000, []],
  ])('%i ms between the preview answer and the wait: sleeps %j, and the claim is never refused for coming early', async (elapsed, expected) => {
    mock.addPurchase(KEY, { playerName: 'Mo', id: 1, quantity: 1 });
    const sleeps: number[] = [];
    const report = await client(slowJournal(elapsed)).deliver('Mo', () => {}, {
      maxRateLimitWaits: 0,
      sleep: async (ms) => {
        sleeps.push(ms);
        await sleep(ms);
      },
    });
    expect(sleeps).toEqual(expected);
    expect(report.code).toBe('SUCCESS');
  });
});

describe('a journal that fails part of the way', () => {
  it('resumeDeliveries: a player whose entries cannot be read is listed with the failure, the others finished', async () => {
    const inner = new MemoryJournal();
    await inner.append([
      { deliveryId: 'claim:a:0', playerName: 'Ned', state: 'claimed', item: whip('Ned'), recordedAt: 1 },
      { deliveryId: 'claim:b:0', playerName: 'Oli', state: 'claimed', item: whip('Oli'), recordedAt: 1 },
    ]);
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      acknowledge: (ids) => inner.acknowledge(ids),
      pending: async (player) => {
        if (player === 'Ned') throw new Error('EIO: bad sector');
        return inner.pending(player);
      },
    };
    const granted: string[] = [];
    const resumed = await client(journal).resumeDeliveries((item) => void granted.push(item.deliveryId), { sleep });
    expect(granted).toEqual(['claim:b:0']);
    expect(resumed.errors.map((e) => [e.playerName, e.error.code])).toEqual([['Ned', 'JOURNAL_FAILED']]);
    expect(resumed.journalError?.message).toMatch(/EIO: bad sector/);
  });

  it('lines kept in memory are granted even when the journal cannot be read on the next call; nothing new is claimed then', async () => {
    mock.addPurchase(KEY, { playerName: 'Pia', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    let broken: 'none' | 'lines' | 'read' = 'lines';
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (broken !== 'none' && entries.some((e) => e.state === 'claimed')) throw new Error('ENOSPC');
        await inner.append(entries);
      },
      acknowledge: (ids) => inner.acknowledge(ids),
      pending: async (player) => {
        if (broken === 'read') throw new Error('EIO');
        return inner.pending(player);
      },
    };
    const c = client(journal);
    // The claim succeeds, the lines cannot be written, the grant fails: the line lives in memory only.
    const first = await c.deliver('Pia', () => Promise.reject(new Error('offline')), { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    mock.addPurchase(KEY, { playerName: 'Pia', id: 3, quantity: 1 });
    mock.clock.advance(10_000);
    broken = 'read';
    const granted: string[] = [];
    const second = await c.deliver('Pia', (item) => void granted.push(item.product_id_string), { mode: 'fast', sleep });
    expect(granted).toEqual(['42']);
    expect(second.code).toBe('SUCCESS');
    expect(second.journalError).toBeDefined();
    // The sword bought since was not claimed while the journal could not be read.
    expect(mock.purchases(KEY, 'Pia').filter((r) => r.deliverystatus === 'Undelivered')).toHaveLength(1);
  });

  it('a journal that fails while finishing earlier work claims nothing new', async () => {
    mock.addPurchase(KEY, { playerName: 'Quinn', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    await inner.append([{ deliveryId: 'claim:old:0', playerName: 'Quinn', state: 'claimed', item: whip('Quinn'), recordedAt: 1 }]);
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: async () => {
        throw new Error('EROFS');
      },
    };
    const report = await client(journal).deliver('Quinn', () => {}, { mode: 'fast', sleep });
    expect(report.granted.map((i) => i.deliveryId)).toEqual(['claim:old:0']);
    expect(report.journalError).toBeDefined();
    expect(mock.purchases(KEY, 'Quinn')[0]?.deliverystatus).toBe('Undelivered');
  });

  it('exactly-once with nothing to claim: NO_ITEMS at once, no wait, no claim after the preview', async () => {
    const seen = counting(mockFetch);
    const sleeps: number[] = [];
    const journal = new MemoryJournal();
    const report = await client(journal, { fetch: seen.fetch }).deliver('Ray', () => {}, { sleep: async (ms) => void sleeps.push(ms) });
    expect(report.code).toBe('NO_ITEMS');
    expect(sleeps).toEqual([]);
    expect(seen.calls()).toBe(1);
    expect(await journal.pending()).toEqual([]);
  });
});

describe('what an earlier run left beside a window', () => {
  it("a line to grant beside an open window: granted, and the player's text still says staff are checking", async () => {
    const journal = new MemoryJournal();
    await journal.append([
      { deliveryId: 'window:w', playerName: 'Sam', state: 'unverified', from: 1, to: 2, cause: 'claimMark', recordedAt: 2 },
      { deliveryId: 'claim:a:0', playerName: 'Sam', state: 'claimed', item: whip('Sam'), recordedAt: 1 },
    ]);
    const report = await client(journal).deliver('Sam', () => {}, { mode: 'fast', sleep });
    expect(report.granted.map((i) => i.deliveryId)).toEqual(['claim:a:0']);
    expect(report.message).toMatch(/staff can check/);
  });

  it('a line left by an earlier run whose grant now outlives grantTimeoutMs stays in the journal (never acknowledged before its grant returns)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const journal = new MemoryJournal();
      await journal.append([{ deliveryId: 'claim:a:0', playerName: 'Tia', state: 'claimed', item: whip('Tia'), recordedAt: 1 }]);
      const delivering = client(journal).deliver('Tia', () => new Promise(() => {}), { mode: 'fast', sleep, grantTimeoutMs: 1_000 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await delivering).failed).toHaveLength(1);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['claim:a:0']);
    } finally {
      vi.useRealTimers();
    }
  });
});
