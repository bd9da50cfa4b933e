/**
 * The worker of `npm run crash -- --votes` (scripts/crash/votes.ts): a bridge that claims
 * vote rewards with `deliverVoteReward` over a FileJournal until it is SIGKILLed. The game
 * is a log file of the `deliveryId`s it applied (written synchronously before the give
 * returns, so a kill never loses an applied give; a kill between the give and its
 * acknowledgement repeats it, and the log's dedupe skips it).
 *
 * Environment: VOTES_BASE_URL, VOTES_KEY, VOTES_JOURNAL, VOTES_GAME, VOTES_PLAYERS (count),
 * VOTES_SEED, VOTES_FINAL (`1`: resume, work out every lost answer, exit; its clock runs
 * `VOTE_LANDING_MS` ahead, past the time a lost request can still land).
 *
 * @module
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { FileJournal, StorefrontClient, type GivenVoteReward } from '../../../src/index.js';
import { seededRandom } from '../../../src/mock/service/random.js';
import { VOTE_LANDING_MS } from '../../../src/delivery/votes/recovery.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`crash votes worker: ${name} is not set`);
  return value;
};
const BASE_URL = env('VOTES_BASE_URL');
const KEY = env('VOTES_KEY');
const GAME = env('VOTES_GAME');
const PLAYERS = Array.from({ length: Number(env('VOTES_PLAYERS')) }, (_, i) => `Voter${i + 1}`);
const FINAL = process.env['VOTES_FINAL'] === '1';
const random = seededRandom(Number(env('VOTES_SEED')));
/** The reward ids of the campaign's store. */
export const REWARD_IDS = [1, 2, 3];

const seen = new Set<string>(existsSync(GAME) ? readFileSync(GAME, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id) : []);
let regives = 0;
const give = (reward: GivenVoteReward): void => {
  if (!FINAL && random() < 0.02) throw new Error('inventory full');
  if (seen.has(reward.deliveryId)) {
    regives += 1;
    return;
  }
  appendFileSync(GAME, `${JSON.stringify({ id: reward.deliveryId, player: reward.playerName, reward: reward.reward_id, units: reward.give_amount, recovered: reward.recovered === true, total_points: reward.total_points, vote_points: reward.vote_points })}\n`);
  seen.add(reward.deliveryId);
};

const journal = new FileJournal(env('VOTES_JOURNAL'));
// The last worker runs as if every lost request had had the time to land (the campaign landed them).
const client = new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, journal, retry: 0, timeoutMs: 5_000, ...(FINAL ? { now: () => Date.now() + VOTE_LANDING_MS } : {}) });
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

await client.resumeVoteRewards(give);
if (FINAL) {
  for (let pass = 0; pass < 5; pass++) {
    const open = new Set((await journal.pending()).filter((e) => e.state === 'voteClaimed' || (e.state === 'voteClaiming' && e.settled !== true)).map((e) => e.playerName));
    if (open.size === 0) break;
    for (const player of open) await client.deliverVoteReward({ player, reward: 1, amount: 1 }, give);
  }
  await journal.close();
  process.stdout.write(`done regives=${regives}\n`);
  process.exit(0);
}
process.stdout.write('ready\n');
for (;;) {
  const player = pick(PLAYERS);
  if (random() < 0.3) {
    await fetch(`${BASE_URL}/__mock/votes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: KEY, playerName: player, points: 1 + Math.floor(random() * 5) }) });
    continue;
  }
  const amount = random() < 0.75 ? 1 + Math.floor(random() * 2) : ('all' as const);
  await client.deliverVoteReward({ player, reward: pick(REWARD_IDS), amount }, give);
}
