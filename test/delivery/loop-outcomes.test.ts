/**
 * The delivery loop's run outcomes and schedule, to the call (issue #33 point 10): players
 * polled each on its own phase, a run's outcome (stopped, failed gives, lost answers, rate
 * limits) counted and emitted as it should, and urgent runs (joins, `/claim`) not held back
 * by the backoff of a service in trouble. Math.random is pinned, so the jitter is known.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveredItem } from '../../src/index.js';
// The client loads the vote engine by import() on its first vote: loaded here, so a vote's call
// is timed on fake time alone.
import '../../src/delivery/votes/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY as STORE_KEY, storeSeed } from '../support/fixtures.js';
import { KEY } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

beforeEach(() => {
  // 0.25: a routine poll comes 0.95 of an interval later.
  vi.spyOn(Math, 'random').mockReturnValue(0.25);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A player's calls: ms since T0, p for a preview, c for a claim. */
const of = (calls: Array<{ at: number; player: string; preview: boolean }>, player: string) => calls.filter((c) => c.player === player).map((c) => `${c.at - T0}${c.preview ? 'p' : 'c'}`);

describe('the schedule', () => {
  it('polls each player on its own phase: a later plan neither delays nor brings forward an earlier one', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 20_000, maxCallsPerSecond: 5 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(5_000);
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(40_000);
    expect(of(calls, 'Ann')).toEqual(['0p', '19000p', '38000p']);
    expect(of(calls, 'Bo')).toEqual(['5000p', '24000p', '43000p']);
    await loop.stop();
  });

  it('a /claim waits for its window in the schedule (status says when), not in a run started early', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, maxCallsPerSecond: 5 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(3_000);
    const claimed = loop.claim('Ann');
    // Another player's join wakes the scheduler before Ann's window opens.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await loop.status('Ann')).toMatchObject({ running: false, nextCheckAt: T0 + 10_000 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect((await claimed).code).toBe('NO_ITEMS');
    expect(of(calls, 'Ann')).toEqual(['0p', '10000p']);
    await loop.stop();
  });

  it('after a delivery the next poll is the routine one, not a follow-up', async () => {
    const { mock, client, calls, give, given } = setup();
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 20_000 });
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(40_000);
    expect(given).toHaveLength(1);
    expect(of(calls, 'Bo')).toEqual(['0p', '10000c', '29000p']);
    await loop.stop();
  });

  it('a /claim typed while a preview that lists nothing is in flight is answered by the next run, not by that preview', async () => {
    await claimDuringSlowEmptyPreview((answer) => answer);
  });
});

describe('a preview the service answers PREVIEW with nothing listed', () => {
  it('is a preview that lists nothing: a /claim typed while it is in flight is answered by the next run', async () => {
    await claimDuringSlowEmptyPreview(async (answer) => {
      const body = (await answer.clone().json()) as { code?: string };
      // The service's other way of saying "nothing": PREVIEW with an empty list.
      if (body.code !== 'NO_ITEMS') return answer;
      return new Response(JSON.stringify({ ...body, status: 'PREVIEW', code: 'PREVIEW', data: { claims: [], rawTransactions: [] } }), { status: 200, headers: { 'content-type': 'application/json' } });
    });
  });
});

/**
 * Ann joins; every answer comes 2 s late (and is rewritten by `rewrite`); a /claim typed 1 s
 * in, while the join's preview (which lists nothing) is in flight, is answered NO_ITEMS by the
 * next run, one window after that preview's answer, not by the preview itself.
 */
