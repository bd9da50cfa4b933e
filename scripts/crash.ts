/**
 * Crash campaign: real processes, real SIGKILLs. Proves that no paid purchase is lost
 * silently and none is granted twice when the bridge process dies at random moments.
 *
 *   npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed 1]
 *                    [--purchases-during-runs true|false] [--processes 2 --shared]
 *                    [--players 20] [--lanes 2] [--keep]
 *
 * Per mode (each on a fresh mock and a fresh temp dir):
 * - the mock CLI serves over HTTP on loopback in a child process (port 0, URL parsed from
 *   its banner), with a seeded fault rule: ~5% of v4 claims are processed and then their
 *   connection drops (the lost answer);
 * - a worker process (scripts/crash-worker.ts) runs `resumeDeliveries`, then `deliver` in
 *   a loop, with a FileJournal and a file-backed inventory that dedupes on `deliveryId`;
 *   ~3% of its grants throw;
 * - the orchestrator adds purchases between runs and (unless --purchases-during-runs
 *   false) while the worker runs, and SIGKILLs the worker at random moments (mostly
 *   50–1500 ms after it is ready, 10% of the time 0–100 ms after its run began: while it
 *   takes the journal's lock, loads, resumes), then restarts it;
 * - a final drain (no kills, no faults) runs resume + deliver for every player until the
 *   journal is empty and the mock lists nothing paid and undelivered;
 * - the counters come from the mock's purchase rows (ground truth) and the inventory file:
 *   per player, lost = max(0, paid − granted), duplicated = max(0, granted − paid) (plus any
 *   deliveryId the inventory applied twice), silent = lost units of players for whom no
 *   unverified window was ever reported; unverified = the windows the worker logged
 *   (durably, from onEvent).
 *
 * With `--processes 2 --shared`, two workers run at once on ONE journal file: whichever
 * holds the journal's lock delivers, the other must be refused (JournalError) and retries
 * a little later; kills hit the holder (and, 10% of the time, whoever is alive).
 *
 * Prints one line per mode:
 *   crash <mode>: kills=… purchases=… paid_units=… granted_units=… lost=… silent=… duplicated=… unverified=…
 *   crash <mode> processes=2 shared: refused=… kills=… …
 * and details on stderr (timing, faults fired, regrants, losses by player). Exits 1 when a
 * mode shows silent>0 or duplicated>0, exactly-once shows lost>0 with
 * --purchases-during-runs false, a loss lies outside every unverified window reported for
 * its player, the drain does not finish, a worker dies on its own, a lone worker is
 * refused by the lock a killed one left (the promise is that a dead holder's lock is taken
 * over), or (shared) no worker was ever refused or two held the lock at once.
 *
 * Speed: the worker's sleep moves the mock's clock (and the client's `now` by as much),
 * so the 10 s windows cost no real time. The worker and the mock are bundled from src/
 * with esbuild at start, and each worker is started ahead of time (node plus the SDK take
 * ~0.25 s to load on a small machine): it loads while the previous one runs and gets its
 * config on stdin when its run begins. `--keep` keeps the temp dir (worker.log,
 * inventory.jsonl, unverified.jsonl, journal.jsonl per mode) for a post-mortem.
 *
 * scripts/crash-lock.ts aims every kill at the journal's lock being taken (the moment the
 * main campaign only hits now and then): `npx tsx scripts/crash-lock.ts --kills 300`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import type { DeliveryMode } from '../src/index.js';
import { seededRandom } from '../src/mock/faults.js';
import type { InventoryLine, PurchaseRowLite, UnverifiedLine, WorkerConfig } from './crash-worker.js';

// ---------------------------------------------------------------- options

const USAGE =
  'usage: npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed <n>] [--purchases-during-runs true|false]\n' +
  '                        [--processes 1|2] [--shared] [--players 20] [--lanes 2] [--keep]';

function usage(problem: string): never {
  process.stderr.write(`crash: ${problem}\n${USAGE}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      kills: { type: 'string', default: '300' },
      mode: { type: 'string', default: 'all' },
      seed: { type: 'string', default: '1' },
      'purchases-during-runs': { type: 'string', default: 'true' },
      processes: { type: 'string', default: '1' },
      shared: { type: 'boolean', default: false },
      players: { type: 'string', default: '20' },
      lanes: { type: 'string', default: '2' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}
const options = parsed.values;
if (options.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const int = (name: string, value: string, min: number, max: number): number => {
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) usage(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
};
const KILLS = int('kills', options.kills, 0, 100_000);
const SEED = int('seed', options.seed, 0, 0xffff_ffff);
const PLAYERS = int('players', options.players, 1, 1000);
const LANES = int('lanes', options.lanes, 1, 16);
const PROCESSES = int('processes', options.processes, 1, 2);
if (!['true', 'false'].includes(options['purchases-during-runs'])) usage('--purchases-during-runs must be true or false');
const DURING_RUNS = options['purchases-during-runs'] === 'true';
if (PROCESSES === 2 && !options.shared) usage('--processes 2 needs --shared (two workers on one journal file)');
if (options.shared && PROCESSES !== 2) usage('--shared needs --processes 2');
const SHARED = options.shared;
const MODES: DeliveryMode[] =
  options.mode === 'all' ? ['exactlyOnce', 'fast'] : options.mode === 'exactlyOnce' || options.mode === 'fast' ? [options.mode] : usage(`--mode must be exactlyOnce, fast or all, got "${options.mode}"`);

// How often each trouble strikes.
const P_DROP_AFTER = 0.05; // claims processed whose answer is lost
const P_GRANT_FAILS = 0.03;
const P_EARLY_KILL = 0.1; // a kill 0–100 ms after spawn, before or while the worker starts
const KILL_DELAY_MS = [50, 1500] as const; // after the worker is ready
const BUY_EVERY_MS = [30, 300] as const; // purchases while a worker runs
const WINDOW_SLACK_MS = LANES * 10_000 + 1_000; // the client clock may lag the mock's by the advances in flight

const API_KEY = 'crash-key';
const PRODUCTS = [
  { id: 1, productId: '42', name: 'Whip', price: 10 },
  { id: 2, productId: 'minecraft:diamond', name: 'Diamonds', price: 5, quantity: 64 },
  { id: 3, productId: 7, name: 'Sword', price: 20 },
  { id: 4, productId: 'rank_vip', name: 'VIP rank', price: 50 },
  { id: 5, productId: 'coins', name: 'Coins', price: 1, quantity: 100 },
];
const PLAYER_NAMES = Array.from({ length: PLAYERS }, (_, i) => (i === 1 ? 'Iron Man' : i === 2 ? '76561198000000003' : `Player${i + 1}`));

// ---------------------------------------------------------------- children and cleanup

const children = new Set<ChildProcess>();
const root = mkdtempSync(join(tmpdir(), 'teamgames-crash-'));
let cleaned = false;

function cleanup(): void {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  if (!cleaned && !options.keep) rmSync(root, { recursive: true, force: true });
  cleaned = true;
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    process.stderr.write(`crash: ${signal}, stopping\n`);
    cleanup();
    process.exit(130);
  });
}

interface Child {
  label: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** When it was spawned, or for a pre-started worker when its run began. */
  spawnedAt: number;
  alive: boolean;
  killedByUs: boolean;
  stderr: string;
  readonly lines: string[];
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waiters: Array<{ match: (line: string) => boolean; resolve: (line: string | undefined) => void }>;
}

