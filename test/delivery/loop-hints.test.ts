/**
 * The checkout hint (`loop.expect`, src/delivery/loop/hints.ts, #47): a hinted player is
 * claimed once per window until the hinted purchase arrives or the hint expires, within
 * its bounds (time, number, the share of the budget), only while the loop holds the player
 * online; a lost answer is a window for staff, never a second grant.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryLoop, type StorefrontEvent } from '../../src/index.js';
import { loopHarness, type LoopCall } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

beforeEach(() => {
  // The polls' jitter pinned: each a whole interval after the last run.
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The calls for `player` sent in [from, to) (faked epoch ms). */
const between = (calls: LoopCall[], player: string, from: number, to: number) => calls.filter((c) => c.player === player && c.at >= from && c.at < to);
const windows = (events: StorefrontEvent[]) => events.flatMap((e) => (e.type === 'unverified' ? [e.window] : []));

describe('a hinted player, exactly once (the default claimMode)', () => {
  it('is previewed once per window; the preview that lists the purchase is followed by its claim a window later, and the hint ends', async () => {
    const { mock, client, calls, given, give, events } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Abe');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    expect(loop.expect('Abe')).toBe('held');
    await vi.advanceTimersByTimeAsync(33_000);
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Abe', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(25_000);
    expect(given).toHaveLength(1);
    expect(given[0]!.item.deliveryId).toMatch(/^invoice:/);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(20_200);
    // A preview each window from the hint (the join's window had passed), then the claim.
    expect(between(calls, 'Abe', hintedAt, Date.now()).map((c) => [c.at - hintedAt, c.preview])).toEqual([
      [9_000, true],
      [19_000, true],
      [29_000, true],
      [39_000, true],
      [49_000, false],
    ]);
    expect(loop.stats().hints).toBe(0);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([]);
    await loop.stop();
  });

  it('a lost answer to the claim: the purchase the preview listed is given once, from the journal', async () => {
    const { mock, client, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Bob');
    await vi.advanceTimersByTimeAsync(1_000);
    loop.expect('Bob');
    mock.addPurchase(KEY, { playerName: 'Bob', id: 1, quantity: 1 });
    // The hinted run's preview lists it (the first call), its claim's answer is lost (the second).
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(given.map((g) => g.item.deliveryId)).toEqual([expect.stringMatching(/^invoice:/)]);
    await loop.stop();
  });
});

describe("a hinted player, hintClaimMode 'fast' with the default claimMode", () => {
  it('is claimed in one call each window (given within a window of payment), while a player not hinted is still previewed before each claim', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000, hintClaimMode: 'fast' });
    loop.join('Fay');
    loop.join('Gus');
    await vi.advanceTimersByTimeAsync(1_000); // the joins' previews
    const hintedAt = Date.now();
    expect(loop.expect('Fay')).toBe('held');
    await vi.advanceTimersByTimeAsync(23_000);
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Gus', id: 2, quantity: 1 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toHaveLength(1);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(10_000);
    // Fay: one claim call each window from the hint, no preview.
    expect(between(calls, 'Fay', hintedAt, Date.now()).map((c) => [c.at - hintedAt, c.preview])).toEqual([
      [9_000, false],
      [19_000, false],
      [29_000, false],
    ]);
    // Gus, not hinted: previewed by the routine poll, his purchase claimed a window later.
    await vi.advanceTimersByTimeAsync(30_000);
    expect(given).toHaveLength(2);
    const gus = between(calls, 'Gus', hintedAt, Date.now()).map((c) => c.preview);
    expect(gus.slice(-2)).toEqual([true, false]);
    await loop.stop();
  });
});

