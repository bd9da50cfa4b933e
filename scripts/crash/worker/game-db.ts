/**
 * The game of a crash worker that is one node of several on a database journal: the
 * inventory is a table shared by every node, and each grant is one transaction of the
 * game, as the guide recommends: `recordDelivery` (the shared dedupe), then the inventory
 * row only when it returned true, then COMMIT. Every connection the node's pool opens is
 * announced as `conn <id>` on stdout (the server's pid / thread id), so the orchestrator
 * can watch a killed node's connections, and the player locks they held, leave the server.
 *
 * @module
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import type { DeliveredItem, DeliveryJournal } from '../../../src/index.js';
import type { InventoryLine, WorkerConfig } from './config.js';
import { config, log, random, stats } from './context.js';
import { failRate } from './game-file.js';

/** One game transaction on one connection of the node's pool. */
interface GameTx {
  /** `recordDelivery` of the engine's entry point, on this transaction. */
  record(deliveryId: string): Promise<boolean>;
  insert(line: InventoryLine): Promise<void>;
  commit(): Promise<void>;
  /** Rolls back; a connection that fails even that is closed (what it held goes with it). */
  rollback(): Promise<void>;
}

export interface GameDb {
  journal: DeliveryJournal & { createTables(): Promise<void> };
  begin(): Promise<GameTx>;
  ping(): Promise<void>;
  end(): Promise<void>;
}

const announce = (id: unknown): void => {
  // Synchronous on a pipe (Linux): announced before the connection runs its first statement.
  process.stdout.write(`conn ${String(id)}\n`);
};

export async function postgresGame(db: NonNullable<WorkerConfig['db']>): Promise<GameDb> {
  const { default: pgModule } = await import('pg');
  const { PostgresJournal, recordDelivery } = await import('../../../src/journals/postgres/index.js');
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
          void (await client.query(`INSERT INTO ${db.inventoryTable} (delivery_id, player, product, units, run, node, pid, online) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, inventoryValues(l))),
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

export async function mysqlGame(db: NonNullable<WorkerConfig['db']>): Promise<GameDb> {
  const { default: mysqlModule } = await import('mysql2/promise');
  const { MySqlJournal, recordDelivery } = await import('../../../src/journals/mysql/index.js');
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
          void (await connection.query(`INSERT INTO ${db.inventoryTable} (delivery_id, player, product, units, run, node, pid, online) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, inventoryValues(l))),
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

/** The node's game, once connected. */
export let gameDb: GameDb | undefined;

export async function connectGame(db: NonNullable<WorkerConfig['db']>): Promise<GameDb> {
  gameDb = config.journal === 'postgres' ? await postgresGame(db) : await mysqlGame(db);
  return gameDb;
}

/**
 * The grant of a node: one transaction of the game, the dedupe record and the inventory
 * row together. Simulated failures, a third each: before the transaction; inside it
 * (after the record and the row were written), which rolls both back; after its COMMIT
 * (the item is in, then the game throws: the engine grants it again, and the shared
 * dedupe must skip it, on whichever node).
 */
export async function grantInDb(item: DeliveredItem, online?: boolean): Promise<void> {
  await Promise.resolve();
  const failure = random() < failRate ? (['before', 'inside', 'after'] as const)[Math.floor(random() * 3)] : undefined;
  if (failure === 'before') {
    stats.grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name}`);
    throw new Error(`the game could not grant ${item.deliveryId} (simulated)`);
  }
  const tx = await (gameDb as GameDb).begin();
  let fresh: boolean;
  try {
    fresh = await tx.record(item.deliveryId);
    if (fresh) {
      await tx.insert({ deliveryId: item.deliveryId, player: item.player_name, product: item.product_id_string, units: item.quantity_to_grant, run: config.run, pid: process.pid, node: config.node, ...(online === undefined ? {} : { online }) });
    } else {
      stats.regrants += 1;
      log(`regrant ${item.deliveryId} ${item.player_name} (skipped, already applied by a node)`);
    }
    if (failure === 'inside') {
      stats.grantFailures += 1;
      log(`grant-failed ${item.deliveryId} ${item.player_name} (inside the transaction, rolled back)`);
      throw new Error(`the game failed inside the transaction of ${item.deliveryId} (simulated)`);
    }
    await tx.commit();
  } catch (error) {
    await tx.rollback();
    throw error;
  }
  if (fresh) stats.applied += 1;
  if (failure === 'after') {
    stats.grantFailures += 1;
    log(`grant-failed ${item.deliveryId} ${item.player_name} (after the COMMIT${fresh ? ', the item is in' : ''})`);
    throw new Error(`the game failed after granting ${item.deliveryId} (simulated)`);
  }
}

/** An inventory line as the values of its INSERT, in column order (both engines). */
function inventoryValues(l: InventoryLine): unknown[] {
  return [l.deliveryId, l.player, l.product, l.units, l.run, l.node, l.pid, l.online ?? true];
}