async function claimDuringSlowEmptyPreview(rewrite: (answer: Response) => Response | Promise<Response>): Promise<void> {
  const { client, calls, give } = setup({
    fetch: (next) => async (input, init) => {
      const answer = await next(input, init);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return rewrite(answer);
    },
  });
  const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
  loop.join('Ann');
  await vi.advanceTimersByTimeAsync(1_000);
  let answered = false;
  const claimed = loop.claim('Ann').finally(() => (answered = true));
  await vi.advanceTimersByTimeAsync(5_000);
  expect(answered).toBe(false);
  await vi.advanceTimersByTimeAsync(10_000);
  expect(answered).toBe(true);
  expect((await claimed).code).toBe('NO_ITEMS');
  expect(of(calls, 'Ann')).toEqual(['0p', '12000p']);
  await loop.stop();
}

describe('a preview the service answers SUCCESS with items (a proxy that claims)', () => {
  it('has no claim to come: a /claim typed while that run gives is answered by the next run, not by that one', async () => {
    const { mock, client, calls } = setup({
      // The proxy turns every preview into a real claim: the service delivers and says SUCCESS.
      fetch: (next) => (input, init) => next(input, { ...init, body: String(init?.body).replace('"preview":true', '"preview":false') }),
    });
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const given: number[] = [];
    // Each give takes 2 s.
    const slowGive = () =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          given.push(Date.now() - T0);
          resolve();
        }, 2_000),
      );
    const loop = client.startDeliveryLoop({ give: slowGive, pollIntervalMs: 60_000 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    // The join's run is giving the item its "preview" claimed.
    let answered = false;
    const claimed = loop.claim('Ann').finally(() => (answered = true));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(given).toEqual([2_000]);
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    // The next run's "preview" claims again: the item is in the player's hands already.
    expect(await claimed).toMatchObject({ code: 'ALREADY_CLAIMED', granted: [] });
    expect(of(calls, 'Ann')).toEqual(['0c', '10000c']);
    await loop.stop();
  });
});

describe('stats', () => {
  it('backingOff counts an item whose give failed until its backoff has passed, to the millisecond', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    let fail = true;
    const loop = client.startDeliveryLoop({
      give: () => {
        if (fail) throw new Error('inventory full');
      },
      pollIntervalMs: 600_000,
    });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(loop.stats()).toMatchObject({ backingOff: 1, pending: 1 });
    fail = false;
    await vi.advanceTimersByTimeAsync(9_999);
    expect(loop.stats().backingOff).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.stats().backingOff).toBe(0);
    await loop.stop();
  });
});

describe('run outcomes', () => {
  it('stop() during a run: its callers get STOPPED, and nothing counts as an error', async () => {
    const { mock, client, events, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Di', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Di');
    await vi.advanceTimersByTimeAsync(5_000);
    // The join's run previewed the item and waits for its claim's window: the /claim joins it.
    const claimed = loop.claim('Di');
    await loop.stop();
    expect(await claimed).toMatchObject({ code: 'STOPPED' });
    expect(loop.stats()).toMatchObject({ errors: 0 });
    expect(events.filter((e) => e.type === 'loopError')).toEqual([]);
  });

  it('a run whose gives all failed is emitted as a delivery', async () => {
    const { mock, client, events } = setup();
    mock.addPurchase(KEY, { playerName: 'Ed', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error('inventory full');
      },
      pollIntervalMs: 600_000,
    });
    loop.join('Ed');
    await vi.advanceTimersByTimeAsync(10_000);
    const deliveries = events.filter((e) => e.type === 'delivery');
    expect(deliveries).toEqual([expect.objectContaining({ playerName: 'Ed', report: expect.objectContaining({ granted: [], failed: [expect.anything()] }) })]);
    await loop.stop();
  });

  it('a player who leaves during a give is given nothing more: the rest stays pending for the next join', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Fa', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Fa', id: 2, quantity: 1 });
    const given: DeliveredItem[] = [];
    let release: (() => void) | undefined;
    const loop = client.startDeliveryLoop({
      give: (item) => {
        given.push(item);
        return new Promise<void>((resolve) => (release = resolve));
      },
      pollIntervalMs: 600_000,
    });
    loop.join('Fa');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toHaveLength(1);
    loop.leave('Fa');
    release?.();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(given).toHaveLength(1);
    loop.join('Fa');
    await vi.advanceTimersByTimeAsync(30_000);
    release?.();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(given).toHaveLength(2);
    await loop.stop();
  });
});