describe('a hinted player, fast claim mode', () => {
  it('is claimed once per window (no preview first), so a purchase is given within about one window of its payment, and the hint ends with it', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000); // the join's preview
    const hintedAt = Date.now();
    expect(loop.expect('Ann')).toBe('held');
    expect(loop.stats().hints).toBe(1);
    await vi.advanceTimersByTimeAsync(33_000);
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(12_000);
    expect(given).toHaveLength(1);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(10_100);
    const hinted = between(calls, 'Ann', hintedAt, Date.now());
    expect(hinted.every((c) => !c.preview)).toBe(true);
    // One call per window: at the hint (the join's window had passed), then every 10 s.
    expect(hinted.map((c) => c.at - hintedAt)).toEqual([9_000, 19_000, 29_000, 39_000]);
    // Satisfied: no more hinted claims, the routine poll (10 minutes) is next.
    expect(loop.stats().hints).toBe(0);
    const after = Date.now();
    await vi.advanceTimersByTimeAsync(300_000);
    expect(between(calls, 'Ann', after, Date.now())).toEqual([]);
    await loop.stop();
  });

  it('on a journal that keeps no hints (append, pending and acknowledge only), is delivered cleanly: no loop error', async () => {
    const inner = new MemoryJournal();
    const journal = {
      append: (entries: Parameters<typeof inner.append>[0]) => inner.append(entries),
      pending: (player?: string) => inner.pending(player),
      acknowledge: (ids: readonly string[]) => inner.acknowledge(ids),
    };
    const { mock, client, given, give, events } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Ann')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toHaveLength(1);
    expect(loop.stats()).toMatchObject({ hints: 0, granted: 1, errors: 0, lastError: undefined, sharedHintsError: undefined });
    expect(events.filter((e) => e.type === 'loopError')).toEqual([]);
    await loop.stop();
  });

  it('naming a transaction, waits for that transaction: another purchase delivered meanwhile does not end it', async () => {
    const { mock, client, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Bea');
    await vi.advanceTimersByTimeAsync(1_000);
    const checkout = await client.checkout({ username: 'Bea', items: [{ id: 3, quantity: 1 }] });
    if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${checkout.outcome}`);
    loop.expect('Bea', { transactionId: checkout.transactionId });
    mock.addPurchase(KEY, { playerName: 'Bea', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(given.map((g) => g.item.product_name)).toEqual(['Whip']);
    expect(loop.stats().hints).toBe(1);
    mock.completePayment(checkout.transactionId);
    const paidAt = Date.now();
    await vi.advanceTimersByTimeAsync(11_000);
    expect(given.map((g) => g.item.product_name)).toEqual(['Whip', 'Sword']);
    expect(given[1]!.at - paidAt).toBeLessThanOrEqual(10_100);
    expect(loop.stats().hints).toBe(0);
    await loop.stop();
  });

  it('checking out again and again: the hint waits for the latest 8 transactions at most', async () => {
    const { mock, client, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Cat');
    await vi.advanceTimersByTimeAsync(1_000);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const checkout = await client.checkout({ username: 'Cat', items: [{ id: 1, quantity: 1 }] });
      if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${checkout.outcome}`);
      expect(loop.expect('Cat', { transactionId: checkout.transactionId })).toBe('held');
      ids.push(checkout.transactionId);
    }
    // The two oldest are never paid; the latest 8 are, and one claim delivers them: the hint ends.
    for (const id of ids.slice(2)) mock.completePayment(id);
    await vi.advanceTimersByTimeAsync(11_000);
    expect(given).toHaveLength(8);
    expect(loop.stats().hints).toBe(0);
    await loop.stop();
  });

  it('whose purchase never completes is claimed at most 30 + 15 times, then the hint expires and the routine polls take over', async () => {
    const { client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 120_000, claimMode: 'fast' });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    loop.expect('Cy');
    await vi.advanceTimersByTimeAsync(600_000);
    const hinted = between(calls, 'Cy', hintedAt, Date.now());
    // Every window for the first 5 minutes, then every 20 s until 10 minutes.
    expect(hinted.length).toBeGreaterThanOrEqual(44);
    expect(hinted.length).toBeLessThanOrEqual(45);
    expect(hinted.filter((c) => c.at - hintedAt < 300_000)).toHaveLength(30);
    expect(loop.stats().hints).toBe(0);
    const after = Date.now();
    await vi.advanceTimersByTimeAsync(600_000);
    // Expired: the routine polls (every 2 minutes), previews again.
    const routine = between(calls, 'Cy', after, Date.now());
    expect(routine.length).toBeGreaterThanOrEqual(4);
    expect(routine.length).toBeLessThanOrEqual(5);
    expect(routine.every((c) => c.preview)).toBe(true);
    expect(given).toEqual([]);
    await loop.stop();
  });

  it('lives on the monotonic clock: the wall clock stepping a day forward, then an hour back, does not end it early nor keep it late', async () => {
    // When each claim was sent, on the monotonic clock.
    const sent: number[] = [];
    const { client, give } = setup({ fetch: (next) => (input, init) => (String(init?.body).includes('"preview":false') && sent.push(performance.now()), next(input, init)) });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Dot');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = performance.now();
    loop.expect('Dot', { expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(15_000);
    vi.setSystemTime(Date.now() + 86_400_000);
    await vi.advanceTimersByTimeAsync(15_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(loop.stats().hints).toBe(1);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(loop.stats().hints).toBe(0);
    // Claims all through the hint's 60 s, none planned after it (a claim the client's guard
    // held back by the wall clock's step may go out up to one window later).
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...sent) - hintedAt).toBeGreaterThanOrEqual(50_000);
    expect(Math.max(...sent) - hintedAt).toBeLessThanOrEqual(60_000 + 10_000);
    await loop.stop();
  });

  it('lives expiresInMs: a short hint stops after it', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Dan');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    loop.expect('Dan', { expiresInMs: 35_000 });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(between(calls, 'Dan', hintedAt, Date.now()).map((c) => c.at - hintedAt)).toEqual([9_000, 19_000, 29_000]);
    await loop.stop();
  });
});

