/**
 * The crash campaign's command line and its fixed settings: how often each trouble
 * strikes, the store's products, the players. Parsed once, at import.
 *
 * @module
 */
import type { DeliveryMode } from '../../src/index.js';
import { commandLine } from '../common/command-line.js';
import { SCENARIOS, type ScenarioChoice } from './scenario.js';

export const USAGE =
  'usage: npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed <n>] [--purchases-during-runs true|false] [--loop [--flaky-journal] [--claim-mode exactlyOnce|fast] [--hints]]\n' +
  '                        [--processes 1|2] [--shared] [--nodes 1..8] [--journal file|postgres|mysql]\n' +
  '                        [--scenario mix|plain|two-clients|torn-append|no-raw-rows] [--players 20] [--lanes 2] [--keep]\n' +
  '       npm run crash -- --power-loss …   (the power-loss campaign: scripts/crash/power-loss.ts)\n' +
  '       npm run crash -- --votes …        (the vote rewards\' campaign, price changes and late landings: scripts/crash/votes.ts; --votes --help for its flags)';

const cli = commandLine('crash', USAGE, {
  kills: { type: 'string', default: '300' },
  mode: { type: 'string' },
  loop: { type: 'boolean', default: false },
  'flaky-journal': { type: 'boolean', default: false },
  hints: { type: 'boolean', default: false },
  'claim-mode': { type: 'string' },
  seed: { type: 'string', default: '1' },
  'purchases-during-runs': { type: 'string', default: 'true' },
  processes: { type: 'string', default: '1' },
  shared: { type: 'boolean', default: false },
  nodes: { type: 'string', default: '1' },
  journal: { type: 'string', default: 'file' },
  players: { type: 'string', default: '20' },
  lanes: { type: 'string', default: '2' },
  scenario: { type: 'string' },
  keep: { type: 'boolean', default: false },
});
const options = cli.values;
const usage = cli.fail;
export const KILLS = cli.integer('kills', 0, 100_000);
export const SEED = cli.integer('seed', 0, 0xffff_ffff);
export const PLAYERS = cli.integer('players', 1, 1000);
export const LANES = cli.integer('lanes', 1, 16);
export const PROCESSES = cli.integer('processes', 1, 2);
export const DURING_RUNS = cli.oneOf('purchases-during-runs', ['true', 'false']) === 'true';
if (PROCESSES === 2 && !options.shared) usage('--processes 2 needs --shared (two workers on one journal file)');
if (options.shared && PROCESSES !== 2) usage('--shared needs --processes 2');
export const SHARED = options.shared;
export const NODES = cli.integer('nodes', 1, 8);
export const JOURNAL = cli.oneOf('journal', ['file', 'postgres', 'mysql']);
/** Nodes on a database journal (the `--nodes` campaign). */
export const CLUSTER = JOURNAL !== 'file';
if (NODES > 1 && !CLUSTER) usage('--nodes above 1 needs a database journal: --journal postgres or --journal mysql (one FileJournal file serves one process)');
if (CLUSTER && (SHARED || PROCESSES !== 1)) usage('--processes 2 --shared is the FileJournal campaign; with a database journal use --nodes');
const scenarioNames: readonly string[] = ['mix', ...SCENARIOS];
if (options.scenario !== undefined && !scenarioNames.includes(options.scenario)) usage(`--scenario must be one of ${scenarioNames.join(', ')}, got "${options.scenario}"`);
if (CLUSTER && options.scenario !== undefined && options.scenario !== 'plain') usage('--scenario is for the FileJournal campaigns; database nodes play plain');
/** The scenario of each worker run (scripts/crash/scenario.ts): one, or `mix` (the default) picking one per run. */
export const SCENARIO = (options.scenario ?? (CLUSTER || options.loop ? 'plain' : 'mix')) as ScenarioChoice;
/** `--loop`: the workers run the delivery loop (worker/loop.ts), players join and leave them (presence.ts). */
export const LOOP = options.loop;
if (LOOP && options.mode !== undefined) usage('--loop runs the delivery loop (it previews in exactlyOnce; --claim-mode sets how it answers /claim): no --mode');
/** `--claim-mode` (--loop): the loop's `claimMode` for a /claim, exactlyOnce (the loop's default) or fast (one call). */
export const CLAIM_MODE = options['claim-mode'] === undefined ? undefined : cli.oneOf('claim-mode', ['exactlyOnce', 'fast']);
if (CLAIM_MODE !== undefined && !LOOP) usage('--claim-mode is for --loop (the /claim of the delivery loop); without it, use --mode');
if (LOOP && SHARED) usage('--loop runs one worker per journal file, or --nodes on a database journal: not --processes 2 --shared');
if (LOOP && options.scenario !== undefined && options.scenario !== 'plain') usage('--loop plays the plain scenario');
/**
 * `--flaky-journal` (--loop): the workers' journal refuses `acknowledge` in stretches of 1–3
 * minutes of the campaign's clock, and some `append`s then (worker/flaky-journal.ts); never
 * in the drain.
 */
