/**
 * The delivery loop and vote rewards (src/delivery/loop/votes.ts) around the player's turn:
 * the join's run reads the player's vote rows once; a player who leaves while that read
 * waits for their turn, or while a `claimVote` waits for the budget on a journal with a
 * lock across nodes.
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryJournal, type DeliveryJournal, type GivenVoteReward } from '../../src/index.js';
import { KEY, storeSeed } from '../support/fixtures.js';
import { loopHarness } from '../support/loop-harness.js';
// The client loads the vote rewards by import() on first use: loaded here, so a claimVote's
// first call asks the budget on fake time.
import '../../src/delivery/votes/index.js';

const { setup, T0 } = loopHarness();

/** A game whose vote reward give throws "busy" until `busy` is set false; what it gave. */
function busyGame() {
  const game = {
    busy: true,
    rewards: [] as GivenVoteReward[],
    give: (reward: GivenVoteReward) => {
      if (game.busy) throw new Error('the game is busy');
      game.rewards.push(reward);
    },
  };
  return game;
}
const store = { seed: storeSeed, key: KEY };


/** A memory journal whose `pending` reads are recorded (the player asked for, `undefined` for all). */
function readCounting() {
  const inner = new MemoryJournal();
  const reads: Array<string | undefined> = [];
  const journal: DeliveryJournal = {
    append: (entries) => inner.append(entries),
    pending: (player) => {
      reads.push(player);
      return inner.pending(player);
    },
    acknowledge: (ids) => inner.acknowledge(ids),
  };
  return { inner, reads, journal };
}
describe('the join\'s run and the vote rows', () => {
  it('a row a claimVote\'s give failed on is given again by the loop on the give backoff, without a claimVote or a join', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(KEY, 'Ann', 6);
    const game = busyGame();
    const { rewards } = game;
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: game.give, pollIntervalMs: 30_000 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    const report = await failed;
    expect(report.code).toBe('PARTIAL');
    game.busy = false;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(rewards.map((r) => r.deliveryId)).toEqual([report.failed[0]?.reward.deliveryId]);
    const next = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await next).code).toBe('SUCCESS');
    // Given once each: the row the loop gave is not given again by the next claim.
    expect(rewards).toHaveLength(2);
    expect(new Set(rewards.map((r) => r.deliveryId)).size).toBe(2);
    await loop.stop();
  });

  it('a row refused by the give twice is given again after the backoff (10 s, then 20 s) on the fake clock, without a join, and given once', async () => {
    const { mock, client, journal } = setup({ store });
    mock.recordVote(KEY, 'Ann', 6);
    const tries: number[] = [];
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({
      give: () => {},
      pollIntervalMs: 300_000,
      giveVoteReward: (reward) => {
        tries.push(Date.now());
        if (tries.length <= 2) throw new Error('the game is busy');
        rewards.push(reward);
      },
    });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    expect(tries).toHaveLength(1);
    // Held by its backoff meanwhile: not given at each run.
    await vi.advanceTimersByTimeAsync(8_000);
    expect(tries).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(tries).toHaveLength(3);
    const gaps = tries.slice(1).map((at, i) => at - (tries[i] ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(10_000);
    expect(gaps[1]).toBeGreaterThanOrEqual(20_000);
    expect(rewards).toHaveLength(1);
    expect((await journal.pending('Ann')).filter((e) => e.state === 'voteClaimed')).toEqual([]);
    expect(loop.stats()).toMatchObject({ backingOff: 0, pending: 0 });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(rewards).toHaveLength(1);
    await loop.stop();
  });

  it('a row the give keeps refusing is marked stuck after staffAfterAttempts (one event) and backs off as a stuck purchase does: a few gives an hour, not one per poll', async () => {
    const { mock, client, journal, events } = setup({ store });
    mock.recordVote(KEY, 'Ann', 6);
    let tries = 0;
    const loop = client.startDeliveryLoop({
      give: () => {},
      pollIntervalMs: 30_000,
      staffAfterAttempts: 2,
      giveVoteReward: () => {
        tries += 1;
        throw new Error('the game is busy');
      },
    });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    await vi.advanceTimersByTimeAsync(3_600_000);
    // 120 polls in the hour; the give backoff (10 s doubling to 1 h) allows about ten.
    expect(loop.stats().previews).toBeGreaterThanOrEqual(100);
    expect(tries).toBeGreaterThanOrEqual(5);
    expect(tries).toBeLessThanOrEqual(12);
    const row = (await journal.pending('Ann')).find((e) => e.state === 'voteClaimed');
    expect(row).toMatchObject({ lastError: { attempts: tries, stuck: true } });
    expect(events.filter((e) => e.type === 'stuck')).toEqual([expect.objectContaining({ deliveryId: row?.deliveryId, attempts: 2 })]);
    const status = await loop.status('Ann');
    expect(status.pending).toEqual([expect.objectContaining({ state: 'voteClaimed', lastError: expect.objectContaining({ stuck: true }) })]);
    expect(status.pending[0]?.retryAt).toBeGreaterThan(Date.now());
    expect(loop.stats().backingOff).toBe(1);
    await loop.stop();
  });

  it('in trouble (another player\'s runs failing), a row a claimVote\'s give failed on is given again by a routine run: it waits out the loop\'s backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    // Every answer for Bo is a 503: the loop is in trouble, its routine runs held back.
    const { mock, client, calls } = setup({
      store,
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        return String(init?.body).includes('"Bo"') ? new Response('busy', { status: 503 }) : answer;
      },
    });
    mock.recordVote(KEY, 'Ann', 6);
    const tries: number[] = [];
    const loop = client.startDeliveryLoop({
      give: () => {},
      pollIntervalMs: 300_000,
      giveVoteReward: () => {
        tries.push(Date.now() - T0);
        if (tries.length === 1) throw new Error('the game is busy');
      },
    });
    loop.join('Ann');
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(41_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(0);
    expect((await failed).code).toBe('PARTIAL');
    await vi.advanceTimersByTimeAsync(60_000);
    const bo = calls.filter((c) => c.player === 'Bo').map((c) => c.at - T0);
    // Bo's runs fail a window apart (Ann's join run went through at 0 s): the fifth, at 50 s,
    // holds the routine runs back for half of 32 s, until 66 s.
    expect(bo.slice(0, 6)).toEqual([0, 10_000, 20_000, 30_000, 40_000, 50_000]);
    // The row's backoff ends at 51 s; its run is a routine one, held back until 66 s.
    expect(tries).toEqual([41_000, 66_000]);
    await loop.stop();
    vi.restoreAllMocks();
  });

  it('a row whose backoff is over is given again alone: another row of the player still backing off is left untouched', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(KEY, 'Ann', 6);
    const tries = new Map<string, number>();
    const loop = client.startDeliveryLoop({
      give: () => {},
      pollIntervalMs: 300_000,
      giveVoteReward: (reward) => {
        tries.set(reward.deliveryId, (tries.get(reward.deliveryId) ?? 0) + 1);
        throw new Error('the game is busy');
      },
    });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const first = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(4_000);
    const a = (await first).failed[0]?.reward.deliveryId ?? '';
    // The second claim gives row a again first (a claim does not wait for the backoff): a now waits 20 s, row b 10 s.
    const second = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    const b = (await second).failed.find((f) => f.reward.deliveryId !== a)?.reward.deliveryId ?? '';
    expect([tries.get(a), tries.get(b)]).toEqual([2, 1]);
    // Row b's backoff ends first (15 s; its run comes a service window after the last poll, 21 s): b alone is given again.
    await vi.advanceTimersByTimeAsync(20_000);
    expect([tries.get(a), tries.get(b)]).toEqual([2, 2]);
    await loop.stop();
  });

  it('a row backing off that leaves the journal otherwise (settled by staff) is forgotten: the polls after it read no vote rows', async () => {
    const { inner, reads, journal } = readCounting();
    const { mock, client, calls } = setup({ store, journal });
    mock.recordVote(KEY, 'Ann', 6);
    const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 30_000, giveVoteReward: () => Promise.reject(new Error('the game is busy')) });
    loop.join('Ann');
    // Bo never voted: his polls read what a poll reads without vote rows.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    const row = (await failed).failed[0]?.reward.deliveryId ?? '';
    await inner.acknowledge([row]);
    await vi.advanceTimersByTimeAsync(30_000);
    reads.length = 0;
    calls.length = 0;
    await vi.advanceTimersByTimeAsync(120_000);
    const readsOf = (player: string) => reads.filter((r) => r === player).length;
    const pollsOf = (player: string) => calls.filter((c) => c.player === player && c.preview).length;
    expect(pollsOf('Ann')).toBeGreaterThanOrEqual(3);
    expect(pollsOf('Bo')).toBeGreaterThanOrEqual(3);
    // As many reads per poll for Ann as for Bo.
    expect(readsOf('Ann') * pollsOf('Bo')).toBe(readsOf('Bo') * pollsOf('Ann'));
    await loop.stop();
  });

  it('a row still backing off is not read again before its time: a /claim\'s run then reads the journal as much as for a player without vote rows', async () => {
    const { reads, journal } = readCounting();
    const { mock, client } = setup({ store, journal });
    mock.recordVote(KEY, 'Ann', 6);
    const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 300_000, giveVoteReward: () => Promise.reject(new Error('the game is busy')) });
    loop.join('Ann');
    // Bo never voted: his run reads what a run reads without vote rows.
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    reads.length = 0;
    // Their /claims run at 10 s (a window after the joins' previews); Ann's row backs off until 11 s.
    const ann = loop.claim('Ann');
    const bo = loop.claim('Bo');
    await vi.advanceTimersByTimeAsync(8_500);
    expect([(await ann).code, (await bo).code]).toEqual(['NO_ITEMS', 'NO_ITEMS']);
    const readsOf = (player: string) => reads.filter((r) => r === player).length;
    expect(readsOf('Bo')).toBeGreaterThan(0);
    expect(readsOf('Ann')).toBe(readsOf('Bo'));
    await loop.stop();
  });

  it("after the join's pass, a poll reads the journal no more than a loop without vote rewards: the pass is not done again", async () => {
    const readsPerPoll = async (withVotes: boolean): Promise<[number, number]> => {
      const { reads, journal } = readCounting();
      const { client, calls } = setup({ store, journal });
      const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 30_000, ...(withVotes ? { giveVoteReward: () => {} } : {}) });
      loop.join('Cal');
      await vi.advanceTimersByTimeAsync(1_000);
      reads.length = 0;
      calls.length = 0;
      await vi.advanceTimersByTimeAsync(120_000);
      const polls = calls.filter((c) => c.player === 'Cal' && c.preview).length;
      await loop.stop();
      return [reads.length, polls];
    };
    const [withReads, withPolls] = await readsPerPoll(true);
    const [withoutReads, withoutPolls] = await readsPerPoll(false);
    expect(withPolls).toBeGreaterThanOrEqual(3);
    expect(withoutPolls).toBeGreaterThanOrEqual(3);
    expect(withReads * withoutPolls).toBe(withoutReads * withPolls);
  });

  it('a player who leaves while the join\'s run waits for their turn to give their vote rows (a vote give still running): the run ends at once, its purchases counted', async () => {
    const { mock, client, events } = setup({ store });
    mock.recordVote(KEY, 'Bo', 3);
    // A first session leaves a vote row in the journal (its give threw).
    const first = client.startDeliveryLoop({
      give: () => {},
      giveVoteReward: () => {
        throw new Error('the game is busy');
      },
    });
    first.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = first.claimVote('Bo', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    await first.stop();
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    const given: string[] = [];
    const loop = client.startDeliveryLoop({ give: (item) => void given.push(item.deliveryId), giveVoteReward: () => new Promise<void>(() => {}) });
    loop.join('Bo');
    // Typed while the join's run waits to claim the purchase: the vote has the player's turn
    // next, and the give of the row left hangs in it.
    await vi.advanceTimersByTimeAsync(11_000);
    const vote = loop.claimVote('Bo', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(12_000);
    expect(given).toHaveLength(1);
    expect(loop.stats().granted).toBe(0);
    loop.leave('Bo');
    await vi.advanceTimersByTimeAsync(100);
    expect(loop.stats().granted).toBe(1);
    expect(events.filter((e) => e.type === 'delivery')).toEqual([expect.objectContaining({ playerName: 'Bo' })]);
    const stopping = loop.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    await stopping;
    await vote;
  });
});

