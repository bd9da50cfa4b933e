/**
 * The worker of the crash campaign (`scripts/crash.ts`): a game bridge that delivers
 * purchases with `client.deliver` over a {@link FileJournal} (or, as one node of several,
 * over a `PostgresJournal` / `MySqlJournal` table shared with the other nodes), against
 * the mock over HTTP, until the orchestrator SIGKILLs it. Not meant to be run by hand.
 *
 *   node crash-worker.mjs ['<WorkerConfig as JSON>']   (or the JSON as the first line on stdin)
 *
 * Start: takes the journal's lock (first use of the journal), loads the game's inventory,
 * syncs its clock with the mock's, prints `ready`, runs `resumeDeliveries`, then runs
 * `deliver` in `lanes` concurrent loops over players that have something pending (or
 * random ones). In drain mode: resume + deliver for every player until the journal is
 * empty and the mock lists nothing paid and undelivered, then prints `drained {…}`.
 *
 * The game's inventory is a file of JSON lines, one durable line (write + fdatasync) per
 * applied grant; a `deliveryId` already in it is skipped (a regrant). Each `unverified`
 * event is written durably, inside onEvent, to its own file before the engine goes on.
 *
 * With a database journal (`journal: 'postgres' | 'mysql'`, the `--nodes` campaign), the
 * inventory is a table shared by every node, and each grant is one transaction of the
 * game, as the guide recommends: `recordDelivery` (the shared dedupe), then the inventory
 * row only when it returned true, then COMMIT. The simulated grant failures fall a third
 * before the transaction, a third inside it (rolled back) and a third after its COMMIT
 * (the engine grants again: the shared dedupe must skip it). There is no journal lock to
 * be refused: `ready` once the pool answers and the tables exist (`createTables()`).
 * Every connection the node's pool opens is announced as `conn <id>` (the server's
 * pid / thread id), so the orchestrator can watch a killed node's connections, and the
 * player locks they held, leave the server. The nodes share what they know of the mock's
 * clock (which every node moves) through a small file (see `now` below).
 *
 * stdout protocol (one line each): `ready`, `refused <message>` (the journal is locked by
 * another process; exit code 3), `drained <json>` (exit code 0), `conn <id>` (database
 * journals). Anything unexpected: a message on stderr and exit code 1.
 *
 * @module
 */
