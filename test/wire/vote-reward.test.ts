/**
 * How a vote reward answer is read (src/wire/vote-reward.ts and the v3 rows it shares,
 * src/wire/v3-rows.ts), each rule pinned so that changing it fails a test (#46): reward rows
 * and message-only rows, the refused key, the "Insufficient Points" flag, what a row keeps,
 * the words and paths of each refusal, and the code of each known message. The SDK is loaded
 * afresh for each test: the schemas are built on the first answer and the known messages
 * when the module loads, once per load.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';
import type * as VoteReward from '../../src/wire/vote-reward.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';

let sdk: typeof Sdk;
let voteMessageCode: typeof VoteReward.voteMessageCode;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
  ({ voteMessageCode } = await import('../../src/wire/vote-reward.js'));
});

const claim = (body: unknown) =>
  new sdk.StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch: async () => Response.json(body) }).claimVoteReward({ player: 'Ann', reward: 2, amount: 1 });
const reward = (fields: Record<string, unknown> = {}) => ({ total_points: '20', vote_points: 15, votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll', ...fields });
const unreadable = (what: string) =>
  `claimVoteReward: the answer could not be read (${what}); the request was sent, so the service may have delivered the items. Do not retry blindly: preview the claim to see what is still pending.`;

/** The ClaimOutcomeUnknownError `body` is refused with. */
async function refusal(body: unknown): Promise<Sdk.ClaimOutcomeUnknownError> {
  return expectInstance(await failureOf(claim(body)), sdk.ClaimOutcomeUnknownError);
}

describe('reward rows', () => {
  it('a row is read with its numbers as numbers, total_points as text, and no message when it has none', async () => {
    const result = await claim([reward({ vote_points: '15', message: null }), reward({ reward_id: 3, total_points: 20, message: 'Enjoy' })]);
    expect(result.rewards).toStrictEqual([
      { total_points: '20', vote_points: 15, votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll' },
      { total_points: '20', vote_points: 15, votes_month: 1, give_amount: 2, reward_id: 3, reward_name: 'Scroll', message: 'Enjoy' },
    ]);
    expect(result.messages).toEqual([]);
    expect(result.insufficientPoints).toBe(false);
  });

  it('a reward row missing fields is refused, each issue at its row\'s index', async () => {
    const error = await refusal([reward(), { reward_id: 2, give_amount: 1, vote_points: 1, votes_month: 1, total_points: '1' }]);
    expect(error.message).toBe(unreadable('a vote reward row does not match the schema'));
    expect(error.issues).toEqual([{ path: [1, 'reward_name'], message: 'Invalid input: expected string, received undefined' }]);
  });

  it('a row with a number out of bounds is refused and says so', async () => {
    const error = await refusal([reward({ give_amount: 0 })]);
    expect(error.message).toBe(unreadable('a vote reward row has a number out of bounds'));
  });
});

describe('message-only rows', () => {
  it('a row that is neither a reward nor a message is refused, at its index', async () => {
    const error = await refusal([{ message: 'You have not voted yet.' }, { note: 'x' }]);
    expect(error.message).toBe(unreadable('a vote row is neither a reward nor a message'));
    expect(error.issues).toEqual([{ path: [1, 'message'], message: 'Invalid input: expected string, received undefined' }]);
  });

  it('an answer neither an array nor an object is refused and says so', async () => {
    const error = await refusal('nope');
    expect(error.message).toBe(unreadable('the vote answer is neither an array nor an object'));
  });

  it('"Insufficient Points" at the start of a message, spaces before it or not, any case, sets the flag; elsewhere it does not', async () => {
    for (const message of ['Insufficient Points.', '  insufficient points left', 'INSUFFICIENT POINTS']) {
      expect((await claim([{ message }])).insufficientPoints, message).toBe(true);
    }
    for (const message of ['You have insufficient points', 'x insufficient points', 'insufficient']) {
      expect((await claim([{ message }])).insufficientPoints, message).toBe(false);
    }
  });
});

describe('the refused key', () => {
  it('"The game server could not be found" alone, leading spaces and any case: an AuthenticationError saying so', async () => {
    for (const message of ['The game server could not be found.', '   THE GAME SERVER COULD NOT BE FOUND']) {
      const error = expectInstance(await failureOf(claim([{ message }])), sdk.AuthenticationError);
      expect(error.message).toBe('claimVoteReward: the API key was refused (the game server could not be found). Pass the raw key from the TeamGames dashboard, not its Base64 form.');
    }
  });

  it('the same text beside a reward row: the rewards are read, nothing refused', async () => {
    const result = await claim([reward(), { message: 'The game server could not be found.' }]);
    expect(result.rewards.map((r) => r.reward_id)).toEqual([2]);
    expect(result.messages).toEqual(['The game server could not be found.']);
  });
});

describe('the code of a message-only row', () => {
  it.each([
    ['You have not voted yet.', 'NOT_VOTED'],
    ['Insufficient Points.', 'INSUFFICIENT_POINTS'],
    ['The reward could not be found.', 'REWARD_NOT_FOUND'],
    ['Invalid amount.', 'INVALID_AMOUNT'],
    ['  Invalid player name.', 'INVALID_PLAYER'],
    ['Something new.', 'UNKNOWN'],
    ['', 'UNKNOWN'],
  ] as const)('%j is %s', (message, code) => {
    expect(voteMessageCode(message)).toBe(code);
  });
});
