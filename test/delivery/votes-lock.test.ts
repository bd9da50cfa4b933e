/**
 * Vote rewards (`deliverVoteReward`, `resumeVoteRewards`, src/delivery/votes/votes.ts) on a
 * journal with a lock across nodes, and the caller's signal: when an abort stops the call
 * (waiting for the lock, or for the service) and when it no longer can (the work started),
 * listeners left on the signal, and which players `resumeVoteRewards` takes the lock for.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { JournalError, MemoryJournal, StorefrontClient, type DeliveryJournal } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

const mock = createMockService({ seed: storeSeed, now: T0 });
const client = (journal: DeliveryJournal, fetch: typeof globalThis.fetch = mock.fetch) => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, now: mock.clock.now, journal, retry: 0 });
const pointsLeft = (player = 'Ann') => mock.state().servers[0]?.votes.find((v) => v.playerName === player)?.vote_points;
/** What a promise settled to within `ms` of real time, or 'still waiting'. */
const within = <T,>(promise: Promise<T>, ms = 200) =>
  Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms))]);

/** A journal whose lock across nodes waits for `gate` (resolved at once by default), recording whom it was asked for. */
function lockedJournal(inner: DeliveryJournal, gate: () => Promise<void> = async () => undefined) {
  const held: string[] = [];
  /** The players whose work under the lock has returned. */
  const released: string[] = [];
  const journal: DeliveryJournal = {
    append: (entries) => inner.append(entries),
    pending: (player) => inner.pending(player),
    acknowledge: (ids) => inner.acknowledge(ids),
    withPlayerLock: async <T,>(player: string, work: () => Promise<T>) => {
      held.push(player);
      await gate();
      try {
        return await work();
      } finally {
        released.push(player);
      }
    },
  };
  return { journal, held, released };
}

describe('the caller\'s signal, on a journal with a lock across nodes', () => {
  it('aborted while the lock is being waited for: rejects at once with the reason; the work never runs once the lock comes (the journal untouched)', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const storage = new MemoryJournal();
    const touched: string[] = [];
    const spy: DeliveryJournal = {
      append: (entries) => (touched.push('append'), storage.append(entries)),
      pending: (player) => (touched.push('pending'), storage.pending(player)),
      acknowledge: (ids) => (touched.push('acknowledge'), storage.acknowledge(ids)),
    };
    let enter!: () => void;
    const gate = new Promise<void>((resolve) => (enter = resolve));
    const { journal, held, released } = lockedJournal(spy, () => gate);
    const controller = new AbortController();
    const call = client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    await expect.poll(() => held).toEqual(['Ann']);
    const reason = new Error('left the game');
    controller.abort(reason);
    expect(await within(call)).toEqual({ error: reason });
    enter();
    await expect.poll(() => released).toEqual(['Ann']);
    // The work did not run: the journal was never read or written.
    expect(touched).toEqual([]);
    expect(await storage.pending()).toEqual([]);
    expect(pointsLeft()).toBe(4);
  });

  it('aborted while the lock is asked (before the call could listen for it): rejects with the reason, whether the lock comes or fails; nothing claimed, and the player\'s next call runs', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const storage = new MemoryJournal();
    const reason = new Error('left the game');
    const asking = (outcome: 'comes' | 'fails', controller: AbortController): DeliveryJournal => ({
      ...lockedJournal(storage).journal,
      withPlayerLock: <T,>(_player: string, work: () => Promise<T>) => {
        controller.abort(reason);
        return outcome === 'comes' ? work() : Promise.reject(new JournalError('lock busy'));
      },
    });
    for (const outcome of ['comes', 'fails'] as const) {
      const controller = new AbortController();
      const call = client(asking(outcome, controller)).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
      expect(await within(call), outcome).toEqual({ error: reason });
    }
    expect(await storage.pending()).toEqual([]);
    expect(pointsLeft()).toBe(4);
    expect((await client(lockedJournal(storage).journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).code).toBe('SUCCESS');
  });

  it('aborted once the work started (during the give): the call goes on and reports what it did', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const { journal } = lockedJournal(new MemoryJournal());
    const controller = new AbortController();
    const report = await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => controller.abort(new Error('left the game')), { signal: controller.signal });
    expect(report).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(report.granted).toHaveLength(1);
  });

  it('leaves no listener on the signal: after a call, after a lock that cannot be had, after an abort while the lock never comes', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const signal = new AbortController().signal;
    const { journal } = lockedJournal(new MemoryJournal());
    expect((await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal })).code).toBe('SUCCESS');
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    const busy = lockedJournal(new MemoryJournal(), () => Promise.reject(new JournalError('lock busy'))).journal;
    expect((await client(busy).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal })).code).toBe('ERROR');
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    const never = lockedJournal(new MemoryJournal(), () => new Promise<void>(() => {}));
    const controller = new AbortController();
    const call = client(never.journal).deliverVoteReward({ player: 'Bo', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    await expect.poll(() => never.held).toEqual(['Bo']);
    controller.abort(new Error('gone'));
    await expect(call).rejects.toThrow('gone');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('reaches the request: an abort while the service has not answered stops the call', async () => {
    mock.reset();
    let sent!: () => void;
    const sending = new Promise<void>((resolve) => (sent = resolve));
    // Answers only when its signal aborts, as fetch does.
    const hanging: typeof globalThis.fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        sent();
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    const controller = new AbortController();
    const call = client(new MemoryJournal(), hanging).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { signal: controller.signal });
    await sending;
    controller.abort(new Error('stop'));
    expect(await within(call, 2_000)).not.toBe('still waiting');
  });
});

