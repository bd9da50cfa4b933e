/**
 * PostgresJournal, MySqlJournal, recordDelivery and the exported DDL on pools and
 * connections of the test's making (no server; the real servers' suites are
 * test/databases/*.db.test.ts): what a lock does when the server answers oddly or fails,
 * the connection's listener and the work's stray calls after the lock, the pool's size
 * as the drivers may give it, the arguments refused and what the messages name.
 *
 * The SDK's database entry points are imported inside the tests, not at the top: the first
 * test loads them, so it also runs their module-level names and codes (under StrykerJS,
 * a mutant there is run only by the tests that loaded the module).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, JournalError } from 'teamgames-sdk';
import type { MySqlPool, MySqlPoolConnection } from 'teamgames-sdk/mysql';
import type { PgPool, PgPoolClient } from 'teamgames-sdk/postgres';
import { deferred } from '../support/answers.js';

afterEach(() => {
  vi.useRealTimers();
});

const postgres = () => import('teamgames-sdk/postgres');
const mysql = () => import('teamgames-sdk/mysql');

type Listener = (error: Error) => void;

/** The listeners a connection was given and not yet asked to remove. */
function listening() {
  const listeners: Array<[string, Listener]> = [];
  return {
    listeners,
    on: (event: string, listener: Listener) => void listeners.push([event, listener]),
    removeListener: (event: string, listener: Listener) => {
      const at = listeners.findIndex(([e, l]) => e === event && l === listener);
      if (at >= 0) listeners.splice(at, 1);
    },
    fail: (error: Error) => listeners.forEach(([event, l]) => event === 'error' && l(error)),
  };
}

/** A mysql2-shaped pool; `getLock` answers GET_LOCK (rows, or a throw). Every statement is logged with where it ran. */
function mysqlPool(options: { size?: unknown; getLock?: () => unknown[]; connect?: () => Promise<void> } = {}) {
  const log: string[] = [];
  const statements: Array<{ on: string; sql: string; values: unknown }> = [];
  const connections: Array<ReturnType<typeof listening>> = [];
  const pool = {
    config: { connectionLimit: options.size ?? 5 },
    query: async (sql: string, values?: unknown) => {
      statements.push({ on: 'pool', sql, values });
      return [[], []];
    },
    getConnection: async () => {
      await options.connect?.();
      const id = connections.length + 1;
      const events = listening();
      connections.push(events);
      return {
        ...events,
        query: async (sql: string, values?: unknown) => {
          statements.push({ on: `connection ${id}`, sql, values });
          if (sql.includes('GET_LOCK')) return [options.getLock === undefined ? [{ got: 1 }] : options.getLock(), []];
          return [[], []];
        },
        release: () => void log.push(`release ${id}`),
        destroy: () => void log.push(`destroy ${id}`),
      } as unknown as MySqlPoolConnection;
    },
  };
  return { pool: pool as unknown as MySqlPool, log, statements, connections };
}

/** A pg-shaped pool of one client; `answer` may throw for a statement. */
function pgPool(answer: (sql: string) => void = () => undefined) {
  const released: unknown[] = [];
  const events = listening();
  const client = {
    ...events,
    query: async (sql: string) => {
      answer(sql);
      return { rows: [], rowCount: 0 };
    },
    release: (destroy?: unknown) => void released.push(destroy),
  } as unknown as PgPoolClient;
  const pool = { options: { max: 3 }, query: async () => ({ rows: [], rowCount: 0 }), connect: async () => client } as unknown as PgPool;
  return { pool, released, events };
}

const noop = (): undefined => undefined;

const failing = (message: string, code?: string) => Object.assign(new Error(message), { code });

