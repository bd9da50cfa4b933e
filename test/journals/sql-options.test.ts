/**
 * What the database journals check before touching a database (no server needed): the
 * pool, the options, the table names, the exported DDL, the dedupe helper's arguments.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from 'teamgames-sdk';
import { MySqlJournal, mysqlSchema, recordDelivery as mysqlRecord, type MySqlPool } from 'teamgames-sdk/mysql';
import { PostgresJournal, postgresSchema, recordDelivery as pgRecord, type PgPool } from 'teamgames-sdk/postgres';

/** Pools that must never be reached by these checks. */
const pgPool = { query: () => Promise.reject(new Error('no query expected')), connect: () => Promise.reject(new Error('no connection expected')) } as unknown as PgPool;
const mysqlPool = { query: () => Promise.reject(new Error('no query expected')), getConnection: () => Promise.reject(new Error('no connection expected')) } as unknown as MySqlPool;

const journals = [
  { name: 'PostgresJournal', make: (options?: object) => new PostgresJournal(pgPool, options), pool: (p: unknown) => new PostgresJournal(p as PgPool) },
  { name: 'MySqlJournal', make: (options?: object) => new MySqlJournal(mysqlPool, options), pool: (p: unknown) => new MySqlJournal(p as MySqlPool) },
];

describe.each(journals)('$name', ({ make, pool }) => {
  it('connects nothing at construction and exposes its table and node id', () => {
    const journal = make({ table: 'game.deliveries', nodeId: 'lobby-1' });
    expect(journal.table).toBe('game.deliveries');
    expect(journal.nodeId).toBe('lobby-1');
    expect(make().table).toBe('teamgames_deliveries');
  });

  it.each([
    [null, /invalid pool: must be a .* Pool/],
    [{ query() {} }, /invalid pool: must be a .* Pool/],
    ['postgres://localhost', /invalid pool: must be a .* Pool/],
  ])('refuses %j as a pool', (value, message) => {
    expect(() => pool(value)).toThrow(InvalidInputError);
    expect(() => pool(value)).toThrow(message);
  });

  it.each([
    [{ tabel: 'x' }, /invalid options.tabel: unknown option; known: table, grantedTable, hintsTable, lockTimeoutMs, maxLockConnections, nodeId, createTables/],
    [{ Table: 'x' }, /did you mean table\?/],
    [{ table: 'Deliveries' }, /invalid options.table: must be a table name/],
    [{ table: 'a.b.c' }, /invalid options.table/],
    [{ table: "x'; DROP TABLE users; --" }, /invalid options.table/],
    [{ table: 'x'.repeat(49) }, /invalid options.table/],
    [{ grantedTable: '1st' }, /invalid options.grantedTable/],
    [{ hintsTable: 'Hints' }, /invalid options.hintsTable/],
    [{ lockTimeoutMs: 0 }, /invalid options.lockTimeoutMs: must be an integer from 1 to/],
    [{ lockTimeoutMs: 1.5 }, /invalid options.lockTimeoutMs/],
    [{ maxLockConnections: 0 }, /invalid options.maxLockConnections: must be an integer from 1 to/],
    [{ maxLockConnections: 2.5 }, /invalid options.maxLockConnections/],
    [{ nodeId: ' ' }, /invalid options.nodeId: must not be blank/],
    [{ nodeId: 'n'.repeat(201) }, /invalid options.nodeId: must be at most 200 characters/],
    [{ createTables: 'no' }, /invalid options.createTables: must be a boolean/],
  ])('refuses the options %j', (options, message) => {
    expect(() => make(options)).toThrow(InvalidInputError);
    expect(() => make(options)).toThrow(message);
  });

  it('refuses a blank player for the lock without connecting', async () => {
    await expect(make().withPlayerLock(' ', async () => undefined)).rejects.toThrow(/invalid playerName: must not be blank/);
  });
});

