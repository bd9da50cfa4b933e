/**
 * The end of one mode's crash campaign: the drain (one worker, no kills, no faults, until
 * the journal is empty and the mock lists nothing paid and undelivered), then the counting,
 * from the mock's purchase rows (ground truth) and the game's inventory: per player,
 * lost = max(0, paid − granted), duplicated = max(0, granted − paid) (plus any deliveryId
 * applied twice), silent = lost units of players for whom no unverified window was ever
 * reported, and the lost units must fit in the rows bought and delivered inside one of the player's windows.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import type { DeliveryMode } from '../../src/index.js';
import { percentile } from '../common/figures.js';
import type { Campaign } from './campaign.js';
import { kill, pause, waitForLine } from './children.js';
import type { ClusterFigures } from './cluster.js';
import { API_KEY, CLUSTER, LOCK_TIMEOUT_MS, LOOP, NODES, WINDOW_SLACK_MS } from './options.js';
import { SCENARIOS } from './scenario.js';
import { journalWindowsPath, type InventoryLine, type PurchaseRowLite, type UnverifiedLine } from './worker/config.js';

/** One mode's figures: the result line. */
export interface Result {
  mode: DeliveryMode;
  /** The mode, or `loop`. */
  name: string;
  kills: number;
  purchases: number;
  paid: number;
  granted: number;
  lost: number;
  silent: number;
  duplicated: number;
  unverified: number;
  /** Windows reported through onEvent that the journal does not hold at the end (#24 point 5: must be 0). */
  notDurable: number;
  /** Window records still open (`unverified`) in the journal at the end. */
  openWindows: number;
  /** --loop: give called for a player the node did not hold as online (must be 0). */
  grantedOffline: number;
  /** --loop: the gives per deliveryId (see {@link Gives}). */
  gives: Gives | undefined;
  /** --flaky-journal: the calls the flaky journal refused (from the workers' logs). */
  journalRefused: { acknowledge: number; append: number };
  refused: number;
  problems: string[];
  seconds: number;
}

/** What the drain and the files tell. */
interface Evidence {
  rows: PurchaseRowLite[];
  inventory: InventoryLine[];
  /** The windows reported through onEvent (the `unverified=` figure). */
  windows: UnverifiedLine[];
  /** The windows the journal holds after the drain (durable before they are reported). */
  journalWindows: UnverifiedLine[];
  workerLog: string;
  dropsFired: number;
  drainRun: number;
  coldStart: number | undefined;
}

const readLines = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

/** The drain, then the mock's rows; the mock stops. */
async function drain(c: Campaign): Promise<Pick<Evidence, 'rows' | 'dropsFired' | 'drainRun' | 'coldStart'>> {
  const faults = await c.admin<Array<{ fired: number }>>('GET', '/__mock/faults');
  const dropsFired = faults.reduce((sum, f) => sum + f.fired, 0);
  await c.admin('POST', '/__mock/faults/clear');
  const drainRun = c.workers.run;
  const drainer = c.workers.spawn(true); // no spare left: a cold start, timed below
  const coldStart = await c.workers.started(drainer).then(() => c.workers.startupMs.pop());
  const drained = await waitForLine(drainer, (l) => l.startsWith('drained ') || l.startsWith('refused '), 600_000);
  const drainExit = await drainer.closed;
  await c.clock?.stop(); // --loop: the mock's clock ran fast until now
  if (drained === undefined || !drained.startsWith('drained ') || drainExit.code !== 0) {
    c.problem(`the drain failed (exit ${drainExit.code}, ${drained ?? 'no line'}): ${drainer.stderr.trim().slice(-3000)}`);
  }
  const rows = await c.admin<PurchaseRowLite[]>('GET', `/__mock/purchases?apiKey=${API_KEY}`);
  const mock = c.mock;
  if (mock !== undefined) {
    mock.proc.kill('SIGTERM');
    await Promise.race([mock.closed, pause(5_000)]);
    kill(mock);
  }
  return { rows, dropsFired, drainRun, coldStart };
}