describe('errors', () => {
  it('a lost answer (OUTCOME_UNKNOWN) counts as an error, emitted', async () => {
    const { mock, client, calls, events, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Gu', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000 });
    loop.join('Gu');
    const lost = loop.claim('Gu');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await lost).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    expect(loop.stats()).toMatchObject({ errors: 1, lastError: expect.objectContaining({ code: 'CLAIM_OUTCOME_UNKNOWN' }) });
    expect(events.filter((e) => e.type === 'loopError')).toEqual([expect.objectContaining({ playerName: 'Gu', error: expect.objectContaining({ code: 'CLAIM_OUTCOME_UNKNOWN' }) })]);
    // Its window is checked again one window after the lost claim, not a routine interval later.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(of(calls, 'Gu')).toEqual(['0p', '10000c', '20000p']);
    await loop.stop();
  });

  it('in trouble, a join and a /claim are served at once (a window after the last call), not held back with routine polls', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    const { mock, client, calls, give } = setup();
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000, maxCallsPerSecond: 5 });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(70_000);
    // The sixth failure (at 66 s) holds routine runs until 111 s.
    expect(of(calls, 'Cy')).toEqual(['0p', '10000p', '20000p', '30000p', '42000p', '66000p']);
    loop.join('Dee');
    const claimed = loop.claim('Cy');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(of(calls, 'Dee')).toEqual(['70000p']);
    expect(of(calls, 'Cy').slice(6)).toEqual(['76000p']);
    expect(await claimed).toMatchObject({ code: 'ERROR' });
    await loop.stop();
  });

  it('in trouble, a /claim typed while a slow run is in flight is served as soon as that run ends, not after the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    let slow = false;
    const { mock, client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        if (slow) await new Promise((resolve) => setTimeout(resolve, 15_000));
        return answer;
      },
    });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000, maxCallsPerSecond: 5 });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(60_000);
    slow = true;
    await vi.advanceTimersByTimeAsync(7_000);
    // The run that called at 66 s waits for its answer; the /claim is due at 76 s, while it still runs.
    const claimed = loop.claim('Cy');
    slow = false;
    await vi.advanceTimersByTimeAsync(25_000);
    // The /claim's run comes once that run is over (its answer timed out), not when the backoff lets routine runs go.
    expect(of(calls, 'Cy').slice(6)).toEqual(['91000p']);
    expect(await claimed).toMatchObject({ code: 'ERROR' });
    await loop.stop();
  });

  it('in trouble, a /claim whose run is still planned when the run in flight fails stays urgent: it comes a window after that run, not after the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    let slow = false;
    const { mock, client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        if (!slow) return answer;
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        const body = (await answer.clone().json()) as { code?: string; data?: Record<string, unknown> };
        if (body.code !== 'PREVIEW') return answer;
        // Items listed without their raw rows: exactly-once delivery cannot track them (the run fails).
        const { rawTransactions: _, ...data } = body.data ?? {};
        return new Response(JSON.stringify({ ...body, data }), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 3 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000, maxCallsPerSecond: 1 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(29_000);
    // Ann's runs at 0, 10 and 20 s failed (503); the next is due at 30 s, its answer 1.2 s late.
    expect(of(calls, 'Ann')).toEqual(['0p', '10000p', '20000p']);
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    slow = true;
    await vi.advanceTimersByTimeAsync(1_500);
    // Bo's join takes the budget's next call (31 s): the scheduler holds Ann's /claim until then.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(200);
    const claimed = loop.claim('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    // Ann's preview lists the item (its callers join that run) and fails at 31.2 s: the fourth
    // failure in a row holds routine runs until 43.2 s.
    expect(await claimed).toMatchObject({ code: 'ERROR' });
    await vi.advanceTimersByTimeAsync(13_000);
    // The /claim's run goes at the edge of the window that answer opened, as urgent runs do in trouble.
    expect(of(calls, 'Ann')).toEqual(['0p', '10000p', '20000p', '30000p', '41200p']);
    await loop.stop();
  });
});

