/**
 * A `/voted` command: the player spends vote points on a reward (id 1, one unit per
 * command) and the bridge gives `give_amount` of it, crash-safe. `deliverVoteReward`
 * journals the claim before it is sent (the service spends the points when it answers)
 * and the rows of the answer before the game gives them; a give that throws, a crash or
 * a lost answer never loses a reward silently: the row is given again, worked out from
 * the service's counters, or named in a window for staff.
 *
 * Run it against the mock (record a vote first with the admin route):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   export TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a
 *   curl -s -X POST "$TEAMGAMES_BASE_URL/__mock/votes" -d '{"apiKey":"demo-key-3f9c2a","playerName":"Player123","points":3}'
 *   npx tsx examples/vote-command.ts Player123
 *
 * The journal is written to a temporary directory and deleted at the end, so the example
 * leaves nothing behind; a real bridge keeps it on durable storage (the default is
 * `./.teamgames-journal.jsonl`, shared with purchases) and calls `resumeVoteRewards` at
 * every start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournal, StorefrontClient, type GivenVoteReward } from 'teamgames-sdk';

const dir = mkdtempSync(join(tmpdir(), 'teamgames-votes-'));
const journal = new FileJournal(join(dir, 'teamgames-journal.jsonl'));
const client = new StorefrontClient({ journal }); // TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL

// #region game
/** The game's side: the ids it has given (its dedupe record), and its chat. */
const givenIds = new Set<string>();
const tell = (player: string, text: string) => console.log(`[chat] to ${player}: ${text}`);
const alertStaff = (text: string) => console.log(`[staff] ${text}`);
// #endregion game

// #region vote
/** Gives one reward row; the journal holds it until this returns. */
async function give(reward: GivenVoteReward): Promise<void> {
  if (givenIds.has(reward.deliveryId)) return; // repeated after a crash: given already
  // reward_id is what integrators use as the in-game item id.
  console.log(`[game] give ${reward.playerName} item ${reward.reward_id} x${reward.give_amount}${reward.recovered ? ' (recovered after a lost answer)' : ''}`);
  givenIds.add(reward.deliveryId);
}

async function handleVoteCommand(player: string, rewardId = 1): Promise<void> {
  // A number of units, not 'all'. After a lost answer the SDK gives the lost call's reward
  // only when the counters prove it was carried out (a later call of several units of the
  // same reward); with one unit a lost answer that spent points is a window for staff.
  const report = await client.deliverVoteReward({ player, reward: rewardId, amount: 1 }, give);
  // The service's own text ("You have claimed 1 x …", "You have not voted yet.",
  // "Insufficient Points: …") or the SDK's; the key never appears in it.
  tell(player, report.message);
  if (report.unverified) {
    const w = report.unverified;
    alertStaff(`vote reward ${w.reward} for ${w.playerName}: ${w.points === undefined ? 'an unknown number of' : `at most ${w.points}`} points unaccounted for between ${new Date(w.from).toISOString()} and ${new Date(w.to).toISOString()} (teamgames journal windows)`);
  }
  if (report.journalError) alertStaff(`delivery journal failing: ${report.journalError.message}`);
  if (report.code === 'ERROR' && report.error) alertStaff(`vote reward for ${player} failed: ${report.error.code}`);
}
// #endregion vote

try {
  // At startup, before accepting commands: give what a crash or a failed give left.
  const resumed = await client.resumeVoteRewards(give);
  console.log(`resumed ${resumed.granted.length} vote rewards, ${resumed.pending} pending`);
  const player = process.argv[2] ?? 'Player123';
  for (let i = 0; i < 4; i++) await handleVoteCommand(player); // three points: the fourth finds none left
} finally {
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
}
