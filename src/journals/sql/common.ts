/**
 * What the PostgreSQL and MySQL journals share: their options and checks, the node id,
 * the entries as rows, and the scope that routes a locked player's journal calls to the
 * connection holding the lock.
 *
 * @module
 * @internal
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import type { JournalEntry } from '../contract.js';
import { entryProblem } from '../entry-checks.js';
import { JournalError } from '../../errors.js';
import { checkBoolean, checkIntegerInRange, checkNonBlank, checkOptionsObject, describe, fail } from '../../internal/validate.js';

/** Options shared by `PostgresJournal` and `MySqlJournal`. */
export interface SqlJournalOptions {
  /**
   * The journal's table, `name` or `schema.name` (lower-case letters, digits and `_`,
   * up to 48 characters each). Default `teamgames_deliveries`.
   */
  table?: string;
  /**
   * The table of applied `deliveryId`s that `recordDelivery` writes in the game's own
   * transactions; created with the journal's table. Default `teamgames_granted`.
   */
  grantedTable?: string;
  /**
   * The table of checkout hints (see {@link "teamgames-sdk"!expectCheckout}): a web shop writes them, every
   * node's delivery loop reads them. Created with the journal's table. Default
   * `teamgames_hints`. Journals of different keys (stores) in one database need one each,
   * as they need their own `table`: a loop holds every hint of the table it reads.
   */
  hintsTable?: string;
  /**
   * How long `withPlayerLock` waits for the player's lock, all waits counted (for a turn
   * under {@link SqlJournalOptions.maxLockConnections}, for a free connection of the pool,
   * for the lock itself), before it rejects with a `JournalError`, in ms; nothing was done
   * then. Another node holds the lock for a whole `deliver`, which in exactly-once mode
   * waits out the service's 10 s claim window. Default `60000`.
   */
  lockTimeoutMs?: number;
  /**
   * How many connections of the pool the players' locks may hold at once. Each player's
   * lock holds one connection of the pool for the whole `deliver` (the journal's calls
   * under the lock run on it); a player over the limit waits for a lock to be released
   * (within `lockTimeoutMs`). The limit counts every journal object given the same pool.
   *
   * Default: one less than the pool's size (a `pg` `Pool`'s `max`, a `mysql2` pool's
   * `connectionLimit`; both default to 10), so that a grant that opens its transaction on
   * the same pool always finds a connection: when the locks could take them all, every
   * lock would wait for its grant and every grant for a connection, forever. 9 when the
   * pool's size cannot be read (a pool of your own making): pass the limit then. A pool
   * of one connection is refused unless this option is given.
   *
   * Set it to the pool's size only when nothing the deliveries run (your grants) takes a
   * connection of this pool, e.g. a pool given to the journal alone. It cannot exceed the
   * pool's size.
   */
  maxLockConnections?: number;
  /**
   * This node's id, written on the intents it journals. Unique among the nodes sharing the
   * table. Default `<hostname>:<pid>:<random>`, new for each journal object.
   */
  nodeId?: string;
  /**
   * Create the tables (if they do not exist) on first use. Default `true`; set `false`
   * when you create them by hand from the exported schema and the database user may not
   * run DDL.
   */
  createTables?: boolean;
}

// Derived from the interface, so a new option cannot be left out of the allow-list.
// Stryker disable next-line BooleanLiteral: only the keys are read (Object.keys); `true` is there for the type check
const OPTION_KEYS = { table: true, grantedTable: true, hintsTable: true, lockTimeoutMs: true, maxLockConnections: true, nodeId: true, createTables: true } satisfies Record<keyof SqlJournalOptions, true>;
export const SQL_JOURNAL_OPTIONS = Object.keys(OPTION_KEYS) as ReadonlyArray<keyof SqlJournalOptions>;

export const DEFAULT_TABLE = 'teamgames_deliveries';
export const DEFAULT_GRANTED_TABLE = 'teamgames_granted';
export const DEFAULT_HINTS_TABLE = 'teamgames_hints';
const DEFAULT_LOCK_TIMEOUT_MS = 60_000;
const MAX_LOCK_TIMEOUT_MS = 24 * 3_600_000;
const MAX_NODE_ID_LENGTH = 200;
/** The lock connections when the pool's size cannot be read: one less than `pg`'s and `mysql2`'s default size. */
export const DEFAULT_LOCK_CONNECTIONS = 9;
const MAX_LOCK_CONNECTIONS = 100_000;

