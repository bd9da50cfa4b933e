/**
 * The crash campaign's database admin (`--journal postgres|mysql`): fresh tables for each
 * mode, the counting (inventory, dedupe records, journal rows), and who holds or waits
 * for the player locks, asked of the server itself.
 *
 * @module
 */
import type { InventoryLine } from './worker/config.js';

/** The tables of one mode's run: fresh for each. */
export interface Tables {
  table: string;
  grantedTable: string;
  inventoryTable: string;
}

/** What the orchestrator asks the database server: setup, the counting, and who holds the player locks. */
export interface AdminDb {
  url: string;
  /** Drops (if left by an earlier run) and creates the journal's tables (the exported DDL) and the game's inventory table. */
  create(tables: Tables): Promise<void>;
  drop(tables: Tables): Promise<void>;
  inventory(tables: Tables): Promise<InventoryLine[]>;
  /** The deliveryIds in the dedupe table. */
  grantedIds(tables: Tables): Promise<string[]>;
  /** Rows of the journal table, its windows aside (kept until staff resolve them). */
  journalRows(tables: Tables): Promise<number>;
  /** Which connection holds each player's lock (players whose lock is free are left out). */
  lockHolders(table: string, players: readonly string[]): Promise<Array<{ player: string; conn: number }>>;
  /** Connections waiting for a player's lock (any player, any table). */
  lockWaiters(): Promise<number>;
  /** Which of these connections are still on the server. */
  present(conns: readonly number[]): Promise<number[]>;
  end(): Promise<void>;
}

export async function postgresAdmin(url: string): Promise<AdminDb> {
  const { default: pg } = await import('pg');
  const { postgresSchema } = await import('../../src/journals/postgres/index.js');
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
      await q(`CREATE TABLE ${t.inventoryTable} (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, delivery_id TEXT NOT NULL, player TEXT NOT NULL, product TEXT NOT NULL, units INTEGER NOT NULL, run INTEGER NOT NULL, node INTEGER NOT NULL, pid INTEGER NOT NULL, online BOOLEAN NOT NULL DEFAULT TRUE)`);
    },
    inventory: async (t) =>
      (await q(INVENTORY_SELECT(t))).map((r) => inventoryRow(r, String)),
    grantedIds: async (t) => (await q(`SELECT delivery_id FROM ${t.grantedTable}`)).map((r) => String(r['delivery_id'])),
    journalRows: async (t) => Number((await q(`SELECT count(*) AS n FROM ${t.table} WHERE delivery_id NOT LIKE 'window:%'`))[0]?.['n']),
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
const INVENTORY_SELECT = (t: Tables): string => `SELECT delivery_id, player, product, units, run, node, pid, online FROM ${t.inventoryTable} ORDER BY seq`;

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
    // A boolean (PostgreSQL) or 0/1 (MariaDB's TINYINT(1)).
    online: r['online'] === true || Number(r['online']) === 1,
  };
}

export async function mysqlAdmin(url: string): Promise<AdminDb> {
  const { default: mysql } = await import('mysql2/promise');
  const { mysqlSchema } = await import('../../src/journals/mysql/index.js');
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
        `CREATE TABLE ${t.inventoryTable} (seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, delivery_id VARBINARY(512) NOT NULL, player VARBINARY(320) NOT NULL, product VARBINARY(200) NOT NULL, units INT NOT NULL, run INT NOT NULL, node INT NOT NULL, pid INT NOT NULL, online BOOLEAN NOT NULL DEFAULT TRUE) ENGINE=InnoDB`,
      );
    },
    inventory: async (t) =>
      (await q(INVENTORY_SELECT(t))).map((r) => inventoryRow(r, text)),
    grantedIds: async (t) => (await q(`SELECT delivery_id FROM ${t.grantedTable}`)).map((r) => text(r['delivery_id'])),
    journalRows: async (t) => Number((await q(`SELECT count(*) AS n FROM ${t.table} WHERE delivery_id NOT LIKE 'window:%'`))[0]?.['n']),
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