/** The inventory, the windows and the logs; database nodes: the dedupe table agrees with the inventory, the journal table is empty. */
async function evidence(c: Campaign): Promise<Pick<Evidence, 'inventory' | 'windows' | 'journalWindows' | 'workerLog'>> {
  const { db } = c;
  const nodeFiles = CLUSTER ? Array.from({ length: NODES }, (_, node) => c.nodePaths(node)) : [c.paths];
  const inventory = db === undefined ? readLines<InventoryLine>(c.paths.inventoryPath) : await db.admin.inventory(db.tables);
  const windows = nodeFiles.flatMap((f) => readLines<UnverifiedLine>(f.unverifiedPath));
  // The journal's own window records, as the drain found them (worker/config.ts).
  const journalWindows = nodeFiles.flatMap((f) => (existsSync(journalWindowsPath(f.unverifiedPath)) ? readLines<UnverifiedLine>(journalWindowsPath(f.unverifiedPath)) : []));
  const workerLog = nodeFiles.map((f) => (existsSync(f.logPath) ? readFileSync(f.logPath, 'utf8') : '')).join('');
  if (db !== undefined) {
    // The dedupe table and the inventory are written in one transaction: the same ids.
    const recorded = new Set(await db.admin.grantedIds(db.tables));
    const applied = new Set(inventory.map((l) => l.deliveryId));
    const recordedOnly = [...recorded].filter((id) => !applied.has(id));
    const appliedOnly = [...applied].filter((id) => !recorded.has(id));
    if (recordedOnly.length > 0) c.problem(`${recordedOnly.length} deliveryIds recorded by recordDelivery without their inventory row (committed apart?): ${recordedOnly.slice(0, 5).join(', ')}`);
    if (appliedOnly.length > 0) c.problem(`${appliedOnly.length} inventory rows without their recordDelivery record: ${appliedOnly.slice(0, 5).join(', ')}`);
    const left = await db.admin.journalRows(db.tables);
    if (left > 0) c.problem(`${left} rows left in the journal table after the drain (windows aside)`);
  }
  return { inventory, windows, journalWindows, workerLog };
}

/** Units paid per player, from the mock's rows. */
function paidUnits(c: Campaign, rows: readonly PurchaseRowLite[]): { paid: Map<string, number>; total: number } {
  const paid = new Map<string, number>();
  let total = 0;
  let undelivered = 0;
  for (const row of rows) {
    if (row.paymentstatus !== 'Paid') continue;
    paid.set(row.username, (paid.get(row.username) ?? 0) + row.givequantity);
    total += row.givequantity;
    if (row.deliverystatus !== 'Delivered') undelivered += 1;
  }
  if (undelivered > 0) c.problem(`${undelivered} paid rows still undelivered on the mock after the drain`);
  return { paid, total };
}

/** Units granted per player, from the inventory; a deliveryId applied twice is a duplicate, an invoice id must match its row. */
function grantedUnits(c: Campaign, rows: readonly PurchaseRowLite[], inventory: readonly InventoryLine[]): { granted: Map<string, number>; total: number; twice: number } {
  const granted = new Map<string, number>();
  const ids = new Map<string, InventoryLine>();
  let total = 0;
  let twice = 0;
  for (const line of inventory) {
    const first = ids.get(line.deliveryId);
    if (first !== undefined) {
      twice += line.units; // the game's dedupe failed: applied twice
      c.problem(`deliveryId ${line.deliveryId} applied twice (runs ${first.run} and ${line.run}${line.node === undefined ? '' : `, nodes ${first.node} and ${line.node}`})`);
      continue;
    }
    ids.set(line.deliveryId, line);
    granted.set(line.player, (granted.get(line.player) ?? 0) + line.units);
    total += line.units;
  }
  // Exactly-once ids name the invoice: each must be a delivered row of that player and size.
  const byInvoice = new Map(rows.map((r) => [String(r.invoice), r]));
  for (const line of ids.values()) {
    if (!line.deliveryId.startsWith('invoice:')) continue;
    const row = byInvoice.get(line.deliveryId.slice('invoice:'.length));
    if (row === undefined || row.username !== line.player || row.givequantity !== line.units || row.deliverystatus !== 'Delivered') {
      c.problem(`granted ${line.deliveryId} (${line.player}, ${line.units} units) does not match the mock's row ${JSON.stringify(row)}`);
    }
  }
  return { granted, total, twice };
}

