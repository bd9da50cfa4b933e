/**
 * {@link MySqlJournal}: the delivery journal in a MySQL or MariaDB table shared by every
 * node of one key, with a lock per player across nodes (`GET_LOCK`).
 *
 * @module
 */
import type { DeliveryJournal, JournalEntry, WindowResolution, WindowResolveOutcome } from '../contract.js';
import type { CheckoutHint, SharedCheckoutHint } from '../checkout-hints.js';
import { JournalError } from '../../errors.js';
import { journalFailure, type SqlJournalOptions, type TableName } from '../sql/common.js';
import { SqlJournalCore, type HintRow } from '../sql/journal.js';
import { MAX_DELIVERY_ID_BYTES, quoted, schemaStatements } from './schema.js';

/** What the journal runs queries on: a `mysql2/promise` `Pool` or `PoolConnection` fits as is. */
export interface MySqlQueryable {
  /** Runs one statement with `?` placeholders; resolves `[rows or result header, fields]`. */
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
}

/** A connection checked out of the pool: a `mysql2/promise` `PoolConnection`. */
export interface MySqlPoolConnection extends MySqlQueryable {
  /** Gives the connection back to the pool. */
  release(): void;
  /** Closes the connection (the server then releases its locks). */
  destroy(): void;
  /** A connection failure while checked out (the server ended it, the network dropped). */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Removes the listener given to `on`. */
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of connections: a `mysql2/promise` `Pool` (from `mysql.createPool(…)`) fits as is. */
export interface MySqlPool extends MySqlQueryable {
  /** Checks a connection out of the pool. */
  getConnection(): Promise<MySqlPoolConnection>;
}

/** Options of {@link MySqlJournal}. */
export type MySqlJournalOptions = SqlJournalOptions;

const NAME = 'MySqlJournal';

// GET_LOCK names are at most 64 characters, and one namespace for the whole server:
// hash the database, the table and the player into one (a collision only serializes two players).
// The database's clock in epoch ms, UTC whatever the session's time zone (NOW(3) is constant within a statement).
const NOW_MS = 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)';

const LOCK_NAME = "CONCAT('teamgames:', LEFT(SHA2(CONCAT_WS(':', DATABASE(), ?, ?), 256), 54))";

/**
 * A {@link DeliveryJournal} in a MySQL (8.0 and later) or MariaDB (10.5 and later) table, for
 * several game servers (nodes) that deliver for one key: any node finishes what another
 * started, and the engine holds a lock on the player across all of them around each
 * `deliver` and reconciliation.
 *
 * - One row per `deliveryId`; `append` is one statement (all its entries or none), an
 *   entry appended again keeps its place; `pending` lists by insertion order.
 * - {@link MySqlJournal.withPlayerLock} takes `GET_LOCK` on a connection of its own, held
 *   for the work and released after (`RELEASE_LOCK`); when the node dies, its connection
 *   closes and the server releases the lock. The journal calls of the work run on that
 *   connection, so a pool is never starved by its own locks, and a lock whose connection
 *   was lost fails the next write instead of continuing unlocked.
 * - The locks hold at most `maxLockConnections` of the pool's connections at once, by
 *   default the pool's size (`connectionLimit`) less one, counted over every journal
 *   given the pool: a grant that opens its transaction on the same pool always finds a
 *   connection (the locks taking them all would deadlock: each lock waiting for its
 *   grant, each grant for a connection). A player past the limit waits its turn within
 *   `lockTimeoutMs`. Size the pool for the players delivered at once, plus one, plus
 *   what the game runs on it.
 * - The tables (the journal's and the dedupe table of {@link recordDelivery}) are created
 *   on first use if they do not exist ({@link mysqlSchema} prints their DDL).
 *
 * MariaDB waits for the lock to the millisecond; MySQL counts `GET_LOCK`'s timeout in
 * whole seconds, so give it a `lockTimeoutMs` of at least 1000.
 *
 * Pass your own `mysql2/promise` pool: this entry point never imports `mysql2` itself.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * import { StorefrontClient } from 'teamgames-sdk';
 * import { MySqlJournal } from 'teamgames-sdk/mysql';
 *
 * const pool = mysql.createPool({ uri: process.env.DATABASE_URL, connectionLimit: 20 });
 * const client = new StorefrontClient({ journal: new MySqlJournal(pool) }); // the key from TEAMGAMES_API_KEY
 * await client.resumeDeliveries(grant); // at startup: finish what any node left
 * ```
 * @see [Delivering purchases in game: several game servers, one key](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#several-game-servers-one-key)
 */
