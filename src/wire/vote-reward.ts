/**
 * The vote reward claim ({@link StorefrontClient.claimVoteReward}): its public types, its
 * wire schema and its reader.
 *
 * @module
 */
import * as z from 'zod/mini';
import { WireProblem, WireRefusal, compiled, given, parse, scalars, schemasOnFirstUse, type Wire } from './parse.js';
import { countProblem } from './bounds.js';
import { SERVER_NOT_FOUND_PREFIX, splitRows, startsWithText } from './v3-rows.js';

/** The input of {@link StorefrontClient.claimVoteReward}. */
export interface VoteRewardInput {
  /** The voter's in-game name. */
  player: string;
  /** The reward id configured on the dashboard (sent as text). */
  reward: string | number;
  /** Units to buy with points: a positive integer, or `'all'` for as many as the points pay for. */
  amount: number | 'all';
}

/** A reward row, in wire names. */
export interface VoteReward {
  /** A text attached to the row, if any. */
  message?: string;
  /** Points ever earned; a string on the wire, kept as one. */
  total_points: string;
  /** Points left to spend. */
  vote_points: number;
  /** Votes this month. */
  votes_month: number;
  /** Units to give in game. */
  give_amount: number;
  /** Integrators use it as the in-game item id. */
  reward_id: number;
  /** The reward's display name. */
  reward_name: string;
}

/** What {@link StorefrontClient.claimVoteReward} resolves to. */
export interface VoteRewardResult {
  /** The rewards to give, one row each. */
  rewards: VoteReward[];
  /** Texts of the message-only rows (e.g. "You have not voted yet."). */
  messages: string[];
  /** True when a message starts with `Insufficient Points`. */
  insufficientPoints: boolean;
}

// ---------------------------------------------------------------------------
// The wire

/** Keys that make a vote row a reward rather than a message-only row. */
export const VOTE_REWARD_KEYS = ['reward_id', 'reward_name', 'give_amount', 'vote_points', 'votes_month', 'total_points'] as const;

/** The vote reward schemas, built on the first vote answer. @internal */
export const voteRewardSchemas = schemasOnFirstUse(() => {
  const { intLike, playerText } = scalars();
  return {
    /** A vote reward row; {@link toVoteReward} keeps `total_points` a string. */
    voteReward: compiled(
      z.looseObject({
        message: z.nullish(playerText),
        total_points: z.union([z.string(), z.number()]),
        vote_points: intLike,
        votes_month: intLike,
        give_amount: intLike,
        reward_id: intLike,
        reward_name: z.string(),
      }),
    ),
  };
});

/** The vote reward schemas. @internal */
export type VoteRewardSchemas = ReturnType<typeof voteRewardSchemas>;

/** A validated vote reward row as a {@link VoteReward}. */
export function toVoteReward(row: Wire<VoteRewardSchemas['voteReward']>): VoteReward {
  const { message, ...rest } = row;
  const out: VoteReward = {
    ...rest,
    total_points: String(row.total_points),
    vote_points: Number(row.vote_points),
    votes_month: Number(row.votes_month),
    give_amount: Number(row.give_amount),
    reward_id: Number(row.reward_id),
  };
  if (given(message)) out.message = message;
  return out;
}

/** Reads a vote reward answer (a v3 answer: reward rows and message-only rows). @internal */
export function readVoteReward(body: unknown): VoteRewardResult {
  const { items: rewards, messages } = splitRows(body, { answer: 'vote', row: 'vote', item: 'reward' }, VOTE_REWARD_KEYS, (row, index) =>
    bounded(toVoteReward(parse(voteRewardSchemas().voteReward, row, 'a vote reward row does not match the schema', [index])), index),
  );
  if (rewards.length === 0 && messages.some((m) => startsWithText(m, SERVER_NOT_FOUND_PREFIX))) {
    throw new WireRefusal('the game server could not be found');
  }
  return { rewards, messages, insufficientPoints: messages.some((m) => /^\s*insufficient points/i.test(m)) };
}

// Units to give and the reward id at least 1; points and votes at least 0; none past the bound.
const VOTE_COUNTS = [
  ['give_amount', 1],
  ['reward_id', 1],
  ['vote_points', 0],
  ['votes_month', 0],
] as const;

/** The row, once its numbers are within the SDK's bounds (`bounds.ts`); a {@link WireProblem} naming them otherwise. */
function bounded(reward: VoteReward, index: number): VoteReward {
  const issues = VOTE_COUNTS.flatMap(([field, min]) => {
    const problem = countProblem(reward[field], min);
    return problem === undefined ? [] : [{ path: [index, field], message: problem }];
  });
  if (issues.length > 0) throw new WireProblem('a vote reward row has a number out of bounds', issues);
  return reward;
}

/** What a message-only vote row says, matched on its leading words (the texts are the service's, or the mock's). */
export type VoteMessageCode = 'NOT_VOTED' | 'INSUFFICIENT_POINTS' | 'REWARD_NOT_FOUND' | 'INVALID_AMOUNT' | 'INVALID_PLAYER' | 'UNKNOWN';

// Leading words, lower case. "Insufficient Points" and "You have not voted yet" are what
// integrators match; the others are the mock's texts (src/mock/service/texts.ts).
const VOTE_MESSAGES: ReadonlyArray<[string, VoteMessageCode]> = [
  ['you have not voted', 'NOT_VOTED'],
  ['insufficient points', 'INSUFFICIENT_POINTS'],
  ['the reward could not be found', 'REWARD_NOT_FOUND'],
  ['invalid amount', 'INVALID_AMOUNT'],
  ['invalid player name', 'INVALID_PLAYER'],
];

/** The code of a message-only vote row; `UNKNOWN` for a text the SDK does not know. @internal */
export function voteMessageCode(message: string): VoteMessageCode {
  return VOTE_MESSAGES.find(([prefix]) => startsWithText(message, prefix))?.[1] ?? 'UNKNOWN';
}
