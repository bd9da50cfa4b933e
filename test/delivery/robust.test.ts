/**
 * The delivery engine under the setups a hostile tester found (issue #21): two clients on
 * one journal, a claim answer without raw rows followed by a crash, records of the wrong
 * shape, a resume that left players unreconciled, a window forgotten by the player's next
 * call, stuck grants, aborts and re-entrant calls, and a wall clock that steps back.
 */
import { readdirSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  GrantTimeoutError,
  InvalidInputError,
  MemoryJournal,
  StorefrontClient,
  isStorefrontError,
  type DeliveredItem,
  type DeliveryJournal,
  type JournalEntry,
  type StorefrontEvent,
} from '../../src/index.js';
import { Crash, CrashingJournal, Game, KEY, inProcessStore } from '../support/reliability.js';
import { counting, deferred, withoutRawRows } from '../support/answers.js';

const { mock, sleep, fetch: mockFetch, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
  vi.useRealTimers();
});

describe('two clients on one journal', () => {
  it('are serialised per player: the second waits for the first, grant included', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const a = client(journal);
    const seen = counting(mockFetch);
    const b = client(journal, { fetch: seen.fetch });
    const granting = deferred();
    const first = a.deliver('Ann', () => granting.promise, { sleep, mode: 'fast' });
    await vi.waitFor(() => expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Delivered'));
    const second = b.deliver('Ann', () => {}, { sleep, mode: 'fast' });
    // Mid-grant of the first client: the second has not called the service.
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.calls()).toBe(0);
    granting.resolve();
    expect((await first).code).toBe('SUCCESS');
    expect((await second).code).toBe('ALREADY_CLAIMED');
  });

  it('a claim answer lost by one client is reconciled by the other, never acknowledged away', async () => {
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    // B's claim (the second call: after its preview) loses its answer.
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    const events: StorefrontEvent[] = [];
    const a = client(journal, { onEvent: (e) => events.push(e) });
    const b = client(journal, { onEvent: (e) => events.push(e) });
    const [fromB, fromA] = await Promise.all([b.deliver('Bo', game.grant(), { sleep }), a.deliver('Bo', game.grant(), { sleep })]);
    expect(fromB.code).toBe('OUTCOME_UNKNOWN');
    expect(fromA.granted).toHaveLength(1);
    expect(fromA.unverified).toMatchObject({ playerName: 'Bo' });
    expect(outcome(game)).toMatchObject({ lost: 0, duplicated: 0 });
    // Only the window is left, kept for staff.
    expect((await journal.pending()).map((e) => e.state)).toEqual(['unverified']);
  });

  it('two clients with no journal option share the default file journal and its order', async () => {
    const dir = await import('node:fs/promises').then((fs) => fs.mkdtemp(`${(process.env['TMPDIR'] ?? '/tmp').replace(/\/$/, '')}/tg-default-`));
    // The working directory, as the bridge would start in it (a worker thread, as under
    // `npm run mutate`, cannot change directory: the path is resolved from process.cwd()).
    const cwd = vi.spyOn(process, 'cwd').mockReturnValue(dir);
    try {
      mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
      const a = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mockFetch, now: mock.clock.now, retry: 0 });
      const seen = counting(mockFetch);
      const b = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: seen.fetch, now: mock.clock.now, retry: 0 });
      const granting = deferred();
      const first = a.deliver('Cy', () => granting.promise, { sleep, mode: 'fast' });
      await vi.waitFor(() => expect(mock.purchases(KEY, 'Cy')[0]?.deliverystatus).toBe('Delivered'));
      const second = b.deliver('Cy', () => {}, { sleep, mode: 'fast' });
      await new Promise((r) => setTimeout(r, 20));
      expect(seen.calls()).toBe(0);
      granting.resolve();
      expect((await first).code).toBe('SUCCESS');
      expect((await second).code).toBe('ALREADY_CLAIMED');
      expect(readdirSync(dir)).toContain('.teamgames-journal.jsonl');
    } finally {
      cwd.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('exactly-once, a claim answer without rawTransactions, then a crash', () => {
  /** The proxy drops the raw rows of real claims (previews keep theirs). */
  const noRawRows = withoutRawRows(mockFetch);

  // Writes after the claim: [the claimed lines with the settled intents], then acknowledgements.
  it.each([1, 2, 3, 4])('a crash at journal write #%i after the claim: nothing silent, nothing twice', async (crashAt) => {
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Dee', id: 3, quantity: 1 });
    const storage = new MemoryJournal();
    let claimed = false;
    let writes = 0;
    const journal = new CrashingJournal(storage, (point) => claimed && point !== 'appendAfter' && ++writes === crashAt);
    const game = new Game();
    const first = client(journal, { fetch: noRawRows });
    const grant = (item: DeliveredItem) => game.grant()(item);
    const run = journal.run(
      first.deliver('Dee', grant, {
        sleep: async (ms) => {
          claimed = true; // the intents are journaled; the claim comes next
          await sleep(ms);
        },
      }),
    );
    const crashed = await run.then(
      () => false,
      (error: unknown) => error instanceof Crash,
    );
    // A new process on the same storage finishes the work.
    const events: StorefrontEvent[] = [];
    const second = client(storage, { onEvent: (e) => events.push(e) });
    mock.clock.advance(10_000);
    await second.resumeDeliveries(grant, { sleep });
    await second.deliver('Dee', grant, { sleep });
    const result = outcome(game);
    expect(result.duplicated).toBe(0);
    // Both lines were previewed before the claim: exactly-once loses neither. A window the
    // resume reports (what the lost answer could have claimed beyond them) is Dee's, and staff
    // find each one in the journal.
    expect(result.lost).toBe(0);
    const windows = events.flatMap((e) => (e.type === 'unverified' ? [e.window] : []));
    for (const window of windows) expect(window.playerName === 'Dee' && window.from <= window.to).toBe(true);
    expect((await storage.pending()).filter((e) => e.state === 'unverified')).toHaveLength(windows.length);
    expect((await storage.pending()).filter((e) => e.state !== 'unverified')).toEqual([]);
    expect(crashed || crashAt > 3).toBe(true);
  });
});

describe('exactly-once, a claim answer without rawTransactions', () => {
  it('leaves no settled intent behind: the claimed lines are granted and every intent they settled is acknowledged', async () => {
    mock.addPurchase(KEY, { playerName: 'Ela', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Ela', id: 3, quantity: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    const report = await client(journal, { fetch: withoutRawRows(mockFetch) }).deliver('Ela', game.grant(), { sleep });
    expect(report.code).toBe('SUCCESS');
    expect(report.granted).toHaveLength(2);
    // The lines had no invoice to replace their intents in place: both intents were settled, then acknowledged.
    expect(await journal.pending('Ela')).toEqual([]);
  });
});

describe('records of the wrong shape from a journal', () => {
  /** A user's journal that returns what its storage holds, unchecked. */
  class RawJournal implements DeliveryJournal {
    constructor(public records: unknown[]) {}
    async append(): Promise<void> {}
    async pending(): Promise<JournalEntry[]> {
      return this.records as JournalEntry[];
    }
    async acknowledge(): Promise<void> {}
  }

  it.each<[string, unknown]>([
    ['a string in place of the item', { deliveryId: 'x:1', playerName: 'Eve', state: 'claimed', item: 'garbage', recordedAt: 1 }],
    ['an unknown state', { deliveryId: 'x:2', playerName: 'Eve', state: 'done', item: {}, recordedAt: 1 }],
    ['missing fields', { deliveryId: 'x:3', playerName: 'Eve', state: 'claimed' }],
    ['a string in place of the entry', 'garbage'],
  ])('%s: never granted, reported as a journal failure, nothing claimed', async (_, record) => {
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    const grant = vi.fn();
    const report = await client(new RawJournal([record])).deliver('Eve', grant, { sleep });
    expect(grant).not.toHaveBeenCalled();
    expect(report.code).toBe('ERROR');
    expect(report.journalError?.message).toMatch(/not a journal entry/);
    expect(mock.purchases(KEY, 'Eve')[0]?.deliverystatus).toBe('Undelivered');
  });
});

describe('resumeDeliveries lists every player it leaves unreconciled', () => {
  it('a preview refused with RATE_LIMIT after the allowed waits', async () => {
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    expect((await c.deliver('Fay', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    // The local guard still holds Fay's window: with no waits allowed, the preview is refused.
    const resumed = await c.resumeDeliveries(() => {}, { sleep, maxRateLimitWaits: 0 });
    expect(resumed.errors).toHaveLength(1);
    expect(resumed.errors[0]?.playerName).toBe('Fay');
    expect(isStorefrontError(resumed.errors[0]?.error, 'NOT_RECONCILED')).toBe(true);
    expect(resumed.errors[0]?.error.message).toMatch(/RATE_LIMIT/);
    expect(resumed.pending).toBe(1);
  });

  it('a player whose cross-node lock cannot be had', async () => {
    const inner = new MemoryJournal();
    await inner.append([{ deliveryId: 'claim:x:0', playerName: 'Gus', state: 'claimed', item: { player_name: 'Gus', product_id: 1, product_id_string: '1', product_name: 'A', product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 }, recordedAt: 1 }]);
    const locked: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: async () => {
        throw new Error('lock timeout');
      },
    };
    const resumed = await client(locked).resumeDeliveries(() => {}, { sleep });
    expect(resumed.errors.map((e) => e.playerName)).toEqual(['Gus']);
    expect(resumed.errors[0]?.error.code).toBe('JOURNAL_FAILED');
  });
});

describe('a window, once reported, is not contradicted by the player\'s next call', () => {
  it('the next deliver says staff are checking, not "already claimed"', async () => {
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    expect((await c.deliver('Hal', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    const reconciled = await c.deliver('Hal', () => {}, { sleep });
    expect(reconciled.unverified).toBeDefined();
    const next = await c.deliver('Hal', () => {}, { sleep });
    expect(['NO_ITEMS', 'ALREADY_CLAIMED']).toContain(next.code);
    expect(next.unverified).toBeUndefined();
    expect(next.message).toMatch(/staff can check/);
    expect(next.message).not.toMatch(/already been claimed|no items/i);
    // Another client on the same journal knows it too.
    const other = await client(journal).deliver('Hal', () => {}, { sleep });
    expect(other.message).toMatch(/staff can check/);
  });
});

describe('stuck grants, aborts and re-entrant calls', () => {
  it('a deliver queued behind a stuck grant rejects with signal.reason as soon as it is aborted', async () => {
    mock.addPurchase(KEY, { playerName: 'Ivy', id: 1, quantity: 1 });
    const c = client(new MemoryJournal());
    const stuck = deferred();
    const first = c.deliver('Ivy', () => stuck.promise, { sleep, mode: 'fast' });
    await vi.waitFor(() => expect(mock.purchases(KEY, 'Ivy')[0]?.deliverystatus).toBe('Delivered'));
    const controller = new AbortController();
    const queued = c.deliver('Ivy', () => {}, { sleep, signal: controller.signal });
    const reason = new Error('player left');
    controller.abort(reason);
    await expect(queued).rejects.toBe(reason);
    stuck.resolve();
    expect((await first).code).toBe('SUCCESS');
  });

  it('a grant that calls deliver for its own player is refused with a clear error, not a deadlock', async () => {
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    const c = client(new MemoryJournal());
    let inner: unknown;
    const report = await c.deliver(
      'Jo',
      async () => {
        inner = await c.deliver('Jo', () => {}, { sleep }).catch((error: unknown) => error);
      },
      { sleep, mode: 'fast' },
    );
    expect(report.code).toBe('SUCCESS');
    expect(inner).toBeInstanceOf(InvalidInputError);
    expect((inner as Error).message).toMatch(/playerName.*wait for itself forever/);
    // Another player from inside a grant is fine.
    mock.addPurchase(KEY, { playerName: 'Kim', id: 1, quantity: 1 });
    let nested: string | undefined;
    await c.deliver('Jo', async () => {}, { sleep, mode: 'fast' });
    mock.addPurchase(KEY, { playerName: 'Jo', id: 3, quantity: 1 });
    mock.clock.advance(10_000);
    await c.deliver(
      'Jo',
      async () => {
        nested = (await c.deliver('Kim', () => {}, { sleep, mode: 'fast' })).code;
      },
      { sleep, mode: 'fast' },
    );
    expect(nested).toBe('SUCCESS');
  });

  it('a grant that never settles: after grantTimeoutMs the item is reported and stays pending; the player is not blocked; a late success acknowledges it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    mock.addPurchase(KEY, { playerName: 'Lu', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    const stuck = deferred();
    const calls: string[] = [];
    const grant = (item: DeliveredItem) => {
      calls.push(item.deliveryId);
      return stuck.promise;
    };
    const first = c.deliver('Lu', grant, { sleep, mode: 'fast', grantTimeoutMs: 5_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    const report = await first;
    expect(report.code).toBe('PARTIAL');
    expect(report.failed[0]?.error).toBeInstanceOf(GrantTimeoutError);
    expect(report.pending).toBe(1);
    // The next call runs (not blocked) and does not grant the stuck line a second time.
    mock.clock.advance(10_000);
    const next = await c.deliver('Lu', grant, { sleep, mode: 'fast' });
    expect(calls).toHaveLength(1);
    expect(next.pending).toBe(1);
    stuck.resolve();
    await vi.waitFor(() => expect(journal.size).toBe(0));
  });
});

describe('the wall clock steps back', () => {
  it("a lost fast claim's mark the journal would not drop: the window reported again from it starts where the list was seen, measured on the monotonic clock, with the wall clock an hour back", async () => {
    // The host's wall clock (Date) and its monotonic clock (performance) both faked; the
    // client keeps its default clocks (no `now` option), so they can disagree.
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.now() });
    class Refusing extends MemoryJournal {
      refuse = false;
      override async acknowledge(ids: readonly string[]): Promise<void> {
        if (this.refuse) throw new Error('disk full');
        return super.acknowledge(ids);
      }
    }
    const journal = new Refusing();
    const c = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mockFetch, journal, retry: 0, rateLimit: false });
    // Eve's list seen empty: a later claim can only take what came after.
    expect((await c.deliver('Eve', () => {}, { mode: 'fast', sleep })).code).toBe('NO_ITEMS');
    const seenAt = Date.now();
    vi.advanceTimersByTime(20_000);
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    journal.refuse = true;
    const lost = await c.deliver('Eve', () => {}, { mode: 'fast', sleep });
    expect(lost.unverified).toEqual({ playerName: 'Eve', from: seenAt, to: seenAt + 20_000 });
    expect((await journal.pending('Eve')).map((e) => e.state)).toEqual(['claiming', 'unverified']);
    journal.refuse = false;
    vi.advanceTimersByTime(10_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    const next = await c.deliver('Eve', () => {}, { mode: 'fast', sleep });
    // 30 s on the monotonic clock since the list was seen; a wall-clock window would be empty.
    expect(next.unverified).toEqual({ playerName: 'Eve', from: Date.now() - 30_000, to: Date.now() });
  });

  it('an hour back between the preview and the claim: deliver never asks to wait more than the 10 s window', async () => {
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    // The host's wall clock (Date) steps back while the intent is journaled: after the
    // preview, before the wait. The client keeps its default clocks (no `now` option).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    class Stepping extends MemoryJournal {
      override async append(entries: readonly JournalEntry[]): Promise<void> {
        vi.setSystemTime(Date.now() - 3_600_000);
        return super.append(entries);
      }
    }
    const waits: number[] = [];
    const c = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mockFetch, journal: new Stepping(), retry: 0, rateLimit: false });
    const report = await c.deliver('Max', () => {}, {
      sleep: async (ms) => {
        waits.push(ms);
        await sleep(ms);
      },
    });
    expect(Math.max(...waits)).toBeLessThanOrEqual(10_000);
    expect(report.code).toBe('SUCCESS');
  });
});
