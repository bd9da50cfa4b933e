/**
 * A `/voted` command: the player spends vote points on a reward (id 1, as many as the
 * points pay for) and the bridge gives `give_amount` of it. Votes are never retried by
 * the SDK; a lost answer throws `ClaimOutcomeUnknownError` like a claim.
 *
 * Run it against the mock (record a vote first with the admin route):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   export TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a
 *   curl -s -X POST "$TEAMGAMES_BASE_URL/__mock/votes" -d '{"apiKey":"demo-key-3f9c2a","playerName":"Player123","points":3}'
 *   npx tsx examples/vote-command.ts Player123
 */
import { ClaimOutcomeUnknownError, StorefrontClient, isStorefrontError } from 'teamgames-sdk';

const client = new StorefrontClient(); // TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL

const give = (player: string, itemId: number, amount: number) => console.log(`[game] give ${player} item ${itemId} x${amount}`);
const tell = (player: string, text: string) => console.log(`[chat] to ${player}: ${text}`);

// #region vote
async function handleVoteCommand(player: string, rewardId = 1): Promise<void> {
  try {
    const { rewards, messages, insufficientPoints } = await client.claimVoteReward({ player, reward: rewardId, amount: 'all' });
    // reward_id is what integrators use as the in-game item id.
    for (const r of rewards) {
      give(player, r.reward_id, r.give_amount);
      tell(player, `You received ${r.give_amount} x ${r.reward_name}. ${r.vote_points} vote points left.`);
    }
    if (insufficientPoints) tell(player, 'You do not have enough vote points yet. Vote again tomorrow!');
    else for (const m of messages) tell(player, m); // e.g. "You have not voted yet."
  } catch (error) {
    if (error instanceof ClaimOutcomeUnknownError) {
      tell(player, 'The vote store did not answer. Staff have been told; your points are safe.');
      console.log(`[staff] vote reward for ${player}: outcome unknown (${error.reason}); points may be spent`);
    } else {
      tell(player, 'Vote rewards are unavailable right now.');
      console.log(`[staff] vote reward for ${player} failed: ${isStorefrontError(error) ? error.code : String(error)}`);
    }
  }
}
// #endregion vote

const player = process.argv[2] ?? 'Player123';
await handleVoteCommand(player);
await handleVoteCommand(player); // the points are spent now
