/**
 * The delivery loop's scheduler (src/delivery/loop/scheduler.ts) to the millisecond: when it polls,
 * how it backs off when the service is in trouble, what stats() counts, and how stop()
 * ends. Math.random is pinned, so the jitter is known.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY, seed } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

beforeEach(() => {
  // 0.25: a routine poll comes 0.95 of an interval later; a failure holds a quarter of its ceiling.
  vi.spyOn(Math, 'random').mockReturnValue(0.25);
});

afterEach(() => {
  vi.restoreAllMocks();
});

const since = (calls: Array<{ at: number }>) => calls.map((c) => c.at - T0);

describe('routine polls', () => {
  it('come every interval, jittered (0.9 to 1.1 of it), and stats() counts each call', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 20_000 });
    loop.join('Ann');
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(since(calls)).toEqual([0, 19_000, 38_000, 57_000]);
    expect(loop.stats()).toEqual({ online: 1, hints: 0, calls: 4, previews: 4, claims: 0, granted: 0, pending: 0, unverified: 0, errors: 0, lastError: undefined, intervalMs: 20_000, maxCallsInOneSecond: 1, paused: false, blocked: 0, backingOff: 0 });
    await loop.stop();
  });

  it('stretch to the budget: the interval is what 80 % of maxCallsPerSecond covers, rounded up', () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 3, pollIntervalMs: 10_000 });
    for (let i = 0; i < 100; i++) loop.join(`P${i}`);
    // 100 players at 2.4 calls/s: 41,666.7 ms, rounded up.
    expect(loop.stats().intervalMs).toBe(41_667);
    loop.leave('P0');
    expect(loop.stats()).toMatchObject({ online: 99, intervalMs: 41_250 });
    void loop.stop();
  });

  it('a delivery counts its preview, its claim and what it granted; a lost answer counts as unverified', async () => {
    const { mock, client, give, events } = setup();
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(loop.stats()).toMatchObject({ calls: 2, previews: 1, claims: 1, granted: 1, pending: 0, unverified: 0 });
    expect(events.filter((e) => e.type === 'delivery')).toEqual([expect.objectContaining({ operation: 'startDeliveryLoop', playerName: 'Bo', report: expect.objectContaining({ code: 'SUCCESS' }) })]);
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const lost = loop.claim('Bo');
    await vi.advanceTimersByTimeAsync(20_000);
    expect((await lost).code).toBe('OUTCOME_UNKNOWN');
    expect(loop.stats()).toMatchObject({ calls: 4, previews: 2, claims: 2, unverified: 0 });
    // A run that delivers nothing emits no delivery event.
    expect(events.filter((e) => e.type === 'delivery')).toHaveLength(1);
    // The next run, a window later, finds the lost claim went through: its window is counted.
    await vi.advanceTimersByTimeAsync(15_000);
    expect(loop.stats()).toMatchObject({ calls: 5, granted: 2, unverified: 1 });
    expect(events.filter((e) => e.type === 'delivery')).toHaveLength(2);
    await loop.stop();
  });
});

describe('trouble', () => {
  it('a failing service: each run a window after the last, then held back by a jittered, doubling, capped backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    const { mock, client, calls, give, events } = setup();
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000 });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(200_000);
    // Holds of 3/4 of 2, 4, 8 s (within the window), 16, 32 s, then of the 60 s cap: 45 s.
    expect(since(calls)).toEqual([0, 10_000, 20_000, 30_000, 42_000, 66_000, 111_000, 156_000]);
    expect(loop.stats()).toMatchObject({ errors: 8, paused: false, lastError: expect.objectContaining({ code: expect.any(String) }) });
    expect(events.filter((e) => e.type === 'loopError')).toHaveLength(8);
    expect(events.find((e) => e.type === 'loopError')).toMatchObject({ operation: 'startDeliveryLoop', playerName: 'Cy' });
    mock.faults.clear();
    await vi.advanceTimersByTimeAsync(45_000);
    expect(since(calls).at(-1)).toBe(201_000);
    expect(loop.stats()).toMatchObject({ errors: 8, paused: false });
    // Back to routine polls once a run went through.
    const n = calls.length;
    await vi.advanceTimersByTimeAsync(3_000_000);
    expect(calls.length).toBe(n);
    await loop.stop();
  });

  it('a refused key pauses the loop: half a ceiling and more (jittered), doubling that doubles up to ten minutes', async () => {
    const mock = createMockService({ seed });
    const at: number[] = [];
    const client = new StorefrontClient({
      apiKey: 'not-a-key',
      baseUrl: 'https://api.teamgames.io',
      journal: new MemoryJournal(),
      retry: 0,
      fetch: async (input, init) => {
        at.push(Date.now() - T0);
        return mock.fetch(input, init);
      },
    });
    const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 24 * 3_600_000 });
    loop.join('Di');
    await vi.advanceTimersByTimeAsync(3_000_000);
    // Holds of 5/8 of 2, 4, 8, 16, 32… s: past the window from the fifth failure on, then 375 s.
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    expect(gaps.slice(0, 10)).toEqual([10_000, 10_000, 10_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 375_000]);
    expect(loop.stats()).toMatchObject({ paused: true, lastError: expect.objectContaining({ code: 'AUTHENTICATION_FAILED' }) });
    await loop.stop();
  });

  it('in trouble, one routine run at a time probes the service; the others wait for its outcome', async () => {
    const { mock, client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        await new Promise((r) => setTimeout(r, 3_000));
        return next(input, init);
      },
    });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000, maxCallsPerSecond: 100 });
    for (const name of ['E1', 'E2', 'E3']) loop.join(name);
    await vi.advanceTimersByTimeAsync(120_000);
    // After the joins, no two calls are on the wire at once (each answer takes 3 s).
    const later = calls.map((c) => c.at).filter((t) => t > T0 + 5_000);
    expect(later.length).toBeGreaterThan(3);
    for (let i = 1; i < later.length; i++) expect((later[i] as number) - (later[i - 1] as number)).toBeGreaterThanOrEqual(3_000);
    await loop.stop();
  });
});

describe('stop()', () => {
  it('waits at most 30 s for a give that hangs; a claim joined to that delivery resolves STOPPED; no timer is left', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Flo', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give: () => new Promise<void>(() => {}) });
    loop.join('Flo');
    await vi.advanceTimersByTimeAsync(5_000);
    // The join's preview listed the purchase: its claim is to come; this /claim joins that delivery.
    const joined = loop.claim('Flo');
    await vi.advanceTimersByTimeAsync(6_000);
    let stoppedAt: number | undefined;
    const stopping = loop.stop().then(() => (stoppedAt = Date.now() - T0));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(stoppedAt).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(stoppedAt).toBe(41_000);
    expect(await joined).toMatchObject({ code: 'STOPPED', pending: 0 });
    expect(loop.stats().online).toBe(0);
    loop.join('Flo');
    expect(loop.stats().online).toBe(0);
  });

  it('plans nothing more for a run that ends while it waits: it resolves then, and leaves no timer behind', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Fen', id: 1, quantity: 1 });
    const given: number[] = [];
    const give = () => new Promise<void>((resolve) => setTimeout(() => resolve(void given.push(Date.now() - T0)), 5_000));
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Fen');
    // The join's preview at 0 s, its claim at 10 s, the give from 10 s to 15 s.
    await vi.advanceTimersByTimeAsync(12_000);
    let stoppedAt: number | undefined;
    const stopping = loop.stop().then(() => (stoppedAt = Date.now() - T0));
    await vi.advanceTimersByTimeAsync(3_000);
    await stopping;
    expect(given).toEqual([15_000]);
    expect(stoppedAt).toBe(15_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends at once with nothing in flight, and leaves no timer behind', async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Gus');
    await vi.advanceTimersByTimeAsync(1_000);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    await stopping;
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('claim()', () => {
  it('previews at the edge of the window its last call opened, and claims one window later', async () => {
    const { mock, client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Hal');
    await vi.advanceTimersByTimeAsync(3_000);
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    const report = loop.claim('Hal');
    await vi.advanceTimersByTimeAsync(20_000);
    expect((await report).code).toBe('SUCCESS');
    expect(calls.map((c) => [c.at - T0, c.preview])).toEqual([[0, true], [10_000, true], [20_000, false]]);
    await loop.stop();
  });

  it('with claimMode fast, is one claim at the edge of the window, then routine polls again', async () => {
    const { mock, client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, claimMode: 'fast' });
    loop.join('Ian');
    await vi.advanceTimersByTimeAsync(3_000);
    mock.addPurchase(KEY, { playerName: 'Ian', id: 1, quantity: 1 });
    const report = loop.claim('Ian');
    await vi.advanceTimersByTimeAsync(70_000);
    expect((await report).code).toBe('SUCCESS');
    expect(calls.map((c) => [c.at - T0, c.preview])).toEqual([[0, true], [10_000, false], [67_000, true]]);
    await loop.stop();
  });

  it('joined to a delivery whose claim is to come resolves OFFLINE at once when the player leaves', async () => {
    const { mock, client, calls, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Jen', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Jen');
    await vi.advanceTimersByTimeAsync(2_000);
    const report = loop.claim('Jen');
    await vi.advanceTimersByTimeAsync(0);
    loop.leave('Jen');
    loop.leave('Jen');
    loop.leave('Nobody');
    expect(await report).toMatchObject({ code: 'OFFLINE', granted: [] });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.map((c) => c.preview)).toEqual([true]);
    await loop.stop();
  });

  it('a give that outlives grantTimeoutMs leaves its item failed in the report, pending', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Kit', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give: () => new Promise<void>(() => {}), grantTimeoutMs: 2_000 });
    loop.join('Kit');
    await vi.advanceTimersByTimeAsync(2_000);
    const report = loop.claim('Kit');
    await vi.advanceTimersByTimeAsync(10_000);
    const done = await report;
    expect(done.failed).toHaveLength(1);
    expect(done.failed[0]?.error).toMatchObject({ name: 'GrantTimeoutError' });
    expect(done.pending).toBe(1);
    await loop.stop();
  });
});

describe('the loop keeps going', () => {
  it('when the onEvent listener throws', async () => {
    const mock = createMockService({ seed });
    mock.addPurchase(KEY, { playerName: 'Lu', id: 1, quantity: 1 });
    let heard = 0;
    const client = new StorefrontClient({
      apiKey: KEY,
      baseUrl: 'https://api.teamgames.io',
      fetch: mock.fetch,
      journal: new MemoryJournal(),
      retry: 0,
      onEvent: () => {
        heard += 1;
        throw new Error('listener bug');
      },
    });
    const given: string[] = [];
    const loop = client.startDeliveryLoop({ give: (item) => void given.push(item.deliveryId) });
    loop.join('Lu');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(given).toHaveLength(1);
    expect(heard).toBeGreaterThan(0);
    mock.addPurchase(KEY, { playerName: 'Lu', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(given).toHaveLength(2);
    await loop.stop();
  });

  it('not at all when its signal is already aborted: it starts stopped', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, signal: AbortSignal.abort() });
    loop.join('Mo');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual([]);
    expect((await loop.claim('Mo')).code).toBe('STOPPED');
    // Stopped: the journal takes a new loop.
    await client.startDeliveryLoop({ give }).stop();
  });
});

describe('a run that ends before its first call', () => {
  it('(a journal that cannot be read for one player) frees the budget for the others and is retried a window later', async () => {
    const inner = new MemoryJournal();
    const journal = {
      append: (entries: Parameters<typeof inner.append>[0]) => inner.append(entries),
      pending: (player: string) => (player === 'Bad' ? Promise.reject(new Error('disk gone')) : inner.pending(player)),
      acknowledge: (ids: readonly string[]) => inner.acknowledge(ids),
    };
    const { client, calls, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 1, pollIntervalMs: 10_000 });
    loop.join('Bad');
    loop.join('Good');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.every((c) => c.player === 'Good')).toBe(true);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(loop.stats().errors).toBeGreaterThanOrEqual(5);
    expect((await loop.status('Bad')).journalError).toBeDefined();
    await loop.stop();
  });
});

describe('refusals name the argument and the operation', () => {
  it('for a bad player name in every method, and for a claim from inside its own give', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Ola', id: 1, quantity: 1 });
    let inside: unknown;
    let insideVote: unknown;
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const loop = client.startDeliveryLoop({
      give: async () => {
        inside = await loopRef?.claim('Ola').catch((error: unknown) => error);
        insideVote = await loopRef?.claimVote('Ola', { reward: 1, amount: 1 }).catch((error: unknown) => error);
      },
      giveVoteReward: () => {},
    });
    loopRef = loop;
    const bad = 'bad\u0007name';
    const named = /playerName[\s\S]*startDeliveryLoop|startDeliveryLoop[\s\S]*playerName/;
    expect(() => loop.join(bad)).toThrow(named);
    expect(() => loop.leave(bad)).toThrow(named);
    await expect(loop.claim(bad)).rejects.toThrow(named);
    await expect(loop.claimVote(bad, { reward: 1, amount: 1 })).rejects.toThrow(named);
    await expect(loop.status(bad)).rejects.toThrow(named);
    loop.join('Ola');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(String(inside)).toMatch(named);
    expect(String(inside)).toMatch(/loop\.claim for "Ola" would wait for itself/);
    expect(String(insideVote)).toMatch(named);
    expect(String(insideVote)).toMatch(/loop\.claimVote for "Ola" would wait for itself/);
    await loop.stop();
  });

  it('the signal alone stops the loop: no call after it aborts, and claims resolve STOPPED', async () => {
    const { client, calls, give } = setup();
    const controller = new AbortController();
    const loop = client.startDeliveryLoop({ give, signal: controller.signal, pollIntervalMs: 10_000 });
    loop.join('Pia');
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
    expect((await loop.claim('Pia')).code).toBe('STOPPED');
    // The journal is free again: the loop released it without stop().
    await client.startDeliveryLoop({ give }).stop();
  });
});