describe('what the messages name', () => {
  it("each journal's class, the servers' lock codes, the dedupe table's absence, and the MySQL lock name every node computes alike", async () => {
    const { PostgresJournal, recordDelivery } = await postgres();
    const { MySqlJournal } = await mysql();
    const notAvailable = failing('canceling statement due to lock timeout', '55P03');
    const pgBusy = pgPool((sql) => {
      if (sql.includes('pg_advisory_lock')) throw notAvailable;
    });
    const busy = await new PostgresJournal(pgBusy.pool, { createTables: false, lockTimeoutMs: 500 }).withPlayerLock('Ann', async () => 'never').catch((e: unknown) => e);
    expect((busy as Error).message).toBe('PostgresJournal: the lock on player "Ann" was not free within 500 ms (another node is delivering for this player); nothing was done');
    expect((busy as Error).cause).toBe(notAvailable);

    const missing = failing('relation "teamgames_granted" does not exist', '42P01');
    const error = await recordDelivery({ query: () => Promise.reject(missing) }, 'invoice:1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toMatch(/^recordDelivery: the dedupe table teamgames_granted does not exist; /);

    const { pool, statements } = mysqlPool({ getLock: () => [{ got: 0 }] });
    const mysqlBusy = await new MySqlJournal(pool, { createTables: false, lockTimeoutMs: 500, table: 'deliveries' }).withPlayerLock('Ann', async () => 'never').catch((e: unknown) => e);
    expect((mysqlBusy as Error).message).toMatch(/^MySqlJournal: the lock on player "Ann" was not free within 500 ms/);
    // The lock's name is shared by every node (and every SDK version) on the server.
    expect(statements.map((s) => [s.sql, s.values])).toEqual([
      ["SELECT GET_LOCK(CONCAT('teamgames:', LEFT(SHA2(CONCAT_WS(':', DATABASE(), ?, ?), 256), 54)), ?) AS got", ['deliveries', 'Ann', expect.closeTo(0.5, 1)]],
    ]);
  });
});

describe('the pool given', () => {
  it.each([
    ['a function with query and connect', Object.assign(function pool(): void {}, { query: noop, connect: noop, getConnection: noop })],
    ['an object without query', { connect: noop, getConnection: noop }],
  ])('refuses %s', async (_what, value) => {
    const { PostgresJournal } = await postgres();
    const { MySqlJournal } = await mysql();
    expect(() => new PostgresJournal(value as never)).toThrow(/invalid pool: must be a pg Pool \(an object with query and connect\), got /);
    expect(() => new MySqlJournal(value as never)).toThrow(/invalid pool: must be a mysql2\/promise Pool \(an object with query and getConnection\), got /);
  });

  it.each(['5', 2.5, 0, -1, Number.NaN])("whose size option is %j: the size is not read, the locks take the default's 9 connections", async (size) => {
    const { PostgresJournal } = await postgres();
    const { MySqlJournal } = await mysql();
    const pg = { options: { max: size }, query: () => undefined, connect: () => undefined } as unknown as PgPool;
    expect(new PostgresJournal(pg).maxLockConnections).toBe(9);
    if (size === 0) return; // mysql2's connectionLimit 0 is unbounded
    expect(new MySqlJournal(mysqlPool({ size }).pool).maxLockConnections).toBe(9);
  });
});

describe('withPlayerLock on MySQL', () => {
  it('takes the time spent waiting for a connection off the lock’s own wait: the call stays within lockTimeoutMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { MySqlJournal } = await mysql();
    const { pool, statements } = mysqlPool({ connect: () => new Promise((resolve) => setTimeout(resolve, 600)) });
    const done = new MySqlJournal(pool, { createTables: false, lockTimeoutMs: 1_000 }).withPlayerLock('Ann', async () => 'in');
    await vi.advanceTimersByTimeAsync(600);
    expect(await done).toBe('in');
    expect((statements[0]!.values as unknown[])[2]).toBe(0.4);
  });

  it.each([
    ['a GET_LOCK that fails', () => {
      throw failing('Lock wait timeout exceeded');
    }, /: Lock wait timeout exceeded$/],
    ['a GET_LOCK without a row', () => [], /: GET_LOCK returned undefined$/],
  ])('%s: a JournalError saying why, the connection closed, the turn given back, no listener left', async (_what, getLock, message) => {
    const { MySqlJournal } = await mysql();
    const { pool, log, connections } = mysqlPool({ size: 2, getLock: getLock as () => unknown[] });
    const journal = new MySqlJournal(pool, { createTables: false });
    for (let i = 1; i <= 2; i++) {
      const error = await journal.withPlayerLock('Ann', async () => 'never').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toMatch(/^MySqlJournal: could not take the lock on player "Ann"; nothing was done: /);
      expect((error as Error).message).toMatch(message);
    }
    expect(log).toEqual(['destroy 1', 'destroy 2']);
    expect(connections.map((c) => c.listeners.length)).toEqual([0, 0]);
  });

  it("a GET_LOCK answered '0' (a driver giving numbers as strings) is a lock another node holds", async () => {
    const { MySqlJournal } = await mysql();
    const { pool } = mysqlPool({ getLock: () => [{ got: '0' }] });
    await expect(new MySqlJournal(pool, { createTables: false }).withPlayerLock('Ann', async () => 'never')).rejects.toThrow(/the lock on player "Ann" was not free within/);
  });
});