export class MySqlJournal implements DeliveryJournal {
  /** This node's id on the intents it journals (see {@link DeliveryJournal.nodeId}). */
  readonly nodeId: string;
  /** The journal's table, as given. */
  readonly table: string;
  /**
   * How many connections of the pool the players' locks may hold at once: the
   * `maxLockConnections` option, or the pool's size less one (see {@link SqlJournalOptions.maxLockConnections}).
   */
  readonly maxLockConnections: number;
  readonly #core: SqlJournalCore<MySqlQueryable, MySqlPoolConnection, MySqlPool>;

  /**
   * Connects nothing yet: the tables are created (if needed) on first use.
   *
   * @throws InvalidInputError when `pool` is not a pool (no `query` and `getConnection`),
   *   or an option is unknown or invalid, or `maxLockConnections` exceeds the pool's
   *   size, or the pool has one connection and `maxLockConnections` is not given.
   */
  constructor(pool: MySqlPool, options: MySqlJournalOptions = {}) {
    this.#core = new SqlJournalCore<MySqlQueryable, MySqlPoolConnection, MySqlPool>(NAME, pool, options, { kind: 'a mysql2/promise Pool', connect: 'getConnection', sizeOption: 'connectionLimit', size: poolSize }, createTables);
    this.nodeId = this.#core.options.nodeId;
    this.table = this.#core.table;
    this.maxLockConnections = this.#core.lockConnections;
  }

  /**
   * Records entries in one statement, replacing entries with the same `deliveryId` in place.
   *
   * @throws JournalError when the database refuses or cannot be reached, or a
   *   `deliveryId` is longer than 512 bytes; nothing was recorded.
   * @throws InvalidInputError when an entry is not a {@link JournalEntry}; nothing was
   *   recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    await this.#core.append(
      entries,
      (db, rows) =>
        db.query(
          `INSERT INTO ${quoted(this.#core.options.table)} (delivery_id, player_name, entry) VALUES ?
         ON DUPLICATE KEY UPDATE player_name = VALUES(player_name), entry = VALUES(entry)`,
          [rows.map((e) => [e.deliveryId, e.playerName, JSON.stringify(e)])],
        ),
      (rows) => {
        const long = rows.find((e) => Buffer.byteLength(e.deliveryId) > MAX_DELIVERY_ID_BYTES);
        // Refused here: a server outside strict mode would cut it, and two cut ids would collide.
        if (long !== undefined) throw new JournalError(`${NAME}: could not append to the journal: the deliveryId ${JSON.stringify(long.deliveryId.slice(0, 60))}… is longer than ${MAX_DELIVERY_ID_BYTES} bytes; nothing was recorded`);
      },
    );
  }

  /**
   * The entries not acknowledged, oldest first; of one player (exact name) when given.
   *
   * @throws JournalError when the database cannot be read, or a row is not an entry.
   */
  async pending(playerName?: string): Promise<JournalEntry[]> {
    const table = quoted(this.#core.options.table);
    const [rows] = await this.#core.query('read the journal', (db) =>
      playerName === undefined
        ? db.query(`SELECT entry FROM ${table} ORDER BY seq`)
        : db.query(`SELECT entry FROM ${table} WHERE player_name = ? ORDER BY seq`, [playerName]),
    );
    return this.#core.entries(rows);
  }

  /**
   * Removes entries (unknown ids are ignored) in one statement.
   *
   * @throws JournalError when the database refuses or cannot be reached; nothing was removed.
   * @throws InvalidInputError when `deliveryIds` is not an array; nothing was removed.
   */
  async acknowledge(deliveryIds: readonly string[]): Promise<void> {
    await this.#core.acknowledge(deliveryIds, (db, ids) => db.query(`DELETE FROM ${quoted(this.#core.options.table)} WHERE delivery_id IN (?)`, [ids]));
  }

