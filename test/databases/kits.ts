/**
 * One kit per engine, so every database suite runs the same scenarios on PostgreSQL and
 * on MariaDB: nodes (a pool each) and their journals, game transactions, and a look at the
 * server's own lock tables (who holds a player's lock, who waits) to kill a node's
 * connection the way a dying node loses it.
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { MySqlJournal, mysqlSchema, recordDelivery as mysqlRecord, type MySqlJournalOptions } from 'teamgames-sdk/mysql';
import { PostgresJournal, postgresSchema, recordDelivery as pgRecord, type PostgresJournalOptions } from 'teamgames-sdk/postgres';
import type { Engine } from '../support/throwaway-databases.js';
import { databaseUrl, mysqlPool, pgPool } from '../support/databases.js';

/** A journal of either engine, as the suites use it. */
export type SqlJournal = PostgresJournal | MySqlJournal;

/** A node's pool of either engine. */
export type Pool = pg.Pool | mysql.Pool;

/** An open game transaction on one connection. */
export interface GameTransaction {
  /** What `recordDelivery` and the game's own statements run on. */
  db: pg.PoolClient | mysql.PoolConnection;
  record(deliveryId: string, table?: string): Promise<boolean>;
  /** One statement of the game, with `?` placeholders on both engines. */
  run(sql: string, values: unknown[]): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface EngineKit {
  engine: Engine;
  label: string;
  url: string | undefined;
  /** A new node: a pool of its own. */
  pool(max?: number): Pool;
  journal(pool: Pool, options?: PostgresJournalOptions & MySqlJournalOptions): SqlJournal;
  /** Rows of one statement on the kit's admin pool. */
  query(sql: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  tableExists(table: string): Promise<boolean>;
  /** The exported DDL, run by hand as a migration would. */
  migrate(options: { table: string; grantedTable: string; hintsTable?: string }): Promise<void>;
  /** The connection holding the journal's lock on the player, if any. */
  lockHolder(table: string, player: string): Promise<number | undefined>;
  /** How many connections wait for the journal's lock on the player. */
  lockWaiters(table: string, player: string): Promise<number>;
  /** How many statements on the table wait for a row lock (another transaction's). */
  rowLockWaiters(table: string): Promise<number>;
  /** Ends a connection from the server's side, as when its node dies. */
  kill(connectionId: number): Promise<void>;
  begin(pool: Pool): Promise<GameTransaction>;
}

function postgresKit(): EngineKit {
  const url = databaseUrl('postgres');
  let admin: pg.Pool | undefined;
  const query = async (sql: string, values: unknown[] = []) => {
    admin ??= pgPool(url as string);
    return (await admin.query(sql, values)).rows as Array<Record<string, unknown>>;
  };
  // pg_locks splits an advisory lock's bigint key into classid (high half) and objid (low half).
  const lockRows = (granted: boolean) =>
    `SELECT pid FROM pg_locks
     WHERE locktype = 'advisory' AND granted = ${granted} AND objsubid = 1
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND classid::bigint = ((hashtextextended($1, 0) >> 32) & 4294967295)
       AND objid::bigint = (hashtextextended($1, 0) & 4294967295)`;
  const key = (table: string, player: string) => `teamgames-sdk:${table}:${player}`;
  return {
    engine: 'postgres',
    label: 'PostgreSQL',
    url,
    pool: (max = 5) => pgPool(url as string, { max }),
    journal: (pool, options) => new PostgresJournal(pool as pg.Pool, options),
    query,
    tableExists: async (table) => (await query('SELECT to_regclass($1) IS NOT NULL AS found', [table]))[0]?.['found'] === true,
    async migrate(options) {
      await query(postgresSchema(options));
    },
    lockHolder: async (table, player) => {
      const rows = await query(lockRows(true), [key(table, player)]);
      return rows[0] === undefined ? undefined : Number(rows[0]['pid']);
    },
    lockWaiters: async (table, player) => (await query(lockRows(false), [key(table, player)])).length,
    rowLockWaiters: async (table) =>
      Number((await query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [`%${table}%`]))[0]?.['n']),
    async kill(pid) {
      await query('SELECT pg_terminate_backend($1)', [pid]);
    },
    async begin(pool) {
      const db = await (pool as pg.Pool).connect();
      await db.query('BEGIN');
      const end = async (sql: string) => {
        try {
          await db.query(sql);
        } finally {
          db.release();
        }
      };
      let n = 0;
      return {
        db,
        record: (id, table) => pgRecord(db, id, table === undefined ? {} : { table }),
        run: async (sql, values) => {
          n = 0;
          await db.query(sql.replace(/\?/g, () => `$${++n}`), values);
        },
        commit: () => end('COMMIT'),
        rollback: () => end('ROLLBACK'),
      };
    },
  };
}

function mysqlKit(): EngineKit {
  const url = databaseUrl('mysql');
  let admin: mysql.Pool | undefined;
  const query = async (sql: string, values: unknown[] = []) => {
    admin ??= mysqlPool(url as string);
    const [rows] = await admin.query(sql, values);
    return rows as Array<Record<string, unknown>>;
  };
  const lockName = "CONCAT('teamgames:', LEFT(SHA2(CONCAT_WS(':', DATABASE(), ?, ?), 256), 54))";
  return {
    engine: 'mysql',
    label: 'MariaDB',
    url,
    pool: (max = 5) => mysqlPool(url as string, { connectionLimit: max }),
    journal: (pool, options) => new MySqlJournal(pool as mysql.Pool, options),
    query,
    tableExists: async (table) => (await query('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?', [table]))[0]?.['n'] === 1,
    async migrate(options) {
      // A migration tool runs the file statement by statement.
      for (const statement of mysqlSchema(options).split(/;\n/).map((s) => s.replace(/^--.*\n/, '').trim()).filter((s) => s !== '')) await query(statement);
    },
    lockHolder: async (table, player) => {
      const id = (await query(`SELECT IS_USED_LOCK(${lockName}) AS id`, [table, player]))[0]?.['id'];
      return id === null || id === undefined ? undefined : Number(id);
    },
    // The waiting GET_LOCK shows in the process list with its arguments (mysql2 formats them in).
    lockWaiters: async (table, player) =>
      Number((await query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND STATE = 'User lock' AND INFO LIKE ?", [`%GET_LOCK%'${table}', '${player}'%`]))[0]?.['n']),
    // Not INNODB_TRX: MariaDB serves it from a cache that polling keeps stale. A one-row
    // INSERT on the table still running in the process list is one waiting for a row lock.
    rowLockWaiters: async (table) =>
      Number((await query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO LIKE ?", [`INSERT%${table}%`]))[0]?.['n']),
    async kill(id) {
      await query(`KILL CONNECTION ${Number(id)}`);
    },
    async begin(pool) {
      const db = await (pool as mysql.Pool).getConnection();
      await db.beginTransaction();
      const end = async (finish: () => Promise<void>) => {
        try {
          await finish();
        } finally {
          db.release();
        }
      };
      return {
        db,
        record: (id, table) => mysqlRecord(db, id, table === undefined ? {} : { table }),
        run: async (sql, values) => {
          await db.query(sql, values);
        },
        commit: () => end(() => db.commit()),
        rollback: () => end(() => db.rollback()),
      };
    },
  };
}

/** Both engines' kits; a kit's `url` is undefined when its suites are skipped. */
export function engineKits(): EngineKit[] {
  return [postgresKit(), mysqlKit()];
}

/** Polls `check` until it holds (real servers: their state changes in real time). */
export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A promise to resolve from outside: gates that hold a node inside its lock. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}
