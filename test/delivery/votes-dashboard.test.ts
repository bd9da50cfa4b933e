/**
 * Vote rewards when the dashboard and the network do what they can (#43): a price cut or
 * a price rise between a lost answer and the next, and a lost request the service carries
 * out after the next answer. Counted as the campaigns count: units paid against units
 * given, and what the windows name. Never a silent loss, never a reward nobody paid for.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient, inspectJournal, type JournalWindow } from '../../src/index.js';
import { VOTE_LANDING_MS } from '../../src/delivery/votes/recovery.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { game } from '../support/votes.js';

// storeSeed rewards: 1 "Vote Mystery Box" (1 point, gives 1), 2 "Scroll" (5 points, gives 2).
const mock = createMockService({ seed: storeSeed, now: T0 });
const spent = () => {
  const v = mock.state().servers[0]?.votes.find((r) => r.playerName === 'Ann');
  return v === undefined ? 0 : v.total_points - v.vote_points;
};
const points = (windows: readonly JournalWindow[]) => windows.reduce((sum, w) => sum + (w.points ?? 0), 0);

function setup(points: number) {
  mock.reset();
  mock.recordVote(KEY, 'Ann', points);
  const journal = new MemoryJournal();
  const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0 });
  return { journal, sdk, ...game() };
}

describe('a price changed on the dashboard between a lost answer and the next', () => {
  it('a price cut: the lost call\'s spending cannot hide in the next call\'s at the old price; a window with the points at stake', async () => {
    const { journal, sdk, give, units } = setup(40);
    mock.updateReward(KEY, 2, { cost: 2 });
    const ask = { player: 'Ann', reward: 2, amount: 2 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give); // learned: 2 points a unit
    mock.updateReward(KEY, 2, { cost: 1 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    const next = await sdk.deliverVoteReward(ask, give);
    // 4 points since: the lost call's 2 and this call's 2, exactly this call at the old price.
    expect(next.granted.filter((r) => r.recovered)).toEqual([]);
    expect(next.unverified).toMatchObject({ reward: '2', points: 2 });
    // 6 units paid for (12 points), 4 units of 2 given: the 2 points of the missing one are in the window.
    expect(spent()).toBe(12);
    expect(units.get(2)).toBe(12);
    expect(points((await inspectJournal(journal)).openWindows)).toBe(2);
  });

  it('the mirror of the cut: the lost call never reached the service; the counters prove it spent nothing, no window, and it is settled once it can no longer land', async () => {
    const { journal, sdk, give, units } = setup(40);
    mock.updateReward(KEY, 2, { cost: 2 });
    const ask = { player: 'Ann', reward: 2, amount: 2 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.updateReward(KEY, 2, { cost: 1 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropBefore', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    // 2 points since: this call's two units at one point at least; nothing left for the lost call's two.
    const next = await sdk.deliverVoteReward(ask, give);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 1 });
    expect(next.unverified).toBeUndefined();
    mock.clock.advance(VOTE_LANDING_MS);
    expect(await sdk.deliverVoteReward(ask, give)).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(spent()).toBe(12);
    expect(units.get(2)).toBe(16);
    expect((await inspectJournal(journal)).openWindows).toEqual([]);
  });

  it('a price rise: a call that never reached the service is not given for what the new price happens to equal', async () => {
    const { journal, sdk, give, units } = setup(20);
    const ask = { player: 'Ann', reward: 1, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give); // learned: 1 point a unit
    mock.updateReward(KEY, 1, { cost: 2 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropBefore', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    const next = await sdk.deliverVoteReward(ask, give);
    // 2 points since = the old price twice: it could be either; nothing is given for the lost call.
    expect(next.granted.map((r) => r.recovered === true)).toEqual([false]);
    expect(next.unverified).toMatchObject({ reward: '1', points: 1 });
    expect(spent()).toBe(4);
    expect(units.get(1)).toBe(3);
    expect((await inspectJournal(journal)).openWindows).toHaveLength(1);
  });

  it('the mirror: the lost call did land, at the new price; a window, nothing given twice', async () => {
    const { sdk, give, units } = setup(20);
    const ask = { player: 'Ann', reward: 1, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.updateReward(KEY, 1, { cost: 2 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward(ask, give);
    const next = await sdk.deliverVoteReward(ask, give);
    expect(next.granted.map((r) => r.recovered === true)).toEqual([false]);
    expect(next.unverified).toMatchObject({ reward: '1', points: 3 });
    expect(spent()).toBe(6);
    expect(units.get(1)).toBe(3);
  });

  it('a price change does not stop a recovery the counters prove: the lost call is given once', async () => {
    const { sdk, give, units } = setup(40);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward(ask, give); // 5 points
    mock.updateReward(KEY, 2, { cost: 4 });
    const next = await sdk.deliverVoteReward({ ...ask, amount: 2 }, give); // 8 points: 13 since, odd
    expect(next.unverified).toBeUndefined();
    expect(next.granted.map((r) => r.recovered === true)).toEqual([true, false]);
    expect(spent()).toBe(23);
    expect(units.get(2)).toBe(10);
  });
});

describe('a lost request the service carries out after the next answer', () => {
  it('the next answer shows nothing of it: the lost call stays open, and the answer after it shows what it spent (a window)', async () => {
    const { journal, sdk, give, units } = setup(40);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    // One point spent since, this call's: the lost call spent nothing yet, and may still.
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 1 });
    expect(next.unverified).toBeUndefined();
    // It lands now, after that answer. The next answer finds its 5 points.
    expect(spent()).toBe(16);
    mock.clock.advance(60_000);
    const after = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(after.unverified).toMatchObject({ reward: '2', points: 5 });
    expect(after.granted.filter((r) => r.recovered)).toEqual([]);
    expect(spent()).toBe(17);
    // 17 points spent (3 Scrolls, 2 boxes); given: 2 Scrolls (10 points) and 2 boxes (2); the 5 others are in the window.
    expect((units.get(2) ?? 0) / 2 * 5 + (units.get(1) ?? 0)).toBe(12);
    expect(points((await inspectJournal(journal)).openWindows)).toBe(5);
  });

  it('a lost request that never lands: settled without a window once it can no longer land', async () => {
    const { journal, sdk, give } = setup(40);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropBefore', times: 1 });
    await sdk.deliverVoteReward(ask, give);
    expect((await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give)).pending).toBe(1);
    mock.clock.advance(VOTE_LANDING_MS);
    const later = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(later).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(later.unverified).toBeUndefined();
    expect((await inspectJournal(journal)).openWindows).toEqual([]);
  });

  it('a call the answer after it cannot rule out: a window names it, it stays open, and the next answer that cannot rule it out either closes it with a window until it can no longer land', async () => {
    const { journal, sdk, give } = setup(40);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1 });
    await sdk.deliverVoteReward(ask, give);
    const next = await sdk.deliverVoteReward(ask, give); // 5 points: this call's, or a cheaper unit and the lost call's
    expect(next.unverified).toMatchObject({ points: 4 });
    expect(next.pending).toBe(1);
    const sentAt = mock.clock.now();
    mock.clock.advance(60_000);
    const after = await sdk.deliverVoteReward(ask, give); // 10 points since: the late one landed
    expect(after.unverified).toStrictEqual({ playerName: 'Ann', reward: '2', from: expect.any(Number), to: sentAt + VOTE_LANDING_MS });
    expect(after.granted.filter((r) => r.recovered)).toEqual([]);
    expect(after.pending).toBe(0);
    expect((await inspectJournal(journal)).openWindows).toHaveLength(2);
  });
});