import { closeSync, fdatasyncSync, ftruncateSync, linkSync, openSync, readdirSync, readFileSync, readSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { FileJournal, StorefrontClient, isStorefrontError, type DeliveredItem, type DeliveryJournal, type DeliveryMode, type StorefrontEvent } from '../src/index.js';
import { seededRandom } from '../src/mock/random.js';
import type { ScenarioConfig } from './crash/scenario.js';
import { ArmedKill, claimAnswers, hookJournalWrites, tearAppend } from './crash/worker/sabotage.js';

/** What the orchestrator passes to a worker (argv[2], JSON). */
export interface WorkerConfig extends ScenarioConfig {
  /** Base URL of the mock (loopback). */
  url: string;
  apiKey: string;
  mode: DeliveryMode;
  /** Where the journal lives; `file` unless the campaign runs several nodes on a database. */
  journal: 'file' | 'postgres' | 'mysql';
  /** The FileJournal's path (`journal: 'file'`). */
  journalPath: string;
  /** The shared tables (database journals). */
  db?: WorkerDb;
  /** The mock clock's offset shared by the nodes (database journals): 8 bytes, a float64. */
  clockPath?: string;
  /** The inventory file (`journal: 'file'`). */
  inventoryPath: string;
  unverifiedPath: string;
  logPath: string;
  players: string[];
  /** Seeds the grant failures and the player picks of this run. */
  seed: number;
  /** Run number, for the log. */
  run: number;
  /** Probability that a grant throws (before applying anything). */
  grantFailRate: number;
  /** Concurrent deliver loops. */
  lanes: number;
  /** Final drain: no failures, stop when everything is delivered. */
  drain: boolean;
  /** The node (slot) this worker runs as: 0 with a file journal. */
  node: number;
}

/** A database journal's setting, for one node. */
export interface WorkerDb {
  url: string;
  /** The journal's table, shared by every node. */
  table: string;
  /** The dedupe table of `recordDelivery`. */
  grantedTable: string;
  /** The game's inventory table, shared by every node. */
  inventoryTable: string;
  /** This node's id; by default the journal's own (`<host>:<pid>:<random>`, new for each run). */
  nodeId?: string;
  lockTimeoutMs: number;
  /** Connections of the node's pool (the journal's locks and the game's transactions share it). */
  poolSize: number;
}

/** One line of the inventory file. */
export interface InventoryLine {
  deliveryId: string;
  player: string;
  product: string;
  units: number;
  run: number;
  pid: number;
  /** The node that applied it (database journals). */
  node?: number;
}

/** One line of the unverified-windows file. */
export interface UnverifiedLine {
  playerName: string;
  from: number;
  to: number;
  operation: string;
  run: number;
  pid: number;
}

/** A row of `GET /__mock/purchases` (the fields the campaign reads). */
export interface PurchaseRowLite {
  invoice: number;
  username: string;
  productid: string;
  givequantity: number;
  paymentstatus: string;
  deliverystatus: string;
  delivered: string | null;
}


// The orchestrator holds our stdin: when it goes away (even SIGKILLed), so do we.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));

/**
 * The config: argv[2], or else the first line on stdin. The orchestrator starts workers
 * ahead of time (node and the SDK take ~0.25 s to load here) and sends the line when the
 * run begins: the restart itself (lock, inventory, resume) starts from that line.
 */
async function readConfig(): Promise<WorkerConfig> {
  if (process.argv[2] !== undefined) return JSON.parse(process.argv[2]) as WorkerConfig;
  process.stdin.setEncoding('utf8');
  return new Promise((resolve) => {
    let buffer = '';
    const onData = (chunk: string): void => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      process.stdin.off('data', onData);
      resolve(JSON.parse(buffer.slice(0, nl)) as WorkerConfig);
    };
    process.stdin.on('data', onData);
  });
}

// A spare worker loads its database driver while it waits for its config.
const preloading =
  process.env['CRASH_JOURNAL'] === 'postgres'
    ? Promise.all([import('pg'), import('../src/postgres/index.js')])
    : process.env['CRASH_JOURNAL'] === 'mysql'
      ? Promise.all([import('mysql2/promise'), import('../src/mysql/index.js')])
      : undefined;
preloading?.catch(() => undefined);
const config = await readConfig();
process.stdin.resume();
const random = seededRandom(config.seed);
const logFd = openSync(config.logPath, 'a');
const t0 = performance.now();

function log(text: string): void {
  writeSync(logFd, `${(performance.now() - t0).toFixed(0).padStart(5)}ms r${config.run} p${process.pid} ${text}\n`);
}

function die(text: string): never {
  log(`FATAL ${text}`);
  process.stderr.write(`crash-worker r${config.run} p${process.pid}: ${text}\n`);
  process.exit(1);
}

