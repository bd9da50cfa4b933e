/** The vote reward claim (`claimVoteReward`): `POST /v3/vote/reward/claim` (form body). */
import { z } from 'zod';
import { JAVA_INT_MAX, isValidPlayerName } from '../service/rules.js';
import { resolveServer, type MockState } from '../service/state.js';
import { TEXT } from '../service/texts.js';
import { type WireRequest, type WireResponse, badRequest, decodeBody, readFields } from '../service/wire.js';

/** Vote reward form: every field arrives as a string; the vote rules judge the values. */
const claimVoteRewardBodySchema = z.strictObject({
  player: z.string().optional(),
  reward: z.string().optional(),
  amount: z.string().optional(),
});

const messageRow = (message: string): WireResponse => ({ status: 200, body: [{ message }] });

/**
 * [interpretation I-6] The service's vote rules are not documented. Checks key → player →
 * votes recorded → reward → amount → points; a success spends the points and answers one
 * reward row.
 */
export function claimVoteReward(state: MockState, request: WireRequest): WireResponse {
  const server = resolveServer(state, request, 'api-key-or-bearer');
  if (server === undefined) {
    return messageRow(TEXT.serverNotFound);
  }
  const body = readFields(claimVoteRewardBodySchema, decodeBody(request, ['form']));
  if (!body.ok) {
    return badRequest(body.status, body.problem);
  }
  const { player, reward: rewardField = '', amount = '' } = body.value;
  if (!isValidPlayerName(player)) {
    return messageRow(TEXT.invalidPlayer);
  }
  const votes = server.votes.get(player);
  if (votes === undefined) {
    return messageRow(TEXT.notVoted);
  }
  const reward = /^\d+$/.test(rewardField) ? server.rewards.get(Number(rewardField)) : undefined;
  if (reward === undefined) {
    return messageRow(TEXT.rewardNotFound);
  }
  const all = amount.toLowerCase() === 'all';
  if (!all && !/^[1-9]\d*$/.test(amount)) {
    return messageRow(TEXT.invalidAmount);
  }
  const giveAmount = reward.giveAmount ?? 1;
  // The units given must fit a Java int (I-11): `all` stops there, a larger number is invalid.
  const mostUnits = Math.floor(JAVA_INT_MAX / giveAmount);
  const units = all ? Math.min(mostUnits, Math.floor(votes.vote_points / reward.cost)) : Number(amount);
  if (units === 0 || units * reward.cost > votes.vote_points) {
    return messageRow(TEXT.insufficientPoints(votes.vote_points, reward.name, reward.cost));
  }
  if (units > mostUnits) {
    return messageRow(TEXT.invalidAmount);
  }
  votes.vote_points -= units * reward.cost;
  server.voteClaims.push({ playerName: player, rewardId: reward.id, units, cost: reward.cost, giveAmount: units * giveAmount, total_points: votes.total_points, vote_points: votes.vote_points, at: new Date(state.clock.now()).toISOString() });
  return {
    status: 200,
    body: [
      {
        message: TEXT.rewardClaimed(units, reward.name),
        total_points: String(votes.total_points),
        vote_points: votes.vote_points,
        votes_month: votes.votes_month,
        give_amount: units * giveAmount,
        reward_id: reward.id,
        reward_name: reward.name,
      },
    ],
  };
}
