/**
 * Crash campaign: real processes, real SIGKILLs. Proves that no paid purchase is lost
 * silently and none is granted twice when the bridge process dies at random moments.
 *
 *   npm run crash -- [--kills 300] [--mode exactlyOnce|fast|all] [--seed 1]
 *                    [--purchases-during-runs true|false] [--processes 2 --shared]
 *                    [--loop [--flaky-journal] [--claim-mode exactlyOnce|fast] [--hints]]
 *                    [--nodes 3 --journal postgres|mysql]
 *                    [--players 20] [--lanes 2] [--keep]
 *
 * Per mode (each on a fresh mock and a fresh temp dir):
 * - the mock CLI serves over HTTP on loopback in a child process (port 0, URL parsed from
 *   its banner), with a seeded fault rule: ~5% of v4 claims are processed and then their
 *   connection drops (the lost answer);
 * - a worker process (scripts/crash/worker/main.ts) runs `resumeDeliveries`, then `deliver` in
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
 *   (durably, from onEvent); not_durable = those of them that are not among the journal's
 *   window records at the end (matched by player, from and to: the record is written
 *   before the event, #24 point 5); open_windows = the journal's window records still open
 *   (`inspectJournal(journal).openWindows` after the drain).
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
 *   crash <mode>: kills=… purchases=… paid_units=… granted_units=… lost=… silent=… duplicated=… unverified=… not_durable=… open_windows=…
 *   crash <mode> processes=2 shared: refused=… kills=… …
 *   crash <mode> nodes=3 journal=postgres: kills=… …       (--nodes / --journal, below)
 *   crash loop[ claim_mode=fast][ flaky_journal][ nodes=3 journal=postgres]: kills=… … duplicated=… granted_offline=… unverified=… not_durable=… open_windows=…
 *     gives_per_delivery_max=… given_twice_by_one_process=… repeated_after_crash=… gives_total=… give_calls=… deliveries=…[ journal_refused=acknowledge:…,append:…]   (--loop, below)
 * and details on stderr (timing, faults fired, regrants, losses by player). Exits 1 when a
 * mode shows silent>0, duplicated>0, not_durable>0 or (--loop) granted_offline>0, exactly-once shows lost>0 with
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
 *   a throwaway server started here (test/support/throwaway-databases.ts); each mode gets fresh
 *   tables (journal, dedupe, inventory) of its own, dropped at the end unless --keep;
 * - the game's inventory is a table shared by the nodes; each grant is one transaction:
 *   `recordDelivery` (the shared dedupe) and the inventory row (see worker/game-db.ts), and
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
 * share the wall clock (see worker/game-db.ts), and a window's end is given the slack of
 * every lane of every node (the advances that can be in flight).
 *
 * With `--loop` (#23; on a file journal, or with `--nodes N --journal postgres|mysql`), the
 * workers run `client.startDeliveryLoop` instead of calling deliver (worker/loop.ts): one
 * campaign (the loop previews in exactlyOnce; a /claim is answered in the loop's `claimMode`,
 * `--claim-mode exactlyOnce|fast`, exactlyOnce by default as the loop's own), its line
 * named `loop`:
 * - each worker is a node with a set of online players: the orchestrator holds who is
 *   online where and changes it at random (presence.ts): joins, leaves, relogs, and with
 *   several nodes moves between nodes (the new node first half of the time: two proxies
 *   for a moment) and stays on a second node for a while; each change goes to the node's
 *   worker as a line on stdin, and a node that restarts gets its players in its config;
 * - the players type /claim now and then (`loop.claim`); purchases arrive as above;
 * - time: the orchestrator runs the mock's clock CLOCK_SPEED (10) times real time and the
 *   nodes' loop timers follow it (a loop's own 10 s windows and its `pollIntervalMs` of
 *   10000, the shortest allowed, cost a second), so a node lives long enough to deliver;
 * - `give` records each grant durably as before (the inventory file, or the shared table
 *   in one transaction with `recordDelivery`) with whether the node held the player as
 *   online when give was called; granted_offline = calls of give for a player it did not
 *   (each logged `give-offline`), must be 0;
 * - kills as above (a file-journal node 200–4000 ms after it is ready, a database node
 *   1000–8000 ms: a node's start costs a second here), then the drain: every player online
 *   on one node, its loop running until the journal holds no work and the mock lists
 *   nothing paid and undelivered;
 * - the gives per deliveryId (count.ts, from the workers' logs): a process never calls give
 *   again for a deliveryId whose give succeeded in it (#33 point 4): given_twice_by_one_process
 *   must be 0 and gives_per_delivery_max 1 (exit 1 otherwise); repeated_after_crash counts
 *   deliveryIds given successfully by more than one process (a kill before the journal's
 *   acknowledgement, or another node), which the game's dedupe on deliveryId skips;
 *   gives_total the successful gives, give_calls every call, deliveries the distinct ids;
 * - `--flaky-journal`: the workers' journal refuses `acknowledge` in stretches of 1–3 minutes
 *   of the campaign's clock, and one `append` in four then (worker/flaky-journal.ts), never in
 *   the drain; journal_refused counts the refusals (a campaign that met none fails). A window
 *   whose record the journal refused is reported all the same and written by the engine's
 *   next call; a kill before that leaves it out of the journal: a NOTE, not not_durable;
 * - `--hints`: with each /claim typed, a checkout hint (`loop.expect`, 2 minutes) for an
 *   online player of the node: hinted runs in the loop's claimMode meet the kills (#47);
 * - `--claim-mode exactlyOnce|fast`: the loop's claimMode for the players' /claim (absent:
 *   the loop's default, exactlyOnce). A lost unit must lie in a row bought and delivered
 *   inside one window of its player.
 *
 * scripts/crash/lock.ts aims every kill at the journal's lock being taken (the moment the
 * main campaign only hits now and then): `npx tsx scripts/crash/lock.ts --kills 300`.
 *
 * The files of this folder: main.ts (`npm run crash`: this campaign, or the power-loss one),
 * kills.ts (this: the modes, the result lines), options.ts (the
 * command line, the fixed settings), scenario.ts (the scenarios), campaign.ts (one mode:
 * its mock, purchases, counters), workers.ts (the worker processes), lone.ts, shared.ts
 * and cluster.ts (the kills of each campaign), count.ts (the drain and the counting),
 * database.ts (the database admin), presence.ts (--loop: who is online where, the fast
 * clock), children.ts, bundle.ts, node-bundle.ts, mock.ts (the
 * mock CLI as run here), worker/ (the worker), lock.ts (the lock campaign).
 */