process.on('uncaughtException', (error) => die(`uncaught: ${error.stack ?? String(error)}`));
process.on('unhandledRejection', (error) => die(`unhandled rejection: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
async function admin<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${config.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------- the clock

// The client's clock is the mock's: synced at start, then moved by every sleep, which
// moves the mock's clock first (so the service never sees less time pass than the client).
// Database nodes: several nodes move the one mock clock. They share what they learn of it, as machines
// share the wall clock: a file holding the mock's offset from real time (a float64), which
// each node raises to what every answer of the mock shows (the mock's time when it
// answered: never ahead of it) and reads at every `now()`. A node's clock then lags the
// mock's only by the advances in flight; `clock-lag` lines log the largest lag found when
// an answer arrives.
let offset = 0;
let maxLag = 0;
let clockFd = -1;
const shared = Buffer.alloc(8);
function sharedOffset(): number {
  if (clockFd < 0) return offset;
  return readSync(clockFd, shared, 0, 8, 0) === 8 ? shared.readDoubleLE(0) : offset;
}
const now = (): number => {
  const s = sharedOffset();
  if (s > offset) offset = s;
  return Date.now() + offset;
};
/** After an answer of the mock carrying its time: what it shows, shared with the other nodes. */
function resync(mockNow: number): void {
  const synced = mockNow - Date.now();
  const known = Math.max(offset, sharedOffset());
  if (synced - known > maxLag) {
    maxLag = synced - known;
    log(`clock-lag ${maxLag} ms (new max)`);
  }
  offset = Math.max(known, synced);
  if (clockFd >= 0 && offset > sharedOffset()) {
    shared.writeDoubleLE(offset, 0);
    writeSync(clockFd, shared, 0, 8, 0);
  }
}
async function sleep(ms: number): Promise<void> {
  if (!(ms > 0)) return;
  const step = Math.ceil(ms);
  offset = Math.max(offset, sharedOffset()); // the moves of the other nodes, first
  const clock = await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: step });
  offset += step;
  if (config.journal !== 'file') resync(clock.now);
}
async function syncClock(): Promise<void> {
  resync((await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 })).now);
}

// ---------------------------------------------------------------- the game

const seen = new Set<string>();
let invFd = -1;
let unvFd = -1;
let regrants = 0;
let grantFailures = 0;
let applied = 0;

/** Loads the applied deliveryIds; cuts a torn last line (never seen in practice: one write per line). */
function loadInventory(): void {
  let text = '';
  try {
    text = readFileSync(config.inventoryPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  invFd = openSync(config.inventoryPath, 'a');
  const end = text.lastIndexOf('\n') + 1;
  if (end < text.length) {
    log(`inventory: cutting a torn last line of ${text.length - end} bytes`);
    ftruncateSync(invFd, Buffer.byteLength(text.slice(0, end)));
    fdatasyncSync(invFd);
  }
  for (const line of text.slice(0, end).split('\n')) {
    if (line.trim() === '') continue;
    seen.add((JSON.parse(line) as InventoryLine).deliveryId);
  }
}

const failRate = config.drain ? 0 : config.grantFailRate;

async function grant(item: DeliveredItem): Promise<void> {
  await Promise.resolve(); // the game thread: a grant is never synchronous with the engine
  if (random() < failRate) {
    grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name}`);
    throw new Error(`the game could not grant ${item.deliveryId} (simulated)`);
  }
  if (seen.has(item.deliveryId)) {
    regrants += 1;
    log(`regrant ${item.deliveryId} ${item.player_name} (skipped, already applied)`);
    return;
  }
  const line: InventoryLine = {
    deliveryId: item.deliveryId,
    player: item.player_name,
    product: item.product_id_string,
    units: item.quantity_to_grant,
    run: config.run,
    pid: process.pid,
  };
  writeSync(invFd, `${JSON.stringify(line)}\n`);
  fdatasyncSync(invFd);
  seen.add(item.deliveryId);
  applied += 1;
}

// ---------------------------------------------------------------- the game, on a database

/** One game transaction on one connection of the node's pool. */
interface GameTx {
  /** `recordDelivery` of the engine's entry point, on this transaction. */
  record(deliveryId: string): Promise<boolean>;
  insert(line: InventoryLine): Promise<void>;
  commit(): Promise<void>;
  /** Rolls back; a connection that fails even that is closed (what it held goes with it). */
  rollback(): Promise<void>;
}

interface GameDb {
  journal: DeliveryJournal & { createTables(): Promise<void> };
  begin(): Promise<GameTx>;
  ping(): Promise<void>;
  end(): Promise<void>;
}

const announce = (id: unknown): void => {
  // Synchronous on a pipe (Linux): announced before the connection runs its first statement.
  process.stdout.write(`conn ${String(id)}\n`);
};