  /**
   * Closes the window `windowId` only while it is open: it reads the row, then one
   * conditional `UPDATE … WHERE entry =` the open window it read (byte for byte), so of
   * several resolves at once, from any node, exactly one writes and the others read who
   * came first (see {@link DeliveryJournal.resolveWindow}). No schema change.
   *
   * @throws JournalError when the database refuses or cannot be reached, or the row is
   *   not an entry; nothing was written then.
   * @throws InvalidInputError when `resolution` is not `{ by, at, note }`; nothing was written.
   */
  async resolveWindow(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome> {
    const table = quoted(this.#core.options.table);
    return this.#core.resolveWindow(
      windowId,
      resolution,
      async (db, id) => ((await db.query(`SELECT entry FROM ${table} WHERE delivery_id = ?`, [id]))[0] as Array<{ entry: unknown }>)[0]?.entry,
      // Compared byte for byte (utf8mb4_bin), whatever the server's default collation.
      async (db, id, entry, read) =>
        ((await db.query(`UPDATE ${table} SET entry = ? WHERE delivery_id = ? AND entry = CAST(? AS CHAR CHARACTER SET utf8mb4) COLLATE utf8mb4_bin`, [entry, id, read]))[0] as { affectedRows?: number })
          .affectedRows ?? 0,
    );
  }

  /**
   * Records a checkout hint in the hints' table (see {@link DeliveryJournal.addCheckoutHint}),
   * expiring `hint.expiresInMs` after the database's `NOW(3)`; the same hint written again
   * while it lives changes nothing. {@link "teamgames-sdk"!expectCheckout} calls it.
   *
   * @example
   * ```ts
   * await expectCheckout(journal, 'Player123', { transactionId: result.transactionId });
   * ```
   * @throws InvalidInputError when the player's name or the hint is not valid; nothing was written.
   * @throws JournalError when the database refuses or cannot be reached; nothing was written.
   */
  async addCheckoutHint(playerName: string, hint?: CheckoutHint): Promise<void> {
    const hints = quoted(this.#core.options.hintsTable);
    await this.#core.addCheckoutHint(playerName, hint, (db, player, transactionId, expiresInMs) =>
      // Only an expired row is written anew; the IFs read the row's old expiry (assignments run left to right, expires_ms last).
      db.query(
        `INSERT INTO ${hints} (player_name, transaction_id, created_ms, expires_ms) VALUES (?, ?, ${NOW_MS}, ${NOW_MS} + ?)
         ON DUPLICATE KEY UPDATE created_ms = IF(expires_ms <= VALUES(created_ms), VALUES(created_ms), created_ms), expires_ms = IF(expires_ms <= VALUES(created_ms), VALUES(expires_ms), expires_ms)`,
        [player, transactionId, expiresInMs],
      ),
    );
  }

  /**
   * The checkout hints not expired, oldest first, at most the newest 10,000, each with its
   * age and remaining life computed by the database (see
   * {@link DeliveryJournal.liveCheckoutHints}); once a minute it also deletes the expired
   * ones. A delivery loop on this journal calls it every few seconds.
   *
   * @example
   * ```ts
   * const waiting = (await journal.liveCheckoutHints()).length;
   * ```
   * @param onBadRow - Given, a row that is not a hint (changed outside the SDK) is handed
   *   to it and left out, the others read; without it, the read fails.
   * @throws JournalError when the database cannot be read (the hints' table missing with
   *   `createTables: false`), or a row is not a hint and no `onBadRow` was given.
   */
  async liveCheckoutHints(onBadRow?: (error: JournalError) => void): Promise<SharedCheckoutHint[]> {
    const hints = quoted(this.#core.options.hintsTable);
    return this.#core.liveCheckoutHints(
      async (db, limit) =>
        (
          await db.query(
            `SELECT player_name, transaction_id, clock.n - created_ms AS age_ms, expires_ms - clock.n AS remaining_ms
             FROM ${hints}, (SELECT ${NOW_MS} AS n) AS clock WHERE expires_ms > clock.n ORDER BY created_ms DESC, player_name DESC, transaction_id DESC LIMIT ?`,
            [limit],
          )
        )[0] as HintRow[],
      async (db, limit) => {
        await db.query(`DELETE FROM ${hints} WHERE expires_ms <= ${NOW_MS}`);
        // A derived table with LIMIT is materialized first, so it may read the table the DELETE changes.
        await db.query(`DELETE h FROM ${hints} AS h JOIN (SELECT created_ms FROM ${hints} ORDER BY created_ms DESC LIMIT 1 OFFSET ?) AS cut ON h.created_ms <= cut.created_ms`, [limit]);
      },
      onBadRow,
    );
  }

  /**
   * Deletes the checkout hint of the player and transaction (`undefined`: the hint naming
   * none), once a delivery satisfied it (see {@link DeliveryJournal.endCheckoutHint}): the
   * delivery loop that delivered calls it, and the other nodes drop the hint at their next
   * read. A hint that is not there is ignored.
   *
   * @example
   * ```ts
   * await journal.endCheckoutHint('Player123', transactionId);
   * ```
   * @throws JournalError when the database refuses or cannot be reached.
   */
  async endCheckoutHint(playerName: string, transactionId?: string): Promise<void> {
    const hints = quoted(this.#core.options.hintsTable);
    await this.#core.endCheckoutHint(playerName, transactionId, (db, player, id) => db.query(`DELETE FROM ${hints} WHERE player_name = ? AND transaction_id = ?`, [player, id]));
  }

  /**
   * Runs `work` holding the player's lock across every node of this table: `GET_LOCK` on
   * a connection checked out for it, released after `work` (or by the server, when this
   * node dies and the connection closes).
   *
   * @throws JournalError when no turn among the pool's lock connections
   *   (`maxLockConnections`), no connection or no lock could be had within
   *   `lockTimeoutMs`, or the database failed; `work` has not run then.
   */
  async withPlayerLock<T>(playerName: string, work: () => Promise<T>): Promise<T> {
    const lock = await this.#core.checkOut(playerName, (pool) => pool.getConnection(), (late) => late.release());
    const { connection, who } = lock;
    const remaining = lock.remainingMs();
    let got: unknown;
    try {
      const [rows] = await connection.query(`SELECT GET_LOCK(${LOCK_NAME}, ?) AS got`, [this.table, playerName, remaining / 1000]);
      got = (rows as Array<{ got: unknown }>)[0]?.got;
    } catch (error) {
      got = error;
    }
    if (Number(got) !== 1) {
      lock.detach();
      // A connection whose GET_LOCK failed is closed: whatever it holds goes with it.
      connection.destroy();
      lock.free();
      if (got === 0 || got === '0') throw lock.busy();
      throw journalFailure(NAME, `take ${who}; nothing was done`, got instanceof Error ? got : new Error(`GET_LOCK returned ${String(got)}`));
    }
    return this.#core.runLocked(
      lock,
      work,
      (locked) => locked.query(`SELECT RELEASE_LOCK(${LOCK_NAME}) AS released`, [this.table, playerName]),
      // A connection that failed is closed, not reused: its lock (if any is left) goes with it.
      (locked, failed) => (failed ? locked.destroy() : locked.release()),
    );
  }

  /**
   * Creates the journal's table, the dedupe table and the checkout hints' table if they do not exist. The first call
   * of the journal does it anyway; call it at startup when the game's grants use
   * {@link recordDelivery} before any delivery. Safe to run from many nodes at once.
   *
   * @throws JournalError when the database refuses (the user may not create tables:
   *   create them from {@link mysqlSchema} and pass `createTables: false`).
   */
  async createTables(): Promise<void> {
    await this.#core.createTables();
  }
}

/**
 * A `mysql2` pool's size: its `connectionLimit` (default 10; 0 is unbounded), on the
 * promise pool's inner pool or on a callback pool; `undefined` for another pool.
 */
function poolSize(pool: object): number | undefined {
  type Sized = { config?: { connectionLimit?: unknown } };
  const limit = ((pool as { pool?: Sized }).pool ?? (pool as Sized)).config?.connectionLimit;
  // Number.isInteger refuses whatever is not a number.
  if (!Number.isInteger(limit) || (limit as number) < 0) return undefined;
  return limit === 0 ? Infinity : (limit as number);
}

/** The tables' DDL, run once by the journal's first query. */
async function createTables(db: MySqlQueryable, table: TableName, grantedTable: TableName, hintsTable: TableName): Promise<void> {
  // CREATE TABLE IF NOT EXISTS is safe to race on MySQL and MariaDB (metadata locks);
  // one statement per call, since pools rarely allow several.
  for (const statement of schemaStatements(table, grantedTable, hintsTable)) await db.query(statement);
}
