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

const { setup } = loopHarness();

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

describe('the join\'s run and the vote rows', () => {
  it('reads them once, at the join: a row a claimVote\'s give failed on later waits for the next claimVote, not for the polls', async () => {
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
    await vi.advanceTimersByTimeAsync(120_000); // four polls
    expect(loop.stats().previews).toBeGreaterThanOrEqual(4);
    expect(rewards).toEqual([]);
    const next = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await next).code).toBe('SUCCESS');
    expect(rewards.map((r) => r.deliveryId)[0]).toBe(report.failed[0]?.reward.deliveryId);
    expect(rewards).toHaveLength(2);
    await loop.stop();
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
