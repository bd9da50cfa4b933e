/**
 * {@link PostgresJournal}: the delivery journal in a PostgreSQL table shared by every
 * node of one key, with a lock per player across nodes (`pg_advisory_lock`).
 *
 * @module
 */
import type { JournalError } from '../../errors.js';
import type { DeliveryJournal, JournalEntry, WindowResolution, WindowResolveOutcome } from '../contract.js';
import type { CheckoutHint, SharedCheckoutHint } from '../checkout-hints.js';
import { journalFailure, tableText, type SqlJournalOptions, type TableName } from '../sql/common.js';
import { SqlJournalCore, type HintRow } from '../sql/journal.js';
import { quoted, schemaStatements } from './schema.js';

/** What the journal runs queries on: a `pg` `Pool` or `PoolClient` fits as is. */
export interface PgQueryable {
  /** Runs one query (`$1` placeholders), or several statements when there are no values. */
  query(text: string, values?: unknown[]): Promise<PgResult>;
}

/** The part of a `pg` result the journal reads. */
export interface PgResult {
  /** The rows, as objects by column name. */
  rows: unknown[];
  /** The rows inserted, updated or deleted. */
  rowCount: number | null;
}

/** A connection checked out of the pool: a `pg` `PoolClient`. */
export interface PgPoolClient extends PgQueryable {
  /** Gives the connection back; with an error (or `true`), closes it instead. */
  release(destroy?: boolean | Error): void;
  /** A connection failure while checked out (the server ended it, the network dropped). */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Removes the listener given to `on`. */
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of connections: a `pg` `Pool` (from `new pg.Pool(…)`) fits as is. */
export interface PgPool extends PgQueryable {
  /** Checks a connection out of the pool. */
  connect(): Promise<PgPoolClient>;
}

/** Options of {@link PostgresJournal}. */
export type PostgresJournalOptions = SqlJournalOptions;

const NAME = 'PostgresJournal';

// PostgreSQL's lock_not_available: the lock_timeout elapsed.
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * A {@link DeliveryJournal} in a PostgreSQL (11 and later) table, for several game servers (nodes) that
 * deliver for one key: any node finishes what another started, and the engine holds a
 * lock on the player across all of them around each `deliver` and reconciliation.
 *
 * - One row per `deliveryId`; `append` is one statement (all its entries or none), an
 *   entry appended again keeps its place; `pending` lists by insertion order.
 * - {@link PostgresJournal.withPlayerLock} takes `pg_advisory_lock` on a connection of
 *   its own, held for the work and released after; when the node dies, its connection
 *   closes and the server releases the lock. The journal calls of the work run on that
 *   connection, so a pool is never starved by its own locks, and a lock whose connection
 *   was lost fails the next write instead of continuing unlocked.
 * - The locks hold at most `maxLockConnections` of the pool's connections at once, by
 *   default the pool's size (`max`) less one, counted over every journal given the pool:
 *   a grant that opens its transaction on the same pool always finds a connection (the
 *   locks taking them all would deadlock: each lock waiting for its grant, each grant for
 *   a connection). A player past the limit waits its turn within `lockTimeoutMs`. Size
 *   the pool for the players delivered at once, plus one, plus what the game runs on it.
 * - The tables (the journal's and the dedupe table of {@link recordDelivery}) are created
 *   on first use if they do not exist ({@link postgresSchema} prints their DDL).
 *
 * Pass your own `pg` `Pool`: this entry point never imports `pg` itself.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { StorefrontClient } from 'teamgames-sdk';
 * import { PostgresJournal } from 'teamgames-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
 * const client = new StorefrontClient({ journal: new PostgresJournal(pool) }); // the key from TEAMGAMES_API_KEY
 * await client.resumeDeliveries(grant); // at startup: finish what any node left
 * ```
 * @see [Delivering purchases in game: several game servers, one key](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#several-game-servers-one-key)
 */
export class PostgresJournal implements DeliveryJournal {
  /** This node's id on the intents it journals (see {@link DeliveryJournal.nodeId}). */
  readonly nodeId: string;
  /** The journal's table, as given. */
  readonly table: string;
  /**
   * How many connections of the pool the players' locks may hold at once: the
   * `maxLockConnections` option, or the pool's size less one (see {@link SqlJournalOptions.maxLockConnections}).
   */
  readonly maxLockConnections: number;
  readonly #core: SqlJournalCore<PgQueryable, PgPoolClient, PgPool>;

  /**
   * Connects nothing yet: the tables are created (if needed) on first use.
   *
   * @throws InvalidInputError when `pool` is not a pool (no `query` and `connect`), or an
   *   option is unknown or invalid, or `maxLockConnections` exceeds the pool's size, or
   *   the pool has one connection and `maxLockConnections` is not given.
   */
  constructor(pool: PgPool, options: PostgresJournalOptions = {}) {
    this.#core = new SqlJournalCore<PgQueryable, PgPoolClient, PgPool>(NAME, pool, options, { kind: 'a pg Pool', connect: 'connect', sizeOption: 'max', size: poolSize }, createTables);
    this.nodeId = this.#core.options.nodeId;
    this.table = this.#core.table;
    this.maxLockConnections = this.#core.lockConnections;
  }

  /**
   * Records entries in one statement, replacing entries with the same `deliveryId` in place.
   *
   * @throws JournalError when the database refuses or cannot be reached; nothing was recorded.
   * @throws InvalidInputError when an entry is not a {@link JournalEntry}; nothing was
   *   recorded.
   */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    await this.#core.append(entries, (db, rows) =>
      db.query(
        `INSERT INTO ${quoted(this.#core.options.table)} (delivery_id, player_name, entry)
         SELECT id, player, entry FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS e (id, player, entry, n) ORDER BY n
         ON CONFLICT (delivery_id) DO UPDATE SET player_name = EXCLUDED.player_name, entry = EXCLUDED.entry`,
        [rows.map((e) => e.deliveryId), rows.map((e) => e.playerName), rows.map((e) => JSON.stringify(e))],
      ),
    );
  }

  /**
   * The entries not acknowledged, oldest first; of one player (exact name) when given.
   *
   * @throws JournalError when the database cannot be read, or a row is not an entry.
   */
  async pending(playerName?: string): Promise<JournalEntry[]> {
    const table = quoted(this.#core.options.table);
    const result = await this.#core.query('read the journal', (db) =>
      playerName === undefined
        ? db.query(`SELECT entry FROM ${table} ORDER BY seq`)
        : db.query(`SELECT entry FROM ${table} WHERE player_name = $1 ORDER BY seq`, [playerName]),
    );
    return this.#core.entries(result.rows);
  }

  /**
   * Removes entries (unknown ids are ignored) in one statement.
   *
   * @throws JournalError when the database refuses or cannot be reached; nothing was removed.
   * @throws InvalidInputError when `deliveryIds` is not an array; nothing was removed.
   */
  async acknowledge(deliveryIds: readonly string[]): Promise<void> {
    await this.#core.acknowledge(deliveryIds, (db, ids) => db.query(`DELETE FROM ${quoted(this.#core.options.table)} WHERE delivery_id = ANY($1::text[])`, [ids]));
  }

  /**
   * Closes the window `windowId` only while it is open: it reads the row, then one
   * conditional `UPDATE … WHERE entry =` the open window it read, so of several resolves
   * at once, from any node, exactly one writes and the others read who came first (see
   * {@link DeliveryJournal.resolveWindow}). No schema change.
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
      async (db, id) => ((await db.query(`SELECT entry FROM ${table} WHERE delivery_id = $1`, [id])).rows[0] as { entry: unknown } | undefined)?.entry,
      async (db, id, entry, read) => (await db.query(`UPDATE ${table} SET entry = $2 WHERE delivery_id = $1 AND entry = $3`, [id, entry, read])).rowCount ?? 0,
    );
  }

  /**
   * Records a checkout hint in the hints' table (see {@link DeliveryJournal.addCheckoutHint}),
   * expiring `hint.expiresInMs` after the database's `now()`; the same hint written again
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
      db.query(
        `INSERT INTO ${hints} AS h (player_name, transaction_id, created_at, expires_at) VALUES ($1, $2, now(), now() + $3::float8 * interval '1 millisecond')
         ON CONFLICT (player_name, transaction_id) DO UPDATE SET created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at WHERE h.expires_at <= now()`,
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
            `SELECT player_name, transaction_id, (extract(epoch FROM now() - created_at) * 1000)::float8 AS age_ms, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS remaining_ms
             FROM ${hints} WHERE expires_at > now() ORDER BY created_at DESC, player_name DESC, transaction_id DESC LIMIT $1`,
            [limit],
          )
        ).rows as HintRow[],
      (db, limit) => db.query(`DELETE FROM ${hints} WHERE expires_at <= now() OR created_at <= (SELECT created_at FROM ${hints} ORDER BY created_at DESC OFFSET $1 LIMIT 1)`, [limit]),
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
    await this.#core.endCheckoutHint(playerName, transactionId, (db, player, id) => db.query(`DELETE FROM ${hints} WHERE player_name = $1 AND transaction_id = $2`, [player, id]));
  }

  /**
   * Runs `work` holding the player's lock across every node of this table:
   * `pg_advisory_lock` on a connection checked out for it, released after `work` (or by
   * the server, when this node dies and the connection closes).
   *
   * @throws JournalError when no turn among the pool's lock connections
   *   (`maxLockConnections`), no connection or no lock could be had within
   *   `lockTimeoutMs`, or the database failed; `work` has not run then.
   */
  async withPlayerLock<T>(playerName: string, work: () => Promise<T>): Promise<T> {
    const lock = await this.#core.checkOut(playerName, (pool) => pool.connect(), (late) => late.release());
    const { connection: client, who } = lock;
    const key = `teamgames-sdk:${this.table}:${playerName}`;
    let locked = false;
    try {
      const remaining = lock.remainingMs();
      // lock_timeout bounds the wait; it is reset before the work so the work's queries are not bound by it.
      await client.query(`SELECT set_config('lock_timeout', $1, false)`, [`${remaining}ms`]);
      await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
      locked = true;
      await client.query('RESET lock_timeout');
    } catch (error) {
      // A connection left in an unknown state (a half-set timeout, maybe the lock) is closed, which releases all.
      lock.detach();
      client.release(true);
      lock.free();
      if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) throw lock.busy(error);
      throw journalFailure(NAME, `take ${who}${locked ? '' : '; nothing was done'}`, error);
    }
    return this.#core.runLocked(
      lock,
      work,
      (held) => held.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]),
      // A connection that failed is closed, not reused: its lock (if any is left) goes with it.
      (held, failed, failure) => held.release(failed ? (failure as Error) : undefined),
    );
  }