describe('a hint that never ends', () => {
  it('sent again and again for the same transaction is not extended: the player is claimed for at most an hour', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Kit');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    const outcomes: string[] = [];
    for (let minute = 0; minute < 120; minute++) {
      outcomes.push(loop.expect('Kit', { transactionId: 'tx-never-paid', expiresInMs: 3_600_000 }));
      await vi.advanceTimersByTimeAsync(60_000);
    }
    // Held while the first hint lives (re-sent, it extends nothing), then refused as expired.
    expect(outcomes.slice(0, 60)).toEqual(new Array(60).fill('held'));
    expect(outcomes.slice(60)).toEqual(new Array(60).fill('expired'));
    const claims = between(calls, 'Kit', hintedAt, Date.now()).filter((c) => !c.preview);
    expect(claims.length).toBeGreaterThan(100);
    expect(Math.max(...claims.map((c) => c.at)) - hintedAt).toBeLessThan(3_600_000);
    await loop.stop();
  });

  it('naming no transaction, sent again and again: the same, per player', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Max');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    const outcomes = new Set<string>();
    for (let minute = 0; minute < 90; minute++) {
      if (minute < 60) expect(loop.expect('Max', { expiresInMs: 3_600_000 })).toBe('held');
      else outcomes.add(loop.expect('Max', { expiresInMs: 3_600_000 }));
      await vi.advanceTimersByTimeAsync(60_000);
    }
    expect([...outcomes]).toEqual(['expired']);
    // Another player's hint is not refused for it.
    expect(loop.expect('Ned')).toBe('held');
    const claims = between(calls, 'Max', hintedAt, Date.now()).filter((c) => !c.preview);
    expect(Math.max(...claims.map((c) => c.at)) - hintedAt).toBeLessThan(3_600_000);
    await loop.stop();
  });

  it('a new transaction for the player extends it, to the later expiry', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Lou');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    loop.expect('Lou', { transactionId: 'tx-1', expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(50_000);
    loop.expect('Lou', { transactionId: 'tx-2', expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(120_000);
    const last = Math.max(...between(calls, 'Lou', hintedAt, Date.now()).map((c) => c.at));
    expect(last - hintedAt).toBeGreaterThan(100_000);
    expect(last - hintedAt).toBeLessThan(110_000);
    await loop.stop();
  });
});

describe('a hint for a player the loop does not hold online', () => {
  it('calls nothing and gives nothing for them; once they join, their first run is one claim call', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    expect(loop.expect('Eve')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toEqual([]);
    expect(given).toEqual([]);
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.map((c) => c.preview)).toEqual([false]);
    expect(given).toHaveLength(1);
    await loop.stop();
  });

  it('held by another node: the node given the hint calls nothing for the player, the node holding them delivers', async () => {
    const { mock, client, calls, given, give } = setup();
    // Node B: another client (and journal) on the same store, the player online there.
    const onB: string[] = [];
    const nodeB = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal: new MemoryJournal(), retry: 0 });
    const loopA = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    const loopB = nodeB.startDeliveryLoop({ give: (item) => void onB.push(item.deliveryId), pollIntervalMs: 60_000 });
    loopB.join('Fay');
    expect(loopA.expect('Fay')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(300_000);
    expect(calls).toEqual([]);
    expect(given).toEqual([]);
    expect(onB).toHaveLength(1);
    await loopA.stop();
    await loopB.stop();
  });

  it('who left: no more claims for them while they are away; the hint is acted on again when they come back', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Gus');
    await vi.advanceTimersByTimeAsync(1_000);
    loop.expect('Gus');
    await vi.advanceTimersByTimeAsync(15_000);
    loop.leave('Gus');
    const leftAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Gus', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(between(calls, 'Gus', leftAt, Date.now())).toEqual([]);
    expect(given).toEqual([]);
    loop.join('Gus');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(given).toHaveLength(1);
    await loop.stop();
  });
});

