/**
 * More of what users rely on from PostgresJournal, MySqlJournal and recordDelivery, on the
 * real servers (the `databases` global setup starts them): tables in a schema of their own,
 * created again after a failure; the DDL's own locks between nodes (taken in one order:
 * journals whose names cross never deadlock); a lock's connection
 * back in the pool as it was; ids that are not strings or too long; the dedupe helper's
 * errors, its own and the server's.
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { JournalError, isStorefrontError } from 'teamgames-sdk';
import { pgPool, uniqueName } from '../support/databases.js';
import { journalLine } from '../support/journal.js';
import { engineKits, until, type EngineKit } from './kits.js';

const tables = () => ({ table: uniqueName('journal'), grantedTable: uniqueName('granted') });

describe.each(engineKits())('$label', (kit: EngineKit) => {
  const createSchema = (schema: string) => kit.query(kit.engine === 'postgres' ? `CREATE SCHEMA ${schema}` : `CREATE DATABASE ${schema}`);

  describe.skipIf(kit.url === undefined)('tables', () => {
    it('in a schema given with their names: created again after a failure, then used by the journal, the dedupe and the DDL', async () => {
      const schema = uniqueName('game');
      const names = { table: `${schema}.deliveries`, grantedTable: `${schema}.granted` };
      const journal = kit.journal(kit.pool(), names);
      // No such schema yet: the creation fails, and is not remembered as done (nor as failed).
      const error = await journal.append([journalLine('a')]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toMatch(new RegExp(`^${journal.constructor.name}: could not create the tables ${schema}\\.deliveries, ${schema}\\.granted and teamgames_hints: `));
      await expect(journal.createTables()).rejects.toThrow(/could not create the tables/);

      await createSchema(schema);
      await journal.append([journalLine('a')]);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a']);
      const rows = await kit.query(`SELECT delivery_id FROM ${schema}.deliveries`);
      expect(rows).toHaveLength(1);
      // The exported DDL names the same tables, and runs on them again unchanged.
      await kit.migrate(names);
      const tx = await kit.begin(kit.pool());
      expect(await tx.record('invoice:1', names.grantedTable)).toBe(true);
      await tx.commit();
      expect(await kit.query(`SELECT delivery_id FROM ${schema}.granted`)).toHaveLength(1);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a']);
    });
  });

  describe.skipIf(kit.url === undefined)('journal', () => {
    it('acknowledge ignores the ids that are not strings', async () => {
      const journal = kit.journal(kit.pool(), tables());
      await journal.append([journalLine('42'), journalLine('a')]);
      await journal.acknowledge([42, null] as never);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['42', 'a']);
      await journal.acknowledge([42, 'a'] as never);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['42']);
    });

    it('a failed append says so, and the entries of a later one are read back field by field', async () => {
      const journal = kit.journal(kit.pool(), tables());
      await journal.createTables();
      const bad = kit.engine === 'postgres' ? { ...journalLine('b'), playerName: 'Ann\u0000' } : journalLine('b'.repeat(600));
      await expect(journal.append([bad])).rejects.toThrow(new RegExp(`^${journal.constructor.name}: could not append to the journal: `));
      const line = journalLine('c', 'Bob');
      await journal.append([line]);
      expect(await journal.pending('Bob')).toEqual([line]);
    });
  });

  // Registered for its engine only (not a skipped test on the other).
  if (kit.engine === 'mysql') describe.skipIf(kit.url === undefined)('MariaDB: ids longer than the column', () => {
    it('append takes an id of exactly 512 bytes and refuses a longer one before any statement, naming its start', async () => {
      const journal = kit.journal(kit.pool(), tables());
      const longest = 'é'.repeat(256); // 512 bytes in UTF-8
      await journal.append([journalLine(longest)]);
      const long = `${'a'.repeat(60)}${'b'.repeat(500)}`;
      await expect(journal.append([journalLine('c'), journalLine(long)])).rejects.toThrow(
        `MySqlJournal: could not append to the journal: the deliveryId "${'a'.repeat(60)}"… is longer than 512 bytes; nothing was recorded`,
      );
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual([longest]);
    });

    it('recordDelivery applies a 512-byte id once', async () => {
      const names = tables();
      await kit.journal(kit.pool(), names).createTables();
      const tx = await kit.begin(kit.pool());
      expect(await tx.record('é'.repeat(256), names.grantedTable)).toBe(true);
      expect(await tx.record('é'.repeat(256), names.grantedTable)).toBe(false);
      await tx.commit();
    });
  });

  if (kit.engine === 'postgres') describe.skipIf(kit.url === undefined)("PostgreSQL: the lock's connection", () => {
    it('goes back to the pool after the lock, reused as it was (lock_timeout reset, not closed)', async () => {
      const pool = kit.pool(2) as pg.Pool;
      const journal = kit.journal(pool, tables());
      await journal.createTables();
      const pid = (await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      expect(await journal.withPlayerLock('Ann', async () => journal.pending('Ann'))).toEqual([]);
      expect([pool.totalCount, pool.idleCount]).toEqual([1, 1]);
      const after = (await pool.query('SELECT pg_backend_pid() AS pid, current_setting($1) AS timeout', ['lock_timeout'])).rows[0];
      expect(after).toEqual({ pid, timeout: '0' });
    });

    /** How many connections wait for the advisory lock of `key`. */
    const waiters = async (key: string) =>
      Number((await kit.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid::bigint = (hashtextextended($1, 0) & 4294967295)", [key]))[0]?.['n']);

    it('nodes creating the same tables take turns: one waits while another node holds the DDL lock', async () => {
      const names = tables();
      const key = `teamgames-sdk:ddl:${names.table}`;
      const holder = await kit.begin(kit.pool());
      await holder.run('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
      let settled = false;
      const creating = kit
        .journal(kit.pool(), names)
        .createTables()
        .finally(() => (settled = true));
      await until(async () => (await waiters(key)) === 1, 'the DDL waits for the lock');
      expect(settled).toBe(false);
      expect(await kit.tableExists(names.table)).toBe(false);
      await holder.commit();
      await creating;
      expect(await kit.tableExists(names.table)).toBe(true);
    });

    it("two journals whose names cross (in two schemas by their pools' search_path, one's journal table named as the other's hints table) create their tables at once: the DDL locks are taken in one order, no deadlock", async () => {
      const [low, high] = [uniqueName('crossed'), uniqueName('crossed')].sort() as [string, string];
      const schemas = [uniqueName('node'), uniqueName('node')] as const;
      for (const schema of schemas) await kit.query(`CREATE SCHEMA ${schema}`);
      const node = (schema: string) => pgPool(kit.url as string, { max: 2, options: `-c search_path=${schema}` });
      const x = kit.journal(node(schemas[0]), { table: low, hintsTable: high, grantedTable: uniqueName('granted') });
      const y = kit.journal(node(schemas[1]), { table: high, hintsTable: low, grantedTable: uniqueName('granted') });
      // Another node holds the lock of the first name: x queues for it first, then y (which,
      // taking its own table's lock first, would hold the second name's lock meanwhile).
      const first = `teamgames-sdk:ddl:${low}`;
      const holder = await kit.begin(kit.pool());
      await holder.run('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [first]);
      const creating = [x.createTables()];
      await until(async () => (await waiters(first)) === 1, 'x waits for the first lock');
      creating.push(y.createTables());
      await until(async () => (await waiters(first)) === 2, 'y waits for the first lock');
      await holder.commit();
      // x is let in first; in any other order it would then wait for y, and y for x (a deadlock the server breaks by failing one).
      await Promise.all(creating);
      for (const schema of schemas) {
        expect(await kit.tableExists(`${schema}.${low}`)).toBe(true);
        expect(await kit.tableExists(`${schema}.${high}`)).toBe(true);
      }
    });
  });

  describe.skipIf(kit.url === undefined)('recordDelivery', () => {
    it('a missing dedupe table: a JournalError caused by the server’s error', async () => {
      const tx = await kit.begin(kit.pool());
      const error = await tx.record('invoice:5', uniqueName('missing')).catch((e: unknown) => e);
      await tx.rollback();
      expect(isStorefrontError(error, 'JOURNAL_FAILED')).toBe(true);
      expect(((error as Error).cause as { code?: string }).code).toBe(kit.engine === 'postgres' ? '42P01' : 'ER_NO_SUCH_TABLE');
    });

    it("rethrows the server's other errors as they are", async () => {
      const table = uniqueName('other');
      await kit.query(`CREATE TABLE ${table} (id INT)`);
      const tx = await kit.begin(kit.pool());
      const error = await tx.record('invoice:6', table).catch((e: unknown) => e);
      await tx.rollback();
      expect(error).not.toBeInstanceOf(JournalError);
      expect((error as { code?: string }).code).toBe(kit.engine === 'postgres' ? '42703' : 'ER_BAD_FIELD_ERROR');
    });
  });
});
