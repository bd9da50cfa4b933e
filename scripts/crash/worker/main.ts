/**
 * The worker of the crash campaign (`scripts/crash/kills.ts`): a game bridge that delivers
 * purchases with `client.deliver` over a {@link FileJournal} (or, as one node of several,
 * over a `PostgresJournal` / `MySqlJournal` table shared with the other nodes), against
 * the mock over HTTP, until the orchestrator SIGKILLs it. Not meant to be run by hand.
 *
 *   node crash-worker.mjs ['<WorkerConfig as JSON>']   (or the JSON as the first line on stdin)
 *
 * (bundled from this file by scripts/crash/bundle.ts)
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
 * clock (which every node moves) through a small file (see clock.ts).
 *
 * stdout protocol (one line each): `ready`, `refused <message>` (the journal is locked by
 * another process; exit code 3), `drained <json>` (exit code 0), `conn <id>` (database
 * journals), `selfkill <why>` (a scenario's worker about to SIGKILL itself). Anything
 * unexpected: a message on stderr and exit code 1.
 *
 * With `loop` in its config (`--loop`), the worker runs `client.startDeliveryLoop` instead
 * of resume + deliver (worker/loop.ts): its players join and leave as the orchestrator
 * says on stdin, and the drain is the loop with every player online.
 *
 * The run's scenario (scripts/crash/scenario.ts) is armed first (scripts/crash/worker/scenario.ts);
 * a worker that kills itself prints `selfkill <why>` on stdout first.
 *
 * Files: config.ts (what the orchestrator sends and counts), context.ts (the config, log,
 * random numbers), clock.ts, game-file.ts and game-db.ts (the game's grant on a file or a
 * database), loop.ts (the delivery loop of a `--loop` worker), players.ts, scenario.ts and
 * sabotage.ts (the scenarios).
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { FileJournal, StorefrontClient, inspectJournal, isStorefrontError, type DeliveredItem, type DeliveryJournal, type JournalEntry, type JournalWindow } from '../../../src/index.js';
import { maxLag, now, sleep, startClock, syncClock } from './clock.js';
import { config, die, log, preloading, random, stats } from './context.js';
import { journalWindowsPath, type UnverifiedLine } from './config.js';
import { connectGame, gameDb, grantInDb } from './game-db.js';
import { closeFiles, grant, loadInventory, onEvent, openUnverified, seen } from './game-file.js';
import { flakyJournal, refused } from './flaky-journal.js';
import { runLoop } from './loop.js';
import { pickPlayer, undelivered } from './players.js';
import { armScenario, openUnderSecondName, removeAliases } from './scenario.js';

type Grant = (item: DeliveredItem, online?: boolean) => Promise<void>;

/** A window record of the journal (`unverified` or `resolved`), kept until staff resolve it. */
const isWindow = (e: JournalEntry): e is JournalWindow => e.state === 'unverified' || e.state === 'resolved';

const scenario = config.drain ? 'plain' : config.scenario;
/** two-clients, a third of the time: both clients on the default journal (no `journal` option). */
const onDefault = scenario === 'two-clients' && config.defaultJournal === true && config.journal === 'file';

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
 * Opens the journal and the game. A FileJournal's first use takes its lock: refused when
 * another process holds it; only the holder then reads the inventory (no other process
 * grants meanwhile). On the default journal, the first resume takes the lock.
 */
async function openJournal(): Promise<{ journal: DeliveryJournal | undefined; grant: Grant }> {
  if (onDefault) {
    // The default journal is ./.teamgames-journal.jsonl: the orchestrator names the journal so.
    if (basename(config.journalPath) !== '.teamgames-journal.jsonl') die(`the default journal needs journalPath .../.teamgames-journal.jsonl, got ${config.journalPath}`);
    process.chdir(dirname(config.journalPath));
    loadInventory(); // a lone worker: nobody else grants
    return { journal: undefined, grant };
  }
  if (config.journal === 'file') {
    const journal = new FileJournal(config.journalPath);
    try {
      await journal.pending();
    } catch (error) {
      refuseOnLock(error);
      throw error;
    }
    loadInventory();
    return { journal, grant };
  }
  if (config.db === undefined) die('a database journal needs config.db');
  await preloading;
  const game = await connectGame(config.db);
  // At startup, as the guide says: the tables exist before the first grant records a delivery.
  await game.ping();
  log('connected');
  await game.journal.createTables();
  log('tables created (or there)');
  return { journal: game.journal, grant: grantInDb };
}

/** The bridge: its clients (two on one journal for two-clients), resume and deliver. */
interface Bridge {
  clients: StorefrontClient[];
  resume(): Promise<void>;
  /** One deliver through client `via`; true when it granted, failed or left something pending. */
  deliver(player: string, via?: number): Promise<boolean>;
}

