/**
 * `npm run crash -- --votes`: the SIGKILL campaign of vote rewards. A worker
 * (scripts/crash/worker/votes.ts, bundled with esbuild) claims vote rewards with
 * `deliverVoteReward` over a FileJournal against the mock over real HTTP (5 % of vote
 * answers lost, 2 % carried out after a later answer, 2 % answered 503, 2 % of gives
 * throwing), while the owner changes a reward's price on the dashboard now and then (about
 * every second), and is SIGKILLed at a random moment, `--kills` times, each new worker
 * resuming first. Then every held request lands, and a last worker, faults off, its clock
 * past the time a request can still land, works out every lost answer and exits. Counted
 * from the claims the mock carried out and the game's log:
 *
 *   crash votes kills=… players=… seed=…: votes=… points_spent=… points_granted=… lost=…
 *   silent=… duplicated=… unpaid=… recovered=… windows=… lost_answers=… late_landings=…
 *   price_changes=… regives_final=…
 *
 * (the figures as in `npm run simulate -- --votes`). Exits 1 when silent, duplicated or
 * unpaid is above 0.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { FileJournal, inspectJournal } from '../../src/index.js';
import { createMockService, type VoteClaimRecord } from '../../src/mock/index.js';
import { seededRandom } from '../../src/mock/service/random.js';
import { commandLine } from '../common/command-line.js';
import { NODE_BUNDLE } from './node-bundle.js';
import { voteFigures, type GivenVoteRow } from '../common/vote-points.js';

const KEY = 'crash-votes-key';
const REWARDS = [
  { id: 1, name: 'Vote key', cost: 1, giveAmount: 1 },
  { id: 2, name: 'Scroll', cost: 5, giveAmount: 2 },
  { id: 3, name: 'Chest', cost: 12, giveAmount: 1 },
];

const cli = commandLine('crash --votes', 'usage: npm run crash -- --votes [--kills 100] [--players 10] [--seed <n>] [--keep]', {
  votes: { type: 'boolean', default: true },
  kills: { type: 'string', default: '100' },
  players: { type: 'string', default: '10' },
  seed: { type: 'string', default: '1' },
  keep: { type: 'boolean', default: false },
});
const KILLS = cli.integer('kills', 1, 100_000);
const PLAYERS = cli.integer('players', 1, 10_000);
const SEED = cli.integer('seed', 0, 1_000_000);
const random = seededRandom(SEED ^ 0xc4a5);

const root = mkdtempSync(join(tmpdir(), 'teamgames-crash-votes-'));
const paths = { journal: join(root, 'journal.jsonl'), game: join(root, 'game.log'), worker: join(root, 'worker.mjs') };

/** Runs the worker once; `killAfterMs`: SIGKILL that long after it said `ready`. Resolves to its output. */
function runWorker(env: Record<string, string>, killAfterMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [paths.worker], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (killAfterMs !== undefined && out.includes('ready\n')) setTimeout(() => child.kill('SIGKILL'), killAfterMs).unref();
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve(out);
      else reject(new Error(`crash votes: the worker exited with ${code ?? signal}: ${err.slice(0, 2_000)}`));
    });
  });
}

async function main(): Promise<number> {
  await build({ ...NODE_BUNDLE, entryPoints: [join(dirname(fileURLToPath(import.meta.url)), 'worker', 'votes.ts')], outfile: paths.worker, external: ['pg-native', 'pg', 'mysql2', 'mysql2/promise'] });
  const mock = createMockService({ seed: { servers: [{ apiKey: KEY, name: 'Crash votes', rewards: REWARDS }] } });
  mock.faults.seed(SEED);
  mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', probability: 0.05 });
  mock.faults.add({ operation: 'claimVoteReward', kind: 'status', status: 503, probability: 0.02 });
  mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', probability: 0.02 });
  // The owner changes a price on the dashboard now and then while the workers claim.
  let priceChanges = 0;
  const dashboard = setInterval(() => {
    if (random() >= 0.1) return;
    mock.updateReward(KEY, REWARDS[Math.floor(random() * REWARDS.length)]?.id ?? 1, { cost: 1 + Math.floor(random() * 15) });
    priceChanges += 1;
  }, 100);
  const { url, close } = await mock.listen({ port: 0 });
  const env = { VOTES_BASE_URL: url, VOTES_KEY: KEY, VOTES_JOURNAL: paths.journal, VOTES_GAME: paths.game, VOTES_PLAYERS: String(PLAYERS) };
  try {
    for (let kill = 0; kill < KILLS; kill++) {
      await runWorker({ ...env, VOTES_SEED: String(SEED * 100_003 + kill) }, 50 + Math.floor(random() * 1_000));
    }
    clearInterval(dashboard);
    const fired = mock.faults.list();
    const lostAnswers = fired.reduce((sum, f) => sum + f.fired, 0);
    const lateLandings = fired.filter((f) => f.rule.kind === 'landLate').reduce((sum, f) => sum + f.fired, 0);
    mock.faults.clear();
    mock.faults.land();
    const final = await runWorker({ ...env, VOTES_SEED: String(SEED), VOTES_FINAL: '1' });
    const server = mock.state().servers[0];
    return await report(server?.votes ?? [], server?.voteClaims ?? [], `lost_answers=${lostAnswers} late_landings=${lateLandings} price_changes=${priceChanges}`, final);
  } finally {
    clearInterval(dashboard);
    await close();
    if (!cli.values.keep) rmSync(root, { recursive: true, force: true });
  }
}

async function report(votes: ReadonlyArray<{ votes_month: number }>, claims: readonly VoteClaimRecord[], faults: string, final: string): Promise<number> {
  const given = existsSync(paths.game) ? readFileSync(paths.game, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as GivenVoteRow) : [];
  const journal = new FileJournal(paths.journal);
  const inspection = await inspectJournal(journal);
  await journal.close();
  const windows = inspection.openWindows;
  const { spent, granted, lost, silent, duplicated, unpaid } = voteFigures(claims, given, windows);
  const open = inspection.pending.length;
  const voteCount = votes.reduce((sum, v) => sum + v.votes_month, 0);
  const regives = /regives=(\d+)/.exec(final)?.[1] ?? '?';
  console.log(
    `crash votes kills=${KILLS} players=${PLAYERS} seed=${SEED}: votes=${voteCount} points_spent=${spent} points_granted=${granted} lost=${lost} silent=${silent} duplicated=${duplicated} unpaid=${unpaid} recovered=${given.filter((g) => g.recovered).length} windows=${windows.length} ${faults} regives_final=${regives}${open > 0 ? ` still_open=${open}` : ''}`,
  );
  return silent > 0 || duplicated > 0 || unpaid > 0 || open > 0 ? 1 : 0;
}

process.exitCode = await main();
