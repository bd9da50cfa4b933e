/**
 * The counters' arithmetic behind a lost vote answer (src/delivery/votes/recovery.ts): when
 * the next answer identifies what the lost call bought, when it only tells the points, and
 * when it tells nothing; and when a price is learned.
 */
import { describe, expect, it } from 'vitest';
import { VOTE_LANDING_MS, account, countersOf } from '../../src/delivery/votes/recovery.js';
import { MAX_SERVICE_COUNT } from '../../src/wire/bounds.js';
import type { JournalVoteClaim, JournalVoteCounters } from '../../src/journals/vote-entries.js';
import type { VoteReward } from '../../src/wire/vote-reward.js';

const price = { reward: '2', name: 'Scroll', cost: 5, give: 2, learnedAt: 0 };
const before = (total: number, left: number, prices = [price]): JournalVoteCounters => ({ deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: total, votePoints: left, recordedAt: 0, prices });
const mark = (amount: number | 'all', reward = '2', recordedAt = 10): JournalVoteClaim => ({ deliveryId: `vote:${recordedAt}`, playerName: 'Ann', state: 'voteClaiming', reward, amount, recordedAt });
const row = (total: number, left: number, give = 2, id = 2): VoteReward => ({ total_points: String(total), vote_points: left, votes_month: 3, give_amount: give, reward_id: id, reward_name: id === 2 ? 'Scroll' : 'Box' });
const ask = (amount: number | 'all', reward: string | number = 2) => ({ player: 'Ann', reward, amount });

describe('countersOf', () => {
  it('reads the last row; refuses what is not a whole count, or more left than earned', () => {
    expect(countersOf([row(9, 1), row(20, 5)])).toEqual({ total: 20, left: 5 });
    expect(countersOf([])).toBeUndefined();
    expect(countersOf([{ ...row(20, 5), total_points: '20.5' }])).toBeUndefined();
    expect(countersOf([{ ...row(20, 5), total_points: '1234567890123456' }])).toBeUndefined();
    expect(countersOf([row(20, 21)])).toBeUndefined();
    expect(countersOf([row(20, -1)])).toBeUndefined();
    expect(countersOf([row(20, 20)])).toEqual({ total: 20, left: 20 });
  });
});

