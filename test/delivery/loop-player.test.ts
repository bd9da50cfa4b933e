/**
 * What the delivery loop knows of each online player (src/delivery/loop/player.ts), seen
 * through the loop's public face: the reports of a claim that delivered nothing, a failing
 * `give` backed off per item, a player whose runs keep ending blocked, and `status(player)`.
 * Math.random is pinned to 0.5, so every routine poll comes exactly one interval later.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeliveredItem } from '../../src/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

const OFFLINE = 'You must be online in game to claim your purchases. They are safe and will be delivered when you are.';
const STOPPED = 'Deliveries are paused for a moment. Your purchases are safe and will be delivered shortly.';

beforeEach(() => {
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a claim that delivers nothing', () => {
  it('says OFFLINE or STOPPED in words a player can read, with nothing granted and nothing pending', async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give });
    expect(await loop.claim('Nobody')).toEqual({ code: 'OFFLINE', granted: [], failed: [], pending: 0, message: OFFLINE });
    await loop.stop();
    expect(await loop.claim('Nobody')).toEqual({ code: 'STOPPED', granted: [], failed: [], pending: 0, message: STOPPED });
  });

  it('counts what the player is still owed when they leave, or when the loop stops, before their claim ran', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error('inventory full');
      },
      pollIntervalMs: 3_600_000,
    });
    loop.join('Ann');
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(loop.stats().pending).toBe(2);
    const ann = loop.claim('Ann');
    const bo = loop.claim('Bo');
    await vi.advanceTimersByTimeAsync(0);
    loop.leave('Ann');
    expect(await ann).toEqual({ code: 'OFFLINE', granted: [], failed: [], pending: 1, message: OFFLINE });
    const stopping = loop.stop();
    expect(await bo).toEqual({ code: 'STOPPED', granted: [], failed: [], pending: 1, message: STOPPED });
    await stopping;
  });
});

describe('a give that fails', () => {
  it('is tried again 10 s later, doubling per failure up to an hour; status() and stats() show it waiting', async () => {
    const { mock, client, calls } = setup();
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    const attempts: number[] = [];
    const loop = client.startDeliveryLoop({
      give: () => {
        attempts.push(Date.now() - T0);
        throw new Error('inventory full');
      },
      pollIntervalMs: 24 * 3_600_000,
      staffAfterAttempts: 1_000,
    });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(attempts).toEqual([10_000]);
    expect(loop.stats().backingOff).toBe(1);
    const status = await loop.status('Cy');
    expect(status.pending).toHaveLength(1);
    expect(status.pending[0]?.retryAt).toBe(Date.now() + 10_000);
    expect(status.nextCheckAt).toBe(Date.now() + 10_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(6 * 3_600_000);
    const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] as number));
    expect(gaps.slice(0, 11)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000, 3_600_000]);
    // No run comes between: the join's preview and claim, then one preview per attempt.
    expect(calls).toHaveLength(attempts.length + 1);
    await loop.stop();
  });

  it('that rejects (async) is backed off like one that throws; once given, nothing waits any more', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    const attempts: number[] = [];
    const loop = client.startDeliveryLoop({
      give: async () => {
        attempts.push(Date.now() - T0);
        if (attempts.length < 3) throw new Error('not yet');
      },
      pollIntervalMs: 24 * 3_600_000,
    });
    loop.join('Dee');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(loop.stats()).toMatchObject({ backingOff: 1, pending: 1 });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(attempts).toEqual([10_000, 20_000, 40_000]);
    expect(loop.stats()).toMatchObject({ backingOff: 0, pending: 0, granted: 1 });
    const status = await loop.status('Dee');
    expect(status.pending).toEqual([]);
    await loop.stop();
  });

  it('holds back only its own item: another item of the same player is given at once', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    const given: Array<{ at: number; id: string }> = [];
    let failing: string | undefined;
    const loop = client.startDeliveryLoop({
      give: (item: DeliveredItem) => {
        failing ??= item.deliveryId;
        given.push({ at: Date.now() - T0, id: item.deliveryId === failing ? 'first' : 'second' });
        if (item.deliveryId === failing) throw new Error('unknown item');
      },
      pollIntervalMs: 24 * 3_600_000,
      staffAfterAttempts: 1_000,
    });
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(15_000);
    mock.addPurchase(KEY, { playerName: 'Eve', id: 3, quantity: 1 });
    const report = loop.claim('Eve');
    await vi.advanceTimersByTimeAsync(15_000);
    // The /claim's run at 20 s (the window's edge) gives the first again (it fails: 20 s more),
    // previews, and claims the second at 30 s: given at once, while the first waits for 40 s.
    expect((await report).granted).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toEqual([{ at: 10_000, id: 'first' }, { at: 20_000, id: 'first' }, { at: 30_000, id: 'second' }, { at: 40_000, id: 'first' }]);
    await loop.stop();
  });

  it('whose backoff ran out while the run gave the next item is due at once: no retry time shown, given again by the follow-up a window after the run', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Fay', id: 3, quantity: 1 });
    const given: Array<{ at: number; id: string }> = [];
    let failing: string | undefined;
    const loop = client.startDeliveryLoop({
      give: (item: DeliveredItem) => {
        failing ??= item.deliveryId;
        given.push({ at: Date.now() - T0, id: item.deliveryId === failing ? 'first' : 'second' });
        if (item.deliveryId === failing) throw new Error('unknown item');
        // The second takes exactly the first's backoff (10 s): the run ends as it runs out.
        if (given.length === 2) return new Promise<void>((resolve) => setTimeout(resolve, 10_000));
        return undefined;
      },
      pollIntervalMs: 24 * 3_600_000,
      staffAfterAttempts: 1_000,
    });
    loop.join('Fay');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(given).toEqual([{ at: 10_000, id: 'first' }, { at: 10_000, id: 'second' }]);
    const ended = await loop.status('Fay');
    expect(ended.pending).toEqual([expect.objectContaining({ deliveryId: failing })]);
    expect(ended.pending[0]).not.toHaveProperty('retryAt');
    expect(loop.stats().backingOff).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await loop.status('Fay')).pending[0]).not.toHaveProperty('retryAt');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given.slice(2)).toEqual([{ at: 30_000, id: 'first' }]);
    await loop.stop();
  });
});

describe('a player whose runs keep failing', () => {
  it('is blocked on the third run in a row, reported once with its code, runs and since; a run that goes through clears it', async () => {
    const { mock, client, events, give } = setup();
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 4 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Gil');
    await vi.advanceTimersByTimeAsync(15_000);
    // Two runs (0 s, 10 s) failed: not blocked yet.
    expect(loop.stats().blocked).toBe(0);
    expect((await loop.status('Gil')).blocked).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(loop.stats().blocked).toBe(1);
    expect(events.filter((e) => e.type === 'playerBlocked')).toEqual([{ type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: 'Gil', code: 'ERROR', runs: 3 }]);
    const third = await loop.status('Gil');
    expect(third.blocked).toEqual({ code: 'ERROR', runs: 3, since: T0 + 20_000 });
    expect(third.lastError).toMatchObject({ code: expect.any(String) });
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await loop.status('Gil')).blocked).toEqual({ code: 'ERROR', runs: 4, since: T0 + 20_000 });
    expect(events.filter((e) => e.type === 'playerBlocked')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'playerUnblocked')).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events.filter((e) => e.type === 'playerUnblocked')).toEqual([{ type: 'playerUnblocked', operation: 'startDeliveryLoop', playerName: 'Gil' }]);
    expect(loop.stats().blocked).toBe(0);
    const cleared = await loop.status('Gil');
    expect(cleared.blocked).toBeUndefined();
    expect(cleared.lastError).toBeUndefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(events.filter((e) => e.type === 'playerUnblocked')).toHaveLength(1);
    await loop.stop();
  });

  it('once blocked, shows the code of its latest run', async () => {
    const { mock, client, events, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Hu', id: 1, quantity: 1 });
    mock.removeProduct(KEY, 1);
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 3 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Hu');
    await vi.advanceTimersByTimeAsync(25_000);
    expect((await loop.status('Hu')).blocked).toEqual({ code: 'ERROR', runs: 3, since: T0 + 20_000 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await loop.status('Hu')).blocked).toEqual({ code: 'PRODUCT_NOT_FOUND', runs: 4, since: T0 + 20_000 });
    expect(events.filter((e) => e.type === 'playerBlocked')).toHaveLength(1);
    await loop.stop();
  });
});

describe('status(player)', () => {
  it('says running, with no next check, while a delivery is in flight; then when the next poll comes', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    let release!: () => void;
    const loop = client.startDeliveryLoop({ give: () => new Promise<void>((resolve) => (release = resolve)), pollIntervalMs: 60_000 });
    loop.join('Ida');
    await vi.advanceTimersByTimeAsync(10_000);
    // A claim typed meanwhile plans the next run: still no next check while this one runs.
    const next = loop.claim('Ida');
    await vi.advanceTimersByTimeAsync(0);
    const running = await loop.status('Ida');
    expect(running).toMatchObject({ playerName: 'Ida', online: true, running: true });
    expect(running).not.toHaveProperty('nextCheckAt');
    release();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(10_000);
    await next;
    const after = await loop.status('Ida');
    expect(after).toMatchObject({ running: false, nextCheckAt: Date.now() + 60_000, pending: [] });
    expect(after).not.toHaveProperty('blocked');
    expect(after).not.toHaveProperty('lastError');
    expect(after).not.toHaveProperty('journalError');
    await loop.stop();
  });

  it('gives a next check of now, never in the past, for a run due but queued for the budget', async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give, maxCallsPerSecond: 1 });
    for (const name of ['A1', 'A2', 'A3']) loop.join(name);
    await vi.advanceTimersByTimeAsync(500);
    const status = await loop.status('A3');
    expect(status.running).toBe(false);
    expect(status.nextCheckAt).toBe(Date.now());
    await loop.stop();
  });

  it('reads what the loop remembers, and says so, when the journal cannot be read', async () => {
    const { MemoryJournal } = await import('../../src/index.js');
    const inner = new MemoryJournal();
    let broken = false;
    const journal = {
      append: (entries: Parameters<typeof inner.append>[0]) => inner.append(entries),
      pending: (player: string) => (broken ? Promise.reject(new Error('disk gone')) : inner.pending(player)),
      acknowledge: (ids: readonly string[]) => inner.acknowledge(ids),
    };
    const { client, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Jay');
    await vi.advanceTimersByTimeAsync(1_000);
    broken = true;
    const status = await loop.status('Jay');
    expect(status.journalError).toMatchObject({ message: expect.stringContaining('disk gone') });
    expect(status).toMatchObject({ playerName: 'Jay', online: true, pending: [] });
    await loop.stop();
  });
});

describe('status(player) of lines only memory holds', () => {
  it('lists the claimed lines the journal refused, for their player only, whether or not the journal can be read', async () => {
    const { MemoryJournal } = await import('../../src/index.js');
    const inner = new MemoryJournal();
    let broken: boolean | string = false;
    const journal = {
      // The journal refuses every claimed line (a full disk, say): the loop keeps them in memory.
      append: (entries: Parameters<typeof inner.append>[0]) => (entries.some((e) => e.state === 'claimed') ? Promise.reject(new Error('disk full')) : inner.append(entries)),
      pending: (player?: string) => (broken === false ? inner.pending(player) : Promise.reject(new Error(broken === true ? 'disk gone' : `login refused for ${String(broken)}`))),
      acknowledge: (ids: readonly string[]) => inner.acknowledge(ids),
    };
    const { mock, client } = setup({ journal });
    mock.addPurchase(KEY, { playerName: 'Kim', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error('inventory full');
      },
      pollIntervalMs: 60_000,
    });
    loop.join('Kim');
    loop.join('Lou');
    await vi.advanceTimersByTimeAsync(11_000);
    const read = await loop.status('Kim');
    expect(read.pending).toEqual([expect.objectContaining({ deliveryId: 'invoice:1' })]);
    expect(read).not.toHaveProperty('journalError');
    expect((await loop.status('Lou')).pending).toEqual([]);
    broken = true;
    const remembered = await loop.status('Kim');
    expect(remembered.pending).toEqual([expect.objectContaining({ deliveryId: 'invoice:1' })]);
    expect(remembered.journalError?.message).toBe('startDeliveryLoop: the delivery journal failed (disk gone)');
    // A journal error quoting the key is shown without it.
    broken = KEY;
    expect((await loop.status('Kim')).journalError?.message).not.toContain(KEY);
    expect((await loop.status('Lou')).pending).toEqual([]);
    await loop.stop();
  });
});

describe('status(player) of pending items', () => {
  it('gives a retry time only to an item held back; an offline player has none', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Kay', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Kay', id: 3, quantity: 1 });
    let first: string | undefined;
    const loop = client.startDeliveryLoop({
      give: (item: DeliveredItem) => {
        first ??= item.deliveryId;
        if (item.deliveryId === first) throw new Error('unknown item');
        return new Promise<void>(() => {}); // the second hangs: pending, not held back
      },
      pollIntervalMs: 60_000,
      grantTimeoutMs: 5_000,
    });
    loop.join('Kay');
    await vi.advanceTimersByTimeAsync(11_000);
    const { pending } = await loop.status('Kay');
    expect(pending).toHaveLength(2);
    const held = pending.find((p) => p.deliveryId === first);
    const other = pending.find((p) => p.deliveryId !== first);
    expect(held?.retryAt).toBe(T0 + 20_000);
    expect(other).toBeDefined();
    expect(other).not.toHaveProperty('retryAt');
    loop.leave('Kay');
    const offline = await loop.status('Kay');
    expect(offline).toMatchObject({ online: false, running: false });
    expect(offline.pending).toHaveLength(2);
    expect(offline.pending.every((p) => !('retryAt' in p))).toBe(true);
    expect(offline).not.toHaveProperty('nextCheckAt');
    const stopping = loop.stop();
    await vi.advanceTimersByTimeAsync(30_000);
    await stopping;
  });

  it('three runs in a row that deliver block no one', async () => {
    const { mock, client, events, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Lin');
    for (let i = 0; i < 4; i++) {
      mock.addPurchase(KEY, { playerName: 'Lin', id: 1, quantity: 1 });
      await vi.advanceTimersByTimeAsync(25_000);
    }
    expect(loop.stats()).toMatchObject({ granted: 4, blocked: 0 });
    expect(events.filter((e) => e.type === 'playerBlocked')).toEqual([]);
    await loop.stop();
  });

  it('polls that find every purchase delivered already (ALREADY_CLAIMED) block no one', async () => {
    const { mock, client, events, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Liv', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Liv');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(loop.stats()).toMatchObject({ granted: 1 });
    // Five polls more, each answered ALREADY_CLAIMED: the player has had all they bought.
    await vi.advanceTimersByTimeAsync(50_000);
    expect(loop.stats()).toMatchObject({ granted: 1, blocked: 0 });
    expect((await loop.status('Liv')).blocked).toBeUndefined();
    expect(events.filter((e) => e.type === 'playerBlocked')).toEqual([]);
    await loop.stop();
  });
});

describe('a claim typed before the run in flight makes its first call', () => {
  it('waits for a run of its own: it is not that run', async () => {
    const { MemoryJournal } = await import('../../src/index.js');
    const inner = new MemoryJournal();
    // Reading the journal takes 100 ms: the run has started and has not called yet.
    const journal = {
      append: (entries: Parameters<typeof inner.append>[0]) => inner.append(entries),
      pending: async (player: string) => {
        await new Promise((r) => setTimeout(r, 100));
        return inner.pending(player);
      },
      acknowledge: (ids: readonly string[]) => inner.acknowledge(ids),
    };
    const { client, calls, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Max');
    await vi.advanceTimersByTimeAsync(50);
    let answered: number | undefined;
    const report = loop.claim('Max').then((r) => ((answered = Date.now() - T0), r));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(answered).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await report).code).toBe('NO_ITEMS');
    expect(answered).toBeGreaterThanOrEqual(10_000);
    expect(calls.map((c) => c.at - T0)).toEqual([100, 10_200]);
    await loop.stop();
  });
});

describe('runs that deliver, in a row', () => {
  it('block no one, whether every item was given (SUCCESS) or only some (PARTIAL)', async () => {
    const { mock, client, events } = setup();
    const failing = new Set<string>();
    const loop = client.startDeliveryLoop({
      give: (item: DeliveredItem) => {
        if (item.quantity_purchased === 2) {
          failing.add(item.deliveryId);
          throw new Error('unknown item');
        }
      },
      claimMode: 'fast',
      pollIntervalMs: 3_600_000,
      staffAfterAttempts: 1_000,
    });
    loop.join('Ned');
    await vi.advanceTimersByTimeAsync(1_000);
    const codes: string[] = [];
    const messages = new Set<string>();
    for (let i = 0; i < 3; i++) {
      mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
      const report = loop.claim('Ned');
      await vi.advanceTimersByTimeAsync(10_000);
      codes.push((await report).code);
    }
    for (let i = 0; i < 3; i++) {
      mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
      mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 2 });
      const report = loop.claim('Ned');
      await vi.advanceTimersByTimeAsync(10_000);
      codes.push((await report).code);
      messages.add((await report).message);
    }
    expect(codes).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS', 'PARTIAL', 'PARTIAL', 'PARTIAL']);
    // The loop gives what is left on its own: the player is not told to claim again.
    expect([...messages]).toEqual(['Some items could not be delivered yet; they will be delivered automatically, while you are online or when you next join.']);
    expect(failing.size).toBe(3);
    expect(loop.stats().blocked).toBe(0);
    expect(events.filter((e) => e.type === 'playerBlocked')).toEqual([]);
    await loop.stop();
  });
});
