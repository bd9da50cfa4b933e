/**
 * The delivery loop over the delivery core (issue #45 point 1): purchases and vote rewards
 * given through one bounded give, one conversion of what a give throws, one failure policy
 * (`stuck` after `staffAfterAttempts` for vote rows too), one memory and one status (vote
 * rows in `status(player)` and `stats()`, from memory when the journal cannot be read).
 */
import { describe, expect, it, vi } from 'vitest';
import { MemoryJournal, type DeliveredItem, type GivenVoteReward, type JournalEntry } from '../../src/index.js';
import { KEY as VOTE_KEY, storeSeed } from '../support/fixtures.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';
// The client loads the vote rewards by import() on first use: loaded here, so a claimVote's
// first call asks the budget on fake time.
import '../../src/delivery/votes/index.js';

const { setup } = loopHarness();
const store = { seed: storeSeed, key: VOTE_KEY };

/** A memory journal whose appends (or reads) fail while told to. */
class TroubledJournal extends MemoryJournal {
  failAppends: ((entries: readonly JournalEntry[]) => boolean) | undefined;
  failReads = false;
  override async append(entries: readonly JournalEntry[]): Promise<void> {
    if (this.failAppends?.(entries) === true) throw new Error('disk full');
    return super.append(entries);
  }
  override async pending(player?: string): Promise<JournalEntry[]> {
    if (this.failReads) throw new Error('disk gone');
    return super.pending(player);
  }
}

/** Runs `work` while the fake clock moves a second at a time, until it settles. */
async function settled<T>(work: Promise<T>): Promise<T> {
  let done = false;
  void work.finally(() => (done = true)).catch(() => undefined);
  for (let i = 0; i < 120 && !done; i++) await vi.advanceTimersByTimeAsync(1_000);
  return work;
}

describe('the loop gives through the core', () => {
  it("a give that returns the string 'late' counts as given: granted, acknowledged, no GrantTimeoutError", async () => {
    const { mock, client, journal, events } = setup();
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give: () => 'late', claimMode: 'fast' });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(15_000);
    expect(loop.stats()).toMatchObject({ granted: 1, pending: 0, backingOff: 0 });
    expect(await journal.pending('Ann')).toEqual([]);
    expect(events.filter((e) => e.type === 'delivery').map((e) => (e.type === 'delivery' ? e.report.code : ''))).toEqual(['SUCCESS']);
    await loop.stop();
  });

  it('claimVote: a give rejecting with a value that is not an Error (a Proxy throwing on every trap) resolves PARTIAL, never a raw TypeError', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    const hostile = new Proxy({}, new Proxy({}, { get: () => () => { throw new TypeError('trap'); } }));
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => Promise.reject(hostile) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const report = await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    expect(report.code).toBe('PARTIAL');
    expect(report.failed).toHaveLength(1);
    await loop.stop();
  });
});

describe('one failure policy: vote rows are marked for staff as purchases are', () => {
  it('a vote row refused three times with staffAfterAttempts 2 is marked stuck once (event, journal), and still given later', async () => {
    const { mock, client, journal, events } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    let refuse = true;
    const given: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({
      give: () => {},
      staffAfterAttempts: 2,
      giveVoteReward: (reward) => {
        if (refuse) throw new Error("the game's webhook answered HTTP 500");
        given.push(reward);
      },
    });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    // The first claim gives its row; the next two (a reward the store does not have) give it again first.
    for (const reward of [1, 999, 999]) await settled(loop.claimVote('Ann', { reward, amount: 1 }));
    const row = (await journal.pending('Ann')).find((e) => e.state === 'voteClaimed');
    expect(row).toMatchObject({ lastError: { attempts: 3, stuck: true, message: "the game's webhook answered HTTP 500" } });
    const stuck = events.filter((e) => e.type === 'stuck');
    expect(stuck).toEqual([expect.objectContaining({ type: 'stuck', operation: 'deliverVoteReward', playerName: 'Ann', deliveryId: row?.deliveryId, attempts: 2, reward: expect.objectContaining({ reward_id: 1 }) })]);
    expect(stuck[0]).not.toHaveProperty('item');
    const status = await loop.status('Ann');
    expect(status.pending).toEqual([expect.objectContaining({ state: 'voteClaimed', lastError: expect.objectContaining({ stuck: true }) })]);
    refuse = false;
    await settled(loop.claimVote('Ann', { reward: 999, amount: 1 }));
    expect(given.map((r) => r.deliveryId)).toContain(row?.deliveryId);
    await loop.stop();
  });

  it('a vote give that refuses for good (staff: true on what it threw) is marked for staff at once', async () => {
    const { mock, client, journal, events } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => Promise.reject(Object.assign(new Error('no command for reward 1'), { staff: true })) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    expect((await journal.pending('Ann')).find((e) => e.state === 'voteClaimed')).toMatchObject({ lastError: { attempts: 1, stuck: true } });
    expect(events.filter((e) => e.type === 'stuck')).toHaveLength(1);
    await loop.stop();
  });
});

