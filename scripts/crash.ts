/**
 * Crash campaign: real processes, real SIGKILLs. Proves that no paid purchase is lost
 * silently and none is granted twice when the bridge process dies at random moments.
 *
 *   npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed 1]
 *                    [--purchases-during-runs true|false] [--processes 2 --shared]
 *                    [--nodes 3 --journal postgres|mysql]
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
 * Scenarios (#21 points 1–5; scripts/crash/scenario.ts): `--scenario mix` (the default for
 * the FileJournal campaigns) gives each worker run one of `plain`, `two-clients` (two
 * clients on one journal in one worker, delivering for the same players at once; and the
 * journal opened under a second name must be refused), `torn-append` (the worker writes
 * part of an append of several entries and SIGKILLs itself) and `no-raw-rows` (claim
 * answers without rawTransactions, the worker SIGKILLed between a claim and the
 * journaling of its lines); `--scenario <name>` plays one in every run and names it in the
 * result line (`crash <mode> scenario=<name>: …`). Database nodes play `plain`. A worker
 * that kills itself prints `selfkill <why>` first: it counts as a kill.
 *
 * With `--processes 2 --shared`, two workers run at once on ONE journal file: whichever
 * holds the journal's lock delivers, the other must be refused (JournalError) and retries
 * a little later; kills hit the holder (and, 10% of the time, whoever is alive).
 *
 * Prints one line per mode:
 *   crash <mode>: kills=… purchases=… paid_units=… granted_units=… lost=… silent=… duplicated=… unverified=…
 *   crash <mode> processes=2 shared: refused=… kills=… …
 *   crash <mode> nodes=3 journal=postgres: kills=… …       (--nodes / --journal, below)
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
 * With `--journal postgres|mysql` (and `--nodes N`, 3 for the full campaign), N nodes
 * deliver at once for the same players over ONE journal table in a database, each node a
 * worker process with its own pool and its own `PostgresJournal` / `MySqlJournal` object:
 * - the database is the one of TEAMGAMES_TEST_POSTGRES_URL / TEAMGAMES_TEST_MYSQL_URL, or
 *   a throwaway server started here (scripts/test-databases.ts); each mode gets fresh
 *   tables (journal, dedupe, inventory) of its own, dropped at the end unless --keep;
 * - the game's inventory is a table shared by the nodes; each grant is one transaction:
 *   `recordDelivery` (the shared dedupe) and the inventory row (see crash-worker.ts), and
 *   the counting reads that table (a deliveryId in two rows is a duplicate);
 * - each node is SIGKILLed at random moments (10% of the time 0–100 ms into its run,
 *   otherwise 200–3000 ms after it is ready) and restarted at once, the others delivering
 *   on; every few kills an outage kills every node at once, and all restart after it;
 * - purchases arrive between runs (during an outage, when no node runs) and, unless
 *   --purchases-during-runs false, while nodes run (then also as a node restarts);
 * - the player locks: before each kill the orchestrator asks the server which player
 *   locks the victim's connections hold (each node prints the id of every connection its
 *   pool opens), and after it checks that those connections, and so the locks, left the
 *   server (a dead node's lock must go with its connection: a problem past
 *   lockTimeoutMs + 5 s); the nodes' lock timeouts are counted from their logs;
 * - the final drain is one node, no kills, no faults, until the journal table is empty and
 *   the mock lists nothing paid and undelivered;
 * - besides the checks above, it fails when the dedupe table and the inventory disagree
 *   (they are written in one transaction), or a killed node's connection stays.
 * Several nodes move the mock's one clock; they share what they know of it, as machines
 * share the wall clock (see crash-worker.ts), and a window's end is given the slack of
 * every lane of every node (the advances that can be in flight).
 *
 * scripts/crash-lock.ts aims every kill at the journal's lock being taken (the moment the
 * main campaign only hits now and then): `npx tsx scripts/crash-lock.ts --kills 300`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import type { DeliveryMode } from '../src/index.js';
import { seededRandom } from '../src/mock/faults.js';
import type { InventoryLine, PurchaseRowLite, UnverifiedLine, WorkerConfig } from './crash-worker.js';
import { SCENARIOS, killDelayFor, scenarioFor, type Scenario, type ScenarioChoice } from './crash/scenario.js';
import { NotInstalledError, useDatabase, type DatabaseServer } from './test-databases.js';

// ---------------------------------------------------------------- options

const USAGE =
  'usage: npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed <n>] [--purchases-during-runs true|false]\n' +
  '                        [--processes 1|2] [--shared] [--nodes 1..8] [--journal file|postgres|mysql]\n' +
  '                        [--scenario mix|plain|two-clients|torn-append|no-raw-rows] [--players 20] [--lanes 2] [--keep]';

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
      nodes: { type: 'string', default: '1' },
      journal: { type: 'string', default: 'file' },
      players: { type: 'string', default: '20' },
      lanes: { type: 'string', default: '2' },
      scenario: { type: 'string' },
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
const NODES = int('nodes', options.nodes, 1, 8);
if (!['file', 'postgres', 'mysql'].includes(options.journal)) usage(`--journal must be file, postgres or mysql, got "${options.journal}"`);
const JOURNAL = options.journal as 'file' | 'postgres' | 'mysql';
/** Nodes on a database journal (the `--nodes` campaign). */
const CLUSTER = JOURNAL !== 'file';
if (NODES > 1 && !CLUSTER) usage('--nodes above 1 needs a database journal: --journal postgres or --journal mysql (one FileJournal file serves one process)');
if (CLUSTER && (SHARED || PROCESSES !== 1)) usage('--processes 2 --shared is the FileJournal campaign; with a database journal use --nodes');
const scenarioNames: readonly string[] = ['mix', ...SCENARIOS];
if (options.scenario !== undefined && !scenarioNames.includes(options.scenario)) usage(`--scenario must be one of ${scenarioNames.join(', ')}, got "${options.scenario}"`);
if (CLUSTER && options.scenario !== undefined && options.scenario !== 'plain') usage('--scenario is for the FileJournal campaigns; database nodes play plain');
/** The scenario of each worker run (scripts/crash/scenario.ts): one, or `mix` (the default) picking one per run. */
const SCENARIO = (options.scenario ?? (CLUSTER ? 'plain' : 'mix')) as ScenarioChoice;
const MODES: DeliveryMode[] =
  options.mode === 'all' ? ['exactlyOnce', 'fast'] : options.mode === 'exactlyOnce' || options.mode === 'fast' ? [options.mode] : usage(`--mode must be exactlyOnce, fast or all, got "${options.mode}"`);