async function postgresGame(db: NonNullable<WorkerConfig['db']>): Promise<GameDb> {
  const { default: pgModule } = await import('pg');
  const { PostgresJournal, recordDelivery } = await import('../src/postgres/index.js');
  const pool = new pgModule.Pool({ connectionString: db.url, max: db.poolSize });
  pool.on('error', (error) => log(`pool error (idle connection): ${error.message}`));
  pool.on('connect', (client) => announce((client as pg.PoolClient & { processID?: number }).processID));
  const journal = new PostgresJournal(pool, { table: db.table, grantedTable: db.grantedTable, lockTimeoutMs: db.lockTimeoutMs, ...(db.nodeId === undefined ? {} : { nodeId: db.nodeId }) });
  return {
    journal,
    ping: async () => void (await pool.query('SELECT 1')),
    end: () => pool.end(),
    async begin() {
      const client = await pool.connect();
      const onError = (error: Error): void => log(`game transaction connection error: ${error.message}`);
      client.on('error', onError);
      let released = false;
      const done = (broken?: Error): void => {
        if (released) return;
        released = true;
        client.removeListener('error', onError);
        client.release(broken);
      };
      try {
        await client.query('BEGIN');
      } catch (error) {
        done(error as Error);
        throw error;
      }
      return {
        record: (id) => recordDelivery(client, id, { table: db.grantedTable }),
        insert: async (l) =>
          void (await client.query(`INSERT INTO ${db.inventoryTable} (delivery_id, player, product, units, run, node, pid) VALUES ($1, $2, $3, $4, $5, $6, $7)`, inventoryValues(l))),
        commit: async () => {
          try {
            await client.query('COMMIT');
          } catch (error) {
            done(error as Error);
            throw error;
          }
          done();
        },
        rollback: async () => {
          if (released) return;
          try {
            await client.query('ROLLBACK');
            done();
          } catch (error) {
            done(error as Error);
          }
        },
      };
    },
  };
}

async function mysqlGame(db: NonNullable<WorkerConfig['db']>): Promise<GameDb> {
  const { default: mysqlModule } = await import('mysql2/promise');
  const { MySqlJournal, recordDelivery } = await import('../src/mysql/index.js');
  const pool = mysqlModule.createPool({ uri: db.url, connectionLimit: db.poolSize });
  pool.on('connection', (connection) => announce((connection as unknown as { threadId: number }).threadId));
  const journal = new MySqlJournal(pool, { table: db.table, grantedTable: db.grantedTable, lockTimeoutMs: db.lockTimeoutMs, ...(db.nodeId === undefined ? {} : { nodeId: db.nodeId }) });
  return {
    journal,
    ping: async () => void (await pool.query('SELECT 1')),
    end: () => pool.end(),
    async begin() {
      const connection: mysql.PoolConnection = await pool.getConnection();
      const onError = (error: Error): void => log(`game transaction connection error: ${error.message}`);
      connection.on('error', onError);
      let released = false;
      const done = (broken: boolean): void => {
        if (released) return;
        released = true;
        connection.removeListener('error', onError);
        if (broken) connection.destroy();
        else connection.release();
      };
      try {
        await connection.beginTransaction();
      } catch (error) {
        done(true);
        throw error;
      }
      return {
        record: (id) => recordDelivery(connection, id, { table: db.grantedTable }),
        insert: async (l) =>
          void (await connection.query(`INSERT INTO ${db.inventoryTable} (delivery_id, player, product, units, run, node, pid) VALUES (?, ?, ?, ?, ?, ?, ?)`, inventoryValues(l))),
        commit: async () => {
          try {
            await connection.commit();
          } catch (error) {
            done(true);
            throw error;
          }
          done(false);
        },
        rollback: async () => {
          if (released) return;
          try {
            await connection.rollback();
            done(false);
          } catch {
            done(true);
          }
        },
      };
    },
  };
}

let gameDb: GameDb | undefined;

/**
 * The grant of a node: one transaction of the game, the dedupe record and the inventory
 * row together. Simulated failures, a third each: before the transaction; inside it
 * (after the record and the row were written), which rolls both back; after its COMMIT
 * (the item is in, then the game throws: the engine grants it again, and the shared
 * dedupe must skip it, on whichever node).
 */