describe('a flood of hints', () => {
  it('holds at most 10,000 (one per player); more are refused as full, and the book frees as hints expire', async () => {
    const { client, give, calls } = setup();
    const loop = client.startDeliveryLoop({ give, claimMode: 'fast' });
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 12_000; i++) {
      const outcome = loop.expect(`Flood${i}`, { expiresInMs: 60_000 });
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect(Object.fromEntries(outcomes)).toEqual({ held: 10_000, full: 2_000 });
    // A newer hint for a player already held is joined to theirs, never refused.
    expect(loop.expect('Flood1')).toBe('held');
    expect(loop.stats().hints).toBe(10_000);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(61_000);
    expect(loop.expect('Later')).toBe('held');
    await loop.stop();
  });

  it('for online players spends at most 30 % of maxCallsPerSecond on hinted claims: routine polls go on, the budget is never exceeded', async () => {
    const { client, give, calls } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000, maxCallsPerSecond: 10, claimMode: 'fast' });
    for (let i = 0; i < 100; i++) loop.join(`On${i}`);
    await vi.advanceTimersByTimeAsync(60_000);
    for (let i = 0; i < 50; i++) loop.expect(`On${i}`);
    const start = Date.now();
    await vi.advanceTimersByTimeAsync(120_000);
    const span = calls.filter((c) => c.at >= start);
    const hinted = span.filter((c) => !c.preview);
    // 50 hinted players would take 5 claims a second; the share allows 3 (10 × 30 %), which
    // they use: at most 3 planned per second of the loop's clock, so at most 33 in any 10 s.
    const most10s = Math.max(...hinted.map((c) => hinted.filter((d) => d.at >= c.at && d.at < c.at + 10_000).length));
    expect(most10s).toBeLessThanOrEqual(33);
    expect(hinted.length).toBeGreaterThan(330);
    expect(hinted.length).toBeLessThanOrEqual(363);
    // The players not hinted are still polled about every 30 s.
    for (let i = 50; i < 100; i++) expect(span.filter((c) => c.player === `On${i}`).length).toBeGreaterThanOrEqual(3);
    expect(loop.stats().maxCallsInOneSecond).toBeLessThanOrEqual(10);
    await loop.stop();
  });
});

