/**
 * What `PostgresJournal` and `MySqlJournal` do the same way around their engine's SQL:
 * the pool and option checks, the journal query (on the lock's connection, tables created
 * once, failures as `JournalError`), the append / pending / acknowledge flow, and the
 * connection checked out for a player's lock. Each engine keeps its SQL and its lock
 * statements in its own file and hands them in.
 *
 * @module
 * @internal
 */
import { checkIds, checkResolution, resolvedWindow, unresolvedOutcome, type JournalEntry, type WindowResolution, type WindowResolveOutcome } from '../contract.js';
import { checkEntries } from '../entry-checks.js';
import { checkSharedHintArguments, HINT_LIMIT, sharedHintOf, type CheckoutHint, type SharedCheckoutHint } from '../checkout-hints.js';
import { JournalError } from '../../errors.js';
import { checkNonBlank, describe, fail } from '../../internal/validate.js';
import { checkSqlJournalOptions, connectWithin, DEFAULT_LOCK_CONNECTIONS, journalFailure, latestById, lockSlots, LockScopes, parseEntry, tableText, type CheckedOptions, type LockScope, type LockSlots, type SqlJournalOptions, type TableName } from './common.js';

/** A pool connection that reports its failures while checked out. */
export interface FailingConnection {
  /** A connection failure while checked out. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Removes the listener given to `on`. */
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** How one engine's pool is recognised, for the constructor's check. */
export interface PoolShape {
  /** The pool as the message names it, e.g. `a pg Pool`. */
  kind: string;
  /** The pool's method that checks a connection out, besides `query`. */
  connect: string;
  /** The option that sizes the pool, for messages: `max`, `connectionLimit`. */
  sizeOption: string;
  /** The pool's size: `Infinity` when unbounded, `undefined` when it cannot be read. */
  size(pool: object): number | undefined;
}

/** A checkout hint's row as the engines' reads name its columns: times in ms, by the database's clock. */
export interface HintRow {
  player_name: unknown;
  transaction_id: unknown;
  age_ms: unknown;
  remaining_ms: unknown;
}

/**
 * How often a journal object deletes the expired checkout hints (and those past the newest
 * `HINT_LIMIT`), on its reads: once a minute per node is enough to keep the table small (a
 * hint lives an hour at most), and costs one statement.
 */
const HINTS_CLEANUP_MS = 60_000;

/** A connection checked out for a player's lock, before and while the lock is held. */
export interface PlayerLock<C> {
  /** The scope that routes the work's journal calls to the connection. */
  scope: LockScope<C>;
  /** The connection checked out. */
  connection: C;
  /** `the lock on player "…"`, for messages. */
  who: string;
  /** What is left of `lockTimeoutMs` since the call began, in ms (at least 1). */
  remainingMs(): number;
  /** Stops listening for the connection's failures (before it goes back or is closed). */
  detach(): void;
  /** Gives the lock's turn among the pool's lock connections back, once the connection went back or was closed. */
  free(): void;
  /** The error of a lock another node held past `lockTimeoutMs`. */
  busy(cause?: unknown): JournalError;
}

/**
 * The state and flow one SQL journal object shares with the other engine's: it holds the
 * pool, the checked options, the lock scopes and the once-promise of the tables' creation.
 * `Q` is what queries run on, `C` a connection checked out of the pool `P`.
 */
export class SqlJournalCore<Q, C extends Q & FailingConnection, P extends Q> {
  /** The options, checked. */
  readonly options: CheckedOptions;
  /** The journal's table, as given. */
  readonly table: string;
  /** The pool given to the journal. */
  readonly pool: P;
  /** The scopes of the locks held by `withPlayerLock`. */
  readonly scopes = new LockScopes<C>();
  /** How many of the pool's connections the locks may hold at once (`maxLockConnections`, or the pool's size less one). */
  readonly lockConnections: number;
  readonly #slots: LockSlots;
  readonly #name: string;
  readonly #create: (db: Q, table: TableName, grantedTable: TableName, hintsTable: TableName) => Promise<void>;
  #tables: Promise<void> | undefined;
  /** When this object last deleted expired hints (monotonic ms). */
  #hintsCleaned = Number.NEGATIVE_INFINITY;

