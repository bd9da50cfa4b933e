/**
 * The delivery loop's `claimVote` (issue #36 point 4): a `::vote` command typed in game runs
 * `deliverVoteReward` through the loop's budget and the player's turn, only for who is here.
 */
import { describe, expect, it, vi } from 'vitest';
import { InvalidInputError, MemoryJournal, type DeliveryJournal, type GivenVoteReward } from '../../src/index.js';
import { KEY, storeSeed } from '../support/fixtures.js';
import { loopHarness } from '../support/loop-harness.js';
// The client loads the vote rewards by import() on first use: loaded here, so a claimVote's
// first call asks the budget on fake time.
import '../../src/delivery/votes/index.js';

const { setup } = loopHarness();
const store = { seed: storeSeed, key: KEY };

describe('loop.claimVote', () => {
  it('gives the reward rows of an online player through giveVoteReward, one call out of the budget', async () => {
    const { mock, client, calls } = setup({ store });
    mock.recordVote(KEY, 'Ann', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const before = loop.stats().calls;
    const pending = loop.claimVote('Ann', { reward: 1, amount: 2 });
    await vi.advanceTimersByTimeAsync(1_000);
    const report = await pending;
    expect(report.code).toBe('SUCCESS');
    expect(rewards).toEqual([expect.objectContaining({ playerName: 'Ann', reward_id: 1, give_amount: 2, deliveryId: expect.stringMatching(/^vote:/) })]);
    expect(loop.stats().calls).toBe(before + 1);
    expect(calls.filter((c) => c.player === 'Ann')).toHaveLength(2); // the join's preview, the vote
    await loop.stop();
  });

  it('bounds giveVoteReward by the loop\'s grantTimeoutMs: the row stays pending', async () => {
    const { mock, client, journal } = setup({ store });
    mock.recordVote(KEY, 'Ann', 3);
    const loop = client.startDeliveryLoop({ give: () => {}, grantTimeoutMs: 5_000, giveVoteReward: () => new Promise<void>(() => {}) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const pending = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(6_000);
    const report = await pending;
    expect(report).toMatchObject({ code: 'PARTIAL', failed: [{ error: expect.objectContaining({ name: 'GrantTimeoutError' }) }] });
    expect((report.failed[0]?.error as Error).message).toMatch(/5000 ms/);
    expect((await journal.pending('Ann')).filter((e) => e.state === 'voteClaimed')).toHaveLength(1);
    await loop.stop();
  });

  it('resolves OFFLINE for a player the loop does not hold online and STOPPED after stop(), calling nothing and giving nothing', async () => {
    const { mock, client, calls } = setup({ store });
    mock.recordVote(KEY, 'Bo', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    expect((await loop.claimVote('Bo', { reward: 1, amount: 1 })).code).toBe('OFFLINE');
    loop.join('Bo');
    const leaving = loop.claimVote('Bo', { reward: 1, amount: 1 });
    loop.leave('Bo');
    expect((await leaving).code).toBe('OFFLINE');
    await loop.stop();
    expect((await loop.claimVote('Bo', { reward: 1, amount: 1 })).code).toBe('STOPPED');
    expect(calls).toEqual([]);
    expect(rewards).toEqual([]);
  });

  it('waits for the purchase delivery in flight for the same player (one turn per player)', async () => {
    const { mock, client, calls } = setup({ store });
    mock.recordVote(KEY, 'Cy', 3);
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => {} });
    loop.join('Cy');
    await vi.advanceTimersByTimeAsync(1_000); // the preview listed the purchase: its claim waits a window
    const vote = loop.claimVote('Cy', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(12_000);
    expect((await vote).code).toBe('SUCCESS');
    const [preview, claim, voted] = calls.filter((c) => c.player === 'Cy');
    expect(preview?.preview).toBe(true);
    expect(claim?.preview).toBe(false);
    expect(voted?.at).toBeGreaterThanOrEqual(claim?.at ?? Number.POSITIVE_INFINITY);
    await loop.stop();
  });

  it('never spends more than maxCallsPerSecond in a second, votes included', async () => {
    const { mock, client } = setup({ store });
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => {}, maxCallsPerSecond: 2 });
    const votes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 10; i++) {
      mock.recordVote(KEY, `V${i}`, 1);
      loop.join(`V${i}`);
      votes.push(loop.claimVote(`V${i}`, { reward: 1, amount: 1 }));
    }
    await vi.advanceTimersByTimeAsync(60_000);
    await Promise.all(votes);
    expect(loop.stats().maxCallsInOneSecond).toBeLessThanOrEqual(2);
    await loop.stop();
  });

  it('is refused at once without giveVoteReward, for a bad input, and from inside a give for the same player', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(KEY, 'Di', 3);
    mock.addPurchase(KEY, { playerName: 'Di', id: 1, quantity: 1 });
    const bare = client.startDeliveryLoop({ give: () => {} });
    bare.join('Di');
    await expect(bare.claimVote('Di', { reward: 1, amount: 1 })).rejects.toThrow(/options\.giveVoteReward/);
    await bare.stop();
    let inside: unknown;
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const loop = client.startDeliveryLoop({
      give: async () => {
        inside = await loopRef?.claimVote('Di', { reward: 1, amount: 1 }).catch((error: unknown) => error);
      },
      giveVoteReward: () => {},
    });
    loopRef = loop;
    loop.join('Di');
    await expect(loop.claimVote('Di', { reward: 1, amount: 0 })).rejects.toBeInstanceOf(InvalidInputError);
    await vi.advanceTimersByTimeAsync(11_000);
    expect(inside).toBeInstanceOf(InvalidInputError);
    await loop.stop();
  });

  it('reports a lost vote answer as OUTCOME_UNKNOWN; the next claimVote works it out', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(KEY, 'Eve', 6);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(1_000);
    // Two answers in a row teach the SDK the reward's price (the counters before and after).
    for (let i = 0; i < 2; i++) {
      const known = loop.claimVote('Eve', { reward: 1, amount: 1 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await known).code).toBe('SUCCESS');
    }
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    const lost = loop.claimVote('Eve', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await lost).code).toBe('OUTCOME_UNKNOWN');
    // Two units this time: 3 points spent since cannot all be theirs (the same price each), so the lost call was carried out.
    const next = loop.claimVote('Eve', { reward: 1, amount: 2 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await next).code).toBe('SUCCESS');
    // The lost call's row recovered from the counters, given once, and this call's row.
    expect(rewards.map((r) => r.recovered === true)).toEqual([false, false, true, false]);
    await loop.stop();
  });
});