/** A table name split into its optional schema and its name, both checked identifiers. */
export interface TableName {
  schema: string | undefined;
  name: string;
}

export interface CheckedOptions {
  table: TableName;
  grantedTable: TableName;
  hintsTable: TableName;
  lockTimeoutMs: number;
  /** As given; the journal derives the default from the pool's size. */
  maxLockConnections: number | undefined;
  nodeId: string;
  createTables: boolean;
}

/** Checks a journal's options (unknown names and bad values fail with InvalidInputError). */
export function checkSqlJournalOptions(options: SqlJournalOptions | undefined): CheckedOptions {
  const { table, grantedTable, hintsTable, lockTimeoutMs, maxLockConnections, nodeId, createTables } = checkOptionsObject(options, SQL_JOURNAL_OPTIONS, 'options');
  const id = nodeId === undefined ? defaultNodeId() : checkNonBlank(nodeId, 'options.nodeId');
  if (id.length > MAX_NODE_ID_LENGTH) fail('options.nodeId', `must be at most ${MAX_NODE_ID_LENGTH} characters, got ${id.length}`);
  return {
    table: checkTableName(table ?? DEFAULT_TABLE, 'options.table'),
    grantedTable: checkTableName(grantedTable ?? DEFAULT_GRANTED_TABLE, 'options.grantedTable'),
    hintsTable: checkTableName(hintsTable ?? DEFAULT_HINTS_TABLE, 'options.hintsTable'),
    lockTimeoutMs: lockTimeoutMs === undefined ? DEFAULT_LOCK_TIMEOUT_MS : checkIntegerInRange(lockTimeoutMs, 1, MAX_LOCK_TIMEOUT_MS, 'options.lockTimeoutMs'),
    maxLockConnections: maxLockConnections === undefined ? undefined : checkIntegerInRange(maxLockConnections, 1, MAX_LOCK_CONNECTIONS, 'options.maxLockConnections'),
    nodeId: id,
    createTables: checkBoolean(createTables, 'options.createTables') ?? true,
  };
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,47}$/;

/**
 * A table name as both engines take it unchanged: lower-case, so quoting it changes
 * nothing (PostgreSQL folds unquoted names to lower case; MySQL's case rules depend on
 * the server's file system).
 */
export function checkTableName(value: unknown, argument: string): TableName {
  if (typeof value !== 'string') fail(argument, `must be a table name (a string), got ${describe(value)}`);
  const parts = value.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    fail(argument, `must be a table name, \`name\` or \`schema.name\`, each of lower-case letters, digits and _ (not first), up to 48 characters; got ${describe(value)}`);
  }
  return parts.length === 2 ? { schema: parts[0], name: parts[1] as string } : { schema: undefined, name: parts[0] as string };
}

/** The table's name as the user wrote it, for messages and lock keys. */
export function tableText(table: TableName): string {
  return table.schema === undefined ? table.name : `${table.schema}.${table.name}`;
}

/** `host:pid:random`: unique per journal object, readable in the table when staff look. */
function defaultNodeId(): string {
  return `${hostname()}:${process.pid}:${globalThis.crypto.randomUUID().slice(0, 8)}`;
}

/** A `deliveryId` as a dedupe helper takes it. */
export function checkDeliveryId(value: unknown, maxBytes: number, operation: string): string {
  const id = checkNonBlank(value, 'deliveryId');
  if (Buffer.byteLength(id) > maxBytes) fail('deliveryId', `must be at most ${maxBytes} bytes in UTF-8 (${operation}), got ${Buffer.byteLength(id)}`);
  return id;
}

/**
 * The entries of one `append`, one per `deliveryId`: a later entry with the same id
 * replaces the earlier one in its place, as {@link MemoryJournal} does. One statement
 * can then insert them all.
 */
export function latestById(entries: readonly JournalEntry[]): JournalEntry[] {
  const byId = new Map<string, JournalEntry>();
  for (const entry of entries) byId.set(entry.deliveryId, entry);
  return [...byId.values()];
}

/**
 * An entry read back from its row: JSON text as the SDK writes it (a string, or bytes or a
 * parsed object when the column was made with another type), validated like an answer
 * from the network.
 *
 * @throws JournalError naming the journal and what is wrong when the row is not JSON or
 *   not a journal entry: a damaged row is never an item to grant.
 */