export const FLAKY_JOURNAL = options['flaky-journal'];
if (FLAKY_JOURNAL && !LOOP) usage('--flaky-journal is for --loop (the count of gives per deliveryId is the loop\'s)');
/** `--hints` (--loop): the workers also send checkout hints (`loop.expect`) for online players now and then (#47). */
export const HINTS = options.hints;
if (HINTS && !LOOP) usage('--hints is for --loop (the checkout hints of the delivery loop)');
options.mode ??= 'all';
/** One campaign with --loop (its label is `loop`; the loop chooses the mode of each run). */
export const MODES: DeliveryMode[] = LOOP
  ? ['exactlyOnce']
  : options.mode === 'all' ? ['exactlyOnce', 'fast'] : options.mode === 'exactlyOnce' || options.mode === 'fast' ? [options.mode] : usage(`--mode must be exactlyOnce, fast or all, got "${options.mode}"`);

// How often each trouble strikes.
export const P_DROP_AFTER = 0.05; // claims processed whose answer is lost
export const P_GRANT_FAILS = 0.03;
// Database nodes: a third of the failures come after the COMMIT (a regrant the shared dedupe
// must skip); more of them, for the purchases are few next to the kills.
export const P_GRANT_FAILS_DB = 0.1;
export const P_EARLY_KILL = 0.1; // a kill 0–100 ms after spawn, before or while the worker starts
export const KILL_DELAY_MS = [50, 1500] as const; // after the worker is ready
// Database nodes: each of several nodes lives longer (a restarting node resumes what the
// others left, under their locks), so that they, not the drain, deliver most purchases.
export const KILL_DELAY_MS_DB = [200, 3000] as const;
export const BUY_EVERY_MS = [30, 300] as const; // purchases while a worker runs
// The client clock may lag the mock's by the advances in flight: its own lanes', and with
// several nodes, the other nodes' (their clocks are shared: see crash-worker.ts).
export const WINDOW_SLACK_MS = NODES * LANES * 10_000 + 1_000;
// Database journals: how long a node waits for a player's lock (MySQL counts whole seconds).
export const LOCK_TIMEOUT_MS = 10_000;
export const OUTAGE_EVERY_KILLS = [2, 6] as const; // kills between two outages (every node killed at once)

export const API_KEY = 'crash-key';
/** The reliability store's products (test/support/products.ts). */
export { PRODUCTS } from '../../test/support/products.js';
export const PLAYER_NAMES = Array.from({ length: PLAYERS }, (_, i) => (i === 1 ? 'Iron Man' : i === 2 ? '76561198000000003' : `Player${i + 1}`));
/** Keep the temp dir (and the tables, on a server of one's own) for a post-mortem. */
export const KEEP = options.keep;

// --loop: the mock's clock runs CLOCK_SPEED times real time, moved by the orchestrator
// (presence.ts) about every CLOCK_EVERY_MS, at most CLOCK_STEP_MS at once, so the loop's
// 10 s windows and polls cost a second; the workers' loop timers follow that clock
// (worker/loop.ts), waiting CLOCK_STEP_MS more than asked (their view may lag one step).
export const CLOCK_SPEED = 10;
export const CLOCK_STEP_MS = 500;
export const CLOCK_EVERY_MS = 20;
/** The loop's settings in the workers (virtual time): the shortest poll interval allowed. */
export const LOOP_POLL_MS = 10_000;
export const LOOP_CALLS_PER_SECOND = 5;
/** A node lives a little longer than a deliver worker: a loop's delivery takes a window (1 s here). */
export const KILL_DELAY_MS_LOOP = [200, 4000] as const;
/** Database nodes under --loop: each startup costs ~1 s here (a pool, the tables), so a node lives longer. */
export const KILL_DELAY_MS_LOOP_DB = [1000, 8000] as const;
/** A presence change (a join, a leave, a move, a second proxy) every so many ms of real time. */
export const PRESENCE_EVERY_MS = [60, 300] as const;
/** Share of the players online at the start. */
export const P_ONLINE_AT_START = 0.7;
/** A player types /claim (loop.claim) on a node every so many ms of real time. */
export const CLAIM_EVERY_MS = [150, 900] as const;
