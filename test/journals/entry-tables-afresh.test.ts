/**
 * The tables a journal checks its records by (src/journals/entry-checks.ts and
 * vote-entries.ts: the states, the causes of a window, the item's and the vote reward's
 * fields), with the modules loaded afresh for each test (issue #46 point 2). The tables are
 * module-level: loaded once before the tests, a change to one of them would go unseen by
 * entry-problem.test.ts, which checks each of them once loaded.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as EntryChecks from '../../src/journals/entry-checks.js';
import { journalLine } from '../support/journal.js';

let entryProblem: typeof EntryChecks.entryProblem;
beforeEach(async () => {
  vi.resetModules();
  ({ entryProblem } = await import('../../src/journals/entry-checks.js'));
});

const line = journalLine('invoice:1');
const window = { deliveryId: 'window:1', playerName: 'Ann', state: 'unverified', from: 1, to: 2, cause: 'lostClaim', recordedAt: 2 };
const voteRow = { deliveryId: 'vote:1:0', playerName: 'Ann', state: 'voteClaimed', recordedAt: 1, reward: { total_points: '5', vote_points: 3, votes_month: 5, give_amount: 2, reward_id: 1, reward_name: 'Box' } };
const records: Record<string, object> = {
  claimed: line,
  intended: { ...line, state: 'intended' },
  claiming: { deliveryId: 'claim:1', playerName: 'Ann', state: 'claiming', recordedAt: 1 },
  unverified: window,
  resolved: { ...window, state: 'resolved', resolution: { by: 'staff', at: 3, note: 'granted by hand' } },
  voteClaiming: { deliveryId: 'vote:1', playerName: 'Ann', state: 'voteClaiming', reward: '1', amount: 2, recordedAt: 1 },
  voteClaimed: voteRow,
  voteCounters: { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: 5, votePoints: 3, recordedAt: 1, prices: [] },
};

describe('the tables of a journal record, loaded afresh', () => {
  it.each(Object.keys(records))('the state %s is a state', (state) => {
    expect(entryProblem(records[state])).toBeUndefined();
  });

  it('no other state is', () => {
    expect(entryProblem({ ...line, state: 'granted' })).toBe(
      "state is not 'claimed', 'intended', 'claiming', 'unverified', 'resolved', 'voteClaiming', 'voteClaimed' or 'voteCounters' (\"granted\")",
    );
  });

  it.each<[string, object]>([
    ['lostClaim', {}],
    ['claimMark', {}],
    ['lostVote', { reward: '1' }],
    ['unknownCommand', { command: 'give Ann whip 1' }],
  ])('the cause %s is a cause of a window', (cause, more) => {
    expect(entryProblem({ ...window, cause, ...more })).toBeUndefined();
  });

  it('no other cause is', () => {
    expect(entryProblem({ ...window, cause: 'lostCommand' })).toBe("cause is not 'lostClaim', 'claimMark', 'lostVote' or 'unknownCommand' (\"lostCommand\")");
  });

  it.each(['player_name', 'product_id_string', 'product_name'])("the item's %s must be text", (key) => {
    expect(entryProblem({ ...line, item: { ...line.item, [key]: 1 } })).toBe(`item.${key} is not a string`);
  });

  it.each(['product_id', 'product_price', 'quantity_to_grant', 'quantity_purchased', 'product_amount', 'amount_purchased'])("the item's %s must be a number", (key) => {
    expect(entryProblem({ ...line, item: { ...line.item, [key]: '1' } })).toBe(`item.${key} is not a number`);
  });

  it.each(['total_points', 'reward_name'])("a vote reward's %s must be text", (key) => {
    expect(entryProblem({ ...voteRow, reward: { ...voteRow.reward, [key]: 1 } })).toBe(`reward.${key} is not a string`);
  });

  it.each(['vote_points', 'votes_month', 'give_amount', 'reward_id'])("a vote reward's %s must be an integer", (key) => {
    expect(entryProblem({ ...voteRow, reward: { ...voteRow.reward, [key]: '1' } })).toBe(`reward.${key} is not an integer`);
  });
});