  /**
   * Creates the journal's table, the dedupe table and the checkout hints' table if they do not exist. The first call
   * of the journal does it anyway; call it at startup when the game's grants use
   * {@link recordDelivery} before any delivery. Safe to run from many nodes at once.
   *
   * @throws JournalError when the database refuses (the user may not create tables:
   *   create them from {@link postgresSchema} and pass `createTables: false`).
   */
  async createTables(): Promise<void> {
    await this.#core.createTables();
  }
}

/** A `pg` `Pool`'s size: `pool.options.max`, which `pg-pool` sets (default 10); `undefined` for another pool. */
function poolSize(pool: object): number | undefined {
  const max = (pool as { options?: { max?: unknown } }).options?.max;
  // Number.isInteger refuses whatever is not a number.
  return Number.isInteger(max) && (max as number) > 0 ? (max as number) : undefined;
}

/** The tables' DDL, run once by the journal's first query. */
async function createTables(db: PgQueryable, table: TableName, grantedTable: TableName, hintsTable: TableName): Promise<void> {
  // One multi-statement query is one transaction; the advisory lock makes nodes that
  // start together create the tables one after the other (two concurrent CREATE TABLE
  // IF NOT EXISTS can fail on PostgreSQL's catalog).
  // The hints' table too: journals on other tables may share the default one. Taken in one
  // order (sorted), two journals' creations never wait for each other in a circle.
  const keys = [...new Set([tableText(table), tableText(hintsTable)])].sort().map((name) => `teamgames-sdk:ddl:${name}`);
  // Stryker disable next-line StringLiteral: checkTableName lets no quote into a table name, so there is none to double (kept as defence in depth)
  const locks = keys.map((key) => `SELECT pg_advisory_xact_lock(hashtextextended('${key.replace(/'/g, "''")}', 0));`);
  const statements = [...locks, ...schemaStatements(table, grantedTable, hintsTable)];
  // Stryker disable next-line StringLiteral: the server runs the statements, each ending with ;, with or without a newline between them
  await db.query(statements.join('\n'));
}
