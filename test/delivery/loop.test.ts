/**
 * Automatic delivery (`client.startDeliveryLoop`), point by point (issue #23), on fake
 * timers: the mock follows the faked `Date`, the client's guard and the loop the faked
 * `performance.now()`, so hours of virtual time pass in milliseconds.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryJournal } from '../../src/index.js';
import { PlayerLocks } from '../../src/delivery/core/locks.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY, seed } from '../support/reliability.js';
import { createMockService } from '../../src/mock/index.js';

const { setup, T0 } = loopHarness();

describe('join', () => {
  it('grants what is pending first, then previews soon: a purchase made offline arrives about one window after the join', async () => {
    const { mock, client, calls, given, give, journal } = setup();
    await journal.append([{ deliveryId: 'claim:old:0', playerName: 'Ann', state: 'claimed', item: { player_name: 'Ann', product_id: 42, product_id_string: '42', product_name: 'Whip', product_price: 10, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 }, recordedAt: T0 }]);
    mock.addPurchase(KEY, { playerName: 'Ann', id: 3, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(0);
    expect(given.map((g) => g.item.deliveryId)).toEqual(['claim:old:0']);
    expect(calls).toEqual([{ at: T0, player: 'Ann', preview: true }]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toHaveLength(2);
    expect(given[1]?.at).toBe(T0 + 10_000);
    expect(calls.map((c) => c.preview)).toEqual([true, false]);
    await loop.stop();
  });
});

describe('poll', () => {
  it('previews each online player about every pollIntervalMs and delivers what a preview shows, once', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000 });
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 2 });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(given.map((g) => g.item.quantity_purchased)).toEqual([2]);
    // Bought at 1 s: seen by the poll at about 30 s (jitter ±10 %), given one window later.
    expect((given[0]?.at ?? 0) - T0).toBeGreaterThanOrEqual(27_000 + 10_000);
    expect((given[0]?.at ?? 0) - T0).toBeLessThanOrEqual(33_000 + 10_000);
    const previews = calls.filter((c) => c.preview).length;
    expect(previews).toBeGreaterThanOrEqual(4);
    expect(previews).toBeLessThanOrEqual(6);
    expect(mock.purchases(KEY, 'Bo').every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    await loop.stop();
  });
});

describe('budget', () => {
  it('never more than maxCallsPerSecond in any one second, claims included; the interval stretches evenly when the budget cannot cover', async () => {
    const { mock, client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 5, pollIntervalMs: 10_000 });
    for (let i = 0; i < 100; i++) loop.join(`P${i}`);
    for (let i = 0; i < 100; i += 3) mock.addPurchase(KEY, { playerName: `P${i}`, id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(120_000);
    const claimed = loop.claim('P1');
    await vi.advanceTimersByTimeAsync(15_000);
    await claimed;
    const times = calls.map((c) => c.at).sort((a, b) => a - b);
    let max = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while ((times[i] as number) - (times[j] as number) >= 1_000) j++;
      max = Math.max(max, i - j + 1);
    }
    expect(max).toBeLessThanOrEqual(5);
    expect(loop.stats().maxCallsInOneSecond).toBeLessThanOrEqual(5);
    // 100 players on 4 calls/s for polls: every 25 s, not every 10 s.
    expect(loop.stats().intervalMs).toBe(25_000);
    expect(calls.filter((c) => !c.preview).length).toBeGreaterThanOrEqual(34);
    expect(mock.purchases(KEY).every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    await loop.stop();
  });
});

describe('/claim', () => {
  it('goes ahead of the routine polls queued for the budget', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 2, pollIntervalMs: 10_000, claimMode: 'fast' });
    for (let i = 0; i < 100; i++) loop.join(`P${i}`);
    // 100 joins at 2 calls/s: the first previews take 50 s; then the polls keep the budget busy.
    await vi.advanceTimersByTimeAsync(120_000);
    mock.addPurchase(KEY, { playerName: 'P7', id: 1, quantity: 1 });
    // The claim goes out at the edge of P7's window (its last call + 10 s), or now.
    const lastCall = Math.max(...calls.filter((c) => c.player === 'P7').map((c) => c.at));
    const due = Math.max(Date.now(), lastCall + 10_000);
    const report = loop.claim('P7');
    await vi.advanceTimersByTimeAsync(due - Date.now() + 1_000);
    expect((await report).code).toBe('SUCCESS');
    // Ahead of every routine preview queued for the budget: within a second of its due time.
    expect(given.at(-1)?.at).toBeLessThanOrEqual(due + 1_000);
    await loop.stop();
  });


  it('with claimMode fast, is one call and no wait when the last preview is a window old', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, claimMode: 'fast' });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls).toHaveLength(1);
    mock.addPurchase(KEY, { playerName: 'Cy', id: 4, quantity: 1 });
    const before = calls.length;
    const start = Date.now();
    const report = loop.claim('Cy');
    await vi.advanceTimersByTimeAsync(0);
    expect((await report).code).toBe('SUCCESS');
    expect(Date.now()).toBe(start);
    expect(calls.length - before).toBe(1);
    expect(given).toHaveLength(1);
    await loop.stop();
  });

  it('typed while a preview that found nothing is in flight, it gets a run of its own, not that preview\'s stale answer', async () => {
    const { mock, client, given, give } = setup({
      // Every answer takes 200 ms, so the /claim can come while a preview is on the wire.
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        await new Promise((r) => setTimeout(r, 200));
        return answer;
      },
    });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Ed');
    await vi.advanceTimersByTimeAsync(100); // the join's preview is on the wire
    mock.addPurchase(KEY, { playerName: 'Ed', id: 1, quantity: 1 });
    const report = loop.claim('Ed');
    // Exactly once: its own preview at the window's edge, its claim one window later.
    await vi.advanceTimersByTimeAsync(22_000);
    expect((await report).code).toBe('SUCCESS');
    expect(given).toHaveLength(1);
    await loop.stop();
  });

  it('a thousand joins do not pile runs into the budget: a preview that finds items is claimed about one window later', async () => {
    const { mock, client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 10 });
    mock.addPurchase(KEY, { playerName: 'P500', id: 1, quantity: 1 });
    for (let i = 0; i < 1_000; i++) loop.join(`P${i}`);
    await vi.advanceTimersByTimeAsync(200_000);
    const mine = calls.filter((c) => c.player === 'P500');
    const preview = mine.find((c) => c.preview);
    const claim = mine.find((c) => !c.preview);
    expect(claim).toBeDefined();
    expect((claim?.at ?? 0) - (preview?.at ?? 0)).toBeLessThanOrEqual(12_000);
    await loop.stop();
  });

  it('typed while a preview that found items is on the wire, it is answered by that delivery', async () => {
    const { mock, client, calls, given, give } = setup({
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        await new Promise((r) => setTimeout(r, 200));
        return answer;
      },
    });
    mock.addPurchase(KEY, { playerName: 'Flo', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Flo');
    await vi.advanceTimersByTimeAsync(100);
    const report = loop.claim('Flo');
    await vi.advanceTimersByTimeAsync(11_000);
    expect((await report).code).toBe('SUCCESS');
    expect(given).toHaveLength(1);
    expect(calls.map((c) => c.preview)).toEqual([true, false]);
    await loop.stop();
  });

  it('within the window it joins the scheduled delivery rather than starting a second one', async () => {
    const { mock, client, calls, given, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Dee');
    await vi.advanceTimersByTimeAsync(2_000);
    const first = loop.claim('Dee');
    const second = loop.claim('Dee');
    await vi.advanceTimersByTimeAsync(10_000);
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(a.code).toBe('SUCCESS');
    expect(given).toHaveLength(1);
    expect(calls.map((c) => c.preview)).toEqual([true, false]);
    await loop.stop();
  });
});

describe('offline means no grant', () => {
  it('a player who leaves during the window: no claim is sent; the purchase waits for the next join', async () => {
    const { mock, client, calls, given, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(5_000);
    loop.leave('Eve');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls.map((c) => c.preview)).toEqual([true]);
    expect(given).toHaveLength(0);
    expect(mock.purchases(KEY, 'Eve')[0]?.deliverystatus).toBe('Undelivered');
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(given).toHaveLength(1);
    await loop.stop();
  });

  it('a player who leaves mid-delivery keeps the rest pending, given on the next join', async () => {
    const { mock, client, given, journal } = setup();
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Fay', id: 3, quantity: 1 });
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const give = (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
      loopRef?.leave('Fay'); // the player logs out right after the first item
    };
    const loop = client.startDeliveryLoop({ give });
    loopRef = loop;
    loop.join('Fay');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(given).toHaveLength(1);
    expect(await journal.pending('Fay')).toHaveLength(1);
    loopRef = undefined;
    loop.join('Fay');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(given).toHaveLength(2);
    expect(await journal.pending('Fay')).toHaveLength(0);
    await loop.stop();
  });
});

describe('several nodes on one journal', () => {
  it('a player online on two nodes at once gets each item once', async () => {
    const journal = new MemoryJournal();
    // Two nodes: each its own journal object over one store, with a lock across nodes (as
    // the database journals have); one loop per journal object in a process.
    const locks = new PlayerLocks();
    const node = (nodeId: string): DeliveryJournal => ({
      nodeId,
      append: (entries) => journal.append(entries),
      pending: (player) => journal.pending(player),
      acknowledge: (ids) => journal.acknowledge(ids),
      withPlayerLock: (player, work) => locks.run(player, undefined, work),
    });
    const a = setup({ journal: node('A') });
    const mock = a.mock;
    // Node B reaches the same store.
    const b = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal: node('B'), retry: 0 });
    const given: string[] = [];
    const give = (item: DeliveredItem) => void given.push(item.deliveryId);
    const loopA = a.client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    const loopB = b.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loopA.join('Gus');
    loopB.join('Gus');
    for (let minute = 0; minute < 5; minute++) {
      mock.addPurchase(KEY, { playerName: 'Gus', id: 1 + (minute % 5), quantity: 1 });
      await vi.advanceTimersByTimeAsync(60_000);
    }
    const paid = mock.purchases(KEY, 'Gus').map((r) => `invoice:${r.invoice}`);
    expect(given.sort()).toEqual(paid.sort());
    await Promise.all([loopA.stop(), loopB.stop()]);
  });
});

describe('trouble', () => {
  it('5xx answers back off exponentially (bounded) instead of hammering; the loop recovers', async () => {
    const { mock, client, calls, give, events } = setup();
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000, maxCallsPerSecond: 50 });
    for (let i = 0; i < 20; i++) loop.join(`Q${i}`);
    await vi.advanceTimersByTimeAsync(600_000);
    // 20 players every 10 s for 10 minutes would be 1,200 calls.
    expect(calls.length).toBeLessThan(300);
    expect(loop.stats().errors).toBeGreaterThan(0);
    expect(events.some((e) => e.type === 'loopError')).toBe(true);
    mock.faults.clear();
    mock.addPurchase(KEY, { playerName: 'Q3', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(180_000);
    expect(mock.purchases(KEY, 'Q3')[0]?.deliverystatus).toBe('Delivered');
    await loop.stop();
  });

  it('a refused key pauses the loop and says so, without hammering', async () => {
    const mock = createMockService({ seed });
    const calls: number[] = [];
    const client = new StorefrontClient({
      apiKey: 'not-a-key',
      baseUrl: 'https://api.teamgames.io',
      journal: new MemoryJournal(),
      retry: 0,
      fetch: async (input, init) => {
        calls.push(Date.now());
        return mock.fetch(input, init);
      },
    });
    const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 10_000 });
    for (let i = 0; i < 10; i++) loop.join(`R${i}`);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(loop.stats().paused).toBe(true);
    expect(loop.stats().lastError).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    // An hour: ten players every 10 s would be 3,600 calls; paused, a handful.
    expect(calls.length).toBeLessThan(60);
    await loop.stop();
  });
});

describe('stop', () => {
  it('waits for a grant in flight, then nothing more is called or granted; pending lines stay for the next start', async () => {
    const { mock, client, calls, given, journal } = setup();
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Hal', id: 3, quantity: 1 });
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const give = async (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
      await slow;
    };
    const loop = client.startDeliveryLoop({ give });
    loop.join('Hal');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toHaveLength(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release();
    await stopping;
    const callsAtStop = calls.length;
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls.length).toBe(callsAtStop);
    // The second item was claimed; its grant was refused once stopping: pending for the next start.
    expect(given.length + (await journal.pending('Hal')).length).toBe(2);
  });

  it('the signal option stops the loop like stop()', async () => {
    const { client, calls, give } = setup();
    const controller = new AbortController();
    const loop = client.startDeliveryLoop({ give, signal: controller.signal });
    loop.join('Ivy');
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    await loop.stop();
    const n = calls.length;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls.length).toBe(n);
  });
});

describe('only who is here', () => {
  it('never calls the service for a player it was not told is online, and never grants to them', async () => {
    const { mock, client, calls, given, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Kim', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(300_000);
    expect(new Set(calls.map((c) => c.player))).toEqual(new Set(['Jo']));
    expect(given.every((g) => g.item.player_name === 'Jo')).toBe(true);
    await loop.stop();
  });
});

describe('arguments', () => {
  it('refuses a missing give and out-of-range options by name', () => {
    const { client } = setup();
    expect(() => client.startDeliveryLoop({} as never)).toThrow(/options\.give/);
    expect(() => client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 5_000 })).toThrow(/options\.pollIntervalMs.*10,000/);
    expect(() => client.startDeliveryLoop({ give: () => {}, maxCallsPerSecond: 0 })).toThrow(/options\.maxCallsPerSecond/);
    expect(() => client.startDeliveryLoop({ give: () => {}, nope: 1 } as never)).toThrow(/nope/);
  });
});