/** Lost, silent, duplicated and uncovered units, per player then summed. */
function losses(c: Campaign, e: Evidence, paid: Map<string, number>, granted: Map<string, number>, twice: number) {
  const windowsOf = new Map<string, UnverifiedLine[]>();
  // A window counts when reported (onEvent) or durable in the journal (a kill may fall between the two).
  for (const w of [...e.windows, ...e.journalWindows]) windowsOf.set(w.playerName, [...(windowsOf.get(w.playerName) ?? []), w]);
  let lost = 0;
  let silent = 0;
  let duplicated = twice;
  let uncovered = 0;
  const details: string[] = [];
  for (const player of new Set([...paid.keys(), ...granted.keys()])) {
    const p = paid.get(player) ?? 0;
    const g = granted.get(player) ?? 0;
    if (g > p) duplicated += g - p;
    if (p <= g) continue;
    lost += p - g;
    const own = windowsOf.get(player) ?? [];
    if (own.length === 0) silent += p - g;
    // Stricter: the lost units must fit in the rows bought and delivered inside one of the
    // player's windows (a window that starts after a purchase does not cover it: #33 point 1).
    const inside = (at: number, w: UnverifiedLine): boolean => at >= w.from - 1_000 && at <= w.to + WINDOW_SLACK_MS;
    const coverable = e.rows
      .filter((r) => r.username === player && r.paymentstatus === 'Paid' && r.delivered !== null)
      .filter((r) => {
        const at = Date.parse(r.delivered as string);
        const bought = Date.parse(r.created);
        return own.some((w) => inside(at, w) && inside(bought, w));
      })
      .reduce((sum, r) => sum + r.givequantity, 0);
    const outside = Math.max(0, p - g - coverable);
    uncovered += outside;
    details.push(`${player}: paid ${p} granted ${g} lost ${p - g} windows ${own.length}${outside > 0 ? ` OUTSIDE-WINDOWS ${outside}` : ''}`);
  }
  if (uncovered > 0) c.problem(`${uncovered} lost units lie outside every unverified window of their player: ${details.filter((d) => d.includes('OUTSIDE')).join('; ')}`);
  if (silent > 0) c.problem(`silent losses: ${details.filter((d) => d.includes('windows 0')).join('; ')}`);
  return { lost, silent, duplicated, uncovered, details };
}

/**
 * #24 point 5: every window reported through onEvent must be among the journal's window
 * records at the end (the record is written before the event), matched by player, from
 * and to; and how many of those records are still open.
 */
function durability(c: Campaign, e: Evidence): { notDurable: number; openWindows: number } {
  const key = (w: UnverifiedLine): string => `${w.playerName}\u0000${w.from}\u0000${w.to}`;
  const durable = new Set(e.journalWindows.map(key));
  // --flaky-journal: a window whose record the journal refused is reported all the same and
  // kept in memory for the engine's next write (engine.ts #reportUnverified); a kill before
  // that write leaves it out of the journal. Reported, not silent: counted apart.
  const refused = new Set([...e.workerLog.matchAll(/ flaky window-refused (\{[^\n]*\})/g)].map((m) => key(JSON.parse(m[1] as string) as UnverifiedLine)));
  const refusedMissing = e.windows.filter((w) => !durable.has(key(w)) && refused.has(key(w)));
  if (refusedMissing.length > 0) c.notes.push(`${refusedMissing.length} windows reported (onEvent) whose journal record the flaky journal refused, the worker killed before the engine wrote them again: not in the journal at the end, not counted in not_durable`);
  const missing = e.windows.filter((w) => !durable.has(key(w)) && !refused.has(key(w)));
  if (missing.length > 0) c.problem(`${missing.length} unverified windows were reported but are not in the journal at the end: ${missing.slice(0, 5).map((w) => JSON.stringify(w)).join(', ')}`);
  return { notDurable: missing.length, openWindows: e.journalWindows.filter((w) => w.state !== 'resolved').length };
}

/** --loop: calls of give for a player the node did not hold as online (the workers log each), checked against the grants recorded offline. */
function offlineGrants(c: Campaign, e: Evidence): number {
  const calls = e.workerLog.match(/ give-offline /g)?.length ?? 0;
  const recorded = e.inventory.filter((l) => l.online === false).length;
  if (calls > 0) c.problem(`give was called ${calls} times for a player the node did not hold as online (${recorded} of them applied): ${e.workerLog.split('\n').filter((l) => l.includes(' give-offline ')).slice(0, 3).join(' | ')}`);
  if (recorded > calls) c.problem(`${recorded} grants recorded offline, more than the ${calls} give-offline calls logged`);
  return Math.max(calls, recorded);
}