function bridge(journal: DeliveryJournal | undefined, fetchFn: typeof fetch | undefined, grantFn: Grant): Bridge {
  const newClient = (): StorefrontClient =>
    new StorefrontClient({ apiKey: config.apiKey, baseUrl: config.url, ...(journal === undefined ? {} : { journal }), ...(fetchFn === undefined ? {} : { fetch: fetchFn }), now, onEvent, retry: 0 });
  const clients = scenario === 'two-clients' ? [newClient(), newClient()] : [newClient()];
  return {
    clients,
    async resume() {
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
    },
    async deliver(player, via = 0) {
      const report = await (clients[via % clients.length] as StorefrontClient).deliver(player, grantFn, { mode: config.mode, sleep });
      log(`deliver ${JSON.stringify(player)}${clients.length > 1 ? ` c${via % clients.length}` : ''} ${describeReport(report)}${report.unverified === undefined ? '' : ` unverified=${JSON.stringify(report.unverified)}`}`);
      return report.granted.length > 0 || report.failed.length > 0 || report.pending > 0;
    },
  };
}

/** `lanes` concurrent loops of deliver, until the orchestrator kills the worker. */
async function deliverForever(b: Bridge): Promise<void> {
  const lane = async (_: unknown, index: number): Promise<never> => {
    for (;;) {
      const player = await pickPlayer();
      // two-clients: half of the time both clients deliver for this player at once.
      const both = b.clients.length > 1 && random() < 0.5;
      const busy = both ? (await Promise.all([b.deliver(player, 0), b.deliver(player, 1)])).some(Boolean) : await b.deliver(player, index);
      // A player with nothing to deliver costs a preview (or a claim): pause a little
      // then, as a bridge would between commands, rather than spin.
      if (!busy) await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(random() * 14)));
    }
  };
  await Promise.all(Array.from({ length: config.lanes }, lane));
}

/** The final drain: resume + deliver for every player until the journal and the mock have nothing left. */
async function drain(b: Bridge, journal: DeliveryJournal): Promise<never> {
  for (let round = 1; round <= 20; round++) {
    if (round > 1) await b.resume();
    for (const player of config.players) await b.deliver(player);
    const entries = await journal.pending();
    // Windows stay in the journal until staff resolve them: not work left to drain.
    const windows = entries.filter((e) => isWindow(e));
    const left = entries.filter((e) => !isWindow(e));
    const rows = await undelivered();
    log(`drain round ${round}: journal=${left.length} (and ${windows.length} windows) undelivered=${rows.length}`);
    if (left.length === 0 && rows.length === 0) return drained(journal, round);
  }
  die(`the drain did not converge: journal ${JSON.stringify((await journal.pending()).filter((e) => !isWindow(e)))}, undelivered ${JSON.stringify(await undelivered())}`);
}

/**
 * The end of a drain: the windows the journal holds (open and resolved, as staff would list
 * them with inspectJournal) written for the orchestrator, the files closed, `drained`.
 */
async function drained(journal: DeliveryJournal, rounds: number): Promise<never> {
  const { openWindows, resolvedWindows } = await inspectJournal(journal, { now: now() });
  const lines = [...openWindows, ...resolvedWindows].map((w) =>
    JSON.stringify({ playerName: w.playerName, from: w.from, to: w.to, operation: `journal:${w.cause}`, run: config.run, pid: process.pid, state: w.state } satisfies UnverifiedLine),
  );
  writeFileSync(journalWindowsPath(config.unverifiedPath), lines.map((l) => `${l}\n`).join(''));
  if (journal instanceof FileJournal) await journal.close();
  await gameDb?.end();
  closeFiles();
  log(`drained; clock lag behind the mock at most ${maxLag} ms`);
  process.stdout.write(`drained ${JSON.stringify({ rounds, ...stats, maxClockLagMs: maxLag, flakyRefused: refused })}\n`);
  process.exit(0);
}

async function main(): Promise<void> {
  log(`start mode=${config.mode} journal=${config.journal} node=${config.node} drain=${config.drain} lanes=${config.lanes} scenario=${scenario}${onDefault ? ' (default journal)' : ''}`);
  removeAliases(config.journalPath);
  const fetchFn = scenario === 'plain' ? undefined : armScenario();
  const { journal, grant: grantFn } = await openJournal();
  openUnverified();
  await startClock();
  log(`ready (${config.journal === 'file' ? `inventory ${seen.size} ids` : `node ${config.node}, nodeId ${journal?.nodeId ?? '-'}`})`);
  process.stdout.write('ready\n');
  // --flaky-journal: the client's journal refuses now and then; the drain's checks read the real one.
  const flaky = journal !== undefined && config.flakyJournal !== undefined && !config.drain;
  const b = bridge(flaky && config.flakyJournal !== undefined ? flakyJournal(journal, config.flakyJournal) : journal, fetchFn, grantFn);
  if (flaky) log('flaky journal: acknowledge refused (and some appends) in stretches of 1-3 minutes of the mock clock');
  if (config.loop !== undefined) {
    // No resumeDeliveries: it grants to every player, online or not; the loop's join grants what is pending.
    if (journal === undefined) die('a --loop worker runs on a journal of its own');
    await runLoop(b.clients[0] as StorefrontClient, journal, grantFn);
    return drained(journal, 1);
  }
  await b.resume();
  if (scenario === 'two-clients' && config.journal === 'file') await openUnderSecondName(config.journalPath);
  if (!config.drain) await deliverForever(b);
  else if (journal === undefined) die('the drain runs on a journal of its own (plain scenario)');
  else await drain(b, journal);
}

main().catch((error: unknown) => die(`main: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