// How often each trouble strikes.
const P_DROP_AFTER = 0.05; // claims processed whose answer is lost
const P_GRANT_FAILS = 0.03;
// Database nodes: a third of the failures come after the COMMIT (a regrant the shared dedupe
// must skip); more of them, for the purchases are few next to the kills.
const P_GRANT_FAILS_DB = 0.1;
const P_EARLY_KILL = 0.1; // a kill 0–100 ms after spawn, before or while the worker starts
const KILL_DELAY_MS = [50, 1500] as const; // after the worker is ready
// Database nodes: each of several nodes lives longer (a restarting node resumes what the
// others left, under their locks), so that they, not the drain, deliver most purchases.
const KILL_DELAY_MS_DB = [200, 3000] as const;
const BUY_EVERY_MS = [30, 300] as const; // purchases while a worker runs
// The client clock may lag the mock's by the advances in flight: its own lanes', and with
// several nodes, the other nodes' (their clocks are shared: see crash-worker.ts).
const WINDOW_SLACK_MS = NODES * LANES * 10_000 + 1_000;
// Database journals: how long a node waits for a player's lock (MySQL counts whole seconds).
const LOCK_TIMEOUT_MS = 10_000;
const OUTAGE_EVERY_KILLS = [2, 6] as const; // kills between two outages (every node killed at once)

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