/**
 * --loop: the gives per deliveryId, from the workers' logs (worker/loop.ts logs every call
 * of give, `give-ok` when it succeeded, `give-again` when it is called for a deliveryId
 * whose give already succeeded in that process). The SDK promises that a process never
 * gives again what it gave (#33 point 4): `twiceByOneProcess` (deliveryIds given again by
 * the process that gave them) must be 0, so `perDeliveryMax`, the most successful gives of
 * one deliveryId by one process, is 1. A give repeated by another process, after a SIGKILL
 * that came before the journal's acknowledgement or on another node, is expected (the
 * game's deliveryId record skips it): `repeatedAfterCrash`, counted apart.
 */
export interface Gives {
  /** Calls of give (failed ones included). */
  calls: number;
  /** Gives that succeeded. */
  ok: number;
  /** deliveryIds given successfully at least once. */
  deliveries: number;
  /** The most successful gives of one deliveryId by one process. */
  perDeliveryMax: number;
  /** deliveryIds given again (called, successful or not) by a process whose give of it had succeeded. */
  twiceByOneProcess: number;
  /** deliveryIds given successfully by more than one process (after a kill, or by another node). */
  repeatedAfterCrash: number;
}

function countGives(c: Campaign, log: string): Gives {
  const okBy = new Map<string, Map<string, number>>(); // deliveryId -> process -> successful gives
  let ok = 0;
  for (const m of log.matchAll(/ r(\d+) p(\d+) give-ok (\S+) /g)) {
    const [, run, pid, id] = m as unknown as [string, string, string, string];
    const byProcess = okBy.get(id) ?? new Map<string, number>();
    const proc = `r${run} p${pid}`;
    byProcess.set(proc, (byProcess.get(proc) ?? 0) + 1);
    okBy.set(id, byProcess);
    ok += 1;
  }
  const again = new Set<string>();
  for (const m of log.matchAll(/ r(\d+) p(\d+) give-again (\S+) /g)) again.add(`${m[3]} r${m[1]} p${m[2]}`);
  let perDeliveryMax = 0;
  let repeatedAfterCrash = 0;
  for (const [id, byProcess] of okBy) {
    for (const [proc, n] of byProcess) {
      perDeliveryMax = Math.max(perDeliveryMax, n);
      if (n > 1) again.add(`${id} ${proc}`);
    }
    if (byProcess.size > 1) repeatedAfterCrash += 1;
  }
  if (again.size > 0) c.problem(`${again.size} deliveryIds given again by the process whose give of them had succeeded (the SDK promises once): ${[...again].slice(0, 5).join(', ')}`);
  return { calls: log.match(/ give [^\n]/g)?.length ?? 0, ok, deliveries: okBy.size, perDeliveryMax, twiceByOneProcess: again.size, repeatedAfterCrash };
}