export function parseEntry(journal: string, text: unknown): JournalEntry {
  let entry: unknown;
  try {
    // A string or bytes are parsed; String() leaves a string as it is.
    entry = typeof text === 'object' && !Buffer.isBuffer(text) ? text : JSON.parse(String(text));
  } catch (error) {
    throw new JournalError(`${journal}: a row of the journal is not JSON (${(error as Error).message}); it was changed outside the SDK`, { cause: error });
  }
  const problem = entryProblem(entry);
  if (problem !== undefined) throw new JournalError(`${journal}: a row of the journal is not a journal entry (${problem}); it was changed outside the SDK`);
  return entry as JournalEntry;
}

/** Wraps a driver's failure as the journal's error, keeping it as `cause`. */
export function journalFailure(journal: string, doing: string, error: unknown): JournalError {
  if (error instanceof JournalError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new JournalError(`${journal}: could not ${doing}: ${why.slice(0, 300)}`, { cause: error });
}

/**
 * A pool connection with a deadline: a pool that stays exhausted past `ms` fails the
 * wait, and the connection it hands out later goes straight back.
 */
export function connectWithin<C>(connect: () => Promise<C>, ms: number, giveBack: (connection: C) => void, timedOut: () => Error): Promise<C> {
  return new Promise<C>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timedOut());
    }, ms);
    connect().then(
      (connection) => {
        clearTimeout(timer);
        if (late) giveBack(connection);
        else resolve(connection);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // After the deadline the promise is settled already: this reject does nothing then.
        reject(error as Error);
      },
    );
  });
}

/**
 * The lock connections of one pool: how many are held, and the players waiting for a
 * turn, first come first served. Every journal given the same pool shares one, so two
 * journals (two tables, two clients) cannot take more of its connections together than
 * either allows.
 */
export class LockSlots {
  #held = 0;
  // Stryker disable next-line ArrayDeclaration: an element that is not a waiter is never let in (its limit is undefined) nor removed
  readonly #waiting: Array<{ limit: number; take: () => void }> = [];

  /**
   * Takes a turn when fewer than `limit` are held; else waits for one (a turn given back
   * goes to the first waiter it lets in), up to `ms`, then rejects with `timedOut()`,
   * leaving nothing behind.
   */
  take(limit: number, ms: number, timedOut: () => Error): Promise<void> {
    if (this.#held < limit) {
      this.#held += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        limit,
        take: () => {
          clearTimeout(timer);
          this.#held += 1;
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        reject(timedOut());
      }, ms);
      this.#waiting.push(waiter);
    });
  }

  /** Gives a turn back: the first waiter it lets in takes it. */
  give(): void {
    this.#held -= 1;
    const next = this.#waiting.find((w) => this.#held < w.limit);
    if (next === undefined) return;
    this.#waiting.splice(this.#waiting.indexOf(next), 1);
    next.take();
  }
}

const slotsByPool = new WeakMap<object, LockSlots>();

/** The lock connections of `pool`, shared by every journal given it. */
export function lockSlots(pool: object): LockSlots {
  let slots = slotsByPool.get(pool);
  if (slots === undefined) slotsByPool.set(pool, (slots = new LockSlots()));
  return slots;
}

/** The connection holding a player's lock, with what happened to it. */
export interface LockScope<C> {
  connection: C;
  /** Set when the connection failed: the lock went with it. */
  lost: Error | undefined;
  /** Set once the lock is released: late calls go back to the pool. */
  closed: boolean;
}

/**
 * Routes the journal calls made inside `withPlayerLock` to the connection that holds the
 * lock. Two reasons: a pool whose every connection holds a lock could never serve the
 * journal calls of the work under those locks (a deadlock), and once the lock's
 * connection dies, whatever the work still writes fails loudly instead of running
 * unlocked on another connection.
 */
export class LockScopes<C> {
  readonly #storage = new AsyncLocalStorage<LockScope<C>>();

  run<T>(scope: LockScope<C>, work: () => Promise<T>): Promise<T> {
    return this.#storage.run(scope, work);
  }

  /** The lock's scope of the current call, if it is inside one still open. */
  current(): LockScope<C> | undefined {
    const scope = this.#storage.getStore();
    return scope === undefined || scope.closed ? undefined : scope;
  }
}