function start(file: string, args: readonly string[], label: string, env?: Record<string, string>): Child {
  const proc = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
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
    // The database drivers are imported only by database nodes: chunks of their own then,
    // and left out of the FileJournal campaign's bundle (pg-native: pg's optional binding).
    splitting: CLUSTER,
    chunkNames: 'chunks/[name]-[hash]',
    external: CLUSTER ? ['pg-native'] : ['pg-native', 'pg', 'mysql2', 'mysql2/promise'],
    // Some dependencies call require(); an ESM bundle has none of its own.
    banner: { js: "import { createRequire as __crashRequire } from 'node:module'; const require = __crashRequire(import.meta.url);" },
  });
  process.stderr.write(`crash: bundled the worker and the mock in ${((performance.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return { worker: join(bundleDir, 'crash-worker.mjs'), mock: join(bundleDir, 'crash-mock.mjs') };
}

// ---------------------------------------------------------------- the database (--journal postgres|mysql)

/** The tables of one mode's run: fresh for each. */
interface Tables {
  table: string;
  grantedTable: string;
  inventoryTable: string;
}

/** What the orchestrator asks the database server: setup, the counting, and who holds the player locks. */
interface AdminDb {
  url: string;
  /** Drops (if left by an earlier run) and creates the journal's tables (the exported DDL) and the game's inventory table. */
  create(tables: Tables): Promise<void>;
  drop(tables: Tables): Promise<void>;
  inventory(tables: Tables): Promise<InventoryLine[]>;
  /** The deliveryIds in the dedupe table. */
  grantedIds(tables: Tables): Promise<string[]>;
  journalRows(tables: Tables): Promise<number>;
  /** Which connection holds each player's lock (players whose lock is free are left out). */
  lockHolders(table: string, players: readonly string[]): Promise<Array<{ player: string; conn: number }>>;
  /** Connections waiting for a player's lock (any player, any table). */
  lockWaiters(): Promise<number>;
  /** Which of these connections are still on the server. */
  present(conns: readonly number[]): Promise<number[]>;
  end(): Promise<void>;
}

async function postgresAdmin(url: string): Promise<AdminDb> {
  const { default: pg } = await import('pg');
  const { postgresSchema } = await import('../src/postgres/index.js');
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  pool.on('error', () => undefined);
  const q = async (sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> => (await pool.query(sql, values)).rows as Array<Record<string, unknown>>;
  const drop = async (t: Tables): Promise<void> => void (await q(`DROP TABLE IF EXISTS ${t.table}, ${t.grantedTable}, ${t.inventoryTable}`));
  return {
    url,
    drop,
    async create(t) {
      await drop(t);
      await q(postgresSchema({ table: t.table, grantedTable: t.grantedTable }));
      // No unique key on delivery_id: a dedupe that fails shows as two rows.
      await q(`CREATE TABLE ${t.inventoryTable} (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, delivery_id TEXT NOT NULL, player TEXT NOT NULL, product TEXT NOT NULL, units INTEGER NOT NULL, run INTEGER NOT NULL, node INTEGER NOT NULL, pid INTEGER NOT NULL)`);
    },
    inventory: async (t) =>
      (await q(INVENTORY_SELECT(t))).map((r) => inventoryRow(r, String)),
    grantedIds: async (t) => (await q(`SELECT delivery_id FROM ${t.grantedTable}`)).map((r) => String(r['delivery_id'])),
    journalRows: async (t) => Number((await q(`SELECT count(*) AS n FROM ${t.table}`))[0]?.['n']),
    // The journal's key is hashtextextended('teamgames-sdk:<table>:<player>', 0); pg_locks
    // shows a bigint advisory key as classid (high half) and objid (low half).
    lockHolders: async (table, players) =>
      (
        await q(
          `SELECT k.p AS player, l.pid AS conn FROM pg_locks l
           JOIN (SELECT p, hashtextextended('teamgames-sdk:' || $1 || ':' || p, 0) AS h FROM unnest($2::text[]) AS p) k
             ON l.classid::bigint = ((k.h >> 32) & 4294967295) AND l.objid::bigint = (k.h & 4294967295)
           WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
             AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [table, players],
        )
      ).map((r) => ({ player: String(r['player']), conn: Number(r['conn']) })),
    lockWaiters: async () => Number((await q(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`))[0]?.['n']),
    present: async (conns) => (await q('SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])', [conns])).map((r) => Number(r['pid'])),
    end: () => pool.end(),
  };
}

/** The inventory as the nodes wrote it, in order (both engines). */
const INVENTORY_SELECT = (t: Tables): string => `SELECT delivery_id, player, product, units, run, node, pid FROM ${t.inventoryTable} ORDER BY seq`;

/** One inventory row; `text` reads the engine's text columns (MariaDB's are binary). */
function inventoryRow(r: Record<string, unknown>, text: (v: unknown) => string) {
  return {
    deliveryId: text(r['delivery_id']),
    player: text(r['player']),
    product: text(r['product']),
    units: Number(r['units']),
    run: Number(r['run']),
    node: Number(r['node']),
    pid: Number(r['pid']),
  };
}

async function mysqlAdmin(url: string): Promise<AdminDb> {
  const { default: mysql } = await import('mysql2/promise');
  const { mysqlSchema } = await import('../src/mysql/index.js');
  const pool = mysql.createPool({ uri: url, connectionLimit: 3, multipleStatements: true });
  const q = async (sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>> => (await pool.query(sql, values))[0] as Array<Record<string, unknown>>;
  const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  const drop = async (t: Tables): Promise<void> => void (await q(`DROP TABLE IF EXISTS ${t.table}, ${t.grantedTable}, ${t.inventoryTable}`));
  return {
    url,
    drop,
    async create(t) {
      await drop(t);
      await q(mysqlSchema({ table: t.table, grantedTable: t.grantedTable }));
      // No unique key on delivery_id: a dedupe that fails shows as two rows.
      await q(
        `CREATE TABLE ${t.inventoryTable} (seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, delivery_id VARBINARY(512) NOT NULL, player VARBINARY(320) NOT NULL, product VARBINARY(200) NOT NULL, units INT NOT NULL, run INT NOT NULL, node INT NOT NULL, pid INT NOT NULL) ENGINE=InnoDB`,
      );
    },
    inventory: async (t) =>
      (await q(INVENTORY_SELECT(t))).map((r) => inventoryRow(r, text)),
    grantedIds: async (t) => (await q(`SELECT delivery_id FROM ${t.grantedTable}`)).map((r) => text(r['delivery_id'])),
    journalRows: async (t) => Number((await q(`SELECT count(*) AS n FROM ${t.table}`))[0]?.['n']),
    // The journal's GET_LOCK name: 'teamgames:' and 54 hex digits of SHA2('<database>:<table>:<player>').
    lockHolders: async (table, players) =>
      (
        await q(
          `SELECT p AS player, IS_USED_LOCK(CONCAT('teamgames:', LEFT(SHA2(CONCAT_WS(':', DATABASE(), ?, p), 256), 54))) AS conn
           FROM (${players.map(() => 'SELECT ? AS p').join(' UNION ALL ')}) AS players`,
          [table, ...players],
        )
      )
        .filter((r) => r['conn'] !== null)
        .map((r) => ({ player: text(r['player']), conn: Number(r['conn']) })),
    lockWaiters: async () => Number((await q(`SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE STATE = 'User lock'`))[0]?.['n']),
    present: async (conns) => (conns.length === 0 ? [] : (await q('SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (?)', [conns])).map((r) => Number(r['ID']))),
    end: () => pool.end(),
  };
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

async function campaign(mode: DeliveryMode, bundles: { worker: string; mock: string }, modeIndex: number, db?: { admin: AdminDb; tables: Tables }): Promise<Result> {
  const startedAt = performance.now();
  const dir = join(root, `${mode}${SHARED ? '-shared' : ''}${CLUSTER ? `-${JOURNAL}` : ''}`);
  mkdirSync(dir);
  const seedPath = join(dir, 'seed.json');
  writeFileSync(seedPath, JSON.stringify({ servers: [{ apiKey: API_KEY, name: 'Crash campaign store', products: PRODUCTS }] }));
  const paths = {
    // The default journal's name: a two-clients run may use the default journal (cwd = dir).
    journalPath: join(dir, '.teamgames-journal.jsonl'),
    inventoryPath: join(dir, 'inventory.jsonl'),
    unverifiedPath: join(dir, 'unverified.jsonl'),
    logPath: join(dir, 'worker.log'),
  };
  writeFileSync(paths.inventoryPath, '');
  writeFileSync(paths.unverifiedPath, '');
  // Database nodes: a log and an unverified-windows file per node.
  const nodePaths = (node: number): { unverifiedPath: string; logPath: string } =>
    CLUSTER ? { unverifiedPath: join(dir, `unverified-n${node}.jsonl`), logPath: join(dir, `worker-n${node}.log`) } : { unverifiedPath: paths.unverifiedPath, logPath: paths.logPath };
  if (CLUSTER) for (let node = 0; node < NODES; node++) writeFileSync(nodePaths(node).unverifiedPath, '');
  // The mock clock's offset from real time, as the nodes know it (see crash-worker.ts): 0 at first, the mock follows real time.
  const clockPath = join(dir, 'clock.bin');
  if (CLUSTER) writeFileSync(clockPath, Buffer.alloc(8));
  if (CLUSTER && db === undefined) throw new Error('crash: a database journal without a database');
  if (db !== undefined) await db.admin.create(db.tables);
  const tag = CLUSTER ? ` nodes=${NODES} journal=${JOURNAL}` : SHARED ? ' shared' : '';
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
  // A database node loads its driver while it waits.
  const workerEnv = CLUSTER ? { CRASH_JOURNAL: JOURNAL } : undefined;
  const spare = (): Child => {
    const child = start(bundles.worker, [], `${mode} spare worker`, workerEnv);
    spares.push(child);
    return child;
  };
  for (let i = 0; i < (CLUSTER ? NODES : PROCESSES); i++) spare();
  const scenarioRandom = seededRandom(base ^ 0x5ce7);
  const scenarioOf = new WeakMap<Child, Scenario>();
  const scenarioRuns = new Map<Scenario, number>();
  const spawnWorker = (drain: boolean, node = 0): Child => {
    const scenario = drain ? { scenario: 'plain' as const } : scenarioFor(SCENARIO, scenarioRandom, !SHARED);
    if (!drain) scenarioRuns.set(scenario.scenario, (scenarioRuns.get(scenario.scenario) ?? 0) + 1);
    const cfg: WorkerConfig = {
      ...scenario,
      url,
      apiKey: API_KEY,
      mode,
      journal: JOURNAL,
      ...paths,
      ...nodePaths(node),
      ...(db === undefined
        ? {}
        : {
            clockPath,
            db: {
              url: db.admin.url,
              ...db.tables,
              lockTimeoutMs: LOCK_TIMEOUT_MS,
              // The lanes' locks, a game transaction under each, and one more.
              poolSize: 2 * LANES + 1,
            },
          }),
      players: PLAYER_NAMES,
      seed: (base + Math.imul(run, 0x85ebca6b)) >>> 0,
      run,
      grantFailRate: CLUSTER ? P_GRANT_FAILS_DB : P_GRANT_FAILS,
      lanes: LANES,
      drain,
      node,
    };
    let child = spares.shift();
    while (child !== undefined && !child.alive) child = spares.shift();
    child ??= start(bundles.worker, [], '', workerEnv);
    // The next spare starts once this worker is up: two node startups at once on two
    // cores would slow this worker's restart, the moment under test.
    if (!drain) void waitForLine(child, (l) => l === 'ready' || l.startsWith('refused '), 60_000).then(() => !stopping && spare(), () => !stopping && spare());
    child.label = `${mode} worker r${run}${CLUSTER ? ` (node ${node})` : ''}${scenario.scenario === 'plain' ? '' : ` (${scenario.scenario})`}`;
    scenarioOf.set(child, scenario.scenario);
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
  let selfKills = 0;
  const endings = new WeakMap<Child, Promise<'killed' | 'refused' | 'other'>>();
  const ended = (w: Child): Promise<'killed' | 'refused' | 'other'> => {
    let ending = endings.get(w);
    if (ending === undefined) {
      ending = w.closed.then(({ code, signal }) => {
        if (w.killedByUs && signal === 'SIGKILL') return 'killed';
        // A scenario's worker that killed itself at its moment (scripts/crash/worker/sabotage.ts).
        if (signal === 'SIGKILL' && w.lines.some((l) => l.startsWith('selfkill '))) {
          selfKills += 1;
          return 'killed';
        }
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
      process.stderr.write(`crash ${mode}${tag}: ${kills}/${KILLS} kills, ${purchases} purchases${SHARED ? `, ${refused} refused` : ''}, ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`);
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

  // Database nodes: what the kills found (see the header).
  const cluster = { outages: 0, outageKills: 0, earlyKills: 0, killsHoldingLocks: 0, locksHeldAtKills: 0, killsWithWaiters: 0, connsWatched: 0, slowestGoneMs: 0 };
  const goneChecks: Array<Promise<void>> = [];

  if (CLUSTER) {
    const dbAdmin = (db as { admin: AdminDb; tables: Tables }).admin;
    const tables = (db as { admin: AdminDb; tables: Tables }).tables;
    const connsOf = (w: Child): number[] => w.lines.filter((l) => l.startsWith('conn ')).map((l) => Number(l.slice('conn '.length)));
    /** After a node died: its connections, and with them its player locks, must leave the server. */
    const watchGone = async (w: Child, held: readonly string[]): Promise<void> => {
      await w.closed; // every `conn` line it printed has been read by now
      const conns = connsOf(w);
      if (conns.length === 0) return;
      cluster.connsWatched += conns.length;
      const since = performance.now();
      for (;;) {
        const left = await dbAdmin.present(conns);
        const ms = performance.now() - since;
        if (left.length === 0) {
          cluster.slowestGoneMs = Math.max(cluster.slowestGoneMs, ms);
          return;
        }
        if (ms > LOCK_TIMEOUT_MS + 5_000) {
          problem(`${w.label} was SIGKILLed ${ms.toFixed(0)} ms ago and the server still has its connection(s) ${left.join(', ')}${held.length > 0 ? ` (which held the lock of ${held.map((p) => JSON.stringify(p)).join(', ')} at the kill)` : ''}`);
          return;
        }
        await pause(20);
      }
    };
    /** SIGKILL a node, after asking the server which player locks its connections hold. */
    const killNode = async (w: Child): Promise<void> => {
      if (!w.alive) return;
      const conns = connsOf(w);
      let held: string[] = [];
      if (conns.length > 0) {
        try {
          const [holders, waiters] = await Promise.all([dbAdmin.lockHolders(tables.table, PLAYER_NAMES), dbAdmin.lockWaiters()]);
          held = holders.filter((h) => conns.includes(h.conn)).map((h) => h.player);
          if (waiters > 0) cluster.killsWithWaiters += 1;
        } catch (error) {
          notes.push(`could not read the lock holders before a kill: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      if (!w.alive) return;
      kill(w);
      if (held.length > 0) {
        cluster.killsHoldingLocks += 1;
        cluster.locksHeldAtKills += held.length;
      }
      goneChecks.push(watchGone(w, held));
    };

    // Closed during an outage: no node starts, and between runs means no node runs.
    let gateClosed = false;
    let gate: Promise<void> = Promise.resolve();
    const parked = Array.from({ length: NODES }, () => false);
    const node = async (index: number): Promise<void> => {
      const nodeRandom = seededRandom(base ^ (0x40de + index));
      while (!stopping && kills < KILLS) {
        parked[index] = true;
        while (gateClosed) await gate;
        parked[index] = false;
        if (stopping || kills >= KILLS) break;
        const w = spawnWorker(false, index); // synchronous after the gate's check: an outage cannot slip in between
        if (nodeRandom() < P_EARLY_KILL) {
          // While it starts: connects, creates the tables, resumes what any node left.
          cluster.earlyKills += 1;
          void started(w);
          await Promise.race([pause(between(nodeRandom, [0, 100])), w.closed]);
        } else if ((await started(w)) === 'ready') {
          await Promise.race([pause(between(nodeRandom, KILL_DELAY_MS_DB)), w.closed]);
        }
        await killNode(w);
        const how = await ended(w);
        if (how === 'killed') {
          // The kills that stop the campaign are not counted: not at a moment of their own.
          if (!stopping) kills += 1;
          progress();
        } else if (how === 'refused') {
          problem(`${w.label} exited with the refusal code, which a database journal never gives: ${refusal(w)}`);
        }
        // Restarted at once; with purchases during runs, some arrive first (the other nodes run).
        if (DURING_RUNS && !stopping) {
          const n = between(buyRandom, [0, 2]);
          for (let i = 0; i < n; i++) await buy();
        }
      }
      parked[index] = true;
    };
    /** Every node killed at once; purchases while none runs; then every node restarts. */
    const outage = async (): Promise<void> => {
      gateClosed = true;
      let open!: () => void;
      gate = new Promise((resolve) => (open = resolve));
      cluster.outages += 1;
      const victims = [...live].filter((w) => w.alive);
      cluster.outageKills += victims.length;
      await Promise.all(victims.map(killNode));
      // Until every node loop waits at the gate with its worker dead.
      while (!parked.every(Boolean) || [...live].some((w) => w.alive)) {
        for (const w of live) if (w.alive) await killNode(w);
        await pause(5);
        if (fatal !== undefined) break;
      }
      try {
        // A request a dead node sent just before the kill may still be in the mock's hands:
        // let it finish, so that these purchases are really added between runs.
        await pause(20);
        await admin('GET', '/__mock/faults');
        // Only here without purchases during runs: more of them then.
        const n = between(buyRandom, DURING_RUNS ? [0, NODES] : [NODES, 4 * NODES]);
        for (let i = 0; i < n; i++) await buy();
      } finally {
        gateClosed = false;
        open();
      }
    };
    // A node loop that throws (a worker silent for 30 s, too many dying by themselves) stops the campaign.
    let fatal: unknown;
    const nodes = Array.from({ length: NODES }, (_, index) =>
      node(index).catch((error: unknown) => {
        fatal ??= error;
        parked[index] = true;
      }),
    );
    let nextOutage = between(killRandom, OUTAGE_EVERY_KILLS);
    while (kills < KILLS) {
      await pause(10);
      if (fatal !== undefined) break;
      if (kills >= nextOutage && kills < KILLS) {
        await outage();
        nextOutage = kills + between(killRandom, OUTAGE_EVERY_KILLS);
      }
    }
    stopping = true;
    const allNodes = Promise.all(nodes);
    let done = false;
    void allNodes.then(() => (done = true));
    while (!done) {
      for (const w of live) kill(w);
      await Promise.race([allNodes, pause(50)]);
    }
    if (fatal !== undefined) throw fatal;
    await Promise.all(goneChecks);
  } else if (!SHARED) {
    let manualUnlocks = 0;
    while (kills < KILLS) {
      if (run > 0) await betweenRuns();
      const w = spawnWorker(false);
      if (killRandom() < P_EARLY_KILL) {
        void started(w);
        await Promise.race([pause(between(killRandom, [0, 100])), w.closed]);
      } else {
        const delay = between(killRandom, killDelayFor(scenarioOf.get(w) ?? 'plain', KILL_DELAY_MS));
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
  const drainRun = run;
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
  const nodeFiles = CLUSTER ? Array.from({ length: NODES }, (_, node) => nodePaths(node)) : [paths];
  const inventory = db === undefined ? readLines<InventoryLine>(paths.inventoryPath) : await db.admin.inventory(db.tables);
  const windows = nodeFiles.flatMap((f) => readLines<UnverifiedLine>(f.unverifiedPath));
  const workerLog = nodeFiles.map((f) => (existsSync(f.logPath) ? readFileSync(f.logPath, 'utf8') : '')).join('');
  if (db !== undefined) {
    // The dedupe table and the inventory are written in one transaction: the same ids.
    const recorded = new Set(await db.admin.grantedIds(db.tables));
    const applied = new Set(inventory.map((l) => l.deliveryId));
    const recordedOnly = [...recorded].filter((id) => !applied.has(id));
    const appliedOnly = [...applied].filter((id) => !recorded.has(id));
    if (recordedOnly.length > 0) problem(`${recordedOnly.length} deliveryIds recorded by recordDelivery without their inventory row (committed apart?): ${recordedOnly.slice(0, 5).join(', ')}`);
    if (appliedOnly.length > 0) problem(`${appliedOnly.length} inventory rows without their recordDelivery record: ${appliedOnly.slice(0, 5).join(', ')}`);
    const left = await db.admin.journalRows(db.tables);
    if (left > 0) problem(`${left} rows left in the journal table after the drain`);
  }

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
      problem(`deliveryId ${line.deliveryId} applied twice (runs ${ids.get(line.deliveryId)?.run} and ${line.run}${line.node === undefined ? '' : `, nodes ${ids.get(line.deliveryId)?.node} and ${line.node}`})`);
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
    `crash ${mode}${tag}: ${seconds.toFixed(1)} s, ${run} worker runs, startup to ready p50 ${pct(0.5)} ms p95 ${pct(0.95)} ms, cold start to ready ${coldStart?.toFixed(0) ?? '-'} ms; ` +
      `claim answers dropped ${dropsFired}, grants failed ${count(/ grant-failed /g)}, regrants skipped ${count(/ regrant /g)}, ` +
      `outcome unknown ${count(/ OUTCOME_UNKNOWN /g)}, journal errors ${count(/journalError/g)}, lost outside windows ${uncovered}\n`,
  );
  if (db !== undefined) {
    const lags = [...workerLog.matchAll(/clock-lag (\d+) ms/g)].map((m) => Number(m[1]));
    const lockTimeouts = count(/event journalError [^\n]*was not free within/g);
    const noConnection = count(/event journalError [^\n]*no connection of the pool was free/g);
    process.stderr.write(
      `crash ${mode}${tag}: tables ${db.tables.table}, ${db.tables.grantedTable}, ${db.tables.inventoryTable}; ${cluster.outages} outages (${cluster.outageKills} nodes killed at once), ${cluster.earlyKills} kills 0–100 ms into a run; ` +
        `${cluster.killsHoldingLocks} kills hit a node holding player locks (${cluster.locksHeldAtKills} locks), ${cluster.killsWithWaiters} while a connection waited for a player lock; ` +
        `${cluster.connsWatched} connections of killed nodes left the server within ${cluster.slowestGoneMs.toFixed(0)} ms at most; ` +
        `${inventory.filter((l) => l.run !== drainRun).length} of ${inventory.length} grants applied by the nodes under kills (the others by the drain); ` +
        `lock timeouts (${LOCK_TIMEOUT_MS} ms) ${lockTimeouts}, pool exhausted ${noConnection}; node clocks lagged the mock's by ${lags.length === 0 ? 0 : Math.max(...lags)} ms at most (window slack ${WINDOW_SLACK_MS} ms)\n`,
    );
  }
  if (!CLUSTER) {
    const runs = SCENARIOS.map((s) => `${s} ${scenarioRuns.get(s) ?? 0}`).join(', ');
    const accepted = count(/ two-names ACCEPTED/g);
    process.stderr.write(
      `crash ${mode}${tag}: scenario runs: ${runs}; self-kills ${selfKills} (torn appends ${count(/ selfkill torn-append/g)}, after a claim answer ${count(/ selfkill no-raw-rows/g)}), ` +
        `claim answers stripped of rawTransactions ${count(/ no-raw-rows: stripped/g)}, journal opened under a second name: refused ${count(/ two-names refused/g)}, accepted ${accepted}\n`,
    );
    if (accepted > 0) problem(`${accepted} times a second FileJournal on a symlink or hard link to the journal this process held was not refused (#21 point 2)`);
  }
  for (const note of notes) process.stderr.write(`crash ${mode}: NOTE ${note}\n`);
  if (lossDetails.length > 0) process.stderr.write(`crash ${mode}: losses by player: ${lossDetails.slice(0, 8).join('; ')}${lossDetails.length > 8 ? `; … ${lossDetails.length - 8} more` : ''}\n`);
  return { mode, kills, purchases, paid: paidTotal, granted: grantedTotal, lost, silent, duplicated, unverified: windows.length, refused, problems, seconds };
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const startedAt = performance.now();
  process.stderr.write(
    `crash: kills=${KILLS} modes=${MODES.join(',')} scenario=${SCENARIO} seed=${SEED} purchases-during-runs=${DURING_RUNS} processes=${PROCESSES}${SHARED ? ' shared' : ''}${CLUSTER ? ` nodes=${NODES} journal=${JOURNAL}` : ''} players=${PLAYERS} lanes=${LANES}${options.keep ? ` dir=${root}` : ''}\n`,
  );
  let server: DatabaseServer | undefined;
  let adminDb: AdminDb | undefined;
  if (CLUSTER) {
    const dbStartedAt = performance.now();
    try {
      server = await useDatabase(JOURNAL);
    } catch (error) {
      if (error instanceof NotInstalledError) {
        process.stderr.write(`crash: ${error.message}\n`);
        return 3;
      }
      throw error;
    }
    adminDb = JOURNAL === 'postgres' ? await postgresAdmin(server.url) : await mysqlAdmin(server.url);
    process.stderr.write(`crash: ${server.started ? 'started a throwaway' : 'using the'} ${JOURNAL} server (${server.url.replace(/:[^:@/]*@/, ':***@')}) in ${((performance.now() - dbStartedAt) / 1000).toFixed(1)} s\n`);
  }
  const bundles = await bundle();
  const results: Result[] = [];
  const suffix = `${process.pid.toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  try {
    for (const [i, mode] of MODES.entries()) {
      if (adminDb === undefined) {
        results.push(await campaign(mode, bundles, i));
        continue;
      }
      // Fresh tables for each mode, dropped after it unless --keep.
      const prefix = `crash_${mode === 'exactlyOnce' ? 'eo' : 'fast'}_${suffix}`;
      const tables: Tables = { table: `${prefix}_journal`, grantedTable: `${prefix}_granted`, inventoryTable: `${prefix}_inventory` };
      try {
        results.push(await campaign(mode, bundles, i, { admin: adminDb, tables }));
      } finally {
        if (!options.keep) await adminDb.drop(tables).catch(() => undefined);
      }
    }
  } finally {
    await adminDb?.end().catch(() => undefined);
    await server?.stop();
  }
  let failed = false;
  for (const r of results) {
    const scenario = SCENARIO === 'mix' || CLUSTER ? '' : ` scenario=${SCENARIO}`;
    const head = CLUSTER ? `crash ${r.mode} nodes=${NODES} journal=${JOURNAL}: ` : SHARED ? `crash ${r.mode}${scenario} processes=2 shared: refused=${r.refused} ` : `crash ${r.mode}${scenario}: `;
    console.log(`${head}kills=${r.kills} purchases=${r.purchases} paid_units=${r.paid} granted_units=${r.granted} lost=${r.lost} silent=${r.silent} duplicated=${r.duplicated} unverified=${r.unverified}`);
    const reasons = [...r.problems];
    if (r.mode === 'exactlyOnce' && !DURING_RUNS && r.lost > 0) reasons.push(`exactly-once lost ${r.lost} units with no purchase made during a run`);
    if (r.silent > 0 && !reasons.some((p) => p.startsWith('silent'))) reasons.push(`silent=${r.silent}`);
    if (r.duplicated > 0) reasons.push(`duplicated=${r.duplicated}: units granted beyond what was paid`);
    if (reasons.length > 0) {
      failed = true;
      process.stderr.write(`crash ${r.mode}: FAILED\n${reasons.map((p) => `  - ${p.slice(0, 2000)}`).join('\n')}\n`);
    }
  }
  process.stderr.write(`crash: ${((performance.now() - startedAt) / 1000).toFixed(1)} s in all${options.keep ? `; files kept in ${root}${CLUSTER && server?.started ? ' (the throwaway server and its tables are gone; point TEAMGAMES_TEST_*_URL at a server of your own to keep them)' : ''}` : ''}\n`);
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