/** The details on stderr: timing, faults fired, regrants, the nodes' figures, the scenarios, losses by player. */
function tell(c: Campaign, e: Evidence, uncovered: number, details: readonly string[], cluster: ClusterFigures | undefined): void {
  const count = (pattern: RegExp): number => e.workerLog.match(pattern)?.length ?? 0;
  const pct = (q: number): string => (c.workers.startupMs.length === 0 ? '-' : percentile(c.workers.startupMs, q).toFixed(0));
  const seconds = (performance.now() - c.startedAt) / 1000;
  const head = `crash ${c.name}${c.tag}:`;
  process.stderr.write(
    `${head} ${seconds.toFixed(1)} s, ${c.workers.run} worker runs, startup to ready p50 ${pct(0.5)} ms p95 ${pct(0.95)} ms, cold start to ready ${e.coldStart?.toFixed(0) ?? '-'} ms; ` +
      `claim answers dropped ${e.dropsFired}, grants failed ${count(/ grant-failed /g)}, regrants skipped ${count(/ regrant /g)}, ` +
      `outcome unknown ${count(/ OUTCOME_UNKNOWN /g)}, journal errors ${count(/journalError/g)}, windows in the journal after the drain ${e.journalWindows.length}, lost outside windows ${uncovered}\n`,
  );
  if (c.db !== undefined && cluster !== undefined) {
    const lags = [...e.workerLog.matchAll(/clock-lag (\d+) ms/g)].map((m) => Number(m[1]));
    const { tables } = c.db;
    process.stderr.write(
      `${head} tables ${tables.table}, ${tables.grantedTable}, ${tables.inventoryTable}; ${cluster.outages} outages (${cluster.outageKills} nodes killed at once), ${cluster.earlyKills} kills 0–100 ms into a run; ` +
        `${cluster.killsHoldingLocks} kills hit a node holding player locks (${cluster.locksHeldAtKills} locks), ${cluster.killsWithWaiters} while a connection waited for a player lock; ` +
        `${cluster.connsWatched} connections of killed nodes left the server within ${cluster.slowestGoneMs.toFixed(0)} ms at most; ` +
        `${e.inventory.filter((l) => l.run !== e.drainRun).length} of ${e.inventory.length} grants applied by the nodes under kills (the others by the drain); ` +
        `lock timeouts (${LOCK_TIMEOUT_MS} ms) ${count(/event journalError [^\n]*was not free within/g)}, pool exhausted ${count(/event journalError [^\n]*no connection of the pool was free/g)}; ` +
        `node clocks lagged the mock's by ${lags.length === 0 ? 0 : Math.max(...lags)} ms at most (window slack ${WINDOW_SLACK_MS} ms)\n`,
    );
  }
  if (!CLUSTER && !LOOP) {
    const runs = SCENARIOS.map((s) => `${s} ${c.workers.scenarioRuns.get(s) ?? 0}`).join(', ');
    const accepted = count(/ two-names ACCEPTED/g);
    process.stderr.write(
      `${head} scenario runs: ${runs}; self-kills ${c.workers.selfKills} (torn appends ${count(/ selfkill torn-append/g)}, after a claim answer ${count(/ selfkill no-raw-rows/g)}), ` +
        `claim answers stripped of rawTransactions ${count(/ no-raw-rows: stripped/g)}, journal opened under a second name: refused ${count(/ two-names refused/g)}, accepted ${accepted}\n`,
    );
    if (accepted > 0) c.problem(`${accepted} times a second FileJournal on a symlink or hard link to the journal this process held was not refused (#21 point 2)`);
  }
  if (LOOP) {
    const claims = count(/ claim "[^"\n]*" [A-Z_]* ?granted=/g);
    const p = c.presence?.counts;
    process.stderr.write(
      `${head} presence changes sent: ${p?.joins ?? 0} joins, ${p?.leaves ?? 0} leaves (${p?.moves ?? 0} moves between nodes, ${p?.relogs ?? 0} relogs, ${p?.secondProxies ?? 0} times on a second node); ` +
        `/claim typed ${count(/ claim "[^"\n]*"\n/g)} (${claims} answered), loop errors ${count(/ event loopError /g)}, unverified events ${e.windows.length}, ` +
        `${e.inventory.filter((l) => l.run !== e.drainRun).length} of ${e.inventory.length} grants applied by the loops under kills (the others by the drain's loop), mock clock advances ${c.clock?.advances ?? 0}\n`,
    );
  }
  for (const note of c.notes) process.stderr.write(`crash ${c.name}: NOTE ${note}\n`);
  if (details.length > 0) process.stderr.write(`crash ${c.name}: losses by player: ${details.slice(0, 8).join('; ')}${details.length > 8 ? `; … ${details.length - 8} more` : ''}\n`);
}

export async function drainAndCount(c: Campaign, cluster: ClusterFigures | undefined): Promise<Result> {
  const drained = await drain(c);
  const e: Evidence = { ...drained, ...(await evidence(c)) };
  const paid = paidUnits(c, e.rows);
  const granted = grantedUnits(c, e.rows, e.inventory);
  const { lost, silent, duplicated, uncovered, details } = losses(c, e, paid.paid, granted.granted, granted.twice);
  const { notDurable, openWindows } = durability(c, e);
  const grantedOffline = LOOP ? offlineGrants(c, e) : 0;
  const gives = LOOP ? countGives(c, e.workerLog) : undefined;
  const journalRefused = { acknowledge: e.workerLog.match(/ flaky acknowledge refused /g)?.length ?? 0, append: e.workerLog.match(/ flaky append refused /g)?.length ?? 0 };
  tell(c, e, uncovered, details, cluster);
  const seconds = (performance.now() - c.startedAt) / 1000;
  return {
    mode: c.mode,
    name: c.name,
    kills: c.kills,
    purchases: c.purchases,
    paid: paid.total,
    granted: granted.total,
    lost,
    silent,
    duplicated,
    unverified: e.windows.length,
    notDurable,
    openWindows,
    grantedOffline,
    gives,
    journalRefused,
    refused: c.refused,
    problems: c.problems,
    seconds,
  };
}