describe('the connection holding a lock', () => {
  it('is given back without the journal’s listener on it', async () => {
    const { MySqlJournal } = await mysql();
    const { pool, connections, log } = mysqlPool();
    const journal = new MySqlJournal(pool, { createTables: false });
    expect(await journal.withPlayerLock('Ann', async () => connections[0]!.listeners.length)).toBe(1);
    expect(connections[0]!.listeners).toEqual([]);
    expect(log).toEqual(['release 1']);
  });

  it('that failed: the next write fails with the failure as its cause', async () => {
    const { MySqlJournal } = await mysql();
    const { pool, connections } = mysqlPool();
    const journal = new MySqlJournal(pool, { createTables: false });
    const lost = new Error('server closed the connection');
    const error = await journal
      .withPlayerLock('Ann', async () => {
        connections[0]!.fail(lost);
        await journal.append([{ deliveryId: 'a', playerName: 'Ann', state: 'claiming', recordedAt: 1 }]);
      })
      .catch((e: unknown) => e);
    expect((error as Error).cause).toBe(lost);
  });

  it('is not used by a journal call the work left running after the lock was given back: that call runs on the pool', async () => {
    const { MySqlJournal } = await mysql();
    const { pool, statements } = mysqlPool();
    const journal = new MySqlJournal(pool, { createTables: false });
    const later = deferred();
    let leftover: Promise<unknown> | undefined;
    await journal.withPlayerLock('Ann', async () => {
      leftover = later.promise.then(() => journal.pending());
    });
    later.resolve();
    await leftover;
    expect(statements.filter((s) => s.sql.startsWith('SELECT entry')).map((s) => s.on)).toEqual(['pool']);
  });
});

describe('withPlayerLock on PostgreSQL, when a statement fails', () => {
  it.each([
    ['setting the lock timeout', 'set_config', '; nothing was done: '],
    ['taking the lock', 'pg_advisory_lock', '; nothing was done: '],
    // The lock was taken, then the connection is closed: the server releases it with the connection.
    ['resetting the lock timeout', 'RESET lock_timeout', ': '],
  ])('%s: a JournalError saying whether anything was done, the connection closed, the turn given back', async (_what, statement, said) => {
    const { PostgresJournal } = await postgres();
    const { pool, released, events } = pgPool((sql) => {
      if (sql.includes(statement)) throw failing('connection reset', 'XX000');
    });
    const journal = new PostgresJournal(pool, { createTables: false, maxLockConnections: 1 });
    for (let i = 0; i < 2; i++) {
      await expect(journal.withPlayerLock('Ann', async () => 'never')).rejects.toThrow(`PostgresJournal: could not take the lock on player "Ann"${said}connection reset`);
    }
    expect(released).toEqual([true, true]);
    expect(events.listeners).toEqual([]);
  });

  it('unlocks with the key it locked with, and gives the connection back as it was', async () => {
    const { PostgresJournal } = await postgres();
    const sent: string[] = [];
    const { pool, released } = pgPool((sql) => void sent.push(sql));
    await new PostgresJournal(pool, { createTables: false, table: 'deliveries' }).withPlayerLock('Ann', async () => undefined);
    expect(sent).toEqual(["SELECT set_config('lock_timeout', $1, false)", 'SELECT pg_advisory_lock(hashtextextended($1, 0))', 'RESET lock_timeout', 'SELECT pg_advisory_unlock(hashtextextended($1, 0))']);
    expect(released).toEqual([undefined]);
  });
});