describe("the locks' share of the pool", () => {
  // Pools of the real drivers, never connected: their size is all the journal reads here.
  const pools: Array<{ end(): Promise<void> }> = [];
  const kinds = [
    { name: 'PostgresJournal', option: 'max', journal: (size: number | undefined, options?: object) => new PostgresJournal(track(new pg.Pool(size === undefined ? {} : { max: size })), options) },
    { name: 'MySqlJournal', option: 'connectionLimit', journal: (size: number | undefined, options?: object) => new MySqlJournal(track(mysql.createPool(size === undefined ? {} : { connectionLimit: size })), options) },
  ];
  function track<T extends { end(): Promise<void> }>(pool: T): T {
    pools.push(pool);
    return pool;
  }
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  });

  describe.each(kinds)('$name', ({ journal, option }) => {
    it("is one less than the pool's size, read from the driver's pool (default size 10)", () => {
      expect(lockConnections(journal(20))).toBe(19);
      expect(lockConnections(journal(2))).toBe(1);
      expect(lockConnections(journal(undefined))).toBe(9);
    });

    it('is maxLockConnections when given, up to the pool size', () => {
      expect(lockConnections(journal(20, { maxLockConnections: 20 }))).toBe(20);
      expect(lockConnections(journal(20, { maxLockConnections: 3 }))).toBe(3);
      expect(() => journal(4, { maxLockConnections: 5 })).toThrow(InvalidInputError);
      expect(() => journal(4, { maxLockConnections: 5 })).toThrow(new RegExp(`invalid options.maxLockConnections: must be at most the pool's size \\(${option}: 4\\), got 5`));
    });

    it('refuses a pool of one connection unless maxLockConnections says the locks may have it', () => {
      expect(() => journal(1)).toThrow(InvalidInputError);
      expect(() => journal(1)).toThrow(new RegExp(`invalid pool: has 1 connection \\(${option}: 1\\).*at least 2 connections.*options.maxLockConnections: 1`));
      expect(lockConnections(journal(1, { maxLockConnections: 1 }))).toBe(1);
    });
  });

  it('is 9 for a pool whose size cannot be read, unbounded for a mysql2 pool without a limit', () => {
    expect(lockConnections(new PostgresJournal(pgPool))).toBe(9);
    expect(lockConnections(new MySqlJournal(mysqlPool))).toBe(9);
    expect(lockConnections(new MySqlJournal(track(mysql.createPool({ connectionLimit: 0 }))))).toBe(Infinity);
  });
});

/** The journal's limit, as withPlayerLock enforces it. */
function lockConnections(journal: PostgresJournal | MySqlJournal): number {
  return journal.maxLockConnections;
}

describe('the exported DDL', () => {
  it('PostgreSQL: the three tables, idempotent statements, the names given', () => {
    const ddl = postgresSchema({ table: 'game.deliveries', grantedTable: 'game.granted', hintsTable: 'game.hints' });
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS "game"."deliveries" (');
    expect(ddl).toContain('CREATE INDEX IF NOT EXISTS "deliveries_player_idx" ON "game"."deliveries" (player_name, seq);');
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS "game"."granted" (');
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS "game"."hints" (');
    expect(ddl).toContain('CREATE INDEX IF NOT EXISTS "hints_created_idx" ON "game"."hints" (created_at);');
    expect(ddl.match(/IF NOT EXISTS/g)).toHaveLength(5);
    expect(postgresSchema()).toContain('"teamgames_hints"');
    expect(postgresSchema()).toContain('"teamgames_deliveries"');
    expect(postgresSchema()).toContain('"teamgames_granted"');
  });

  it('MySQL: the three tables, binary ids and names, idempotent statements', () => {
    const ddl = mysqlSchema();
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS `teamgames_deliveries` (');
    expect(ddl).toContain('delivery_id VARBINARY(512) NOT NULL');
    expect(ddl).toContain('player_name VARBINARY(320) NOT NULL');
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS `teamgames_granted` (');
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS `teamgames_hints` (');
    expect(ddl).toContain('PRIMARY KEY (player_name, transaction_id)');
    expect(ddl.match(/IF NOT EXISTS/g)).toHaveLength(3);
  });

  it.each([
    ['postgresSchema', () => postgresSchema({ table: 'Bad' })],
    ['mysqlSchema', () => mysqlSchema({ grantedTable: 'bad-name' })],
    ['postgresSchema', () => postgresSchema({ tables: 'x' } as object)],
  ])('%s refuses bad names and unknown options', (_name, call) => {
    expect(call).toThrow(InvalidInputError);
  });
});

describe('recordDelivery checks its arguments before any statement', () => {
  const db = { query: () => Promise.reject(new Error('no query expected')) };
  it.each([
    ['postgres', pgRecord],
    ['mysql', mysqlRecord],
  ] as const)('%s', async (_engine, record) => {
    await expect(record(db as never, '')).rejects.toThrow(/invalid deliveryId: must not be blank/);
    await expect(record(db as never, 'id', { table: 'Nope' })).rejects.toThrow(/invalid options.table/);
    await expect(record(null as never, 'id')).rejects.toThrow(/invalid db/);
  });

  it('mysql refuses an id longer than its column (INSERT IGNORE would cut it and collide)', async () => {
    await expect(mysqlRecord(db as never, 'x'.repeat(513))).rejects.toThrow(/at most 512 bytes/);
  });

  it('mysql takes an id of up to 512 bytes, counted in UTF-8 (its column is VARBINARY(512))', async () => {
    const inserted: unknown[] = [];
    const table = { query: async (_sql: string, values: unknown[]) => (inserted.push(values[0]), [{ affectedRows: 1 }, []]) };
    const full = 'é'.repeat(256);
    expect(await mysqlRecord(table as never, full)).toBe(true);
    expect(inserted).toEqual([full]);
    await expect(mysqlRecord(table as never, `${full}x`)).rejects.toThrow(
      expect.objectContaining({ name: 'InvalidInputError', argument: 'deliveryId', rule: 'must be at most 512 bytes in UTF-8 (recordDelivery), got 513' }),
    );
    expect(inserted).toHaveLength(1);
  });
});