function start(file: string, args: readonly string[], label: string): Child {
  const proc = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`crash: could not start ${label}`);
  children.add(proc);
  let buffer = '';
  const child: Child = {
    label,
    proc,
    pid: proc.pid,
    spawnedAt: performance.now(),
    alive: true,
    killedByUs: false,
    stderr: '',
    lines: [],
    waiters: [],
    closed: new Promise((resolve) => {
      proc.on('close', (code, signal) => {
        children.delete(proc);
        for (const w of child.waiters) w.resolve(undefined);
        child.waiters = [];
        resolve({ code, signal });
      });
    }),
  };
  proc.on('exit', () => (child.alive = false));
  proc.stdin?.on('error', () => undefined);
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      child.lines.push(line);
      child.waiters = child.waiters.filter((w) => {
        if (!w.match(line)) return true;
        w.resolve(line);
        return false;
      });
    }
  });
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    child.stderr = (child.stderr + chunk).slice(-20_000);
  });
  return child;
}

/** The first stdout line that matches (also one already printed); undefined when the child ends first. */
function waitForLine(child: Child, match: (line: string) => boolean, timeoutMs: number): Promise<string | undefined> {
  const already = child.lines.find(match);
  if (already !== undefined) return Promise.resolve(already);
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
    return child.closed.then(() => child.lines.find(match));
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crash: ${child.label} printed no matching line within ${timeoutMs} ms; stderr: ${child.stderr.slice(-2000)}`)), timeoutMs);
    child.waiters.push({
      match,
      resolve: (line) => {
        clearTimeout(timer);
        resolve(line);
      },
    });
  });
}

function kill(child: Child): void {
  if (!child.alive) return;
  child.killedByUs = true;
  child.proc.kill('SIGKILL');
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- bundles

const here = dirname(fileURLToPath(import.meta.url));
const bundleDir = join(root, 'bundle');

async function bundle(): Promise<{ worker: string; mock: string }> {
  const startedAt = performance.now();
  await build({
    entryPoints: { 'crash-worker': join(here, 'crash-worker.ts'), 'crash-mock': join(here, 'crash-mock.ts') },
    outdir: bundleDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // Some dependencies call require(); an ESM bundle has none of its own.
    banner: { js: "import { createRequire as __crashRequire } from 'node:module'; const require = __crashRequire(import.meta.url);" },
  });
  process.stderr.write(`crash: bundled the worker and the mock in ${((performance.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return { worker: join(bundleDir, 'crash-worker.mjs'), mock: join(bundleDir, 'crash-mock.mjs') };
}

// ---------------------------------------------------------------- one campaign

interface Result {
  mode: DeliveryMode;
  kills: number;
  purchases: number;
  paid: number;
  granted: number;
  lost: number;
  silent: number;
  duplicated: number;
  unverified: number;
  refused: number;
  problems: string[];
  seconds: number;
}

async function campaign(mode: DeliveryMode, bundles: { worker: string; mock: string }, modeIndex: number): Promise<Result> {
  const startedAt = performance.now();
  const dir = join(root, `${mode}${SHARED ? '-shared' : ''}`);
  mkdirSync(dir);
  const seedPath = join(dir, 'seed.json');
  writeFileSync(seedPath, JSON.stringify({ servers: [{ apiKey: API_KEY, name: 'Crash campaign store', products: PRODUCTS }] }));
  const paths = {
    journalPath: join(dir, 'journal.jsonl'),
    inventoryPath: join(dir, 'inventory.jsonl'),
    unverifiedPath: join(dir, 'unverified.jsonl'),
    logPath: join(dir, 'worker.log'),
  };
  writeFileSync(paths.inventoryPath, '');
  writeFileSync(paths.unverifiedPath, '');
  const problems: string[] = [];
  const problem = (text: string): void => {
    problems.push(text);
    process.stderr.write(`crash ${mode}: PROBLEM ${text}\n`);
  };

  const base = (SEED ^ Math.imul(modeIndex + 1, 0x9e3779b9)) >>> 0;
  const killRandom = seededRandom(base ^ 0x6b1115);
  const buyRandom = seededRandom(base ^ 0xb0b);
  const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const between = (random: () => number, [lo, hi]: readonly [number, number]): number => lo + Math.floor(random() * (hi - lo + 1));

  // The mock.
  const mock = start(bundles.mock, ['--port', '0', '--host', '127.0.0.1', '--seed', seedPath], `${mode} mock`);
  const banner = await waitForLine(mock, (l) => l.startsWith('TeamGames mock listening on '), 20_000);
  if (banner === undefined) throw new Error(`crash: the mock did not start: ${mock.stderr}`);
  const url = banner.slice('TeamGames mock listening on '.length).trim();
  if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`crash: the mock is not on loopback: ${url}`);

  const admin = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`crash: ${method} ${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
  let purchases = 0;
  const buy = async (): Promise<void> => {
    const product = pick(buyRandom, PRODUCTS);
    await admin('POST', '/__mock/purchases', { apiKey: API_KEY, playerName: pick(buyRandom, PLAYER_NAMES), id: product.id, quantity: between(buyRandom, [1, 3]) });
    purchases += 1;
  };

  await admin('POST', '/__mock/faults', { seed: base, rules: [{ kind: 'dropAfter', operation: 'claimV4', probability: P_DROP_AFTER }] });
  for (let i = 0; i < Math.ceil(PLAYERS / 2); i++) await buy();

  // Workers.
  let run = 0;
  const live = new Set<Child>();
  const startupMs: number[] = [];
  // Workers are started ahead of time and wait for their config on stdin: node and the
  // SDK load (~0.25 s here) while the previous worker runs, not after it was killed.
  let stopping = false;
  const spares: Child[] = [];
  const spare = (): Child => {
    const child = start(bundles.worker, [], `${mode} spare worker`);
    spares.push(child);
    return child;
  };
  for (let i = 0; i < PROCESSES; i++) spare();
  const spawnWorker = (drain: boolean): Child => {
    const cfg: WorkerConfig = {
      url,
      apiKey: API_KEY,
      mode,
      ...paths,
      players: PLAYER_NAMES,
      seed: (base + Math.imul(run, 0x85ebca6b)) >>> 0,
      run,
      grantFailRate: P_GRANT_FAILS,
      lanes: LANES,
      drain,
    };
    let child = spares.shift();
    while (child !== undefined && !child.alive) child = spares.shift();
    child ??= start(bundles.worker, [], '');
    // The next spare starts once this worker is up: two node startups at once on two
    // cores would slow this worker's restart, the moment under test.
    if (!drain) void waitForLine(child, (l) => l === 'ready' || l.startsWith('refused '), 60_000).then(() => !stopping && spare(), () => !stopping && spare());
    child.label = `${mode} worker r${run}`;
    child.spawnedAt = performance.now();
    child.proc.stdin?.write(`${JSON.stringify(cfg)}\n`);
    run += 1;
    live.add(child);
    void child.closed.then(() => live.delete(child));
    return child;
  };
  /** `ready` or `refused …`, timing the startup; undefined when the worker ended first. */
  const started = async (w: Child): Promise<string | undefined> => {
    const line = await waitForLine(w, (l) => l === 'ready' || l.startsWith('refused '), 30_000);
    if (line === 'ready') startupMs.push(performance.now() - w.spawnedAt);
    return line;
  };
  /** After a worker ended: a kill of ours, a refusal (exit 3), or a problem. */
  let kills = 0;
  let refused = 0;
  let unexpected = 0;
  const endings = new WeakMap<Child, Promise<'killed' | 'refused' | 'other'>>();
  const ended = (w: Child): Promise<'killed' | 'refused' | 'other'> => {
    let ending = endings.get(w);
    if (ending === undefined) {
      ending = w.closed.then(({ code, signal }) => {
        if (w.killedByUs && signal === 'SIGKILL') return 'killed';
        if (code === 3) return 'refused';
        unexpected += 1;
        problem(`${w.label} exited by itself (code ${code}, signal ${signal}): ${w.stderr.trim().slice(-3000) || '(no stderr)'}`);
        if (unexpected >= 5) throw new Error(`crash ${mode}: ${unexpected} workers died by themselves; stopping (see the problems above)`);
        return 'other';
      });
      endings.set(w, ending);
    }
    return ending;
  };
  const refusal = (w: Child): string => w.lines.find((l) => l.startsWith('refused ')) ?? '(no refusal line)';
  const notes: string[] = [];
  let reported = 0;
  const progress = (): void => {
    if (kills > reported && kills % 25 === 0) {
      reported = kills;
      process.stderr.write(`crash ${mode}${SHARED ? ' shared' : ''}: ${kills}/${KILLS} kills, ${purchases} purchases${SHARED ? `, ${refused} refused` : ''}, ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
    }
  };

  // Purchases while a worker runs.
  const ticker = (async () => {
    const tickRandom = seededRandom(base ^ 0x71c4);
    while (!stopping) {
      await pause(between(tickRandom, BUY_EVERY_MS));
      if (!stopping && DURING_RUNS && [...live].some((w) => w.alive)) await buy();
    }
  })();
  // Closed while purchases are added between runs: no worker starts meanwhile.
  let gate: Promise<void> = Promise.resolve();
  const betweenRuns = async (): Promise<void> => {
    const previous = gate;
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    await previous;
    try {
      // A request the dead worker sent just before the kill may still be in the mock's
      // hands: let it finish, so that a purchase added now is really added between runs.
      await pause(20);
      await admin('GET', '/__mock/faults');
      // Shared: the other worker may be running; then these would be purchases during a run.
      if (!DURING_RUNS && [...live].some((w) => w.alive)) return;
      const n = between(buyRandom, [0, 2]);
      for (let i = 0; i < n; i++) await buy();
    } finally {
      open();
    }
  };

  if (!SHARED) {
    let manualUnlocks = 0;
    while (kills < KILLS) {
      if (run > 0) await betweenRuns();
      const w = spawnWorker(false);
      if (killRandom() < P_EARLY_KILL) {
        void started(w);
        await Promise.race([pause(between(killRandom, [0, 100])), w.closed]);
      } else {
        const delay = between(killRandom, KILL_DELAY_MS);
        if ((await started(w)) === 'ready') await Promise.race([pause(delay), w.closed]);
      }
      kill(w);
      const how = await ended(w);
      if (how === 'killed') {
        kills += 1;
        manualUnlocks = 0;
        progress();
      } else if (how === 'refused') {
        // One process at a time here: a refusal means the lock a SIGKILLed worker left was
        // not recovered. Do what the message tells an operator to do, a few times in a row.
        problem(`${w.label}: the journal refused a lone worker after a kill (the dead worker's lock was not recovered): ${refusal(w)}`);
        manualUnlocks += 1;
        if (manualUnlocks > 3) throw new Error(`crash ${mode}: the journal keeps refusing; stopping`);
        rmSync(`${paths.journalPath}.lock`, { force: true });
      }
    }
  } else {
    // Two slots on one journal: the lock holder delivers, the other is refused and retries.
    let holder: Child | undefined;
    let noHolderSince = performance.now();
    let violations = 0;
    let unnamed = 0;
    let lastRefusal = '';
    const slot = async (index: number): Promise<void> => {
      const slotRandom = seededRandom(base ^ (0x51a7 + index));
      let wasKilled = false;
      while (!stopping) {
        if (wasKilled) await betweenRuns();
        await gate;
        if (stopping) break;
        const w = spawnWorker(false);
        const line = await started(w);
        if (line === 'ready' && !stopping) {
          if (holder !== undefined && holder.alive) {
            violations += 1;
            problem(`${w.label} took the journal's lock while ${holder.label} (pid ${holder.pid}) held it and was alive`);
          }
          holder = w;
        }
        const how = await ended(w);
        if (holder === w) {
          holder = undefined;
          noHolderSince = performance.now();
        }
        wasKilled = how === 'killed';
        if (how === 'refused') {
          refused += 1;
          lastRefusal = refusal(w);
          if (!/ in use by process \d+/.test(lastRefusal)) {
            unnamed += 1;
            if (unnamed === 1) notes.push(`refused without naming the holder: ${lastRefusal}`);
          }
          await pause(between(slotRandom, [100, 400]));
        }
      }
    };
    const slots = [slot(0), slot(1)];
    while (kills < KILLS) {
      if (killRandom() < P_EARLY_KILL) {
        // Anyone alive, right now: a worker starting, taking the lock, being refused.
        await pause(between(killRandom, [0, 100]));
        const candidates = [...live].filter((w) => w.alive);
        if (candidates.length === 0) continue;
        const victim = pick(killRandom, candidates);
        kill(victim);
        if ((await ended(victim)) === 'killed') kills += 1;
      } else {
        let unlocks = 0;
        while (holder === undefined || !holder.alive) {
          await pause(5);
          if (performance.now() - noHolderSince > 15_000) {
            // Both slots keep being refused with nobody holding the lock: a lock left behind
            // that is never taken over. Do what the message tells an operator to do.
            problem(`no worker could take the journal's lock for 15 s (the lock of a killed worker was not recovered); last refusal: ${lastRefusal}`);
            if (++unlocks > 3) throw new Error(`crash ${mode}: the journal keeps refusing; stopping`);
            rmSync(`${paths.journalPath}.lock`, { force: true });
            noHolderSince = performance.now();
          }
        }
        const victim = holder;
        await Promise.race([pause(between(killRandom, KILL_DELAY_MS)), victim.closed]);
        kill(victim);
        if ((await ended(victim)) === 'killed') kills += 1;
      }
      progress();
    }
    stopping = true;
    const allSlots = Promise.all(slots);
    let done = false;
    void allSlots.then(() => (done = true));
    while (!done) {
      for (const w of live) kill(w);
      await Promise.race([allSlots, pause(50)]);
    }
    if (refused === 0) problem('no worker was ever refused: two processes on one journal file were never told apart');
    if (violations > 0) problem(`${violations} times two workers held the journal's lock at once`);
    if (unnamed > 0) notes.push(`${unnamed} of ${refused} refusals did not name the holder's pid (the other worker was creating the lock file: it exists, still empty)`);
  }
  stopping = true;
  await ticker;
  for (const child of spares.splice(0)) kill(child);

  // The drain: no kills, no faults.
  const faults = await admin<Array<{ fired: number }>>('GET', '/__mock/faults');
  const dropsFired = faults.reduce((sum, f) => sum + f.fired, 0);
  await admin('POST', '/__mock/faults/clear');
  const drainer = spawnWorker(true); // no spare left: a cold start, timed below
  const coldStart = await started(drainer).then(() => startupMs.pop());
  const drained = await waitForLine(drainer, (l) => l.startsWith('drained ') || l.startsWith('refused '), 600_000);
  const drainExit = await drainer.closed;
  if (drained === undefined || !drained.startsWith('drained ') || drainExit.code !== 0) {
    problem(`the drain failed (exit ${drainExit.code}, ${drained ?? 'no line'}): ${drainer.stderr.trim().slice(-3000)}`);
  }

  // Counting, from the mock's rows and the inventory file.
  const rows = await admin<PurchaseRowLite[]>('GET', `/__mock/purchases?apiKey=${API_KEY}`);
  mock.proc.kill('SIGTERM');
  await Promise.race([mock.closed, pause(5_000)]);
  kill(mock);

  const readLines = <T>(path: string): T[] =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as T);
  const inventory = readLines<InventoryLine>(paths.inventoryPath);
  const windows = readLines<UnverifiedLine>(paths.unverifiedPath);
  const workerLog = readFileSync(paths.logPath, 'utf8');

  const paid = new Map<string, number>();
  let paidTotal = 0;
  let undelivered = 0;
  for (const row of rows) {
    if (row.paymentstatus !== 'Paid') continue;
    paid.set(row.username, (paid.get(row.username) ?? 0) + row.givequantity);
    paidTotal += row.givequantity;
    if (row.deliverystatus !== 'Delivered') undelivered += 1;
  }
  if (undelivered > 0) problem(`${undelivered} paid rows still undelivered on the mock after the drain`);

  const granted = new Map<string, number>();
  const ids = new Map<string, InventoryLine>();
  let grantedTotal = 0;
  let dupLineUnits = 0;
  for (const line of inventory) {
    if (ids.has(line.deliveryId)) {
      dupLineUnits += line.units; // the game's dedupe failed: applied twice
      problem(`deliveryId ${line.deliveryId} applied twice (runs ${ids.get(line.deliveryId)?.run} and ${line.run})`);
      continue;
    }
    ids.set(line.deliveryId, line);
    granted.set(line.player, (granted.get(line.player) ?? 0) + line.units);
    grantedTotal += line.units;
  }

  // Exactly-once ids name the invoice: each must be a delivered row of that player and size.
  const byInvoice = new Map(rows.map((r) => [String(r.invoice), r]));
  for (const line of ids.values()) {
    if (!line.deliveryId.startsWith('invoice:')) continue;
    const row = byInvoice.get(line.deliveryId.slice('invoice:'.length));
    if (row === undefined || row.username !== line.player || row.givequantity !== line.units || row.deliverystatus !== 'Delivered') {
      problem(`granted ${line.deliveryId} (${line.player}, ${line.units} units) does not match the mock's row ${JSON.stringify(row)}`);
    }
  }

  const windowsOf = new Map<string, UnverifiedLine[]>();
  for (const w of windows) windowsOf.set(w.playerName, [...(windowsOf.get(w.playerName) ?? []), w]);

  let lost = 0;
  let silent = 0;
  let duplicated = dupLineUnits;
  let uncovered = 0;
  const lossDetails: string[] = [];
  for (const player of new Set([...paid.keys(), ...granted.keys()])) {
    const p = paid.get(player) ?? 0;
    const g = granted.get(player) ?? 0;
    if (g > p) duplicated += g - p;
    if (p <= g) continue;
    lost += p - g;
    const own = windowsOf.get(player) ?? [];
    if (own.length === 0) silent += p - g;
    // Stricter: the lost units must fit in the rows delivered inside the player's windows.
    const coverable = rows
      .filter((r) => r.username === player && r.paymentstatus === 'Paid' && r.delivered !== null)
      .filter((r) => {
        const at = Date.parse(r.delivered as string);
        return own.some((w) => at >= w.from - 1_000 && at <= w.to + WINDOW_SLACK_MS);
      })
      .reduce((sum, r) => sum + r.givequantity, 0);
    const outside = Math.max(0, p - g - coverable);
    uncovered += outside;
    lossDetails.push(`${player}: paid ${p} granted ${g} lost ${p - g} windows ${own.length}${outside > 0 ? ` OUTSIDE-WINDOWS ${outside}` : ''}`);
  }
  if (uncovered > 0) problem(`${uncovered} lost units lie outside every unverified window of their player: ${lossDetails.filter((d) => d.includes('OUTSIDE')).join('; ')}`);
  if (silent > 0) problem(`silent losses: ${lossDetails.filter((d) => d.includes('windows 0')).join('; ')}`);

  const count = (pattern: RegExp): number => workerLog.match(pattern)?.length ?? 0;
  const sorted = [...startupMs].sort((a, b) => a - b);
  const pct = (q: number): string => (sorted.length === 0 ? '-' : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number).toFixed(0));
  const seconds = (performance.now() - startedAt) / 1000;
  process.stderr.write(
    `crash ${mode}${SHARED ? ' shared' : ''}: ${seconds.toFixed(1)} s, ${run} worker runs, startup to ready p50 ${pct(0.5)} ms p95 ${pct(0.95)} ms, cold start to ready ${coldStart?.toFixed(0) ?? '-'} ms; ` +
      `claim answers dropped ${dropsFired}, grants failed ${count(/ grant-failed /g)}, regrants skipped ${count(/ regrant /g)}, ` +
      `outcome unknown ${count(/ OUTCOME_UNKNOWN /g)}, journal errors ${count(/journalError/g)}, lost outside windows ${uncovered}\n`,
  );
  for (const note of notes) process.stderr.write(`crash ${mode}: NOTE ${note}\n`);
  if (lossDetails.length > 0) process.stderr.write(`crash ${mode}: losses by player: ${lossDetails.slice(0, 8).join('; ')}${lossDetails.length > 8 ? `; … ${lossDetails.length - 8} more` : ''}\n`);
  return { mode, kills, purchases, paid: paidTotal, granted: grantedTotal, lost, silent, duplicated, unverified: windows.length, refused, problems, seconds };
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const startedAt = performance.now();
  process.stderr.write(
    `crash: kills=${KILLS} modes=${MODES.join(',')} seed=${SEED} purchases-during-runs=${DURING_RUNS} processes=${PROCESSES}${SHARED ? ' shared' : ''} players=${PLAYERS} lanes=${LANES}${options.keep ? ` dir=${root}` : ''}\n`,
  );
  const bundles = await bundle();
  const results: Result[] = [];
  for (const [i, mode] of MODES.entries()) results.push(await campaign(mode, bundles, i));
  let failed = false;
  for (const r of results) {
    const head = SHARED ? `crash ${r.mode} processes=2 shared: refused=${r.refused} ` : `crash ${r.mode}: `;
    console.log(`${head}kills=${r.kills} purchases=${r.purchases} paid_units=${r.paid} granted_units=${r.granted} lost=${r.lost} silent=${r.silent} duplicated=${r.duplicated} unverified=${r.unverified}`);
    const reasons = [...r.problems];
    if (r.mode === 'exactlyOnce' && !DURING_RUNS && r.lost > 0) reasons.push(`exactly-once lost ${r.lost} units with no purchase made during a run`);
    if (reasons.length > 0) {
      failed = true;
      process.stderr.write(`crash ${r.mode}: FAILED\n${reasons.map((p) => `  - ${p.slice(0, 2000)}`).join('\n')}\n`);
    }
  }
  process.stderr.write(`crash: ${((performance.now() - startedAt) / 1000).toFixed(1)} s in all${options.keep ? `; files kept in ${root}` : ''}\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    cleanup();
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`crash: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    cleanup();
    process.exit(1);
  },
);
