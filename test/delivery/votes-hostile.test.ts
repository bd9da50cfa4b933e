/**
 * Vote rewards (`deliverVoteReward`) tried as a hostile user would (shared/HOSTILE.md):
 * a service whose counters are odd, a wall clock that steps back, callbacks that call back
 * in, an abort while queued, a journal failing after the answer.
 */
import { describe, expect, it } from 'vitest';
import { GrantTimeoutError, InvalidInputError, MemoryJournal, StorefrontClient, type DeliveryJournal } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { game, states } from '../support/votes.js';

describe('the counters, from a service that answers oddly', () => {
  /** A vote endpoint answering the given bodies in turn. */
  const scripted = (...bodies: unknown[]): typeof globalThis.fetch => {
    let i = 0;
    return async () => new Response(JSON.stringify(bodies[Math.min(i++, bodies.length - 1)]));
  };
  const row = (total: string, left: number, give = 2) => ({ total_points: total, vote_points: left, votes_month: 1, give_amount: give, reward_id: 2, reward_name: 'Scroll' });
  const sdk = (journal: DeliveryJournal, fetch: typeof globalThis.fetch) => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, journal, retry: 0, now: () => T0 });
  const counters = async (journal: DeliveryJournal) => (await journal.pending('Ann')).find((e) => e.state === 'voteCounters');

  it('a reward row whose counters cannot be read drops the count (it spent what nobody can tell); a price is learned only from two readable counts', async () => {
    const journal = new MemoryJournal();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    const client = sdk(journal, scripted(row('20', 15), row('not a number', 10), row('20', 5), row('20', 0)));
    await client.deliverVoteReward(ask, () => undefined);
    expect(await counters(journal)).toMatchObject({ totalPoints: 20, votePoints: 15, prices: [] });
    await client.deliverVoteReward(ask, () => undefined);
    expect(await counters(journal)).not.toHaveProperty('totalPoints');
    await client.deliverVoteReward(ask, () => undefined);
    expect(await counters(journal)).toMatchObject({ totalPoints: 20, votePoints: 5, prices: [] });
    await client.deliverVoteReward(ask, () => undefined);
    expect(await counters(journal)).toMatchObject({ votePoints: 0, prices: [{ reward: '2', name: 'Scroll', cost: 5, give: 2 }] });
  });

  it('counters that go backwards, or more points left than earned, identify nothing: a lost call is a window', async () => {
    const journal = new MemoryJournal();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    let lose = false;
    const answers = [row('20', 15), row('20', 10), row('20', 5), row('19', 0)];
    let i = 0;
    const fetch: typeof globalThis.fetch = async () => {
      const body = answers[Math.min(i++, answers.length - 1)];
      if (lose) {
        lose = false;
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
      }
      return new Response(JSON.stringify(body));
    };
    const client = sdk(journal, fetch);
    await client.deliverVoteReward(ask, () => undefined);
    await client.deliverVoteReward(ask, () => undefined);
    lose = true;
    expect((await client.deliverVoteReward(ask, () => undefined)).code).toBe('OUTCOME_UNKNOWN');
    const next = await client.deliverVoteReward(ask, () => undefined);
    expect(next.granted.filter((r) => r.recovered)).toEqual([]);
    expect(next.unverified).toMatchObject({ playerName: 'Ann', reward: '2' });
    expect(next.unverified?.points).toBeUndefined();
  });
});

describe('deliverVoteReward, tried as a hostile user would', () => {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const client = (journal: DeliveryJournal, now: () => number = mock.clock.now) => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now, journal, retry: 0 });
  const fresh = () => {
    mock.reset();
    return new MemoryJournal();
  };

  it('a wall clock stepped back an hour between the lost call and the next: the window still runs forward', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 10);
    let offset = 0;
    const sdk = client(journal, () => mock.clock.now() + offset);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    offset = -3_600_000;
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    const w = next.unverified;
    expect(w).toBeDefined();
    expect(w!.from).toBeLessThanOrEqual(w!.to);
  });

  it('a give that calls deliver for its own player is refused (same per-player order as purchases)', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 2);
    const sdk = client(journal);
    let refused: unknown;
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, async () => {
      refused = await sdk.deliver('Ann', () => undefined).catch((error: unknown) => error);
    });
    expect(refused).toBeInstanceOf(InvalidInputError);
  });

  it('a call queued behind another for the same player rejects at once with the signal\'s reason when aborted; nothing sent, nothing journaled', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 5);
    const sdk = client(journal);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => held);
    await expect.poll(async () => states(await journal.pending('Ann'))).toContain('voteClaimed');
    const controller = new AbortController();
    const second = sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    controller.abort(new Error('player left'));
    await expect(second).rejects.toThrow('player left');
    release();
    expect((await first).code).toBe('SUCCESS');
    expect(mock.state().servers[0]?.votes[0]?.vote_points).toBe(4);
  });

  it('a journal that fails once the answer came: the rows are given from memory, written on the next call, never given twice', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 5);
    const inner = new MemoryJournal();
    let failing = false;
    const journal: DeliveryJournal = {
      append: (entries) => (failing && entries.some((e) => e.state === 'voteClaimed') ? Promise.reject(new Error('disk full')) : inner.append(entries)),
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const sdk = client(journal);
    const { give, units, repeats } = game();
    failing = true;
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, give);
    expect(report).toMatchObject({ code: 'SUCCESS' });
    expect(report.journalError?.message).toMatch(/disk full/);
    expect(units.get(1)).toBe(2);
    // The marks the journal did not settle are written first by the next call (memory), so
    // they never read as lost answers; its own rows fail again and are given from memory too.
    const again = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(again).toMatchObject({ code: 'SUCCESS' });
    expect(again.journalError).toBeDefined();
    failing = false;
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(next.unverified).toBeUndefined();
    expect(next.journalError).toBeUndefined();
    expect(units.get(1)).toBe(4);
    expect(repeats()).toBe(0);
    expect(mock.state().servers[0]?.votes[0]?.vote_points).toBe(1);
    expect(states(await inner.pending('Ann'))).toEqual(['voteCounters']);
  });

  it('a give that hangs past giveTimeoutMs: the call moves on (the row pending, never given again while it runs), acknowledged once it returns', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 5);
    const sdk = client(journal);
    let finish!: () => void;
    const hung = new Promise<void>((resolve) => (finish = resolve));
    const calls: string[] = [];
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, (reward) => {
      calls.push(reward.deliveryId);
      return hung;
    }, { giveTimeoutMs: 20 });
    expect(report).toMatchObject({ code: 'PARTIAL', pending: 1 });
    expect(report.failed[0]?.error).toBeInstanceOf(GrantTimeoutError);
    // The player's turn is free again: purchases and votes go on; the running row is not given twice.
    expect((await sdk.deliver('Ann', () => undefined, { sleep: async (ms) => void mock.clock.advance(ms) })).code).toBe('NO_ITEMS');
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, (reward) => void calls.push(reward.deliveryId));
    expect(next.granted).toHaveLength(1);
    expect(new Set(calls).size).toBe(calls.length);
    finish();
    await expect.poll(async () => states(await journal.pending('Ann'))).toEqual(['voteCounters']);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { giveTimeoutMs: 0 })).rejects.toThrow(/options\.giveTimeoutMs/);
  });
});
