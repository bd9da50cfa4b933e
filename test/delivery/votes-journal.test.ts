/**
 * Vote rewards (`deliverVoteReward`, `resumeVoteRewards`) and the journal under them: a
 * journal with a lock across nodes, one that cannot be read or holds damage, a refused
 * key, the events and the report's fields.
 */
import { describe, expect, it } from 'vitest';
import { AuthenticationError, JournalError, MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry, type StorefrontEvent } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { states } from '../support/votes.js';

const mock = createMockService({ seed: storeSeed, now: T0 });
const client = (journal: DeliveryJournal, options: { apiKey?: string; onEvent?: (event: StorefrontEvent) => void } = {}) =>
  new StorefrontClient({ apiKey: options.apiKey ?? KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0, ...(options.onEvent ? { onEvent: options.onEvent } : {}) });
const fresh = () => {
  mock.reset();
  return new MemoryJournal();
};
const pointsLeft = () => mock.state().servers[0]?.votes[0]?.vote_points;

/** A journal shared by nodes: a lock around each player's work, and a node id. */
function nodeJournal(inner: DeliveryJournal, lock: (work: () => Promise<unknown>) => Promise<unknown> = (work) => work()) {
  const held: string[] = [];
  const journal: DeliveryJournal = {
    nodeId: 'node-a',
    append: (entries) => inner.append(entries),
    pending: (player) => inner.pending(player),
    acknowledge: (ids) => inner.acknowledge(ids),
    withPlayerLock: async <T,>(player: string, work: () => Promise<T>) => {
      held.push(player);
      return (await lock(work)) as T;
    },
  };
  return { journal, held };
}

describe('deliverVoteReward on a journal shared by nodes', () => {
  it('runs under the player\'s lock across nodes, and writes the node on the mark and the window', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 10);
    const { journal, held } = nodeJournal(storage);
    const seen: JournalEntry[][] = [];
    const spy: DeliveryJournal = {
      ...journal,
      withPlayerLock: journal.withPlayerLock!.bind(journal),
      append: (entries) => {
        seen.push([...entries]);
        return journal.append(entries);
      },
    };
    const sdk = client(spy);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(held).toEqual(['Ann', 'Ann']);
    expect(seen[0]).toEqual([expect.objectContaining({ state: 'voteClaiming', node: 'node-a', reward: '2', amount: 'all' })]);
    expect(next.unverified).toMatchObject({ playerName: 'Ann', reward: '2' });
    const window = (await storage.pending('Ann')).find((e) => e.state === 'unverified');
    expect(window).toMatchObject({ node: 'node-a', cause: 'lostVote', reward: '2' });
  });

  it('a lock that cannot be had: ERROR with the journal\'s error, nothing sent, nothing spent', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const { journal } = nodeJournal(storage, () => Promise.reject(new JournalError('lock busy')));
    const report = await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'ERROR', granted: [] });
    expect(report.journalError?.message).toBe('lock busy');
    expect(report.error).toBe(report.journalError);
    expect(pointsLeft()).toBe(4);
    // resumeVoteRewards names the player it could not visit.
    await storage.append([{ deliveryId: 'vote:1:0', playerName: 'Ann', state: 'voteClaimed', recordedAt: T0, reward: { total_points: '4', vote_points: 3, votes_month: 1, give_amount: 1, reward_id: 1, reward_name: 'Box' } }]);
    const resumed = await client(journal).resumeVoteRewards(() => undefined);
    expect(resumed.errors).toEqual([{ playerName: 'Ann', error: expect.objectContaining({ message: 'lock busy' }) }]);
    expect(resumed.pending).toBe(1);
    expect(resumed.journalError?.message).toBe('lock busy');
  });

  it('aborted while waiting for the lock: rejects with the reason, the work never runs', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    let enter!: () => void;
    const gate = new Promise<void>((resolve) => (enter = resolve));
    const { journal } = nodeJournal(storage, async (work) => {
      await gate;
      return work();
    });
    const controller = new AbortController();
    const call = client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    controller.abort(new Error('left the game'));
    await expect(call).rejects.toThrow('left the game');
    enter();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await storage.pending()).toEqual([]);
    expect(pointsLeft()).toBe(4);
  });
});