describe('append checks its entries', () => {
  it('refuses one the next read would refuse as damage before any statement, on both journals', async () => {
    const { PostgresJournal } = await postgres();
    const { MySqlJournal } = await mysql();
    const my = mysqlPool();
    const sent: string[] = [];
    const pg = {
      options: { max: 3 },
      query: async (sql: string) => void sent.push(sql),
      connect: async () => Promise.reject(new Error('not used')),
    } as unknown as PgPool;
    const damaged = [{ deliveryId: 'a', playerName: 'Ann', state: 'claiming', recordedAt: Number.NaN }];
    for (const journal of [new PostgresJournal(pg, { createTables: false }), new MySqlJournal(my.pool, { createTables: false })]) {
      const error = await journal.append(damaged as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument: 'entries[0]', rule: 'must be a journal entry: recordedAt is not a number' });
    }
    expect(sent).toEqual([]);
    expect(my.statements).toEqual([]);
  });
});

describe('recordDelivery checks its arguments', () => {
  const engines = [
    { name: 'postgres', load: async () => (await postgres()).recordDelivery, db: 'a pg client or pool' },
    { name: 'mysql', load: async () => (await mysql()).recordDelivery, db: 'a mysql2/promise connection or pool' },
  ];
  it.each(engines)('$name: refuses what is not an object with query, and names unknown options', async ({ load, db }) => {
    const record = await load();
    const never = { query: () => Promise.reject(new Error('no query expected')) };
    for (const value of [{}, Object.assign((): undefined => undefined, { query: noop }), 'db']) {
      const error = await record(value as never, 'id').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(new RegExp(`invalid db: must be ${db.replace('/', '\\/')} \\(an object with query\\), got `));
    }
    await expect(record(never, 'id', { tables: 'x' } as never)).rejects.toThrow(/invalid options\.tables: unknown option/);
  });

  it('mysql names itself when an id is longer than its column', async () => {
    const record = (await mysql()).recordDelivery;
    await expect(record({ query: () => Promise.reject(new Error('no query expected')) }, 'x'.repeat(513))).rejects.toThrow('invalid deliveryId: must be at most 512 bytes in UTF-8 (recordDelivery), got 513');
  });
});

describe('the exported DDL', () => {
  const schemas = [
    { name: 'postgresSchema', load: async () => (await postgres()).postgresSchema, quoted: '"game"."deliveries"', granted: '"game"."granted"', hints: '"game"."hints"', statements: 5 },
    { name: 'mysqlSchema', load: async () => (await mysql()).mysqlSchema, quoted: '`game`.`deliveries`', granted: '`game`.`granted`', hints: '`game`.`hints`', statements: 3 },
  ];
  it.each(schemas)('$name: tables in a schema, each statement on lines of its own after a header naming all three', async ({ load, quoted, granted, hints, statements }) => {
    const schema = await load();
    const ddl = schema({ table: 'game.deliveries', grantedTable: 'game.granted', hintsTable: 'game.hints' });
    const lines = ddl.split('\n');
    expect(lines[0]).toBe('-- teamgames-sdk: the delivery journal (game.deliveries), the dedupe record (game.granted) and the checkout hints (game.hints)');
    expect(lines.filter((l) => l.startsWith('CREATE '))).toHaveLength(statements);
    expect(lines.filter((l) => l.endsWith(';'))).toHaveLength(statements);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS ${quoted} (`);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS ${granted} (`);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS ${hints} (`);
    expect(schema()).toContain('teamgames_hints');
  });

  it.each(schemas)('$name: names the option refused', async ({ load }) => {
    const schema = await load();
    expect(() => schema({ tables: 'x' } as never)).toThrow(/invalid options\.tables: unknown option/);
    expect(() => schema({ table: 'Bad' })).toThrow(/invalid options\.table: /);
    expect(() => schema({ grantedTable: 'Bad' })).toThrow(/invalid options\.grantedTable: /);
    expect(() => schema({ hintsTable: 'Bad' })).toThrow(/invalid options\.hintsTable: /);
  });
});
