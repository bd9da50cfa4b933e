/**
 * zod schemas of the v3 answers (legacy claims and vote rewards), compiled, loaded with
 * {@link claimFromLegacy} and {@link voteFromWire} on the first v3 call.
 *
 * @module
 */
import { z } from 'zod';
import { compiled, given, wireSchemas, type Wire } from './schemas.js';
import type { VoteReward } from './types.js';

const { intLike } = wireSchemas();

/** Keys that make a row a purchase rather than a message-only row. */
export const TRANSACTION_KEYS = [
  'player_name',
  'product_id',
  'product_id_string',
  'product_name',
  'product_price',
  'product_amount',
  'amount_purchased',
  'quantity_to_grant',
  'quantity_purchased',
] as const;

/** A v3 answer: the documented array, or the bare `{message}` object some deployments send. */
export const legacyResponseSchema = compiled(z.union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())]));

export const messageRowSchema = compiled(z.looseObject({ message: z.string() }));

/** Keys that make a vote row a reward rather than a message-only row. */
export const VOTE_REWARD_KEYS = ['reward_id', 'reward_name', 'give_amount', 'vote_points', 'votes_month', 'total_points'] as const;

/** A vote reward row; {@link toVoteReward} keeps `total_points` a string. */
export const voteRewardSchema = compiled(
  z.looseObject({
    message: z.string().nullish(),
    total_points: z.union([z.string(), z.number()]),
    vote_points: intLike,
    votes_month: intLike,
    give_amount: intLike,
    reward_id: intLike,
    reward_name: z.string(),
  }),
);

/** A validated vote reward row as a {@link VoteReward}. */
export function toVoteReward(row: Wire<typeof voteRewardSchema>): VoteReward {
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