import type { DeliveryMode } from '../../src/index.js';
import { NotInstalledError, useDatabase, type DatabaseServer } from '../../test/support/throwaway-databases.js';
import { bundle, type Bundles } from './bundle.js';
import { Campaign, type Db } from './campaign.js';
import { runCluster } from './cluster.js';
import { drainAndCount, type Result } from './count.js';
import { runLone } from './lone.js';
import { runShared } from './shared.js';
import { cleanup, root } from './children.js';
import { mysqlAdmin, postgresAdmin, type AdminDb, type Tables } from './database.js';
import { CLAIM_MODE, CLUSTER, DURING_RUNS, FLAKY_JOURNAL, HINTS, JOURNAL, KEEP, KILLS, LANES, LOOP, MODES, NODES, PLAYERS, PROCESSES, SCENARIO, SEED, SHARED } from './options.js';

/** One mode's campaign, start to counting. */
async function campaign(mode: DeliveryMode, bundles: Bundles, root: string, modeIndex: number, seed: number, db?: Db): Promise<Result> {
  const c = new Campaign(mode, bundles, root, modeIndex, seed, db);
  await c.setUp();
  c.workers.prestart();
  const ticker = c.ticker();
  const presence = c.presence?.run();
  const cluster = CLUSTER ? await runCluster(c) : undefined;
  if (!CLUSTER && !SHARED) await runLone(c);
  if (SHARED) await runShared(c);
  c.stopping = true;
  await ticker;
  await presence;
  c.workers.dropSpares();
  return drainAndCount(c, cluster);
}

/** The database server and its admin (`--journal postgres|mysql`); 3 when the engine is not installed. */
async function openDatabase(): Promise<{ server: DatabaseServer; admin: AdminDb } | number> {
  const dbStartedAt = performance.now();
  let server: DatabaseServer;
  try {
    server = await useDatabase(JOURNAL as 'postgres' | 'mysql');
  } catch (error) {
    if (error instanceof NotInstalledError) {
      process.stderr.write(`crash: ${error.message}\n`);
      return 3;
    }
    throw error;
  }
  const admin = JOURNAL === 'postgres' ? await postgresAdmin(server.url) : await mysqlAdmin(server.url);
  process.stderr.write(`crash: ${server.started ? 'started a throwaway' : 'using the'} ${JOURNAL} server (${server.url.replace(/:[^:@/]*@/, ':***@')}) in ${((performance.now() - dbStartedAt) / 1000).toFixed(1)} s\n`);
  return { server, admin };
}