describe('the rows another player left in memory', () => {
  it('are not given at someone else\'s join', async () => {
    const inner = new MemoryJournal();
    let failing = true;
    // Refuses the vote rows while failing: they are kept in memory.
    const journal: DeliveryJournal = {
      append: (entries) => (failing && entries.some((e) => e.state === 'voteClaimed') ? Promise.reject(new Error('disk full')) : inner.append(entries)),
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const { mock, client } = setup({ store, journal });
    mock.recordVote(KEY, 'Bo', 3);
    const game = busyGame();
    const { rewards } = game;
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: game.give });
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = loop.claimVote('Bo', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    loop.leave('Bo');
    game.busy = false;
    failing = false;
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(loop.stats().previews).toBeGreaterThanOrEqual(2);
    expect(rewards).toEqual([]);
    await loop.stop();
  });
});

describe('claimVote on a journal with a lock across nodes', () => {
  it('resolves OFFLINE for a player who leaves while the vote call waits for the budget (inside the lock)', async () => {
    const inner = new MemoryJournal();
    const held: string[] = [];
    const journal: DeliveryJournal = {
      append: (entries) => inner.append(entries),
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: async <T,>(player: string, work: () => Promise<T>) => {
        held.push(player);
        return work();
      },
    };
    const { mock, client, calls } = setup({ store, journal });
    mock.recordVote(KEY, 'Cy', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r), maxCallsPerSecond: 1, pollIntervalMs: 60_000 });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(500);
    // The join's preview went out at 0 s: the vote call waits for the budget until 1 s.
    let answered: unknown;
    const vote = loop.claimVote('Cy', { reward: 1, amount: 1 }).then((r) => (answered = r));
    await vi.advanceTimersByTimeAsync(100);
    expect(held).toContain('Cy');
    loop.leave('Cy');
    await vi.advanceTimersByTimeAsync(100);
    expect(answered).toMatchObject({ code: 'OFFLINE', granted: [], failed: [] });
    await vote;
    expect(rewards).toEqual([]);
    expect(calls.map((c) => c.player)).toEqual(['Cy']);
    await loop.stop();
  });
});

describe('the join\'s journal reads', () => {
  it('a player without vote rows costs the join one read for the vote rewards, not two', async () => {
    const { reads, journal } = readCounting();
    const { client } = setup({ store, journal });
    const withVotes = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => {} });
    withVotes.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    await withVotes.stop();
    const withVoteReads = reads.splice(0).length;
    // The service's window after the first loop's preview is over: the same run again.
    await vi.advanceTimersByTimeAsync(11_000);
    const bare = client.startDeliveryLoop({ give: () => {} });
    bare.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    await bare.stop();
    expect(withVoteReads - reads.length).toBe(1);
  });
});
