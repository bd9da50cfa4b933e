/**
 * Deliveries per second through each journal, against the mock over HTTP: exactly-once
 * mode (the default: preview, intent journaled, the 10 s window waited out by a `sleep`
 * that moves the mock's clock and the client's together, claim, grant, acknowledge),
 * one player per delivery with one purchase each, 50 deliveries in flight at once, a grant
 * that does nothing (the figure is the SDK and its journal, not a game). The file journal
 * fdatasyncs each write; the database servers are the throwaway ones of
 * test/support/throwaway-databases.ts (or TEAMGAMES_TEST_*_URL), whose fsync is off. The journals
 * take turns within each round, in a rotating order, so a drift of the mock (its rows
 * grow) or of the machine falls on all of them.
 *
 * @module
 */
import { join } from 'node:path';
import { FileJournal, type DeliveryJournal } from 'teamgames-sdk';
import { mockAdmin } from '../common/mock-admin.js';
import { ENGINES, NotInstalledError, useDatabase, type DatabaseServer, type Engine } from '../../test/support/throwaway-databases.js';
import { deliverBatch, sharedClock } from './deliver.js';
import { JOURNAL_CONCURRENCY, QUICK } from './settings.js';

type JournalKind = 'file' | Engine;
export interface JournalFigure {
  journal: JournalKind;
  /** Deliveries per second, all timed rounds together; undefined when skipped. */
  rate?: number;
  deliveries: number;
  seconds: number;
  /** Per round, deliveries per second. */
  rounds: number[];
  skipped?: string;
}

export interface JournalResults {
  figures: JournalFigure[];
  fileNoFsync: number;
}

/** The journals under test, what closes them, and the engines that could not be started. */
interface Journals {
  journals: Map<JournalKind, DeliveryJournal>;
  fileNoFsync: FileJournal;
  skipped: JournalFigure[];
  servers: DatabaseServer[];
  closers: Array<() => Promise<void>>;
}

/** A SQL journal and its pool: what the engines differ in. */
interface SqlParts {
  journal: DeliveryJournal & { createTables(): Promise<void> };
  pool: { query(sql: string): Promise<unknown>; end(): Promise<void> };
}

/** A journal on a PostgreSQL or MariaDB server, with a pool of `poolSize` connections. */
async function sqlParts(engine: Engine, url: string, poolSize: number, tables: { table: string; grantedTable: string }): Promise<SqlParts> {
  if (engine === 'postgres') {
    const { default: pg } = await import('pg');
    const { PostgresJournal } = await import('teamgames-sdk/postgres');
    const pool = new pg.Pool({ connectionString: url, max: poolSize });
    pool.on('error', () => undefined);
    return { journal: new PostgresJournal(pool, tables), pool };
  }
  const { default: mysql } = await import('mysql2/promise');
  const { MySqlJournal } = await import('teamgames-sdk/mysql');
  const pool = mysql.createPool({ uri: url, connectionLimit: poolSize });
  return { journal: new MySqlJournal(pool, tables), pool };
}

/** A SQL journal on its own tables in a server, with a pool that holds a lock connection per delivery in flight, and some more. */
async function sqlJournal(engine: Engine, server: DatabaseServer, table: string): Promise<{ journal: DeliveryJournal; close: () => Promise<void> }> {
  const { journal, pool } = await sqlParts(engine, server.url, JOURNAL_CONCURRENCY + 5, { table: `${table}_journal`, grantedTable: `${table}_granted` });
  await journal.createTables();
  const close = async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}_journal, ${table}_granted`);
    await pool.end();
  };
  return { journal, close };
}

/** The file journals in `dir`, and a journal on each database server that starts (the others skipped, with why). */
async function openJournals(dir: string): Promise<Journals> {
  const file = new FileJournal(join(dir, 'journal.jsonl'));
  const fileNoFsync = new FileJournal(join(dir, 'journal-nofsync.jsonl'), { fsync: false });
  const opened: Journals = { journals: new Map([['file', file]]), fileNoFsync, skipped: [], servers: [], closers: [] };
  opened.closers.push(async () => {
    await file.close();
    await fileNoFsync.close();
  });
  const table = `bench_${process.pid.toString(36)}_${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  const engines: Engine[] = ['postgres', 'mysql'];
  const outcomes = await Promise.allSettled(engines.map((engine) => useDatabase(engine)));
  for (const [i, engine] of engines.entries()) {
    const outcome = outcomes[i]!;
    if (outcome.status === 'rejected') {
      const why = outcome.reason instanceof NotInstalledError ? outcome.reason.message : `${ENGINES[engine].label} could not be started: ${String((outcome.reason as Error)?.message ?? outcome.reason).split('\n')[0]}`;
      opened.skipped.push({ journal: engine, deliveries: 0, seconds: 0, rounds: [], skipped: why });
      continue;
    }
    opened.servers.push(outcome.value);
    const { journal, close } = await sqlJournal(engine, outcome.value, table);
    opened.journals.set(engine, journal);
    opened.closers.push(close);
  }
  return opened;
}