async function grantInDb(item: DeliveredItem): Promise<void> {
  await Promise.resolve();
  const failure = random() < failRate ? (['before', 'inside', 'after'] as const)[Math.floor(random() * 3)] : undefined;
  if (failure === 'before') {
    grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name}`);
    throw new Error(`the game could not grant ${item.deliveryId} (simulated)`);
  }
  const tx = await (gameDb as GameDb).begin();
  let fresh: boolean;
  try {
    fresh = await tx.record(item.deliveryId);
    if (fresh) {
      await tx.insert({ deliveryId: item.deliveryId, player: item.player_name, product: item.product_id_string, units: item.quantity_to_grant, run: config.run, pid: process.pid, node: config.node });
    } else {
      regrants += 1;
      log(`regrant ${item.deliveryId} ${item.player_name} (skipped, already applied by a node)`);
    }
    if (failure === 'inside') {
      grantFailures += 1;
      log(`grant-failed ${item.deliveryId} ${item.player_name} (inside the transaction, rolled back)`);
      throw new Error(`the game failed inside the transaction of ${item.deliveryId} (simulated)`);
    }
    await tx.commit();
  } catch (error) {
    await tx.rollback();
    throw error;
  }
  if (fresh) applied += 1;
  if (failure === 'after') {
    grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name} (after the COMMIT${fresh ? ', the item is in' : ''})`);
    throw new Error(`the game failed after granting ${item.deliveryId} (simulated)`);
  }
}

function onEvent(event: StorefrontEvent): void {
  if (event.type === 'unverified') {
    const line: UnverifiedLine = { ...event.window, operation: event.operation, run: config.run, pid: process.pid };
    writeSync(unvFd, `${JSON.stringify(line)}\n`);
    fdatasyncSync(unvFd);
    log(`event unverified ${JSON.stringify(event.window)} (${event.operation})`);
  } else if (event.type === 'journalError') {
    log(`event journalError ${event.playerName}: ${event.error.message}`);
  }
}

// ---------------------------------------------------------------- players

let pendingPlayers: string[] = [];
let pendingAt = -Infinity;
let refreshing: Promise<void> | undefined;

async function undelivered(): Promise<PurchaseRowLite[]> {
  const rows = await admin<PurchaseRowLite[]>('GET', `/__mock/purchases?apiKey=${encodeURIComponent(config.apiKey)}`);
  return rows.filter((r) => r.paymentstatus === 'Paid' && r.deliverystatus === 'Undelivered');
}

async function pickPlayer(): Promise<string> {
  if (performance.now() - pendingAt > 300) {
    refreshing ??= undelivered()
      .then((rows) => {
        pendingPlayers = [...new Set(rows.map((r) => r.username))];
        pendingAt = performance.now();
      })
      .finally(() => (refreshing = undefined));
    await refreshing;
  }
  const from = pendingPlayers.length > 0 && random() < 0.7 ? pendingPlayers : config.players;
  return from[Math.floor(random() * from.length)] as string;
}

// ---------------------------------------------------------------- main

function describeReport(report: { code?: string; granted: DeliveredItem[]; failed: unknown[]; pending: number; error?: { code: string; message: string }; journalError?: { message: string } }): string {
  return [
    report.code ?? '',
    `granted=${report.granted.length}`,
    `failed=${report.failed.length}`,
    `pending=${report.pending}`,
    report.error === undefined ? '' : `error=${report.error.code}`,
    report.journalError === undefined ? '' : `journalError=${JSON.stringify(report.journalError.message)}`,
  ]
    .filter((s) => s !== '')
    .join(' ');
}

/** Exits with the refusal code when the journal cannot be opened (locked by another process, or damaged: the message says which). */
function refuseOnLock(error: unknown): void {
  if (isStorefrontError(error, 'JOURNAL_FAILED')) {
    log(`refused: ${error.message}`);
    process.stdout.write(`refused ${error.message.replace(/\n/g, ' ')}\n`);
    process.exit(3);
  }
}

/**
 * `two-clients` (#21 point 2 as well): the journal the worker holds, opened again under a
 * second name (a symlink, a hard link), must be refused. Logged as `two-names refused` or
 * `two-names ACCEPTED` (the orchestrator counts both).
 */