describe('an error of the call\'s own work under the lock', () => {
  it('rejects the call as it does without the lock (here a clock that throws): it is not the lock\'s failure', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const broken = () => {
      throw new Error('clock broken');
    };
    for (const journal of [new MemoryJournal(), lockedJournal(new MemoryJournal()).journal]) {
      const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: broken, journal, retry: 0 });
      await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).rejects.toThrow('clock broken');
    }
    expect(pointsLeft()).toBe(4);
  });
});

describe('resumeVoteRewards on a journal with a lock across nodes', () => {
  it('aborted while the lock is waited for: rejects at once with the reason; the row is not given once the lock comes', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    const storage = new MemoryJournal();
    const failed = await client(storage).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => {
      throw new Error('inventory full');
    });
    expect(failed.code).toBe('PARTIAL');
    let enter!: () => void;
    const gate = new Promise<void>((resolve) => (enter = resolve));
    const { journal, held, released } = lockedJournal(storage, () => gate);
    const controller = new AbortController();
    const handed: string[] = [];
    const call = client(journal).resumeVoteRewards((reward) => void handed.push(reward.deliveryId), { signal: controller.signal });
    await expect.poll(() => held).toEqual(['Ann']);
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await within(call)).toEqual({ error: reason });
    enter();
    await expect.poll(() => released).toEqual(['Ann']);
    expect(handed).toEqual([]);
    expect((await storage.pending('Ann')).filter((e) => e.state === 'voteClaimed')).toHaveLength(1);
  });

  it('takes the lock only for players with vote rows to give, not for those whose records are counters or marks', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 4);
    mock.recordVote(KEY, 'Bo', 4);
    const { journal, held } = lockedJournal(new MemoryJournal());
    const sdk = client(journal);
    expect((await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).code).toBe('SUCCESS');
    const failed = await sdk.deliverVoteReward({ player: 'Bo', reward: 1, amount: 1 }, () => {
      throw new Error('inventory full');
    });
    expect(failed.code).toBe('PARTIAL');
    held.length = 0;
    const resumed = await sdk.resumeVoteRewards(() => undefined);
    expect(resumed).toMatchObject({ pending: 0, errors: [] });
    expect(resumed.granted.map((r) => r.playerName)).toEqual(['Bo']);
    expect(held).toEqual(['Bo']);
  });
});