describe('loop.claimVote when the player goes', () => {
  it('refuses the give of a player who left after the answer: the row stays pending, noted, and is given on their next claimVote', async () => {
    const inner = new MemoryJournal();
    let onRows: (() => void) | undefined;
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (entries.some((e) => e.state === 'voteClaimed' && e.lastError === undefined)) onRows?.();
        return inner.append(entries);
      },
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const { mock, client } = setup({ store, journal });
    mock.recordVote(KEY, 'Fe', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    loop.join('Fe');
    await vi.advanceTimersByTimeAsync(1_000);
    onRows = () => loop.leave('Fe');
    const first = loop.claimVote('Fe', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    const report = await first;
    expect(rewards).toEqual([]);
    expect(report.failed.map((f) => String(f.error))).toEqual(['Interrupted: the player left']);
    const [row] = (await inner.pending('Fe')).filter((e) => e.state === 'voteClaimed');
    expect(row).toMatchObject({ lastError: { message: 'the player left', attempts: 1 } });
    onRows = undefined;
    loop.join('Fe');
    const again = loop.claimVote('Fe', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await again).code).toBe('SUCCESS');
    expect(rewards).toHaveLength(2);
    await loop.stop();
  });

  it('resolves OFFLINE for a player who leaves while the vote call waits for the budget, STOPPED when the loop stops then', async () => {
    const { mock, client, calls } = setup({ store });
    mock.recordVote(KEY, 'Gi', 3);
    mock.recordVote(KEY, 'Ho', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r), maxCallsPerSecond: 1, pollIntervalMs: 60_000 });
    loop.join('Gi');
    loop.join('Ho');
    await vi.advanceTimersByTimeAsync(1_500);
    // Both joins' previews went out (0 s, 1 s): the budget's next call is at 2 s.
    const gi = loop.claimVote('Gi', { reward: 1, amount: 1 });
    const ho = loop.claimVote('Ho', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(100);
    loop.leave('Gi');
    expect(await gi).toMatchObject({ code: 'OFFLINE', granted: [], failed: [] });
    await loop.stop();
    expect(await ho).toMatchObject({ code: 'STOPPED', granted: [], failed: [] });
    expect(rewards).toEqual([]);
    expect(calls.map((c) => c.player)).toEqual(['Gi', 'Ho']);
  });

  it('resolves OFFLINE, sending nothing, for a player who leaves in the instant the budget lets the vote call through', async () => {
    const { mock, client, calls } = setup({ store });
    mock.recordVote(KEY, 'Ka', 3);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r), maxCallsPerSecond: 1, pollIntervalMs: 60_000 });
    loop.join('Ka');
    await vi.advanceTimersByTimeAsync(500);
    // The join's preview went out at 0 s: the vote call waits for the budget until 1 s.
    const vote = loop.claimVote('Ka', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(100);
    // The player leaves at 1 s too, right after the budget's turn came (before the call could go).
    setTimeout(() => loop.leave('Ka'), 400);
    vi.advanceTimersByTime(400);
    expect(await vote).toMatchObject({ code: 'OFFLINE', granted: [], failed: [] });
    expect(rewards).toEqual([]);
    expect(calls.map((c) => c.player)).toEqual(['Ka']);
    await loop.stop();
  });

  it('resolves OFFLINE at once for a player who leaves while the vote waits for their purchase delivery', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(KEY, 'Jo', 3);
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => new Promise<void>(() => {}), giveVoteReward: (r) => void rewards.push(r), grantTimeoutMs: 60_000 });
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(11_000); // the purchase's give hangs, holding the player's turn
    let answered: number | undefined;
    const vote = loop.claimVote('Jo', { reward: 1, amount: 1 }).then((r) => ((answered = Date.now()), r));
    await vi.advanceTimersByTimeAsync(1_000);
    loop.leave('Jo');
    const left = Date.now();
    await vi.advanceTimersByTimeAsync(0);
    expect(answered).toBe(left);
    expect((await vote).code).toBe('OFFLINE');
    expect(rewards).toEqual([]);
    const stopping = loop.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    await stopping;
  });

  it('refuses a missing input with an InvalidInputError, not a TypeError', async () => {
    const { client } = setup({ store });
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => {} });
    loop.join('Ib');
    await expect(loop.claimVote('Ib', undefined as never)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(loop.claimVote('Ib', null as never)).rejects.toBeInstanceOf(InvalidInputError);
    await loop.stop();
  });
});