/** Each mode's campaign in turn; with a database, on fresh tables dropped after it unless --keep. */
async function runModes(adminDb: AdminDb | undefined): Promise<Result[]> {
  const bundles = await bundle();
  const results: Result[] = [];
  const suffix = `${process.pid.toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  for (const [i, mode] of MODES.entries()) {
    if (adminDb === undefined) {
      results.push(await campaign(mode, bundles, root, i, SEED));
      continue;
    }
    const prefix = `crash_${mode === 'exactlyOnce' ? 'eo' : 'fast'}_${suffix}`;
    const tables: Tables = { table: `${prefix}_journal`, grantedTable: `${prefix}_granted`, inventoryTable: `${prefix}_inventory` };
    const db: Db = { admin: adminDb, tables };
    try {
      results.push(await campaign(mode, bundles, root, i, SEED, db));
    } finally {
      if (!KEEP) await adminDb.drop(tables).catch(() => undefined);
    }
  }
  return results;
}

/** The result line of each mode (stdout), and why it failed (stderr); true when one did. */
function printResults(results: readonly Result[]): boolean {
  let failed = false;
  for (const r of results) {
    const scenario = SCENARIO === 'mix' || CLUSTER || LOOP ? '' : ` scenario=${SCENARIO}`;
    const flaky = `${CLAIM_MODE === undefined ? '' : ` claim_mode=${CLAIM_MODE}`}${FLAKY_JOURNAL ? ' flaky_journal' : ''}${HINTS ? ' hints' : ''}`;
    const head = CLUSTER ? `crash ${r.name}${flaky} nodes=${NODES} journal=${JOURNAL}: ` : SHARED ? `crash ${r.name}${scenario} processes=2 shared: refused=${r.refused} ` : `crash ${r.name}${scenario}${flaky}: `;
    const g = r.gives;
    console.log(
      `${head}kills=${r.kills} purchases=${r.purchases} paid_units=${r.paid} granted_units=${r.granted} lost=${r.lost} silent=${r.silent} duplicated=${r.duplicated}` +
        `${LOOP ? ` granted_offline=${r.grantedOffline}` : ''} unverified=${r.unverified} not_durable=${r.notDurable} open_windows=${r.openWindows}` +
        (g === undefined
          ? ''
          : ` gives_per_delivery_max=${g.perDeliveryMax} given_twice_by_one_process=${g.twiceByOneProcess} repeated_after_crash=${g.repeatedAfterCrash} gives_total=${g.ok} give_calls=${g.calls} deliveries=${g.deliveries}`) +
        (FLAKY_JOURNAL ? ` journal_refused=acknowledge:${r.journalRefused.acknowledge},append:${r.journalRefused.append}` : ''),
    );
    const reasons = [...r.problems];
    if (r.notDurable > 0 && !reasons.some((p) => p.includes('not in the journal'))) reasons.push(`not_durable=${r.notDurable}: windows reported but not in the journal`);
    if (r.grantedOffline > 0 && !reasons.some((p) => p.includes('give was called'))) reasons.push(`granted_offline=${r.grantedOffline}`);
    if (r.mode === 'exactlyOnce' && !DURING_RUNS && r.lost > 0) reasons.push(`exactly-once lost ${r.lost} units with no purchase made during a run`);
    if (r.silent > 0 && !reasons.some((p) => p.startsWith('silent'))) reasons.push(`silent=${r.silent}`);
    if (r.duplicated > 0) reasons.push(`duplicated=${r.duplicated}: units granted beyond what was paid`);
    if (g !== undefined && g.twiceByOneProcess > 0 && !reasons.some((p) => p.includes('the SDK promises once'))) reasons.push(`given_twice_by_one_process=${g.twiceByOneProcess}`);
    if (FLAKY_JOURNAL && r.journalRefused.acknowledge === 0) reasons.push('--flaky-journal: the journal never refused an acknowledge (the campaign was too short for a stretch of trouble)');
    if (reasons.length > 0) {
      failed = true;
      process.stderr.write(`crash ${r.name}: FAILED\n${reasons.map((p) => `  - ${p.slice(0, 2000)}`).join('\n')}\n`);
    }
  }
  return failed;
}

async function main(): Promise<number> {
  const startedAt = performance.now();
  process.stderr.write(
    `crash: kills=${KILLS} ${LOOP ? 'loop' : `modes=${MODES.join(',')}`} scenario=${SCENARIO} seed=${SEED} purchases-during-runs=${DURING_RUNS} processes=${PROCESSES}${SHARED ? ' shared' : ''}${CLUSTER ? ` nodes=${NODES} journal=${JOURNAL}` : ''} players=${PLAYERS} lanes=${LANES}${KEEP ? ` dir=${root}` : ''}\n`,
  );
  const database = CLUSTER ? await openDatabase() : undefined;
  if (typeof database === 'number') return database;
  let results: Result[];
  try {
    results = await runModes(database?.admin);
  } finally {
    await database?.admin.end().catch(() => undefined);
    await database?.server.stop();
  }
  const failed = printResults(results);
  const kept = `; files kept in ${root}${CLUSTER && database?.server.started === true ? ' (the throwaway server and its tables are gone; point TEAMGAMES_TEST_*_URL at a server of your own to keep them)' : ''}`;
  process.stderr.write(`crash: ${((performance.now() - startedAt) / 1000).toFixed(1)} s in all${KEEP ? kept : ''}\n`);
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