async function openUnderSecondName(path: string): Promise<void> {
  const kind = random() < 0.5 ? 'symlink' : 'hardlink';
  const other = `${dirname(path)}/alias-${process.pid}-${basename(path)}`;
  (kind === 'symlink' ? symlinkSync : linkSync)(path, other);
  const second = new FileJournal(other);
  try {
    await second.pending();
    log(`two-names ACCEPTED: a second FileJournal on a ${kind} to the journal this process holds was not refused`);
    await second.close();
  } catch (error) {
    if (!isStorefrontError(error, 'JOURNAL_FAILED')) throw error;
    log(`two-names refused (${kind}): ${error.message.split('\n')[0]}`);
  } finally {
    unlinkSync(other);
  }
}

/**
 * Second names a killed worker's probe left (a hard link makes the journal a file of
 * several names, which the journal refuses): removed before the journal opens.
 */
function removeAliases(path: string): void {
  if (config.journal !== 'file') return;
  for (const name of readdirSync(dirname(path))) {
    if (name.startsWith('alias-') && name.endsWith(basename(path))) unlinkSync(`${dirname(path)}/${name}`);
  }
}

/** Arms the scenario's sabotage (see scripts/crash/worker/sabotage.ts); the client's fetch when it has one. */
function sabotage(): typeof fetch | undefined {
  if (config.scenario === 'torn-append' && config.tear !== undefined) {
    hookJournalWrites(config.journalPath, tearAppend(config.journalPath, config.tear), log);
  } else if (config.scenario === 'no-raw-rows') {
    const kill = new ArmedKill(random);
    hookJournalWrites(config.journalPath, kill.decide, log);
    return claimAnswers({ strip: config.stripRaw ?? 0.5, dieAfter: config.dieAfterClaim ?? 0.4, random, kill, log });
  }
  return undefined;
}