describe("the hints' share of the budget, one place per hinted run", () => {
  // 3 calls a second: one hinted run a second. Every hinted run is a claim (fast).

  it('a hint sent again while the hinted run is planned takes no second place: another hinted player is claimed in the next second', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 3, claimMode: 'fast' });
    loop.join('Amy');
    loop.join('Ben');
    await vi.advanceTimersByTimeAsync(5_000); // their joins' previews, at 0 s
    expect(loop.expect('Amy')).toBe('held'); // claimed at 10 s
    expect(loop.expect('Amy', { transactionId: 'tx-2' })).toBe('held');
    expect(loop.expect('Ben')).toBe('held'); // the second from 10 s is Amy's: Ben's is 11 s
    await vi.advanceTimersByTimeAsync(7_000);
    const claims = (player: string) => between(calls, player, T0 + 5_000, Date.now()).map((c) => c.at - T0);
    expect([claims('Amy'), claims('Ben')]).toEqual([[10_000], [11_000]]);
    await loop.stop();
  });

  it('a hinted purchase claimed, its give failed, the hint still waiting for another: the next hinted run takes one place, not a second for the give', async () => {
    const { mock, client, calls } = setup();
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error('inventory full');
      },
      pollIntervalMs: 600_000,
      maxCallsPerSecond: 3,
      claimMode: 'fast',
      staffAfterAttempts: 1_000,
    });
    loop.join('Amy');
    await vi.advanceTimersByTimeAsync(1_000); // Amy's join preview, at 0 s
    const transactions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const checkout = await client.checkout({ username: 'Amy', items: [{ id: 3, quantity: 1 }] });
      if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${checkout.outcome}`);
      expect(loop.expect('Amy', { transactionId: checkout.transactionId })).toBe('held');
      transactions.push(checkout.transactionId);
    }
    mock.completePayment(transactions[0] as string);
    // Amy's hinted claim at 10 s takes the first purchase; its give fails: her next hinted run is at 20 s.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(loop.stats()).toMatchObject({ hints: 1, pending: 1 });
    loop.join('Ben'); // his preview at 11 s
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Ben')).toBe('held');
    await vi.advanceTimersByTimeAsync(11_000);
    // The second from 20 s is Amy's; the one from 21 s is free for Ben.
    expect(between(calls, 'Ben', T0 + 12_000, Date.now()).map((c) => c.at - T0)).toEqual([21_000]);
    await loop.stop();
  });

  it('a hint for a player whose run is in flight takes no place until that run is over: another hinted player is claimed at once', async () => {
    // Amy's preview takes 5 s to answer.
    const { client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        if (String(init?.body).includes('"Amy"')) await new Promise((resolve) => setTimeout(resolve, 5_000));
        return next(input, init);
      },
    });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 3, claimMode: 'fast' });
    loop.join('Ben');
    await vi.advanceTimersByTimeAsync(20_000);
    loop.join('Amy');
    await vi.advanceTimersByTimeAsync(1_000); // Amy's preview on the wire until 25 s
    expect(loop.expect('Amy')).toBe('held');
    expect(loop.expect('Ben')).toBe('held');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(between(calls, 'Ben', T0 + 20_000, Date.now()).map((c) => c.at - T0)).toEqual([21_000]);
    const stopping = loop.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    await stopping;
  });

  it('a hint for a player who leaves while their run is in flight takes no place once that run is over: another hinted player is claimed in that second', async () => {
    // Amy's preview takes 5 s to answer.
    const { client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        if (String(init?.body).includes('"Amy"')) await new Promise((resolve) => setTimeout(resolve, 5_000));
        return next(input, init);
      },
    });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 3, claimMode: 'fast' });
    loop.join('Amy');
    await vi.advanceTimersByTimeAsync(1_000); // Amy's preview on the wire until 5 s
    expect(loop.expect('Amy')).toBe('held');
    loop.leave('Amy');
    await vi.advanceTimersByTimeAsync(4_000);
    // Cat's preview at 5 s, as Amy's answer comes: Cat's hinted claim is due at 15 s.
    loop.join('Cat');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Cat')).toBe('held');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(between(calls, 'Cat', T0, Date.now()).map((c) => [c.at - T0, c.preview])).toEqual([
      [5_000, true],
      [15_000, false],
    ]);
    await loop.stop();
  });
});

describe('a hinted player among many joins', () => {
  it("goes first: a crowd joining (100 s of previews at 2 calls/s) does not hold their claim back; the budget is never exceeded", async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Hot');
    await vi.advanceTimersByTimeAsync(1_000); // the join's preview
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    expect(loop.expect('Hot')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Hot', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    // Hot's window opened about 9 s after the hint; the crowd's previews still queue.
    expect(given).toHaveLength(1);
    expect(given[0]!.at - hintedAt).toBeLessThanOrEqual(10_000);
    expect(calls.filter((c) => c.player.startsWith('Crowd')).length).toBeLessThan(40);
    expect(loop.stats().maxCallsInOneSecond).toBeLessThanOrEqual(2);
    await loop.stop();
  });
});

describe('a lost answer during a hinted claim', () => {
  it('that took the purchase is a window for staff covering it, and the purchase is never given twice', async () => {
    const { mock, client, events, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Hal');
    await vi.advanceTimersByTimeAsync(1_000);
    loop.expect('Hal');
    await vi.advanceTimersByTimeAsync(12_000); // one hinted claim answered NO_ITEMS
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    await vi.advanceTimersByTimeAsync(600_000);
    // The service delivered it with the lost claim: nothing to give, a window instead.
    expect(mock.purchases(KEY, 'Hal').every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    expect(given).toEqual([]);
    const [window, ...more] = windows(events);
    expect(more).toEqual([]);
    expect(window!.from).toBeLessThanOrEqual(paidAt);
    expect(window!.to).toBeGreaterThanOrEqual(paidAt);
    // From the previous hinted claim's answer: about one window wide, not since the join.
    expect(window!.to - window!.from).toBeLessThanOrEqual(11_000);
    expect((await loop.status('Hal')).openWindows).toHaveLength(1);
    await loop.stop();
  });

  it('before the payment: the hint goes on, and the purchase paid after it is given once', async () => {
    const { mock, client, events, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Ida');
    await vi.advanceTimersByTimeAsync(1_000);
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    loop.expect('Ida');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(windows(events)).toHaveLength(1);
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(given).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(given).toHaveLength(1);
    await loop.stop();
  });
});

describe('loop.expect', () => {
  it('checks its arguments at once (InvalidInputError), and answers stopped once the loop stopped', async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give });
    expect(() => loop.expect('')).toThrow(InvalidInputError);
    expect(() => loop.expect('Jo', { transactionId: 'a b' })).toThrow(/hint\.transactionId/);
    expect(() => loop.expect('Jo', { transactionId: 'x'.repeat(129) })).toThrow(/hint\.transactionId/);
    expect(() => loop.expect('Jo', { expiresInMs: 9_999 })).toThrow(/hint\.expiresInMs/);
    expect(() => loop.expect('Jo', { expiresInMs: 3_600_001 })).toThrow(/hint\.expiresInMs/);
    expect(() => loop.expect('Jo', { expiresInMS: 60_000 } as never)).toThrow(/did you mean expiresInMs/);
    expect(() => loop.expect('Jo', 'tx' as never)).toThrow(/hint/);
    expect(loop.expect('Jo', { transactionId: '2b1c9a4e-1f0e-4a57-9f53-5a1d2c3b4e5f', expiresInMs: 3_600_000 })).toBe('held');
    await loop.stop();
    expect(loop.expect('Jo')).toBe('stopped');
  });

  it("names startDeliveryLoop in a bad hint's error; the hints held are dropped once the loop stopped", async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give });
    expect(() => loop.expect('Jo', { expiresInMs: 9_999 })).toThrow(expect.objectContaining({ operation: 'startDeliveryLoop', message: expect.stringMatching(/^startDeliveryLoop: invalid hint\.expiresInMs/) }));
    loop.join('Jo');
    expect(loop.expect('Jo')).toBe('held');
    expect(loop.expect('Al', { transactionId: 't1' })).toBe('held');
    expect(loop.stats().hints).toBe(2);
    await loop.stop();
    expect(loop.stats().hints).toBe(0);
  });
});

describe('a hinted player whose run is not a hinted one yet', () => {
  it('a /claim typed before the hint (its run queued behind a crowd of joins) does not hold the hint back: that run becomes the hinted one, and answers the /claim', async () => {
    const { mock, client, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Jay');
    await vi.advanceTimersByTimeAsync(1_000); // the join's preview
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    // The /claim's run is urgent, as the crowd's joins are, and comes after them (about 100 s).
    const typed = loop.claim('Jay');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    expect(loop.expect('Jay')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Jay', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(given).toHaveLength(1);
    expect(given[0]!.at - hintedAt).toBeLessThanOrEqual(10_000);
    await expect(typed).resolves.toMatchObject({ code: 'SUCCESS', granted: [expect.objectContaining({ player_name: 'Jay' })] });
    expect(loop.stats().maxCallsInOneSecond).toBeLessThanOrEqual(2);
    await loop.stop();
  });

  it('a /claim planned before the hint, the hints\' share of its second full: that run becomes the hinted one at its own time, not a second later', async () => {
    const { client, calls, give } = setup();
    // 10 calls a second: 3 hinted runs a second at most.
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 10, claimMode: 'fast' });
    for (const name of ['Jay', 'K1', 'K2', 'K3']) loop.join(name);
    await vi.advanceTimersByTimeAsync(1_000); // the joins' previews, at 0 s
    const typed = loop.claim('Jay'); // planned at 10 s, a window after Jay's preview
    await vi.advanceTimersByTimeAsync(0);
    // Three hints take the second from 10 s; Jay's would come at 11 s.
    for (const name of ['K1', 'K2', 'K3', 'Jay']) expect(loop.expect(name)).toBe('held');
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await typed).code).toBe('NO_ITEMS');
    expect(between(calls, 'Jay', T0 + 1_000, Date.now()).map((c) => c.at - T0)).toEqual([10_000]);
    await loop.stop();
  });

  it('a /claim typed once the hinted run is planned leaves that run hinted: it still goes ahead of a crowd of joins, and answers the /claim', async () => {
    const { mock, client, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Lee');
    await vi.advanceTimersByTimeAsync(1_000); // the join's preview
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    const hintedAt = Date.now();
    expect(loop.expect('Lee')).toBe('held');
    const typed = loop.claim('Lee');
    mock.addPurchase(KEY, { playerName: 'Lee', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(given.map((g) => g.item.player_name)).toEqual(['Lee']);
    expect(given[0]!.at - hintedAt).toBeLessThanOrEqual(10_000);
    await expect(typed).resolves.toMatchObject({ code: 'SUCCESS' });
    await loop.stop();
  });

  it('a hint and a /claim given during a run: the next run is the hinted one, ahead of a crowd of joins', async () => {
    // The player's first preview takes 5 s to answer: the /claim and the hint come while it is on the wire.
    let slow = true;
    const { mock, client, given, give } = setup({
      fetch: (next) => async (input, init) => {
        const delay = slow && String(init?.body).includes('"Kim"');
        slow = false;
        if (delay) await new Promise((resolve) => setTimeout(resolve, 5_000));
        return next(input, init);
      },
    });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Kim');
    await vi.advanceTimersByTimeAsync(500);
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(500);
    // Planned while the preview is on the wire: after the crowd's joins.
    const typed = loop.claim('Kim');
    expect(loop.expect('Kim')).toBe('held');
    await vi.advanceTimersByTimeAsync(5_000);
    // Paid once the preview (answered at about 5 s) found nothing.
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Kim', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(20_000);
    // One window after the preview, the hinted claim.
    expect(given).toHaveLength(1);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(10_000);
    await expect(typed).resolves.toMatchObject({ code: 'SUCCESS' });
    await loop.stop();
  });
});

describe('a hinted purchase claimed but not given yet', () => {
  it('whose give failed is given again at its backoff as a hinted run, ahead of a crowd of joins', async () => {
    const { mock, client, given } = setup();
    let failures = 1;
    const give = (item: DeliveredItem) => {
      if (item.player_name === 'Lia' && failures-- > 0) throw new Error('inventory full');
      given.push({ at: Date.now(), item });
    };
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Lia');
    await vi.advanceTimersByTimeAsync(1_000);
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    expect(loop.expect('Lia')).toBe('held');
    const paidAt = Date.now();
    mock.addPurchase(KEY, { playerName: 'Lia', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(30_000);
    // Claimed at about 9 s, its give failed; given again once its backoff (10 s) is over.
    expect(given).toHaveLength(1);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(25_000);
    expect(mock.purchases(KEY, 'Lia').every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    await loop.stop();
  });

  it('in the fast hint claim mode, whose give failed: given again in a one-call hinted run, then done: the routine polls that follow preview first', async () => {
    const { mock, client, calls, given } = setup();
    let failures = 1;
    const give = (item: DeliveredItem) => {
      if (item.player_name === 'Lia' && failures-- > 0) throw new Error('inventory full');
      given.push({ at: Date.now(), item });
    };
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, hintClaimMode: 'fast' });
    loop.join('Lia');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Lia')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Lia', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(given).toHaveLength(1);
    const givenAt = given[0]!.at;
    // The join's preview, the hinted claim whose give failed, the hinted claim that gave it.
    expect(between(calls, 'Lia', T0, givenAt + 1).map((c) => c.preview)).toEqual([true, false, false]);
    // In their hands: the hint's life is not over, but the player is polled as any other.
    await vi.advanceTimersByTimeAsync(150_000);
    const after = between(calls, 'Lia', givenAt + 1, Date.now());
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after.every((c) => c.preview)).toBe(true);
    await loop.stop();
  });

  it('whose player left mid-delivery is given at once when they come back, ahead of a crowd of joins', async () => {
    const { mock, client, given } = setup();
    let loop: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const give = (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
      // The player logs out right after their first item: the rest of the claim waits for them.
      if (item.player_name === 'Moe' && given.length === 1) loop?.leave('Moe');
    };
    loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Moe');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Moe')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Moe', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Moe', id: 2, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(given).toHaveLength(1);
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(500);
    loop.join('Moe');
    const backAt = Date.now();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given).toHaveLength(2);
    expect(given[1]!.at - backAt).toBeLessThanOrEqual(1_000);
    await loop.stop();
  });
});

describe('a hinted purchase claimed but not given yet, exactly once (the default hintClaimMode)', () => {
  /** Whether every claim of `player` came right after a preview of theirs: no one-call claim, whose lost answer would lose what it took unseen. */
  const previewedFirst = (calls: LoopCall[], player: string) => {
    const own = calls.filter((c) => c.player === player);
    return own.every((c, i) => c.preview || own[i - 1]?.preview === true);
  };

  it('whose give failed is given again in a hinted run that previews first: no one-call claim', async () => {
    const { mock, client, calls, given } = setup();
    let failures = 1;
    const give = (item: DeliveredItem) => {
      if (item.player_name === 'Ned' && failures-- > 0) throw new Error('inventory full');
      given.push({ at: Date.now(), item });
    };
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Ned');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Ned')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
    // A second purchase after the claim, pending while the failed give waits for its backoff.
    await vi.advanceTimersByTimeAsync(25_000);
    mock.addPurchase(KEY, { playerName: 'Ned', id: 2, quantity: 1 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(given.map((g) => g.item.deliveryId)).toEqual([expect.stringMatching(/^invoice:/), expect.stringMatching(/^invoice:/)]);
    expect(calls.filter((c) => c.player === 'Ned' && !c.preview).length).toBeGreaterThanOrEqual(2);
    expect(previewedFirst(calls, 'Ned')).toBe(true);
    await loop.stop();
  });

  it('whose player left mid-delivery: the join that gives it previews first: no one-call claim', async () => {
    const { mock, client, calls, given } = setup();
    let loop: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const give = (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
      if (item.player_name === 'Ola' && given.length === 1) loop?.leave('Ola');
    };
    loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Ola');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(loop.expect('Ola')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Ola', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Ola', id: 2, quantity: 1 });
    await vi.advanceTimersByTimeAsync(25_000);
    expect(given).toHaveLength(1);
    // Bought while away: pending at the join, beside the line claimed and not given.
    mock.addPurchase(KEY, { playerName: 'Ola', id: 3, quantity: 1 });
    loop.join('Ola');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(given).toHaveLength(3);
    expect(previewedFirst(calls, 'Ola')).toBe(true);
    await loop.stop();
  });
});

describe("a hint's life runs while the player is online here", () => {
  it('a checkout while away, paid while away: the hint still holds at their join 15 minutes later, whose run is the hinted one (ahead of a crowd of joins)', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    expect(loop.expect('Ned')).toBe('held');
    mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(900_000);
    expect(loop.stats().hints).toBe(1);
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(500);
    const backAt = Date.now();
    loop.join('Ned');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given.map((g) => g.item.player_name)).toEqual(['Ned']);
    expect(given[0]!.at - backAt).toBeLessThanOrEqual(1_000);
    // One claim call, no preview first: the hinted run.
    expect(calls.filter((c) => c.player === 'Ned').map((c) => c.preview)).toEqual([false]);
    await loop.stop();
  });

  it('a player who leaves while hinted: the life left when they left runs on once they are back, not before', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Ola');
    await vi.advanceTimersByTimeAsync(1_000);
    const hintedAt = Date.now();
    loop.expect('Ola', { expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(25_000); // claims at 9 and 19 s
    loop.leave('Ola');
    await vi.advanceTimersByTimeAsync(1_200_000);
    const backAt = Date.now();
    loop.join('Ola');
    await vi.advanceTimersByTimeAsync(120_000);
    const claims = (from: number, to: number) => between(calls, 'Ola', from, to).filter((c) => !c.preview);
    expect(claims(hintedAt, backAt).map((c) => c.at - hintedAt)).toEqual([9_000, 19_000]);
    // 35 s of its life were left: the join's claim, then every 20 s (the hint is over 5 minutes old) for 35 s.
    expect(claims(backAt, Date.now()).map((c) => c.at - backAt)).toEqual([0, 20_000]);
    expect(loop.stats().hints).toBe(0);
    await loop.stop();
  });

  it('at most an hour after it was given: a player back later is previewed as any other', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    expect(loop.expect('Pia')).toBe('held');
    await vi.advanceTimersByTimeAsync(3_600_000);
    loop.join('Pia');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.map((c) => c.preview)).toEqual([true]);
    expect(loop.stats().hints).toBe(0);
    await loop.stop();
  });
});

describe('a hinted purchase claimed, its give still to come', () => {
  it('waits out an absence: the player who left mid-delivery and comes back after the hint would have expired still gets a hinted join', async () => {
    const { mock, client, calls, given } = setup();
    let loop: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const give = (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
      if (item.player_name === 'Quin' && given.length === 1) loop?.leave('Quin');
    };
    loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop.join('Quin');
    await vi.advanceTimersByTimeAsync(1_000);
    loop.expect('Quin', { expiresInMs: 30_000 });
    mock.addPurchase(KEY, { playerName: 'Quin', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Quin', id: 2, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    expect(given).toHaveLength(1);
    // Away for 5 minutes, far past the hint's 30 s.
    await vi.advanceTimersByTimeAsync(300_000);
    for (let i = 0; i < 200; i++) loop.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(500);
    const backAt = Date.now();
    loop.join('Quin');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given).toHaveLength(2);
    expect(given[1]!.at - backAt).toBeLessThanOrEqual(1_000);
    expect(between(calls, 'Quin', backAt, Date.now()).map((c) => c.preview)).toEqual([false]);
    await loop.stop();
  });

  it('waits out an absence that began while its claim was in flight: the player back after the hint would have expired still gets a hinted join', async () => {
    let loop: DeliveryLoop | undefined;
    // The claim that takes Quin's purchase is answered just after Quin logged out.
    const fetch = (next: typeof globalThis.fetch): typeof globalThis.fetch => async (input, init) => {
      const response = await next(input, init);
      const body = JSON.parse(String(init?.body ?? '{}')) as { playerName?: string; preview?: boolean };
      if (body.playerName === 'Quin' && body.preview !== true && response.ok) loop?.leave('Quin');
      return response;
    };
    const { mock, client, calls, given, give } = setup({ fetch });
    const started = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 2, claimMode: 'fast' });
    loop = started;
    started.join('Quin');
    await vi.advanceTimersByTimeAsync(1_000);
    started.expect('Quin', { expiresInMs: 30_000 });
    mock.addPurchase(KEY, { playerName: 'Quin', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    // Claimed as they left: nothing given, the hint ended with the claim.
    expect(between(calls, 'Quin', T0, Date.now()).map((c) => c.preview)).toEqual([true, false]);
    expect(given).toHaveLength(0);
    expect(started.stats().hints).toBe(0);
    // Away for 5 minutes, far past the hint's 30 s.
    await vi.advanceTimersByTimeAsync(300_000);
    for (let i = 0; i < 200; i++) started.join(`Crowd${i}`);
    await vi.advanceTimersByTimeAsync(500);
    const backAt = Date.now();
    started.join('Quin');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given).toHaveLength(1);
    expect(given[0]!.at - backAt).toBeLessThanOrEqual(1_000);
    expect(between(calls, 'Quin', backAt, Date.now()).map((c) => c.preview)).toEqual([false]);
    await started.stop();
  });

  it('once given, is forgotten: the player back a minute later is previewed first, as any other', async () => {
    const { mock, client, calls, given, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Rex');
    await vi.advanceTimersByTimeAsync(1_000);
    const checkout = await client.checkout({ username: 'Rex', items: [{ id: 3, quantity: 1 }] });
    if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${checkout.outcome}`);
    loop.expect('Rex', { transactionId: checkout.transactionId });
    mock.completePayment(checkout.transactionId);
    await vi.advanceTimersByTimeAsync(12_000);
    expect(given).toHaveLength(1);
    loop.leave('Rex');
    await vi.advanceTimersByTimeAsync(60_000);
    const backAt = Date.now();
    loop.join('Rex');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(between(calls, 'Rex', backAt, Date.now()).map((c) => c.preview)).toEqual([true]);
    await loop.stop();
  });
});