type Batch = (journal: DeliveryJournal, n: number) => Promise<{ deliveries: number; seconds: number }>;

/** A warm-up batch per journal (connections, tables, JIT), then the timed rounds, the journals in a rotating order. */
async function timedRounds(opened: Journals, batch: Batch, rounds: number, perRound: number): Promise<{ figures: JournalFigure[]; fileNoFsync: number }> {
  const kinds = [...opened.journals.keys()];
  for (const kind of kinds) await batch(opened.journals.get(kind)!, JOURNAL_CONCURRENCY);
  await batch(opened.fileNoFsync, JOURNAL_CONCURRENCY);
  const totals = new Map<JournalKind, { deliveries: number; seconds: number; rounds: number[] }>(kinds.map((k) => [k, { deliveries: 0, seconds: 0, rounds: [] }]));
  let noFsync = { deliveries: 0, seconds: 0 };
  for (let round = 0; round < rounds; round++) {
    const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
    for (const kind of order) {
      const r = await batch(opened.journals.get(kind)!, perRound);
      const total = totals.get(kind)!;
      total.deliveries += r.deliveries;
      total.seconds += r.seconds;
      total.rounds.push(r.deliveries / r.seconds);
    }
    const r = await batch(opened.fileNoFsync, perRound);
    noFsync = { deliveries: noFsync.deliveries + r.deliveries, seconds: noFsync.seconds + r.seconds };
  }
  const figures = [...totals].map(([kind, total]): JournalFigure => ({ journal: kind, rate: total.deliveries / total.seconds, ...total }));
  return { figures, fileNoFsync: noFsync.deliveries / noFsync.seconds };
}

/** The journal rounds: file, PostgreSQL and MariaDB, in that order (a server that could not start, skipped). */
export async function journalBench(url: string, dir: string): Promise<JournalResults> {
  const perRound = QUICK ? 100 : 300;
  const rounds = QUICK ? 2 : 3;
  const clock = await sharedClock(mockAdmin(url, 'mock'));
  // The servers start here, not during the HTTP rounds: initdb would take their cores.
  const started = performance.now();
  const opened = await openJournals(dir);
  const serversMs = performance.now() - started;
  try {
    const timed = await timedRounds(opened, (journal, n) => deliverBatch(url, clock, journal, n), rounds, perRound);
    const { servers } = opened;
    console.log(
      `\njournals: ${rounds} rounds × ${perRound} exactly-once deliveries per journal at concurrency ${JOURNAL_CONCURRENCY}, ${((performance.now() - started) / 1000).toFixed(1)} s in all` +
        `${servers.length > 0 ? `; database servers ready in ${(serversMs / 1000).toFixed(1)} s (${servers.map((s) => `${s.engine}${s.started ? ' throwaway, fsync off' : ' from the environment'}`).join(', ')})` : ''}`,
    );
    const all = [...timed.figures, ...opened.skipped];
    return { figures: (['file', 'postgres', 'mysql'] as const).map((k) => all.find((f) => f.journal === k)!), fileNoFsync: timed.fileNoFsync };
  } finally {
    for (const close of opened.closers) await close().catch(() => undefined);
    for (const server of opened.servers) await server.stop();
  }
}

/** The journal lines of the figures, and the summary lines. */
export function printJournals(results: JournalResults): void {
  for (const f of results.figures) {
    console.log(
      f.rate === undefined
        ? `journal ${f.journal}: skipped (${f.skipped})`
        : `journal ${f.journal}: ${f.rate.toFixed(0)} deliveries/s (rounds ${f.rounds.map((r) => r.toFixed(0)).join(', ')})${f.journal === 'file' ? `; without fsync ${results.fileNoFsync.toFixed(0)}/s` : ''}`,
    );
  }
}

export function journalLines(results: JournalResults): string[] {
  const lines = results.figures.map((f) => (f.rate === undefined ? `deliver journal=${f.journal}: skipped (${f.skipped})` : `deliver journal=${f.journal}: ${f.rate.toFixed(0)}/s at concurrency ${JOURNAL_CONCURRENCY}`));
  const fileRate = results.figures[0]!.rate!;
  const ratios = results.figures.filter((f) => f.journal !== 'file' && f.rate !== undefined).map((f) => `${f.journal}/file=${(f.rate! / fileRate).toFixed(2)}`);
  if (ratios.length > 0) lines.push(`deliver journal ratio: ${ratios.join(' ')} (target >= 0.50; exactly-once, the database servers without fsync, the file journal with)`);
  return lines;
}