async function main(): Promise<void> {
  const scenario = config.drain ? 'plain' : config.scenario;
  log(`start mode=${config.mode} journal=${config.journal} node=${config.node} drain=${config.drain} lanes=${config.lanes} scenario=${scenario}${config.defaultJournal === true ? ' (default journal)' : ''}`);
  let journal: DeliveryJournal | undefined;
  let grantFn: (item: DeliveredItem) => Promise<void>;
  const onDefault = scenario === 'two-clients' && config.defaultJournal === true;
  removeAliases(config.journalPath);
  // Before the journal opens its file: the hooks wrap the handles it opens.
  const fetchFn = scenario === 'plain' || config.journal !== 'file' ? undefined : sabotage();
  if (config.journal === 'file' && onDefault) {
    // The default journal is ./.teamgames-journal.jsonl: the orchestrator names the journal so.
    if (basename(config.journalPath) !== '.teamgames-journal.jsonl') die(`the default journal needs journalPath .../.teamgames-journal.jsonl, got ${config.journalPath}`);
    process.chdir(dirname(config.journalPath));
    loadInventory(); // a lone worker: nobody else grants; the lock is taken by the first resume
    grantFn = grant;
  } else if (config.journal === 'file') {
    const fileJournal = new FileJournal(config.journalPath);
    journal = fileJournal;
    // The journal's first use takes its lock: refused when another process holds it.
    try {
      await fileJournal.pending();
    } catch (error) {
      refuseOnLock(error);
      throw error;
    }
    // Only the lock holder reads the inventory: no other process grants while we hold it.
    loadInventory();
    grantFn = grant;
  } else {
    if (config.db === undefined) die('a database journal needs config.db');
    await preloading;
    gameDb = config.journal === 'postgres' ? await postgresGame(config.db) : await mysqlGame(config.db);
    journal = gameDb.journal;
    // At startup, as the guide says: the tables exist before the first grant records a delivery.
    await gameDb.ping();
    log('connected');
    await gameDb.journal.createTables();
    log('tables created (or there)');
    grantFn = grantInDb;
  }
  unvFd = openSync(config.unverifiedPath, 'a');
  if (config.clockPath !== undefined) clockFd = openSync(config.clockPath, 'r+');
  const clock = await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 });
  offset = clock.now - Date.now();
  if (config.journal !== 'file') resync(clock.now);
  log(`ready (${config.journal === 'file' ? `inventory ${seen.size} ids` : `node ${config.node}, nodeId ${journal?.nodeId ?? '-'}`})`);
  process.stdout.write('ready\n');

  const newClient = (): StorefrontClient =>
    new StorefrontClient({ apiKey: config.apiKey, baseUrl: config.url, ...(journal === undefined ? {} : { journal }), ...(fetchFn === undefined ? {} : { fetch: fetchFn }), now, onEvent, retry: 0 });
  // two-clients: two clients on one journal, delivering for the same players at once.
  const clients = scenario === 'two-clients' ? [newClient(), newClient()] : [newClient()];
  const clientAt = (i: number): StorefrontClient => clients[i % clients.length] as StorefrontClient;

  const resume = async (): Promise<void> => {
    if (config.journal !== 'file') await syncClock();
    let reports;
    try {
      reports = await Promise.all(clients.map((c) => c.resumeDeliveries(grantFn, { sleep })));
    } catch (error) {
      if (onDefault) refuseOnLock(error); // the default journal's lock is taken here
      throw error;
    }
    for (const report of reports) {
      log(
        `resume granted=${report.granted.length} failed=${report.failed.length} pending=${report.pending} errors=${report.errors.length}` +
          ` unverified=${JSON.stringify(report.unverified)}${report.journalError === undefined ? '' : ` journalError=${JSON.stringify(report.journalError.message)}`}`,
      );
    }
  };
  /** One deliver; true when it granted, failed or left something pending. */
  const deliver = async (player: string, via = 0): Promise<boolean> => {
    const report = await clientAt(via).deliver(player, grantFn, { mode: config.mode, sleep });
    log(`deliver ${JSON.stringify(player)}${clients.length > 1 ? ` c${via % clients.length}` : ''} ${describeReport(report)}${report.unverified === undefined ? '' : ` unverified=${JSON.stringify(report.unverified)}`}`);
    return report.granted.length > 0 || report.failed.length > 0 || report.pending > 0;
  };

  await resume();
  if (scenario === 'two-clients' && config.journal === 'file') await openUnderSecondName(config.journalPath);

  if (!config.drain) {
    const lane = async (_: unknown, index: number): Promise<never> => {
      for (;;) {
        const player = await pickPlayer();
        // two-clients: half of the time both clients deliver for this player at once.
        const both = clients.length > 1 && random() < 0.5;
        const busy = both ? (await Promise.all([deliver(player, 0), deliver(player, 1)])).some(Boolean) : await deliver(player, index);
        // A player with nothing to deliver costs a preview (or a claim): pause a little
        // then, as a bridge would between commands, rather than spin.
        if (!busy) await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(random() * 14)));
      }
    };
    await Promise.all(Array.from({ length: config.lanes }, lane));
    return;
  }

  for (let round = 1; round <= 20; round++) {
    if (round > 1) await resume();
    for (const player of config.players) await deliver(player);
    const left = await (journal as DeliveryJournal).pending();
    const rows = await undelivered();
    log(`drain round ${round}: journal=${left.length} undelivered=${rows.length}`);
    if (left.length === 0 && rows.length === 0) {
      if (journal instanceof FileJournal) await journal.close();
      await gameDb?.end();
      if (invFd >= 0) closeSync(invFd);
      closeSync(unvFd);
      log(`drained; clock lag behind the mock at most ${maxLag} ms`);
      process.stdout.write(`drained ${JSON.stringify({ rounds: round, regrants, grantFailures, applied, maxClockLagMs: maxLag })}\n`);
      process.exit(0);
    }
  }
  die(`the drain did not converge: journal ${JSON.stringify(await (journal as DeliveryJournal).pending())}, undelivered ${JSON.stringify(await undelivered())}`);
}

main().catch((error: unknown) => die(`main: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));

/** An inventory line as the values of its INSERT, in column order (both engines). */
function inventoryValues(l: InventoryLine): unknown[] {
  return [l.deliveryId, l.player, l.product, l.units, l.run, l.node, l.pid];
}
