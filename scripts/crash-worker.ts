/**
 * The worker of the crash campaign (`scripts/crash.ts`): a game bridge that delivers
 * purchases with `client.deliver` over a {@link FileJournal}, against the mock over
 * HTTP, until the orchestrator SIGKILLs it. Not meant to be run by hand.
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
 * stdout protocol (one line each): `ready`, `refused <message>` (the journal is locked by
 * another process; exit code 3), `drained <json>` (exit code 0). Anything unexpected:
 * a message on stderr and exit code 1.
 *
 * @module
 */
import { closeSync, fdatasyncSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { FileJournal, StorefrontClient, isStorefrontError, type DeliveredItem, type DeliveryMode, type StorefrontEvent } from '../src/index.js';

/** What the orchestrator passes to a worker (argv[2], JSON). */
export interface WorkerConfig {
  /** Base URL of the mock (loopback). */
  url: string;
  apiKey: string;
  mode: DeliveryMode;
  journalPath: string;
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
}

/** One line of the inventory file. */
export interface InventoryLine {
  deliveryId: string;
  player: string;
  product: string;
  units: number;
  run: number;
  pid: number;
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

/** mulberry32, as the mock's fault injector uses (not imported: the worker bundle stays small). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
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
let offset = 0;
const now = (): number => Date.now() + offset;
async function sleep(ms: number): Promise<void> {
  if (!(ms > 0)) return;
  const step = Math.ceil(ms);
  await admin('POST', '/__mock/clock/advance', { ms: step });
  offset += step;
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

async function main(): Promise<void> {
  log(`start mode=${config.mode} drain=${config.drain} lanes=${config.lanes}`);
  const journal = new FileJournal(config.journalPath);
  // The journal's first use takes its lock: refused when another process holds it.
  try {
    await journal.pending();
  } catch (error) {
    if (isStorefrontError(error, 'JOURNAL_FAILED')) {
      log(`refused: ${error.message}`);
      process.stdout.write(`refused ${error.message.replace(/\n/g, ' ')}\n`);
      process.exit(3);
    }
    throw error;
  }
  // Only the lock holder reads the inventory: no other process grants while we hold it.
  loadInventory();
  unvFd = openSync(config.unverifiedPath, 'a');
  const clock = await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 });
  offset = clock.now - Date.now();
  log(`ready (inventory ${seen.size} ids)`);
  process.stdout.write('ready\n');

  const client = new StorefrontClient({ apiKey: config.apiKey, baseUrl: config.url, journal, now, onEvent, retry: 0 });

  const resume = async (): Promise<void> => {
    const report = await client.resumeDeliveries(grant, { sleep });
    log(
      `resume granted=${report.granted.length} failed=${report.failed.length} pending=${report.pending} errors=${report.errors.length}` +
        ` unverified=${JSON.stringify(report.unverified)}${report.journalError === undefined ? '' : ` journalError=${JSON.stringify(report.journalError.message)}`}`,
    );
  };
  /** One deliver; true when it granted, failed or left something pending. */
  const deliver = async (player: string): Promise<boolean> => {
    const report = await client.deliver(player, grant, { mode: config.mode, sleep });
    log(`deliver ${JSON.stringify(player)} ${describeReport(report)}${report.unverified === undefined ? '' : ` unverified=${JSON.stringify(report.unverified)}`}`);
    return report.granted.length > 0 || report.failed.length > 0 || report.pending > 0;
  };

  await resume();

  if (!config.drain) {
    const lane = async (): Promise<never> => {
      for (;;) {
        // A player with nothing to deliver costs a preview (or a claim): pause a little
        // then, as a bridge would between commands, rather than spin.
        if (!(await deliver(await pickPlayer()))) await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(random() * 14)));
      }
    };
    await Promise.all(Array.from({ length: config.lanes }, lane));
    return;
  }

  for (let round = 1; round <= 20; round++) {
    if (round > 1) await resume();
    for (const player of config.players) await deliver(player);
    const left = await journal.pending();
    const rows = await undelivered();
    log(`drain round ${round}: journal=${left.length} undelivered=${rows.length}`);
    if (left.length === 0 && rows.length === 0) {
      await journal.close();
      closeSync(invFd);
      closeSync(unvFd);
      process.stdout.write(`drained ${JSON.stringify({ rounds: round, regrants, grantFailures, applied })}\n`);
      process.exit(0);
    }
  }
  die(`the drain did not converge: journal ${JSON.stringify(await journal.pending())}, undelivered ${JSON.stringify(await undelivered())}`);
}

main().catch((error: unknown) => die(`main: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