  /**
   * Checks the pool (it must have `query` and `shape.connect`), then the options, and
   * derives how many of the pool's connections the locks may hold.
   *
   * @param name the journal's class, first in its messages.
   * @param create the engine's DDL, run once (again after a failure) on first use.
   * @throws InvalidInputError when `pool` is not a pool, or an option is unknown or
   *   invalid, or `maxLockConnections` exceeds the pool's size, or the pool has a single
   *   connection and `maxLockConnections` is not given.
   */
  constructor(name: string, pool: P, options: SqlJournalOptions | undefined, shape: PoolShape, create: (db: Q, table: TableName, grantedTable: TableName, hintsTable: TableName) => Promise<void>) {
    const p = pool as Record<string, unknown> | null;
    if (typeof p !== 'object' || p === null || typeof p.query !== 'function' || typeof p[shape.connect] !== 'function') {
      fail('pool', `must be ${shape.kind} (an object with query and ${shape.connect}), got ${describe(pool)}`);
    }
    this.#name = name;
    this.pool = pool;
    this.#create = create;
    this.options = checkSqlJournalOptions(options);
    this.table = tableText(this.options.table);
    this.lockConnections = lockConnections(pool as object, this.options.maxLockConnections, shape);
    this.#slots = lockSlots(pool as object);
  }

  /**
   * Records the entries (checked by {@link checkEntries}), one row per `deliveryId`, after
   * `refuse` (which may throw) saw them.
   */
  async append(entries: readonly JournalEntry[], insert: (db: Q, rows: JournalEntry[]) => Promise<unknown>, refuse?: (rows: JournalEntry[]) => void): Promise<void> {
    const checked = checkEntries(entries);
    if (checked.length === 0) return;
    const rows = latestById(checked);
    refuse?.(rows);
    await this.query('append to the journal', (db) => insert(db, rows));
  }