describe('routine runs in trouble', () => {
  it('a routine run held back while another probes the service goes once that probe is over, not when the next plan wakes the scheduler', async () => {
    const { mock, client, calls, give } = setup({
      fetch: (next) => async (input, init) => {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        return next(input, init);
      },
    });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1_000 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 3_600_000, maxCallsPerSecond: 100 });
    loop.join('E1');
    loop.join('E2');
    await vi.advanceTimersByTimeAsync(60_000);
    // Each call reaches the service 3 s after it is sent. E2's retry, due while E1's probe is
    // on the wire, goes once that probe is over (the scheduler looks again every second), not
    // when E1's next run wakes it.
    expect(of(calls, 'E1')).toEqual(['3000p', '16000p', '29000p', '58000p']);
    expect(of(calls, 'E2')).toEqual(['3000p', '21000p', '40000p']);
    await loop.stop();
  });
});

describe('routine runs', () => {
  it('out of trouble, routine polls due at once all start at once', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 20_000, maxCallsPerSecond: 5 });
    loop.join('Ann');
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(20_000);
    expect(of(calls, 'Ann')).toEqual(['0p', '19000p']);
    expect(of(calls, 'Bo')).toEqual(['0p', '19000p']);
    await loop.stop();
  });
});

describe('the budget', () => {
  it('a claim goes ahead of a routine preview waiting for the same call', async () => {
    const { mock, client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 20_000, maxCallsPerSecond: 1 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(5_000);
    // Ann's routine preview at 19 s lists it: its claim comes at 29 s.
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(4_800);
    // Bo's routine preview is due at 28.8 s.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(18_700);
    // Cy's join takes the second from 28.5 s: Bo's preview waits for it, then Ann's claim too.
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(3_000);
    expect(of(calls, 'Ann')).toEqual(['0p', '19000p', '29500c']);
    expect(of(calls, 'Bo')).toEqual(['9800p', '30500p']);
    expect(of(calls, 'Cy')).toEqual(['28500p']);
    await loop.stop();
  });

  it('a vote claim goes ahead of a routine preview waiting for the same call', async () => {
    const { mock, client, calls, give } = setup({ store: { seed: storeSeed, key: STORE_KEY } });
    mock.recordVote(STORE_KEY, 'Ann', 3);
    const loop = client.startDeliveryLoop({ give, giveVoteReward: () => {}, pollIntervalMs: 20_000, maxCallsPerSecond: 1 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(9_800);
    // Bo's routine preview is due at 28.8 s.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(18_700);
    // Cy's join takes the second from 28.5 s: Bo's preview waits for it, then Ann's vote claim too.
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(500);
    const voted = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(2_500);
    expect((await voted).code).toBe('SUCCESS');
    expect(of(calls, 'Ann')).toEqual(['0p', '19000p', '29500c']);
    expect(of(calls, 'Bo')).toEqual(['9800p', '30500p']);
    await loop.stop();
  });
});

describe('players who leave', () => {
  it('a player who left before their run started takes no turn from the others: the next join is served at once', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, maxCallsPerSecond: 1 });
    loop.join('Ann');
    loop.leave('Ann');
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(of(calls, 'Ann')).toEqual([]);
    expect(of(calls, 'Bo')).toEqual(['0p']);
    await loop.stop();
  });

  it('a player who leaves in the instant the budget lets their preview through: nothing is sent, nothing counted', async () => {
    const { client, calls, give } = setup();
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 60_000, maxCallsPerSecond: 1 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(100);
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(400);
    // Ann's preview went out at 0 s; Bo's waits for the budget until 1 s, and Bo leaves at 1 s too.
    setTimeout(() => loop.leave('Bo'), 500);
    vi.advanceTimersByTime(500);
    await vi.advanceTimersByTimeAsync(0);
    expect(of(calls, 'Bo')).toEqual([]);
    expect(loop.stats()).toMatchObject({ calls: 1, previews: 1 });
    await loop.stop();
  });
});