describe('one memory and one status', () => {
  it('status(player) shows a paid vote row only memory holds (the journal refused it), and shows it from memory when the journal cannot be read', async () => {
    const journal = new TroubledJournal();
    const { mock, client } = setup({ store, journal });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => Promise.reject(new Error('the game is busy')) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    // The mark is written; the rows of the answer are refused by the journal: memory holds them.
    journal.failAppends = (entries) => entries.some((e) => e.state === 'voteClaimed');
    const report = await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    expect(report).toMatchObject({ code: 'PARTIAL', journalError: expect.anything() });
    const status = await loop.status('Ann');
    expect(status.pending.filter((p) => p.state === 'voteClaimed')).toEqual([expect.objectContaining({ reward: expect.objectContaining({ reward_id: 1 }) })]);
    journal.failReads = true;
    const unread = await loop.status('Ann');
    expect(unread.journalError).toBeDefined();
    expect(unread.pending.filter((p) => p.state === 'voteClaimed')).toHaveLength(1);
    expect(loop.stats().pending).toBeGreaterThanOrEqual(1);
    journal.failReads = false;
    journal.failAppends = undefined;
    await loop.stop();
  });

  it('stats() counts the vote rows left for online players, as it counts purchases', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => Promise.reject(new Error('the game is busy')) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const report = await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    expect(report.pending).toBe(1);
    expect(loop.stats().pending).toBe(1);
    await loop.stop();
  });

  it('running is true while a vote give runs', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    let release: () => void = () => {};
    const loop = client.startDeliveryLoop({ give: () => {}, giveVoteReward: () => new Promise<void>((resolve) => (release = resolve)) });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(1_000);
    const vote = loop.claimVote('Ann', { reward: 1, amount: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await loop.status('Ann')).running).toBe(true);
    release();
    expect((await settled(vote)).code).toBe('SUCCESS');
    expect((await loop.status('Ann')).running).toBe(false);
    await loop.stop();
  });

  it('a purchase given late (past grantTimeoutMs) and a vote row given late share one memory: neither is given again meanwhile', async () => {
    const { mock, client } = setup({ store });
    mock.recordVote(VOTE_KEY, 'Ann', 3);
    mock.addPurchase(VOTE_KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const items: DeliveredItem[] = [];
    const rewards: GivenVoteReward[] = [];
    const loop = client.startDeliveryLoop({
      give: (item) => {
        items.push(item);
        return new Promise(() => {});
      },
      giveVoteReward: (reward) => {
        rewards.push(reward);
        return new Promise(() => {});
      },
      grantTimeoutMs: 2_000,
      claimMode: 'fast',
    });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(20_000);
    await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    await settled(loop.claimVote('Ann', { reward: 1, amount: 1 }));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(new Set(items.map((i) => i.deliveryId)).size).toBe(items.length);
    expect(new Set(rewards.map((r) => r.deliveryId)).size).toBe(rewards.length);
    await loop.stop();
  });
});

describe("the loop's per-item backoff", () => {
  it('forgets an item once its give succeeds (the map holds only items still failing), whatever the give returns', async () => {
    const { giveBackingOff, newPlayer } = await import('../../src/delivery/loop/player.js');
    const player = newPlayer('Ann');
    const item = { deliveryId: 'invoice:1' } as DeliveredItem;
    let now = 0;
    await expect(giveBackingOff(player, () => Promise.reject(new Error('busy')), item, () => now)).rejects.toThrow('busy');
    expect(player.backoff?.get('invoice:1')).toEqual({ failures: 1, at: 10_000, vote: false });
    now = 10_000;
    await expect(giveBackingOff(player, () => 'late', item, () => now)).resolves.toBeUndefined();
    expect(player.backoff?.has('invoice:1')).toBe(false);
  });

  it('a vote reward row backing off sets when the next run comes, but is not weighed against the purchases pending', async () => {
    const { giveBackingOff, heldBack, newPlayer } = await import('../../src/delivery/loop/player.js');
    const player = newPlayer('Ann');
    const reward = { deliveryId: 'vote:1:0' };
    await expect(giveBackingOff(player, () => Promise.reject(new Error('busy')), reward, () => 0, true)).rejects.toThrow('busy');
    expect(player.backoff?.get('vote:1:0')).toEqual({ failures: 1, at: 10_000, vote: true });
    expect(heldBack(player, 0)).toEqual({ held: 0, retry: 10_000 });
    // A service window after the last call, at the earliest.
    player.lastCallAt = 5_000;
    expect(heldBack(player, 0)).toEqual({ held: 0, retry: 15_000 });
  });
});