describe('vote reward rows left in the journal, given when the player joins', () => {
  const rowsOf = async (journal: DeliveryJournal, player: string) => (await journal.pending(player)).filter((e) => e.state === 'voteClaimed').map((e) => e.deliveryId);

  /** A claimVote whose give throws: the row stays in the journal, pending, noted. */
  async function leaveARow(options: { journal?: DeliveryJournal } = {}) {
    const ctx = setup({ store, ...options });
    ctx.mock.recordVote(KEY, 'Ki', 3);
    const first = ctx.client.startDeliveryLoop({
      give: () => {},
      giveVoteReward: () => {
        throw new Error('the game is busy');
      },
    });
    first.join('Ki');
    await vi.advanceTimersByTimeAsync(1_000);
    const failed = first.claimVote('Ki', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await failed).code).toBe('PARTIAL');
    await first.stop();
    const rows = (await ctx.journal.pending('Ki')).filter((e) => e.state === 'voteClaimed');
    expect(rows).toHaveLength(1);
    return { ...ctx, row: rows[0] as (typeof rows)[number] };
  }

  it('gives them on the join, once, without a vote claim or a vote call; the journal holds nothing for them after', async () => {
    const { client, calls, journal, row } = await leaveARow();
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    const before = calls.length;
    loop.join('Ki');
    // The join's preview comes once the service's window since the vote call is over.
    await vi.advanceTimersByTimeAsync(11_000);
    expect(rewards).toEqual([expect.objectContaining({ playerName: 'Ki', deliveryId: row.deliveryId })]);
    expect(await rowsOf(journal, 'Ki')).toEqual([]);
    // The join's preview only: the row was claimed (its points spent) before.
    expect(calls.slice(before)).toEqual([expect.objectContaining({ player: 'Ki', preview: true })]);
    loop.leave('Ki');
    loop.join('Ki');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(rewards).toHaveLength(1);
    await loop.stop();
  });

  it('leaves them pending for a loop without giveVoteReward, and for a player who leaves before the join run', async () => {
    const { client, journal, row } = await leaveARow();
    const bare = client.startDeliveryLoop({ give: () => {} });
    bare.join('Ki');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(bare.stats()).toMatchObject({ previews: 2, errors: 0 }); // the first one inside the service's window: RATE_LIMIT
    await bare.stop();
    // Untouched: not given, no failed attempt noted on it.
    expect((await journal.pending('Ki')).filter((e) => e.state === 'voteClaimed')).toEqual([row]);
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    loop.join('Ki');
    loop.leave('Ki');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(rewards).toEqual([]);
    expect(await rowsOf(journal, 'Ki')).toHaveLength(1);
    await loop.stop();
  });

  it('bounds the join\'s giveVoteReward by the loop\'s grantTimeoutMs: the player\'s turn is free again, the row stays pending', async () => {
    const { client, journal, row } = await leaveARow();
    const loop = client.startDeliveryLoop({ give: () => {}, grantTimeoutMs: 5_000, giveVoteReward: () => new Promise<void>(() => {}) });
    loop.join('Ki');
    // The join's preview once the service's window is over, then the row's give, out after 5 s.
    await vi.advanceTimersByTimeAsync(16_000);
    const claim = loop.claim('Ki');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(await Promise.race([claim, 'still waiting for the turn'])).toMatchObject({ code: 'NO_ITEMS' });
    expect(await rowsOf(journal, 'Ki')).toEqual([row.deliveryId]);
    await loop.stop();
  });

  it('a player who leaves during the join\'s give of one row is given no other: the rest stays pending for their next join', async () => {
    const ctx = setup({ store });
    ctx.mock.recordVote(KEY, 'Ki', 6);
    const first = ctx.client.startDeliveryLoop({
      give: () => {},
      giveVoteReward: () => {
        throw new Error('the game is busy');
      },
    });
    first.join('Ki');
    await vi.advanceTimersByTimeAsync(1_000);
    for (let i = 0; i < 2; i++) {
      const failed = first.claimVote('Ki', { reward: 1, amount: 1 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await failed).code).toBe('PARTIAL');
    }
    await first.stop();
    expect(await rowsOf(ctx.journal, 'Ki')).toHaveLength(2);
    const rewards: GivenVoteReward[] = [];
    let loopRef: ReturnType<typeof ctx.client.startDeliveryLoop> | undefined;
    const loop = ctx.client.startDeliveryLoop({
      give: () => {},
      giveVoteReward: (reward) => {
        rewards.push(reward);
        // The player logs out while their first row is given.
        loopRef?.leave('Ki');
      },
    });
    loopRef = loop;
    loop.join('Ki');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(rewards).toHaveLength(1);
    expect(await rowsOf(ctx.journal, 'Ki')).toHaveLength(1);
    loopRef = undefined;
    loop.join('Ki');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(new Set(rewards.map((r) => r.deliveryId)).size).toBe(2);
    expect(await rowsOf(ctx.journal, 'Ki')).toEqual([]);
    await loop.stop();
  });

  it('gives only the joining player\'s rows', async () => {
    const { client, journal } = await leaveARow();
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r) });
    loop.join('Lu');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(rewards).toEqual([]);
    expect(await rowsOf(journal, 'Ki')).toHaveLength(1);
    await loop.stop();
  });

  it('while the journal refuses the acknowledgement, gives the row once and acknowledges it on a later run', async () => {
    const inner = new MemoryJournal();
    let refuse = false;
    const journal: DeliveryJournal = {
      append: (entries) => inner.append(entries),
      pending: (player) => inner.pending(player),
      acknowledge: async (ids) => {
        if (refuse && ids.some((id) => id.startsWith('vote:'))) throw new Error('disk full');
        return inner.acknowledge(ids);
      },
    };
    const { client, row } = await leaveARow({ journal });
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r), pollIntervalMs: 30_000 });
    refuse = true;
    loop.join('Ki');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(rewards.map((r) => r.deliveryId)).toEqual([row.deliveryId]);
    expect(await rowsOf(inner, 'Ki')).toEqual([row.deliveryId]);
    refuse = false;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await rowsOf(inner, 'Ki')).toEqual([]);
    expect(rewards).toHaveLength(1);
    await loop.stop();
  });

  it('a giveVoteReward that calls claimVote or claim for its own player gets a typed refusal at once; the row is still given', async () => {
    const { client, row } = await leaveARow();
    const inside: unknown[] = [];
    const rewards: GivenVoteReward[] = [];
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const loop = client.startDeliveryLoop({
      give: () => {},
      giveVoteReward: async (r) => {
        inside.push(await loopRef?.claimVote('Ki', { reward: 1, amount: 1 }).catch((error: unknown) => error));
        inside.push(await loopRef?.claim('Ki').catch((error: unknown) => error));
        rewards.push(r);
      },
    });
    loopRef = loop;
    loop.join('Ki');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(inside).toEqual([expect.any(InvalidInputError), expect.any(InvalidInputError)]);
    expect(rewards.map((r) => r.deliveryId)).toEqual([row.deliveryId]);
    await loop.stop();
  });

  it('a journal that cannot read the rows at the join fails the run visibly (loopError); a later run gives them', async () => {
    const inner = new MemoryJournal();
    let refuse = 0;
    const journal: DeliveryJournal = {
      append: (entries) => inner.append(entries),
      pending: async (player) => {
        // Only the vote rows' read (resumeVoteRewards for the joining player) fails, once.
        if (refuse > 0 && new Error().stack?.includes('resume') === true) {
          refuse -= 1;
          throw new Error('EIO: the disk is failing');
        }
        return inner.pending(player);
      },
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const { client, events, row } = await leaveARow({ journal });
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: (r) => void rewards.push(r), pollIntervalMs: 30_000 });
    refuse = 1;
    loop.join('Ki');
    // A /claim typed meanwhile is answered by that run: an ERROR report naming the journal's failure.
    const typed = loop.claim('Ki');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(await typed).toStrictEqual({ code: 'ERROR', granted: [], failed: [], pending: 0, message: expect.stringMatching(/\S/), error: expect.objectContaining({ code: 'JOURNAL_FAILED' }) });
    expect(rewards).toEqual([]);
    expect(events.filter((e) => e.type === 'loopError')).toEqual([expect.objectContaining({ playerName: 'Ki', error: expect.objectContaining({ code: 'JOURNAL_FAILED' }) })]);
    expect(loop.stats().errors).toBe(1);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(rewards.map((r) => r.deliveryId)).toEqual([row.deliveryId]);
    await loop.stop();
  });
});
