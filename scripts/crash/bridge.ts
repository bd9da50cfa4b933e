/**
 * `npm run crash -- --bridge webhook|rcon`: the SIGKILL campaign of `teamgames bridge`
 * (issue #37, Proof). In the campaign's process, never killed: the mock over real HTTP
 * (purchases keep being made, during runs and between them; 3 % of claim answers lost, 2 %
 * answered 503) and the game (bridge-game.ts: a webhook endpoint deduping on deliveryId and
 * answering 500 to 5 % of POSTs, or the test RCON server answering as Minecraft does, one
 * command per item, `give {player} item {quantity} {deliveryId}`: "No player was found" for
 * a player not in the game (and for 3 % of the others: they just left), the connection
 * dropped without a reply after 3 % of commands, "An unexpected error occurred" to 1.5 %
 * (half of them after giving)). The bridge is a child process: the real CLI (src/cli/index.ts with
 * its chunks, bundled with esbuild at start: a restart costs node's start, not tsx's),
 * `teamgames bridge --config bridge.json` with a file journal, secrets in its environment.
 * After each start the campaign says who is online (PUT /v1/online, as a game re-sending its
 * list after a reconnect), players type /claim now and then (POST /v1/claim), and the bridge
 * is SIGKILLed: 10 % of the time 0–400 ms after spawn (starting), 15 % 0.4–11 s after
 * spawn (resuming: with previewed lines in the journal, the bridge's resume waits out the
 * service's 10 s window before its HTTP API opens), 40 % right after the game received a
 * give (between the game's answer and the journal's acknowledgement; at most 20 s after the
 * API opened), otherwise 0.2–16 s after the API opened. A give comes about 10 s after a
 * player joins (the loop previews, then claims one window later), so a run lasts ~20 s. `--kills` times. Then a final run, faults off, every
 * player online, until the mock lists nothing undelivered and no player has anything
 * pending; SIGTERM, exit 0 expected; the journal read with inspectJournal.
 *
 * Counted from the mock's purchase rows (the service's truth), the game's record and the
 * journal's windows (one line per mode):
 *
 *   crash bridge webhook kills=… players=… seed=…: purchases=… given=… lost=… silent=…
 *     duplicated=… redelivered=… windows=… covered=… faults=… claim_faults=… still_pending=…
 *   crash bridge rcon kills=… players=… seed=…: purchases=… given=… lost=… silent=…
 *     duplicated=… ran_for_nobody=… unknown=… in_windows=… absent_replies=… windows=… covered=…
 *     faults=… claim_faults=… still_pending=…
 *
 * - purchases: the paid rows; given: those the game gave.
 * - lost: rows paid and delivered by the service (claimed) that the game never gave, outside
 *   every window: neither an `unknownCommand` window naming the row's deliveryId nor a time
 *   window of its player (a lost claim answer) covering its purchase and its delivery;
 *   silent: of those, rows whose player has no window at all; covered: rows never given
 *   that a window covers (for staff: the journal says so).
 * - duplicated: rows given twice (webhook: after the game's dedupe; RCON: the command ran
 *   twice); redelivered (webhook): the POSTs the game's dedupe absorbed.
 * - unknown (RCON): rows whose command outcome the bridge could not know: the game dropped
 *   the connection after running it or answered "An unexpected error occurred", the bridge
 *   wrote an `unknownCommand` window for it (a kill between the sending mark and the
 *   acknowledgement), or it never ran outside any window; in_windows: those an
 *   `unknownCommand` window names (every one must be).
 * - ran_for_nobody (RCON): rows the game answered "No player was found" for (nothing given)
 *   that were never given afterwards and no window names: taken for given. absent_replies:
 *   the game's "No player was found" replies, all told (each must leave its item pending).
 * - offline_gives: items that reached the game (a POST, a command) for a player not in the
 *   game at the time: each run draws who is in the game (15 % out, some joining later) before
 *   the bridge starts, and tells the bridge once its API is up. The RCON game answers such a
 *   command "No player was found" and gives nothing, as Minecraft does.
 * - windows: the journal's windows (open and resolved); faults: the game's (500 answers,
 *   connections dropped after a command); claim_faults: the mock's (answers lost, 503s);
 *   still_pending: items pending in the journal plus rows undelivered after the final run.
 * Exits 1 when silent > 0, duplicated > 0, ran_for_nobody > 0, lost outside windows, an unknown outside a
 * window, something still pending after the final run, or the bridge dies on its own.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { FileJournal, inspectJournal, type JournalWindow } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { seededRandom } from '../../src/mock/service/random.js';
import { commandLine } from '../common/command-line.js';
import { between, pick } from './draws.js';
import { RCON_TEMPLATE, startRconGame, startWebhookGame, type Game, type RconGame, type WebhookGame } from './bridge-game.js';
import { NODE_BUNDLE } from './node-bundle.js';

const cli = commandLine('crash --bridge', 'usage: npm run crash -- --bridge webhook|rcon [--kills 100] [--players 10] [--seed <n>] [--keep]', {
  bridge: { type: 'string' },
  kills: { type: 'string', default: '100' },
  players: { type: 'string', default: '10' },
  seed: { type: 'string', default: '1' },
  keep: { type: 'boolean', default: false },
});
const MODE = cli.oneOf('bridge', ['webhook', 'rcon']);
const KILLS = cli.integer('kills', 0, 100_000);
const PLAYERS = cli.integer('players', 1, 200);
const SEED = cli.integer('seed', 0, 1_000_000);

const API_KEY = 'crash-bridge-key';
const TOKEN = 'crash-bridge-token-0123456789abcdef0123456789';
const PRODUCTS = [
  { id: 1, productId: '42', name: 'Whip', price: 10 },
  { id: 2, productId: 'diamond', name: 'Diamonds', price: 5, quantity: 64 },
  { id: 3, productId: 'rank_vip', name: 'VIP rank', price: 50 },
];
const NAMES = Array.from({ length: PLAYERS }, (_, i) => `Player${i + 1}`);
const P_EARLY = 0.1;
const P_RESUMING = 0.15;
const P_AT_GIVE = 0.4;
const GAME_FAULTS = MODE === 'webhook' ? 0.05 : 0.03;

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, '..', '..', 'src');
const root = mkdtempSync(join(tmpdir(), `teamgames-crash-bridge-${MODE}-`));
const paths = { bundle: join(root, 'bundle'), journal: join(root, 'journal.jsonl'), config: join(root, 'bridge.json') };
const random = seededRandom(SEED ^ (MODE === 'webhook' ? 0xb1d6e : 0x4c0e));
const problems: string[] = [];
const problem = (text: string) => {
  problems.push(text);
  process.stderr.write(`crash bridge ${MODE}: PROBLEM ${text}\n`);
};
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The CLI bundled, with its chunks (the bridge, the RCON sink: loaded by import() when used). */
async function bundle(): Promise<string> {
  const startedAt = performance.now();
  mkdirSync(paths.bundle);
  writeFileSync(join(paths.bundle, 'package.json'), '{"type":"module"}');
  await build({
    ...NODE_BUNDLE,
    entryPoints: { teamgames: join(src, 'cli', 'index.ts') },
    outdir: paths.bundle,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: ['pg-native', 'pg', 'mysql2', 'mysql2/promise'],
  });
  process.stderr.write(`crash bridge ${MODE}: bundled the CLI in ${((performance.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return join(paths.bundle, 'teamgames.js');
}

function writeConfig(mockUrl: string, game: Game): void {
  const give =
    MODE === 'webhook'
      ? { webhook: { url: (game as WebhookGame).url, timeoutMs: 2_000 } }
      : { rcon: { host: '127.0.0.1', port: (game as RconGame).port, passwordEnv: 'CRASH_RCON_PASSWORD', timeoutMs: 2_000, commands: { '*': [RCON_TEMPLATE] }, players: { source: 'game' } } };
  const config = { listen: { host: '127.0.0.1', port: 0 }, baseUrl: mockUrl, journal: { file: paths.journal }, loop: { pollIntervalMs: 10_000, maxCallsPerSecond: 20 }, give, log: { level: process.env['CRASH_BRIDGE_TRACE'] === '1' ? 'debug' : 'info' } };
  writeFileSync(paths.config, JSON.stringify(config, null, 2));
}

/** One bridge process. */
interface Bridge {
  proc: ChildProcess;
  /** The HTTP API's URL once its banner line came. */
  api: Promise<string | undefined>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive: boolean;
  stderr: string;
  log: string[];
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL');
  if (!cli.values.keep) rmSync(root, { recursive: true, force: true });
});
// Stopped by hand: the exit handler above kills the bridge and removes the temp dir.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => process.exit(130));

function spawnBridge(file: string, env: Record<string, string>): Bridge {
  const proc = spawn(process.execPath, [file, 'bridge', '--config', paths.config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  live.add(proc);
  let found!: (url: string | undefined) => void;
  const bridge: Bridge = {
    proc,
    api: new Promise((resolve) => (found = resolve)),
    exited: new Promise((resolve) =>
      proc.on('close', (code, signal) => {
        live.delete(proc);
        bridge.alive = false;
        found(undefined);
        resolve({ code, signal });
      }),
    ),
    alive: true,
    stderr: '',
    log: [],
  };
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    if (bridge.log.length < 5_000) bridge.log.push(line);
    const api = /"api":"(http:\/\/[^"]+)"/.exec(line)?.[1];
    if (api !== undefined) found(api);
  });
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => (bridge.stderr = (bridge.stderr + chunk).slice(-10_000)));
  return bridge;
}

/** A call of the bridge's HTTP API; undefined when the bridge is gone (killed meanwhile). */
async function call(api: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown } | undefined> {
  try {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return { status: response.status, json: text.startsWith('{') ? JSON.parse(text) : text };
  } catch {
    return undefined;
  }
}

export interface Setup {
  mock: ReturnType<typeof createMockService>;
  game: Game;
  file: string;
  env: Record<string, string>;
  purchases: number;
}

async function buy(s: Setup): Promise<void> {
  const product = pick(random, PRODUCTS);
  s.mock.addPurchase(API_KEY, { playerName: pick(random, NAMES), id: product.id, quantity: between(random, [1, 3]) });
  s.purchases += 1;
}

/** One run: spawn, say who is online, play players, and (unless `final`) SIGKILL by the plan drawn. */
async function run(s: Setup, kill: number): Promise<void> {
  // Who is in the game this time (the game's own players, there before the bridge starts).
  const offline = new Set(NAMES.filter(() => random() < 0.15));
  s.game.online = new Set(NAMES.filter((n) => !offline.has(n)));
  const spawnedAt = performance.now();
  const bridge = spawnBridge(s.file, s.env);
  const plan = random();
  const killNow = () => bridge.alive && bridge.proc.kill('SIGKILL');
  // Timers unref'd: a kill planned for a bridge already dead must not keep the campaign up.
  const later = (ms: number) => setTimeout(killNow, ms).unref();
  if (plan < P_EARLY) later(between(random, [0, 400]));
  else if (plan < P_EARLY + P_RESUMING) later(between(random, [400, 11_000]));
  const api = await Promise.race([bridge.api, pause(30_000).then(() => 'timeout')]);
  const bannerAt = performance.now() - spawnedAt;
  if (api === 'timeout') throw new Error(`crash bridge ${MODE}: run ${kill}: no banner within 30 s; stderr: ${bridge.stderr.slice(-2_000)}`);
  if (api !== undefined) {
    void call(api, 'PUT', '/v1/online', { players: [...s.game.online] });
    if (plan >= P_EARLY + P_RESUMING && plan < P_EARLY + P_RESUMING + P_AT_GIVE) {
      s.game.onGive = () => {
        s.game.onGive = undefined;
        later(between(random, [0, 10]));
      };
      later(20_000);
    } else if (plan >= P_EARLY + P_RESUMING) later(between(random, [200, 16_000]));
    // Purchases, /claim and joins while it runs.
    void (async () => {
      while (bridge.alive) {
        await pause(between(random, [200, 1_200]));
        if (!bridge.alive) break;
        const r = random();
        if (r < 0.5) await buy(s);
        else if (r < 0.9) void call(api, 'POST', '/v1/claim', { player: pick(random, NAMES.filter((n) => !offline.has(n))) });
        else if (offline.size > 0) {
          const player = pick(random, [...offline]);
          offline.delete(player);
          s.game.online.add(player);
          void call(api, 'POST', '/v1/join', { player });
        }
      }
    })();
  }
  const { code, signal } = await bridge.exited;
  s.game.onGive = undefined;
  if (cli.values.keep) writeFileSync(join(root, `run-${kill}.log`), `${bridge.log.join('\n')}\n${bridge.stderr}`);
  if (process.env['CRASH_BRIDGE_TRACE'] === '1') process.stderr.write(`run ${kill}: plan ${plan.toFixed(2)} banner ${api === undefined ? '-' : `after ${bannerAt.toFixed(0)} ms`} lived ${(performance.now() - spawnedAt).toFixed(0)} ms, gives so far ${s.game.gives.length}\n`);
  if (signal !== 'SIGKILL') problem(`run ${kill}: the bridge exited on its own (${code ?? signal}): ${bridge.stderr.slice(-1_000)} ${bridge.log.slice(-5).join('\n')}`);
}

/** The final run: faults off, everyone online, until nothing is undelivered or pending; SIGTERM. */
async function finalRun(s: Setup): Promise<boolean> {
  s.game.online = new Set(NAMES);
  const bridge = spawnBridge(s.file, s.env);
  const api = await Promise.race([bridge.api, pause(30_000).then(() => undefined)]);
  if (api === undefined) {
    problem(`final run: the bridge did not start: ${bridge.stderr.slice(-2_000)}`);
    return false;
  }
  await call(api, 'PUT', '/v1/online', { players: NAMES });
  const deadline = performance.now() + 120_000;
  let done = false;
  while (!done && performance.now() < deadline && bridge.alive) {
    await pause(1_000);
    const undelivered = s.mock.purchases(API_KEY).filter((r) => r.paymentstatus === 'Paid' && r.deliverystatus !== 'Delivered').length;
    if (undelivered > 0) continue;
    const statuses = await Promise.all(NAMES.map((n) => call(api, 'GET', `/v1/players/${encodeURIComponent(n)}/status`)));
    done = statuses.every((st) => st?.status === 200 && Array.isArray((st.json as { pending?: unknown }).pending) && (st.json as { pending: unknown[] }).pending.length === 0);
  }
  bridge.proc.kill('SIGTERM');
  const exit = await Promise.race([bridge.exited, pause(30_000).then(() => undefined)]);
  if (exit === undefined) {
    problem(`final run: the bridge did not stop within 30 s of SIGTERM`);
    bridge.proc.kill('SIGKILL');
    await bridge.exited;
  } else if (exit.code !== 0) problem(`final run: the bridge exited with ${exit.code ?? exit.signal} after SIGTERM: ${bridge.stderr.slice(-1_000)}`);
  return done;
}

async function main(): Promise<number> {
  const startedAt = performance.now();
  const file = await bundle();
  const mock = createMockService({ seed: { servers: [{ apiKey: API_KEY, name: 'Crash bridge', products: PRODUCTS }] } });
  mock.faults.seed(SEED);
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', probability: 0.03 });
  mock.faults.add({ operation: 'claim', kind: 'status', status: 503, probability: 0.02 });
  const { url, close } = await mock.listen({ port: 0 });
  const gameRandom = seededRandom(SEED ^ 0x6a3e);
  const game: Game = MODE === 'webhook' ? await startWebhookGame(TOKEN, gameRandom) : await startRconGame(gameRandom);
  game.faultRate = GAME_FAULTS;
  writeConfig(url, game);
  const env = { TEAMGAMES_API_KEY: API_KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, ...(MODE === 'rcon' ? { CRASH_RCON_PASSWORD: (game as RconGame).password } : {}) };
  const s: Setup = { mock, game, file, env, purchases: 0 };
  try {
    for (let i = 0; i < PLAYERS; i++) await buy(s);
    for (let kill = 0; kill < KILLS; kill++) {
      for (let i = between(random, [0, 2]); i > 0; i--) await buy(s);
      await run(s, kill);
      if ((kill + 1) % 25 === 0) process.stderr.write(`crash bridge ${MODE}: ${kill + 1}/${KILLS} kills, ${s.purchases} purchases, ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
    }
    process.stderr.write(`crash bridge ${MODE}: ${KILLS} kills in ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
    const claimFaults = mock.faults.list().reduce((sum, f) => sum + f.fired, 0);
    mock.faults.clear();
    game.faultRate = 0;
    let finished = false;
    for (let round = 0; round < 5 && !finished; round++) {
      const drained = await finalRun(s);
      const journal = new FileJournal(paths.journal);
      const left = (await inspectJournal(journal)).pending.length;
      await journal.close();
      finished = drained && left === 0;
      process.stderr.write(`crash bridge ${MODE}: final run ${round + 1}: ${drained ? 'drained' : 'not drained'}, ${left} pending in the journal, ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
    }
    const code = await report(s, claimFaults);
    process.stderr.write(`crash bridge ${MODE}: ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
    return code;
  } finally {
    const closing = performance.now();
    await game.close();
    await close();
    process.stderr.write(`crash bridge ${MODE}: closed in ${((performance.now() - closing) / 1000).toFixed(1)} s\n`);
  }
}

async function report(s: Setup, claimFaults: number): Promise<number> {
  const journal = new FileJournal(paths.journal);
  const inspection = await inspectJournal(journal);
  await journal.close();
  const windows: JournalWindow[] = [...inspection.openWindows, ...inspection.resolvedWindows];
  const rows = s.mock.purchases(API_KEY).filter((r) => r.paymentstatus === 'Paid');
  const givenCount = new Map<string, number>();
  for (const g of s.game.gives) givenCount.set(g.deliveryId, (givenCount.get(g.deliveryId) ?? 0) + 1);
  // A window naming the row: its id (window:command:<deliveryId>) and its command holding the deliveryId as a word.
  const commandWindow = (id: string) => windows.find((w) => w.cause === 'unknownCommand' && w.deliveryId === `window:command:${id}` && (w.command ?? '').split(/\s+/).includes(id));
  const timeWindow = (player: string, bought: number, delivered: number) => windows.some((w) => w.playerName === player && w.cause !== 'unknownCommand' && bought >= w.from - 1_000 && delivered <= w.to + 1_000);
  const playersWithWindows = new Set(windows.map((w) => w.playerName));
  const dropped = MODE === 'rcon' ? (s.game as RconGame).dropped : new Set<string>();
  const errored = MODE === 'rcon' ? (s.game as RconGame).errored : new Set<string>();
  const absent = MODE === 'rcon' ? (s.game as RconGame).absent : new Set<string>();
  let ranForNobody = 0;
  let given = 0;
  let lost = 0;
  let covered = 0;
  let silent = 0;
  let duplicated = 0;
  let unknown = 0;
  let inWindows = 0;
  const details: string[] = [];
  for (const row of rows) {
    if (row.deliverystatus !== 'Delivered') continue; // still_pending says it
    const id = `invoice:${row.invoice}`;
    const n = givenCount.get(id) ?? 0;
    const named = commandWindow(id) !== undefined;
    const inTime = timeWindow(row.username, Date.parse(row.created), Date.parse(row.delivered as string));
    if (n > 0) given += 1;
    if (n > 1) {
      duplicated += 1;
      details.push(`${id} (${row.username}) given ${n} times${dropped.has(id) ? ' (its first command was dropped after running)' : ''}`);
    }
    // RCON: the bridge could not know the outcome when the game dropped the connection after
    // running the command, when it wrote a window for it, or when it never ran outside a claim's window.
    if (MODE === 'rcon' && (dropped.has(id) || errored.has(id) || named || (n === 0 && !inTime))) {
      unknown += 1;
      if (named) inWindows += 1;
      else details.push(`${id} (${row.username}) outcome unknown (${n === 0 ? 'never ran' : dropped.has(id) ? 'dropped after running' : 'an unexpected error'}) and no unknownCommand window names it`);
    }
    if (MODE === 'rcon' && n === 0 && absent.has(id) && !named) {
      ranForNobody += 1;
      details.push(`${id} (${row.username}) answered "No player was found", never given after, no window: taken for given`);
    }
    if (n > 0) continue;
    if (named || inTime) covered += 1;
    else {
      lost += 1;
      if (!playersWithWindows.has(row.username)) silent += 1;
      details.push(`${id} (${row.username}, bought ${row.created}, delivered ${row.delivered}) paid, claimed by the service, never given, outside every window${playersWithWindows.has(row.username) ? '' : ' (the player has no window: silent)'}`);
    }
  }
  const undelivered = rows.filter((r) => r.deliverystatus !== 'Delivered').length;
  const stillPending = inspection.pending.length + undelivered;
  const strangers = s.game.gives.filter((g) => !g.deliveryId.startsWith('invoice:')).length;
  if (strangers > 0) problem(`${strangers} gives with a deliveryId that is not invoice:<n> (not matched to a row)`);
  if (stillPending > 0) problem(`${inspection.pending.length} items pending in the journal and ${undelivered} rows undelivered on the mock after the final run`);
  const outside = unknown - inWindows;
  for (const d of details.slice(0, 20)) process.stderr.write(`crash bridge ${MODE}: ${d}\n`);
  const counts =
    MODE === 'webhook'
      ? `lost=${lost} silent=${silent} duplicated=${duplicated} redelivered=${(s.game as WebhookGame).redelivered}`
      : `lost=${lost} silent=${silent} duplicated=${duplicated} ran_for_nobody=${ranForNobody} unknown=${unknown} in_windows=${inWindows} absent_replies=${(s.game as RconGame).absentReplies}`;
  const refused = MODE === 'webhook' ? (s.game as WebhookGame).refused : 0;
  if (refused > 0) problem(`the game refused ${refused} POSTs (a wrong token or body)`);
  const extra = MODE === 'rcon' && (s.game as RconGame).strange.length > 0 ? ` strange_commands=${(s.game as RconGame).strange.length}` : '';
  console.log(
    `crash bridge ${MODE} kills=${KILLS} players=${PLAYERS} seed=${SEED}: purchases=${rows.length} given=${given} ${counts} windows=${windows.length} covered=${covered} offline_gives=${s.game.offlineGives} faults=${s.game.faults} claim_faults=${claimFaults} still_pending=${stillPending}${extra}`,
  );
  for (const p of problems) process.stderr.write(`crash bridge ${MODE}: ${p}\n`);
  return silent > 0 || duplicated > 0 || ranForNobody > 0 || lost > 0 || outside > 0 || stillPending > 0 || problems.length > 0 ? 1 : 0;
}

process.exitCode = await main();
// A call to a killed bridge may still wait on its socket: the figures are out, end here.
process.exit();