describe('account', () => {
  const LATER = 10 + VOTE_LANDING_MS;

  it('no lost call: nothing recovered, nothing kept open, whatever the answer', () => {
    for (const rewards of [[], [row(20, 10)], [{ ...row(20, 10), total_points: 'x' }]]) {
      expect(account('Ann', 99, before(20, 15), [], ask(1), rewards)).toStrictEqual({ recovered: [], open: [], counters: expect.anything() });
    }
  });

  it('a lost call the counters prove carried out (this call alone cannot have spent it, at any price): the lost row, given', () => {
    // Before: 20 earned, 15 left. After: 5 left: 10 spent, not a multiple of this call's 3 units.
    const result = account('Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 5, 6)]);
    expect(result.recovered).toEqual([{ mark: mark(1), reward: { total_points: '20', vote_points: 5, votes_month: 3, give_amount: 2, reward_id: 2, reward_name: 'Scroll' } }]);
    expect(result.window).toBeUndefined();
    expect(result.open).toEqual([]);
    expect(result.counters).toMatchObject({ totalPoints: 20, votePoints: 5, recordedAt: 99, prices: [price] });
  });

  it('votes earned in between change nothing: spent is total − left', () => {
    const result = account('Ann', 99, before(20, 15), [mark(2)], ask(3), [row(32, 13, 6)]);
    expect(result.recovered.map((r) => r.reward.give_amount)).toEqual([4]);
  });

  it('a price cut hides the lost call\'s spending in this call\'s (the learned price would read "spent nothing"): a window with the points at stake', () => {
    // Learned: 5 a unit. Cut to 1: the lost call spent 2, this one 2; at the old price this call alone is 10 > 4.
    // At 2 a unit learned, a cut to 1: 2 + 2 = 4 spent, exactly this call at the old price.
    const two = { ...price, cost: 2, give: 2 };
    const result = account('Ann', 99, before(20, 15, [two]), [mark(2)], ask(2), [row(20, 11, 4)]);
    expect(result.recovered).toEqual([]);
    expect(result.window).toEqual({ from: 10, reward: '2', points: 2 });
  });

  it('a price rise makes a call that never reached the service look like the lost call\'s price: a window, nothing given', () => {
    // Learned: 1 a unit. Raised to 2: the lost call never arrived, this call spent 2 = its old price + the lost call's.
    const one = { ...price, cost: 1, give: 2 };
    const result = account('Ann', 99, before(20, 15, [one]), [mark(1)], ask(1), [row(20, 13, 2)]);
    expect(result.recovered).toEqual([]);
    expect(result.window).toEqual({ from: 10, reward: '2', points: 1 });
  });

  it('the mirror images: the lost call did land at the old price, this call at the new one; or at the new price both', () => {
    const one = { ...price, cost: 1, give: 2 };
    expect(account('Ann', 99, before(20, 15, [one]), [mark(1)], ask(1), [row(20, 12, 2)])).toMatchObject({ recovered: [], window: { points: 2 } });
    expect(account('Ann', 99, before(20, 15, [one]), [mark(1)], ask(1), [row(20, 11, 2)])).toMatchObject({ recovered: [], window: { points: 3 } });
  });

  it('a lost call the counters prove spent nothing yet stays open while the service could still carry it out, then is settled', () => {
    // 1 spent: this call's one unit at one point at least; the lost call's 3 units would need 3 more.
    const soon = account('Ann', 99, before(20, 15), [mark(3)], ask(1, 1), [row(20, 14, 1, 1)]);
    expect(soon).toMatchObject({ recovered: [], open: [mark(3)] });
    expect(soon.window).toBeUndefined();
    expect(account('Ann', LATER, before(20, 15), [mark(3)], ask(1, 1), [row(20, 14, 1, 1)])).toMatchObject({ recovered: [], open: [] });
    expect(account('Ann', LATER - 1, before(20, 15), [mark(3)], ask(1, 1), [row(20, 14, 1, 1)]).open).toEqual([mark(3)]);
    // A wall clock stepped back since the call: it can still land.
    expect(account('Ann', 0, before(20, 15), [mark(3)], ask(1, 1), [row(20, 14, 1, 1)]).open).toEqual([mark(3)]);
  });

  it('a message row after a lost call: nothing spent now, and the lost call proven to have spent nothing only when the counters say so', () => {
    // A message row carries no counters: a window, points unknown.
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask(1), [])).toMatchObject({ recovered: [], window: { from: 10, reward: '2' } });
  });

  it('a window over a call that can still land keeps it open; a lost call a window names is never recovered later', () => {
    const result = account('Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 5)]);
    expect(result).toMatchObject({ recovered: [], open: [mark(1)], window: { points: 9 } });
    const named = { ...mark(1), window: 'window:x' };
    // Named already and still not ruled out: a last window until it can no longer land, points unknown; settled.
    expect(account('Ann', 99, before(20, 15), [named], ask(3), [row(20, 5, 6)])).toStrictEqual({ recovered: [], open: [], window: { from: 10, reward: '2', until: 10 + VOTE_LANDING_MS }, counters: expect.anything() });
    // Named with a call a window does not name yet: both stay open, a window with the points.
    expect(account('Ann', 99, before(20, 15), [named, mark(1, '2', 20)], ask(3), [row(20, 5, 6)])).toMatchObject({ open: [named, mark(1, '2', 20)], window: { points: 7 } });
    // Named, and the counters prove it spent nothing so far: it stays open, no window.
    expect(account('Ann', 99, before(20, 15), [named], ask(1, 1), [row(20, 14, 1, 1)])).toMatchObject({ open: [named] });
    expect(account('Ann', LATER, before(20, 15), [mark(1)], ask(1), [row(20, 5)]).open).toEqual([]);
  });

  it('a lost call that can no longer land and is not identified: a window with the points at stake, not the last window of a named call', () => {
    expect(account('Ann', LATER, before(20, 15), [mark(1)], ask(1), [row(20, 5)])).toStrictEqual({ recovered: [], open: [], window: { from: 10, reward: '2', points: 9 }, counters: expect.anything() });
  });

  it('the counters prove a lost call spent nothing when what is left is less than its units at a point each (not less than one point)', () => {
    // 2 spent: this call's unit at 1 or 2 points; the lost call's 3 units would need 3 more. It stays open, no window.
    const result = account('Ann', 99, before(20, 15), [mark(3)], ask(1, 1), [row(20, 13, 1, 1)]);
    expect(result).toMatchObject({ recovered: [], open: [mark(3)] });
    expect(result.window).toBeUndefined();
  });

  it('what this call can have spent, whatever the price: a number of units of one reward at a whole price each, else at least one point', () => {
    // Nothing spent, yet a row given: this call alone cannot explain it; a window (no points).
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 15)])).toMatchObject({ recovered: [], open: [mark(1)], window: { from: 10, reward: '2' } });
    // This call asked for all: one point spent is its own, the lost call spent nothing; none, and it is a window.
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask('all'), [row(20, 14)])).toMatchObject({ recovered: [], open: [mark(1)] });
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask('all'), [row(20, 14)]).window).toBeUndefined();
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask('all'), [row(20, 15)])).toMatchObject({ recovered: [], window: { from: 10, reward: '2' } });
    // Two rows for 3 units: at least a point in all (not 3), so 9 of the 10 spent are at stake.
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 10, 3), row(20, 5, 3)]).window).toEqual({ from: 10, reward: '2', points: 9 });
  });

  it('the lost call\'s price is its own reward\'s: a price known for another reward that this row happens to fit recovers nothing', () => {
    const box = { reward: '3', name: 'Box', cost: 1, give: 2, learnedAt: 0 };
    const result = account('Ann', 99, before(20, 15, [price, box]), [mark(1, '3')], ask(3), [row(20, 5, 6)]);
    expect(result.recovered).toEqual([]);
    expect(result.window).toEqual({ from: 10, reward: '3', points: 7 });
  });

  it('a split of the points found only by taking this call\'s units from what was spent (not adding them): 3 lost units and 2 of this call\'s at a point each', () => {
    const result = account('Ann', 99, before(20, 15, [{ ...price, give: 2 }]), [mark(3)], ask(2), [row(20, 10, 4)]);
    expect(result.recovered.map((r) => r.reward.give_amount)).toEqual([6]);
    expect(result.window).toBeUndefined();
  });

  it.each<[string, Parameters<typeof account>]>([
    ['the lost call asked for all', ['Ann', 99, before(20, 15), [mark('all')], ask(3), [row(20, 5, 6)]]],
    ['the lost call asked another reward than this call', ['Ann', 99, before(20, 15), [mark(1, '3')], ask(3), [row(20, 5, 6)]]],
    ['the units a unit gives are not known from before', ['Ann', 99, before(20, 15, []), [mark(1)], ask(3), [row(20, 5, 6)]]],
    ['this answer gives another number of units a unit than learned', ['Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 5, 9)]]],
    ['this call asked for all', ['Ann', 99, before(20, 15), [mark(1)], ask('all'), [row(20, 5, 6)]]],
    ['this call answered another reward', ['Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 5, 6, 1)]]],
    ['this call answered two rows', ['Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 10, 6), row(20, 5, 6)]]],
    ['two calls were lost', ['Ann', 99, before(20, 15), [mark(1, '2', 10), mark(1, '2', 20)], ask(3), [row(20, 5, 6)]]],
    ['no whole price of the lost call fits what is left', ['Ann', 99, before(20, 15), [mark(5)], ask(3), [row(20, 5, 6)]]],
  ])('%s: a window with the points at stake, nothing recovered', (_name, args) => {
    const result = account(...args);
    expect(result.recovered).toEqual([]);
    expect(result.window?.from).toBe(10);
    expect(result.window?.points).toBeGreaterThan(0);
  });

  it('a lost call of more units than the search for a price covers is a window; one within it is recovered', () => {
    const many = 100_001;
    // 4 × amount points, not a multiple of this call's 3 units: the lost call's units and this call's 3 at `amount` points each,
    // a split the search finds only at its amount-th step.
    const at = (amount: number) => account('Ann', 99, before(10_000_000, 9_000_000, [{ ...price, give: 1 }]), [mark(amount)], ask(3), [row(10_000_000, 9_000_000 - 4 * amount, 3)]);
    expect(at(many)).toMatchObject({ recovered: [], window: { points: 4 * many - 3 } });
    expect(at(many - 1).recovered.map((r) => r.reward.give_amount)).toEqual([many - 1]);
  });

  it('150,000 lost calls open for one player: accounted without a stack overflow', () => {
    const lost = Array.from({ length: 150_000 }, (_, i) => ({ ...mark(1, '2', 10 + i), deliveryId: `vote:${i}` }));
    const result = account('Ann', 99, before(20, 15), lost, ask(1), [row(20, 5)]);
    expect(result.window).toMatchObject({ from: 10, reward: '2', points: 9 });
    expect(result.open).toHaveLength(150_000);
  });

  it('a lost call whose units would pass the bound on counts is a window, never a row', () => {
    const big = { ...price, give: MAX_SERVICE_COUNT };
    const result = account('Ann', 99, before(20, 15, [big]), [mark(2)], ask(3), [{ ...row(20, 4), give_amount: 3 * MAX_SERVICE_COUNT }]);
    expect(result.recovered).toEqual([]);
    expect(result.window).toMatchObject({ points: 8 });
    // Exactly at the bound: a row.
    const at = account('Ann', 99, before(20, 15, [big]), [mark(1)], ask(3), [{ ...row(20, 4), give_amount: 3 * MAX_SERVICE_COUNT }]);
    expect(at.recovered.map((r) => r.reward.give_amount)).toEqual([MAX_SERVICE_COUNT]);
  });

  it.each<[string, Parameters<typeof account>]>([
    ['no counters before', ['Ann', 99, undefined, [mark(1)], ask(1), [row(20, 5)]]],
    ['counters dropped before', ['Ann', 99, { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', recordedAt: 0, prices: [price] }, [mark(1)], ask(1), [row(20, 5)]]],
    ['counters known only by half', ['Ann', 99, { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: 20, recordedAt: 0, prices: [price] }, [mark(1)], ask(1), [row(20, 5)]]],
    ['a message row now', ['Ann', 99, before(20, 15), [mark(1)], ask(1), []]],
    ['the counters went backwards', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(19, 5)]]],
    ['less spent than this call\'s units', ['Ann', 99, before(20, 15), [mark(1)], ask(3), [row(20, 14, 6)]]],
  ])('%s: a window, the points unknown', (_name, args) => {
    const result = account(...args);
    expect(result.recovered).toEqual([]);
    // No points field at all (not one set to undefined, or to NaN).
    expect(result.window).toStrictEqual({ from: 10, reward: '2' });
  });

  it('finds the price of the lost call\'s reward among others', () => {
    const other = { ...price, reward: '1', name: 'Box', cost: 1, give: 1 };
    const result = account('Ann', 99, before(20, 15, [other, price]), [mark(1)], ask(3), [row(20, 5, 6)]);
    expect(result.recovered.map((r) => r.reward.reward_name)).toEqual(['Scroll']);
  });

  it('several lost rewards are named together', () => {
    expect(account('Ann', 99, before(20, 15), [mark(1, '2', 10), mark(1, '1', 20), mark(2, '2', 30)], ask(1), []).window).toEqual({ from: 10, reward: '2,1' });
  });

  it('a window drops the count when the answer has none, and restarts it from the answer\'s', () => {
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask(1), []).counters).not.toHaveProperty('totalPoints');
    expect(account('Ann', 99, before(20, 15), [mark('all')], ask(1), [row(20, 5)]).counters).toMatchObject({ totalPoints: 20, votePoints: 5 });
  });

  it('learns a price from a clean answer to a number of units, and only then', () => {
    const learned = account('Ann', 99, before(20, 20, []), [], ask(2), [row(20, 10, 4)]);
    expect(learned.counters.prices).toEqual([{ reward: '2', name: 'Scroll', cost: 5, give: 2, learnedAt: 99 }]);
    // Newer knowledge replaces older, and other rewards' stay.
    const other = { ...price, reward: '1', name: 'Box', cost: 1, give: 1 };
    expect(account('Ann', 99, before(20, 20, [other, price]), [], ask(1), [row(20, 13, 3)]).counters.prices).toEqual([other, { reward: '2', name: 'Scroll', cost: 7, give: 3, learnedAt: 99 }]);
    for (const args of [
      ['Ann', 99, before(20, 20, []), [], ask('all'), [row(20, 10, 4)]],
      ['Ann', 99, undefined, [], ask(2), [row(20, 10, 4)]],
      ['Ann', 99, before(20, 20, []), [], ask(2), [row(20, 10, 4), row(20, 10, 4)]],
      ['Ann', 99, before(20, 20, []), [], ask(3), [row(20, 10, 3)]],
      ['Ann', 99, before(20, 20, []), [], ask(2), [row(20, 10, 3)]],
      ['Ann', 99, before(20, 20, []), [], ask(2), [row(20, 20, 4)]],
      ['Ann', 99, before(20, 20, []), [], ask(2, 1), [row(20, 10, 4)]],
      ['Ann', 99, before(20, 20, []), [], ask(2), [row(20, 10, 0)]],
    ] as Array<Parameters<typeof account>>) {
      expect(account(...args).counters.prices, JSON.stringify(args.slice(4))).toEqual([]);
    }
  });

  it('a message row spends nothing: the count stays; a reward row without readable counters drops it', () => {
    expect(account('Ann', 99, before(20, 15), [], ask(1), []).counters).toMatchObject({ totalPoints: 20, votePoints: 15, recordedAt: 99 });
    // A count known only by half is no count: the message row keeps none.
    const half: JournalVoteCounters = { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: 20, recordedAt: 0, prices: [price] };
    expect(account('Ann', 99, half, [], ask(1), []).counters).not.toHaveProperty('totalPoints');
    expect(account('Ann', 99, before(20, 15), [], ask(1), [{ ...row(20, 5), total_points: 'x' }]).counters).not.toHaveProperty('totalPoints');
  });
});
