/**
 * The counters' arithmetic behind a lost vote answer (src/delivery/vote-recovery.ts): when
 * the next answer identifies what the lost call bought, when it only tells the points, and
 * when it tells nothing; and when a price is learned.
 */
import { describe, expect, it } from 'vitest';
import { account, countersOf } from '../../src/delivery/vote-recovery.js';
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
  it('a lost call of a number of units at a known price, this call known too: the lost row, given', () => {
    // Before: 20 earned, 15 left (5 spent). After: 20 earned, 5 left: 10 spent, 5 by this call.
    const result = account('Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 5)]);
    expect(result.recovered).toEqual([{ mark: mark(1), reward: { total_points: '20', vote_points: 5, votes_month: 3, give_amount: 2, reward_id: 2, reward_name: 'Scroll' } }]);
    expect(result.window).toBeUndefined();
    expect(result.counters).toMatchObject({ totalPoints: 20, votePoints: 5, recordedAt: 99, prices: [price] });
  });

  it('votes earned in between change nothing: spent is total − left', () => {
    const result = account('Ann', 99, before(20, 15), [mark(2)], ask(1), [row(32, 12)]);
    expect(result.recovered.map((r) => r.reward.give_amount)).toEqual([4]);
  });

  it('a lost call that spent nothing: nothing given, no window', () => {
    const result = account('Ann', 99, before(20, 15), [mark(3)], ask(1), [row(20, 10)]);
    expect(result).toMatchObject({ recovered: [] });
    expect(result.window).toBeUndefined();
  });

  it('spending that is not the lost call\'s price: a window with the points', () => {
    expect(account('Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 0)]).window).toEqual({ from: 10, reward: '2', points: 10 });
  });

  it.each<[string, Parameters<typeof account>]>([
    ['the lost call asked for all', ['Ann', 99, before(20, 15), [mark('all')], ask(1), [row(20, 5)]]],
    ['its reward\'s price is unknown', ['Ann', 99, before(20, 15), [mark(1, '3')], ask(1), [row(20, 5)]]],
    ['two calls were lost', ['Ann', 99, before(30, 25), [mark(1, '2', 10), mark(1, '2', 20)], ask(1), [row(30, 10)]]],
  ])('%s: a window with the points unaccounted for', (_name, args) => {
    const result = account(...args);
    expect(result.recovered).toEqual([]);
    expect(result.window?.points).toBe(5 * (args[3].length === 2 ? 2 : 1));
    expect(result.window?.from).toBe(10);
  });

  it.each<[string, Parameters<typeof account>]>([
    ['no counters before', ['Ann', 99, undefined, [mark(1)], ask(1), [row(20, 5)]]],
    ['counters dropped before', ['Ann', 99, { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', recordedAt: 0, prices: [price] }, [mark(1)], ask(1), [row(20, 5)]]],
    ['a message row now', ['Ann', 99, before(20, 15), [mark(1)], ask(1), []]],
    ['this call asked for all', ['Ann', 99, before(20, 15), [mark(1)], ask('all'), [row(20, 5)]]],
    ['this call\'s yield changed', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 5, 3)]]],
    ['this call answered another reward', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 5, 2, 1)]]],
    ['the counters went backwards', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(19, 5)]]],
    ['this call\'s reward has no price known', ['Ann', 99, before(20, 15), [mark(1)], ask(1, 1), [row(20, 5, 1, 1)]]],
  ])('%s: a window, the points unknown', (_name, args) => {
    const result = account(...args);
    expect(result.recovered).toEqual([]);
    // No points field at all (not one set to undefined, or to NaN).
    expect(result.window).toStrictEqual({ from: 10, reward: '2' });
  });

  it('two calls lost, the second of which spent nothing: still a window (which one spent is not known)', () => {
    expect(account('Ann', 99, before(30, 25), [mark(1, '2', 10), mark(1, '2', 20)], ask(1), [row(30, 15)])).toMatchObject({ recovered: [], window: { from: 10, reward: '2', points: 5 } });
  });

  it.each<[string, Parameters<typeof account>]>([
    ['counters known only by half', ['Ann', 99, { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: 20, recordedAt: 0, prices: [price] }, [mark(1)], ask(1), [row(20, 5)]]],
    ['less spent than this call alone', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 12)]]],
    ['this call answered two rows', ['Ann', 99, before(20, 15), [mark(1)], ask(1), [row(20, 10), row(20, 5)]]],
  ])('%s: a window, the points unknown, nothing recovered', (_name, args) => {
    const result = account(...args);
    expect(result.recovered).toEqual([]);
    expect(result.window).toStrictEqual({ from: 10, reward: '2' });
  });

  it('finds the prices of this call\'s reward and of the lost call\'s among others', () => {
    const other = { ...price, reward: '1', name: 'Box', cost: 1, give: 1 };
    const result = account('Ann', 99, before(20, 15, [other, price]), [mark(1)], ask(1), [row(20, 5)]);
    expect(result.recovered.map((r) => r.reward)).toEqual([{ total_points: '20', vote_points: 5, votes_month: 3, give_amount: 2, reward_id: 2, reward_name: 'Scroll' }]);
    expect(result.window).toBeUndefined();
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
    expect(account('Ann', 99, before(20, 15), [], ask(1), [{ ...row(20, 5), total_points: 'x' }]).counters).not.toHaveProperty('totalPoints');
  });
});