  /** The entries of rows read back (objects with an `entry` column). */
  entries(rows: unknown): JournalEntry[] {
    return (rows as Array<{ entry: unknown }>).map((row) => parseEntry(this.#name, row.entry));
  }

  /**
   * Resolves a window as compare-and-set: reads its row (`select`: the `entry` column, or
   * `undefined` without a row), then `update` writes the resolved window only where the
   * row still holds exactly the open window it read (`entry` equal to `read`), in one
   * statement that resolves how many rows it changed. The database orders concurrent
   * updates of one row: the second re-checks the condition on the first one's row and
   * changes nothing, and its resolve reads the row again to say who came first.
   */
  async resolveWindow(
    windowId: string,
    resolution: WindowResolution,
    select: (db: Q, id: string) => Promise<unknown>,
    update: (db: Q, id: string, entry: string, read: unknown) => Promise<number>,
  ): Promise<WindowResolveOutcome> {
    const checked = checkResolution(windowId, resolution);
    return this.query('resolve a window in the journal', async (db) => {
      // A window only ever changes from open to resolved: a second round sees it resolved
      // (a third only if something outside the SDK keeps rewriting the row).
      for (let round = 0; round < 3; round++) {
        const raw = await select(db, windowId);
        const entry = raw === undefined ? undefined : parseEntry(this.#name, raw);
        const window = resolvedWindow(entry, checked);
        if (window === undefined) return unresolvedOutcome(entry);
        if ((await update(db, windowId, JSON.stringify(window), raw)) === 1) return { outcome: 'resolved', window };
      }
      throw new JournalError(`${this.#name}: could not resolve the window ${JSON.stringify(windowId)}: its row kept changing while it was open; nothing was written`);
    });
  }

  /** Removes the entries of the ids that are strings, if any (checked by {@link checkIds}). */
  async acknowledge(deliveryIds: readonly string[], remove: (db: Q, ids: string[]) => Promise<unknown>): Promise<void> {
    const ids = checkIds(deliveryIds);
    if (ids.length === 0) return;
    await this.query('acknowledge in the journal', (db) => remove(db, ids));
  }

  /**
   * Records a checkout hint (checked by the rules of `loop.expect`) with `insert`, given the
   * transaction id (`''` for none) and the life in ms: the engine's statement takes its
   * times from the database's clock.
   */
  async addCheckoutHint(playerName: string, hint: CheckoutHint | undefined, insert: (db: Q, playerName: string, transactionId: string, expiresInMs: number) => Promise<unknown>): Promise<void> {
    const checked = checkSharedHintArguments(playerName, hint);
    await this.query('write a checkout hint', (db) => insert(db, checked.playerName, checked.transactionId ?? '', checked.expiresInMs));
  }

  /**
   * The live checkout hints, oldest first: `select` reads at most `limit` rows not expired,
   * newest first, their age and remaining life computed by the database; each row is
   * checked ({@link sharedHintOf}): one that is not a hint throws, or with `onBadRow` is
   * handed to it and left out. At most once a minute, `cleanup` deletes the expired rows
   * and those past the newest `limit`.
   */
  async liveCheckoutHints(select: (db: Q, limit: number) => Promise<HintRow[]>, cleanup: (db: Q, limit: number) => Promise<unknown>, onBadRow?: (error: JournalError) => void): Promise<SharedCheckoutHint[]> {
    const rows = await this.query('read the checkout hints', (db) => select(db, HINT_LIMIT));
    const hints: SharedCheckoutHint[] = [];
    for (const row of rows.reverse()) {
      try {
        hints.push(sharedHintOf(this.#name, { playerName: text(row.player_name), transactionId: text(row.transaction_id), ageMs: row.age_ms, remainingMs: row.remaining_ms }));
      } catch (error) {
        if (onBadRow === undefined) throw error;
        onBadRow(error as JournalError);
      }
    }
    const now = performance.now();
    if (now - this.#hintsCleaned >= HINTS_CLEANUP_MS) {
      this.#hintsCleaned = now;
      await this.query('delete the expired checkout hints', (db) => cleanup(db, HINT_LIMIT));
    }
    return hints;
  }

  /** Deletes the hint of the player and transaction (`''` for none) with `remove`, once a delivery satisfied it. */
  async endCheckoutHint(playerName: string, transactionId: string | undefined, remove: (db: Q, playerName: string, transactionId: string) => Promise<unknown>): Promise<void> {
    const name = checkNonBlank(playerName, 'playerName');
    if (transactionId !== undefined && typeof transactionId !== 'string') fail('transactionId', `must be a string or undefined, got ${describe(transactionId)}`);
    await this.query('delete a checkout hint', (db) => remove(db, name, transactionId ?? ''));
  }

  /** Creates the tables if they do not exist, on the lock's connection inside `withPlayerLock`. */
  async createTables(): Promise<void> {
    const scope = this.scopes.current();
    await this.#createTables(scope?.connection ?? this.pool);
  }

  /** Runs one journal query: on the lock's connection inside `withPlayerLock`, on the pool otherwise. */
  async query<R>(doing: string, query: (db: Q) => Promise<R>): Promise<R> {
    const scope = this.scopes.current();
    if (scope?.lost !== undefined) {
      throw new JournalError(`${this.#name}: could not ${doing}: the connection holding the player's lock failed (${scope.lost.message}); the lock is gone, nothing more is written under it`, { cause: scope.lost });
    }
    const db: Q = scope?.connection ?? this.pool;
    try {
      if (this.options.createTables) await this.#createTables(db);
      return await query(db);
    } catch (error) {
      throw journalFailure(this.#name, doing, error);
    }
  }

  /**
   * Checks the player's name and a connection out of the pool (within `lockTimeoutMs`),
   * listening for its failures: the engine then takes its lock on it.
   *
   * @throws JournalError when no connection could be had; nothing was done.
   */
  async checkOut(playerName: string, connect: (pool: P) => Promise<C>, giveBack: (late: C) => void): Promise<PlayerLock<C>> {
    checkNonBlank(playerName, 'playerName');
    // Monotonic: a wall clock stepped back must not stretch the wait.
    const started = performance.now();
    const name = this.#name;
    const { lockTimeoutMs } = this.options;
    const limit = this.lockConnections;
    const who = `the lock on player ${JSON.stringify(playerName)}`;
    const remainingMs = () => Math.max(1, lockTimeoutMs - (performance.now() - started));
    // A turn among the pool's lock connections first: the locks never take the pool's last
    // connection, which the work's grants may need (else each lock waits for its grant, and
    // each grant for a connection, forever).
    await this.#slots.take(
      limit,
      lockTimeoutMs,
      () =>
        new JournalError(
          `${name}: players' locks already hold ${limit} connections of the pool, the most they may (maxLockConnections: ${limit}), and none was released within ${lockTimeoutMs} ms to take ${who}; nothing was done. More players are delivered at once than the pool allows: give the pool more connections.`,
        ),
    );
    let connection: C;
    try {
      connection = await connectWithin(
        () => connect(this.pool),
        remainingMs(),
        giveBack,
        () => new JournalError(`${name}: no connection of the pool was free within ${lockTimeoutMs} ms to take ${who}; nothing was done. Give the pool more connections than players delivered at once.`),
      );
    } catch (error) {
      this.#slots.give();
      throw journalFailure(name, `connect to take ${who}; nothing was done`, error);
    }
    const scope: LockScope<C> = { connection, lost: undefined, closed: false };
    const onError = (error: Error) => (scope.lost ??= error);
    connection.on('error', onError);
    return {
      scope,
      connection,
      who,
      remainingMs,
      detach: () => connection.removeListener('error', onError),
      free: () => this.#slots.give(),
      busy: (cause?: unknown) => new JournalError(`${name}: ${who} was not free within ${lockTimeoutMs} ms (another node is delivering for this player); nothing was done`, { cause }),
    };
  }

  /**
   * Runs `work` under a lock taken, then releases it with `unlock` unless the connection
   * failed, and gives the connection to `close` with whether it failed (then it must not
   * be reused: its lock, if any is left, goes with it) and why.
   */
  async runLocked<T>(lock: PlayerLock<C>, work: () => Promise<T>, unlock: (connection: C) => Promise<unknown>, close: (connection: C, failed: boolean, failure: unknown) => void): Promise<T> {
    const { scope, connection } = lock;
    try {
      return await this.scopes.run(scope, work);
    } finally {
      scope.closed = true;
      let failed = scope.lost !== undefined;
      let failure: unknown = scope.lost;
      if (!failed) {
        try {
          await unlock(connection);
        } catch (error) {
          failed = true;
          failure = error;
        }
      }
      lock.detach();
      try {
        close(connection, failed, failure);
      } finally {
        lock.free();
      }
    }
  }

  #createTables(db: Q): Promise<void> {
    const { table, grantedTable, hintsTable } = this.options;
    return (this.#tables ??= this.#create(db, table, grantedTable, hintsTable).catch((error: unknown) => {
      this.#tables = undefined;
      throw journalFailure(this.#name, `create the tables ${tableText(table)}, ${tableText(grantedTable)} and ${tableText(hintsTable)}`, error);
    }));
  }
}

/** A text column as the driver returns it: a string, or bytes (MySQL's binary strings). */
function text(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

/**
 * How many of the pool's connections the locks may hold: `maxLockConnections` (at most the
 * pool's size), else the pool's size less one, else {@link DEFAULT_LOCK_CONNECTIONS}.
 */
function lockConnections(pool: object, given: number | undefined, shape: PoolShape): number {
  const size = shape.size(pool);
  if (given !== undefined) {
    // An unbounded pool, or one whose size cannot be read, takes any number.
    if (given > (size ?? Infinity)) fail('options.maxLockConnections', `must be at most the pool's size (${shape.sizeOption}: ${size}), got ${given}`);
    return given;
  }
  if (size === undefined) return DEFAULT_LOCK_CONNECTIONS;
  if (size < 2) {
    fail(
      'pool',
      `has ${size} connection (${shape.sizeOption}: ${size}): a player's lock holds a connection of the pool for the whole delivery, and a grant that opens its transaction on the same pool would wait for it forever. Give the pool at least 2 connections (the players delivered at once plus one), or pass options.maxLockConnections: 1 if nothing the deliveries run uses this pool`,
    );
  }
  return size - 1; // Infinity for an unbounded pool
}