describe('the service in trouble and items backing off', () => {
  it('stats() stops counting an item as backing off the millisecond its backoff ends, though its retry is held back', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.75);
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error('inventory full');
      },
      pollIntervalMs: 600_000,
    });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(19_000);
    // Cy's give failed at 10 s: backing off until 20 s. Dee's join fails at 19 s: routine runs held until 20.5 s.
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1 });
    loop.join('Dee');
    await vi.advanceTimersByTimeAsync(999);
    expect(loop.stats()).toMatchObject({ backingOff: 1, errors: 1 });
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.stats()).toMatchObject({ backingOff: 0, pending: 1 });
    await loop.stop();
  });

  it('a run the service rate-limits is neither an error nor a recovery: the last error stays', async () => {
    const { mock, client, calls, events, give } = setup();
    // Another process's preview for Ann: it shuts the service's window for her for 10 s.
    const elsewhere = () => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal: new MemoryJournal(), retry: 0 }).claim('Ann', { preview: true });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 503, times: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Ann');
    // The join's preview fails at 0 s; its retry at 10 s is refused (the window shut at 9.5 s),
    // waits as the service asks, and is refused again at 20 s (the window shut at 19.6 s).
    await vi.advanceTimersByTimeAsync(9_500);
    await elsewhere();
    await vi.advanceTimersByTimeAsync(10_100);
    await elsewhere();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(of(calls, 'Ann')).toEqual(['0p', '10000p', '20000p']);
    expect(events.filter((e) => e.type === 'loopError')).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: 'HTTP_ERROR' }) })]);
    expect(loop.stats()).toMatchObject({ errors: 1 });
    expect(await loop.status('Ann')).toMatchObject({ lastError: expect.objectContaining({ code: 'HTTP_ERROR' }) });
    await loop.stop();
  });

  it('a delivery whose acknowledgement the journal refused is no error of the service: the item is given, nothing held back', async () => {
    const inner = new MemoryJournal();
    let refuse = 1;
    const journal = {
      append: (entries: Parameters<MemoryJournal['append']>[0]) => inner.append(entries),
      pending: (player?: string) => inner.pending(player),
      acknowledge: async (ids: readonly string[]) => {
        if (refuse-- > 0) throw new Error('disk full');
        return inner.acknowledge(ids);
      },
    };
    const { mock, client, events, given, give } = setup({ journal });
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    loop.join('Ida');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(given).toHaveLength(1);
    expect(events.filter((e) => e.type === 'delivery')).toEqual([expect.objectContaining({ report: expect.objectContaining({ code: 'SUCCESS', journalError: expect.anything() }) })]);
    expect(events.filter((e) => e.type === 'loopError')).toEqual([]);
    expect(loop.stats()).toMatchObject({ errors: 0 });
    await loop.stop();
  });

  it('a give that outlives grantTimeoutMs leaves its item pending, and the next run comes a window after it gave up', async () => {
    const { mock, client, calls } = setup();
    mock.addPurchase(KEY, { playerName: 'Kit', id: 1, quantity: 1 });
    let hang = true;
    const loop = client.startDeliveryLoop({ give: () => (hang ? new Promise<void>(() => {}) : undefined), grantTimeoutMs: 2_000, pollIntervalMs: 600_000 });
    loop.join('Kit');
    await vi.advanceTimersByTimeAsync(12_000);
    hang = false;
    await vi.advanceTimersByTimeAsync(10_000);
    // It gave up at 12 s: a window after that, not the routine poll.
    expect(of(calls, 'Kit')).toEqual(['0p', '10000c', '22000p']);
    await loop.stop();
  });
});