describe('deliverVoteReward and a journal that fails', () => {
  it('acknowledge refused for a while: a row given once is never given again by the SDK (next calls, resumeVoteRewards), and leaves the journal once it is back', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    let refusing = true;
    const journal: DeliveryJournal = {
      append: (entries) => storage.append(entries),
      pending: (player) => storage.pending(player),
      acknowledge: async (ids) => {
        if (refusing) throw new Error('disk full');
        return storage.acknowledge(ids);
      },
    };
    const given: string[] = [];
    const give = (reward: { deliveryId: string }) => void given.push(reward.deliveryId);
    const c = client(journal);
    expect((await c.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give)).journalError).toBeDefined();
    await c.resumeVoteRewards(give);
    mock.clock.advance(10_000);
    await c.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    // Two claims, two rows: each given once, whatever the journal refused.
    expect(given).toHaveLength(2);
    expect(new Set(given).size).toBe(2);
    refusing = false;
    await c.resumeVoteRewards(give);
    expect(given).toHaveLength(2);
    expect((await storage.pending('Ann')).filter((e) => e.state === 'voteClaimed')).toEqual([]);
  });

  it('a journal that cannot be read: ERROR, nothing claimed; resumeVoteRewards throws the JournalError', async () => {
    fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const events: StorefrontEvent[] = [];
    const broken: DeliveryJournal = { append: async () => undefined, pending: () => Promise.reject(new Error('EIO')), acknowledge: async () => undefined };
    const report = await client(broken, { onEvent: (e) => events.push(e) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'ERROR', pending: 0 });
    expect(report.journalError?.message).toBe('deliverVoteReward: the delivery journal failed (EIO)');
    expect(events).toContainEqual(expect.objectContaining({ type: 'journalError', operation: 'deliverVoteReward', playerName: 'Ann' }));
    expect(pointsLeft()).toBe(4);
    await expect(client(broken).resumeVoteRewards(() => undefined)).rejects.toThrow(/resumeVoteRewards: the delivery journal failed \(EIO\)/);
  });

  it('a damaged record read back: ERROR naming the problem, nothing given or claimed', async () => {
    fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const records = [{ deliveryId: 'vote:1:0', playerName: 'Ann', state: 'voteClaimed', recordedAt: 1, reward: { reward_name: 'Box' } }];
    const damaged: DeliveryJournal = { append: async () => undefined, pending: async () => records as unknown as JournalEntry[], acknowledge: async () => undefined };
    const given: unknown[] = [];
    const report = await client(damaged).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, (r) => void given.push(r));
    expect(report.code).toBe('ERROR');
    expect(report.journalError?.message).toMatch(/reward\.total_points is not a string/);
    expect(given).toEqual([]);
    expect(pointsLeft()).toBe(4);
    await expect(client(damaged).resumeVoteRewards(() => undefined)).rejects.toThrow(/not a journal entry/);
    const notAList: DeliveryJournal = { ...damaged, pending: async () => 'x' as unknown as JournalEntry[] };
    expect((await client(notAList).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).journalError?.message).toMatch(/did not return an array/);
  });

  it('a refused key: ERROR with the AuthenticationError, the mark dropped (nothing was spent)', async () => {
    const journal = fresh();
    const report = await client(journal, { apiKey: 'wrong-key' }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'ERROR', message: expect.stringMatching(/unavailable/), pending: 0 });
    expect(report.error).toBeInstanceOf(AuthenticationError);
    expect(await journal.pending()).toEqual([]);
  });

  it('an abort before sending rejects with the reason and drops the mark', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const controller = new AbortController();
    let sent = 0;
    const counting: typeof globalThis.fetch = (input, init) => {
      sent += 1;
      return mock.fetch(input, init);
    };
    // The abort comes once the mark is written, before the request goes out.
    const journal: DeliveryJournal = {
      append: async (entries) => {
        await storage.append(entries);
        if (entries.some((e) => e.state === 'voteClaiming')) controller.abort(new Error('stop'));
      },
      pending: (player) => storage.pending(player),
      acknowledge: (ids) => storage.acknowledge(ids),
    };
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: counting, now: mock.clock.now, journal, retry: 0 });
    const outcome = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe('stop');
    expect(sent).toBe(0);
    expect(await storage.pending()).toEqual([]);
    expect(pointsLeft()).toBe(4);
  });

  it('an abort once the request was sent: OUTCOME_UNKNOWN, the mark kept', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const controller = new AbortController();
    const aborting: typeof globalThis.fetch = async () => {
      controller.abort(new Error('stop'));
      throw controller.signal.reason;
    };
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: aborting, now: mock.clock.now, journal, retry: 0 });
    const outcome = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    expect(outcome).toMatchObject({ code: 'OUTCOME_UNKNOWN', pending: 1 });
    expect(states(await journal.pending('Ann'))).toEqual(['voteClaiming']);
  });
});

describe('the vote report', () => {
  it('OUTCOME_UNKNOWN carries the error and a text that says the points are safe; SUCCESS carries none', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const events: StorefrontEvent[] = [];
    const sdk = client(journal, { onEvent: (e) => events.push(e) });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    const lost = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(lost).toMatchObject({ code: 'OUTCOME_UNKNOWN', message: expect.stringMatching(/points are safe/), error: expect.objectContaining({ code: 'CLAIM_OUTCOME_UNKNOWN' }) });
    expect(lost).not.toHaveProperty('unverified');
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(next.code).toBe('SUCCESS');
    expect(next).not.toHaveProperty('error');
    expect(next).not.toHaveProperty('journalError');
    expect(next.message).toMatch(/^You have claimed 1 x Vote Mystery Box\. We could not confirm/);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([expect.objectContaining({ operation: 'deliverVoteReward', window: expect.objectContaining({ playerName: 'Ann' }) })]);
    // The lost call stays open, named by the window, while the service could still carry it out.
    const pending = await journal.pending('Ann');
    expect(states(pending).sort()).toEqual(['unverified', 'voteClaiming', 'voteCounters']);
    const window = pending.find((e) => e.state === 'unverified');
    expect(pending.find((e) => e.state === 'voteClaiming')).toMatchObject({ window: window?.deliveryId });
  });

  it('an earlier row given before a refused claim: SUCCESS with the SDK\'s text; a listener that throws changes nothing', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 1);
    const sdk = client(journal, {
      onEvent: () => {
        throw new Error('listener');
      },
    });
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => Promise.reject(new Error('full')));
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(next).toMatchObject({ code: 'SUCCESS', message: 'Your vote reward has been given.', pending: 0 });
    expect(next.granted).toHaveLength(1);
  });
});
