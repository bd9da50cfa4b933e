/**
 * The checkout hints of PostgresJournal and MySqlJournal against real servers (#47): the
 * table created on first use (and by the exported DDL), what a shop's journal object writes
 * another node's reads, times from the database's clock only, a hint written again never
 * extending itself, expired rows deleted by the reads, a flood bounded, a row that is not a
 * hint refused, a missing table a JournalError, and the engines' SQL (module-level texts)
 * run by a module loaded inside a test. The loop's use of them runs on the
 * MemoryJournal (test/delivery/loop-shared-hints.test.ts).
 */
import type mysql from 'mysql2/promise';
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectCheckout, JournalError } from 'teamgames-sdk';
import { uniqueName } from '../support/databases.js';
import { engineKits, type EngineKit } from './kits.js';

const tables = () => ({ table: uniqueName('journal'), grantedTable: uniqueName('granted'), hintsTable: uniqueName('hints') });

afterEach(() => {
  vi.useRealTimers();
});

/** Statements of the test on the hints' table, in each engine's words. */
function sql(kit: EngineKit, hints: string) {
  const pg = kit.engine === 'postgres';
  return {
    /** Moves every hint `ms` into the past, as if the database's clock had run on. */
    age: (ms: number) =>
      kit.query(pg ? `UPDATE ${hints} SET created_at = created_at - $1::float8 * interval '1 millisecond', expires_at = expires_at - $1::float8 * interval '1 millisecond'` : `UPDATE ${hints} SET created_ms = created_ms - ?, expires_ms = expires_ms - ?`, pg ? [ms] : [ms, ms]),
    count: async () => Number((await kit.query(`SELECT COUNT(*) AS n FROM ${hints}`))[0]?.['n']),
    /** `n` hints written by hand, one a millisecond apart, Flood0 the oldest. */
    flood: (n: number) =>
      pg
        ? kit.query(`INSERT INTO ${hints} (player_name, created_at, expires_at) SELECT 'Flood' || i, now() - (($1 - i) * interval '1 millisecond'), now() + interval '10 minutes' FROM generate_series(0, $1 - 1) AS i`, [n])
        : kit.query(
            `INSERT INTO ${hints} (player_name, created_ms, expires_ms) VALUES ${Array.from({ length: n }, (_, i) => `('Flood${i}', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - ${n - i}, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 600000)`).join(', ')}`,
          ),
    /** A row the SDK would never write: a blank player name. */
    damage: () =>
      pg
        ? kit.query(`INSERT INTO ${hints} (player_name, expires_at) VALUES ('', now() + interval '1 minute')`)
        : kit.query(`INSERT INTO ${hints} (player_name, created_ms, expires_ms) VALUES ('', CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 60000)`),
  };
}

describe.each(engineKits())('$label', (kit: EngineKit) => {
  describe.skipIf(kit.url === undefined)('checkout hints', () => {
    it("are created with the journal's tables on first use, and what the shop's journal writes another node reads, its times the database's", async () => {
      const names = tables();
      const shop = kit.journal(kit.pool(2), names);
      const node = kit.journal(kit.pool(2), names);
      await expectCheckout(shop, 'Player123', { transactionId: 'tx-1', expiresInMs: 60_000 });
      expect(await kit.tableExists(names.hintsTable)).toBe(true);
      await shop.addCheckoutHint('Ünïcødé 名前');
      const hints = await node.liveCheckoutHints();
      expect(hints.map(({ playerName, transactionId }) => ({ playerName, transactionId }))).toEqual([
        { playerName: 'Player123', transactionId: 'tx-1' },
        { playerName: 'Ünïcødé 名前', transactionId: undefined },
      ]);
      expect(hints[1]).not.toHaveProperty('transactionId');
      for (const hint of hints) {
        expect(hint.ageMs).toBeGreaterThanOrEqual(0);
        expect(hint.ageMs).toBeLessThan(5_000);
      }
      expect(hints[0]!.remainingMs).toBeGreaterThan(55_000);
      expect(hints[0]!.remainingMs).toBeLessThanOrEqual(60_000);
      expect(hints[1]!.remainingMs).toBeGreaterThan(595_000);
      expect(hints[1]!.remainingMs).toBeLessThanOrEqual(600_000);
    });

    it("written and read by the journal's module loaded afresh: its SQL texts are module-level constants, run inside this test", async () => {
      const names = tables();
      // The suites import the journals at the top, before any test: under StrykerJS's
      // ignoreStatic, a mutant of a module-level text (MySQL's clock expression) runs only
      // against the tests that loaded its module themselves, as this one does.
      vi.resetModules();
      const journal =
        kit.engine === 'postgres'
          ? new (await import('teamgames-sdk/postgres')).PostgresJournal(kit.pool(2) as pg.Pool, names)
          : new (await import('teamgames-sdk/mysql')).MySqlJournal(kit.pool(2) as mysql.Pool, names);
      await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
      const [hint, ...more] = await journal.liveCheckoutHints();
      expect(more).toEqual([]);
      expect(hint).toMatchObject({ playerName: 'Ann', transactionId: 'tx-1' });
      expect(hint!.ageMs).toBeGreaterThanOrEqual(0);
      expect(hint!.ageMs).toBeLessThan(5_000);
      expect(hint!.remainingMs).toBeGreaterThan(55_000);
      expect(hint!.remainingMs).toBeLessThanOrEqual(60_000);
    });

    it("live by the database's clock, not the node's: a node's clock a day ahead changes nothing", async () => {
      const names = tables();
      const journal = kit.journal(kit.pool(2), names);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 86_400_000 });
      await journal.addCheckoutHint('Ann', { expiresInMs: 60_000 });
      vi.setSystemTime(Date.now() - 2 * 86_400_000);
      const [hint] = await journal.liveCheckoutHints();
      vi.useRealTimers();
      expect(hint!.ageMs).toBeLessThan(5_000);
      expect(hint!.remainingMs).toBeGreaterThan(55_000);
      expect(hint!.remainingMs).toBeLessThanOrEqual(60_000);
      // The database's clock running on 50 s: 10 s left; past its life, no hint.
      const { age } = sql(kit, names.hintsTable);
      await age(50_000);
      const [older] = await journal.liveCheckoutHints();
      expect(older!.ageMs).toBeGreaterThanOrEqual(50_000);
      expect(older!.remainingMs).toBeLessThanOrEqual(10_000);
      await age(10_000);
      expect(await journal.liveCheckoutHints()).toEqual([]);
    });

    it('written again while it lives, a hint changes nothing; expired, it is written anew', async () => {
      const names = tables();
      const journal = kit.journal(kit.pool(2), names);
      const { age, count } = sql(kit, names.hintsTable);
      await journal.addCheckoutHint('Bob', { transactionId: 'tx-9', expiresInMs: 60_000 });
      await age(30_000);
      await journal.addCheckoutHint('Bob', { transactionId: 'tx-9', expiresInMs: 60_000 });
      const [kept] = await journal.liveCheckoutHints();
      expect(kept!.remainingMs).toBeLessThanOrEqual(30_000);
      expect(kept!.ageMs).toBeGreaterThanOrEqual(30_000);
      await age(30_000);
      await journal.addCheckoutHint('Bob', { transactionId: 'tx-9', expiresInMs: 60_000 });
      const [fresh] = await journal.liveCheckoutHints();
      expect(fresh!.remainingMs).toBeGreaterThan(55_000);
      expect(fresh!.ageMs).toBeLessThan(5_000);
      // Another transaction, or none, is another hint.
      await journal.addCheckoutHint('Bob', { transactionId: 'tx-10' });
      await journal.addCheckoutHint('Bob');
      expect(await count()).toBe(3);
    });

    it('a hint delivered is deleted by the node that delivered it, its transaction or the one naming none, from any node', async () => {
      const names = tables();
      const shop = kit.journal(kit.pool(2), names);
      const node = kit.journal(kit.pool(2), names);
      await shop.addCheckoutHint('Ann', { transactionId: 'tx-1' });
      await shop.addCheckoutHint('Ann');
      await shop.addCheckoutHint('Ann', { transactionId: 'tx-2' });
      await node.endCheckoutHint('Ann', 'tx-1');
      expect((await shop.liveCheckoutHints()).map((h) => h.transactionId ?? '')).toEqual(['', 'tx-2']);
      await node.endCheckoutHint('Ann');
      await node.endCheckoutHint('Nobody', 'tx-9');
      expect((await shop.liveCheckoutHints()).map((h) => h.transactionId ?? '')).toEqual(['tx-2']);
    });

    it("expired rows are deleted by a node's read, now and then", async () => {
      const names = tables();
      const shop = kit.journal(kit.pool(2), names);
      await shop.addCheckoutHint('Cy', { expiresInMs: 10_000 });
      await shop.addCheckoutHint('Di', { expiresInMs: 600_000 });
      const { age, count } = sql(kit, names.hintsTable);
      await age(20_000);
      expect(await count()).toBe(2);
      // A node's first read deletes them.
      const node = kit.journal(kit.pool(2), names);
      expect((await node.liveCheckoutHints()).map((h) => h.playerName)).toEqual(['Di']);
      expect(await count()).toBe(1);
    });

    it('a flood is bounded: a read hands back the newest 10,000, oldest first, and the table is cut to them', async () => {
      const names = tables();
      const journal = kit.journal(kit.pool(2), names);
      await journal.createTables();
      const { flood, count } = sql(kit, names.hintsTable);
      await flood(10_050);
      const hints = await journal.liveCheckoutHints();
      expect(hints).toHaveLength(10_000);
      expect(hints[0]!.playerName).toBe('Flood50');
      expect(hints.at(-1)!.playerName).toBe('Flood10049');
      expect(await count()).toBe(10_000);
    });

    it('a row that is not a hint fails the read loudly (JournalError), never becomes a claim; given onBadRow, it is handed over and the others are read', async () => {
      const names = tables();
      const journal = kit.journal(kit.pool(2), names);
      await journal.createTables();
      await expectCheckout(journal, 'Before', { transactionId: 'tx-1' });
      await sql(kit, names.hintsTable).damage();
      await expectCheckout(journal, 'After');
      await expect(journal.liveCheckoutHints()).rejects.toThrow(/a row of the checkout hints is not a hint \(its player name is not a player name\)/);
      const bad: JournalError[] = [];
      const hints = await journal.liveCheckoutHints((error) => bad.push(error));
      expect(hints.map((h) => h.playerName).sort()).toEqual(['After', 'Before']);
      expect(bad).toHaveLength(1);
      expect(bad[0]).toBeInstanceOf(JournalError);
      expect(bad[0]!.message).toMatch(/a row of the checkout hints is not a hint \(its player name is not a player name\); it was changed outside the SDK/);
    });

    it('the exported DDL creates the table as the journal does; without it (createTables: false) a read is a JournalError', async () => {
      const names = tables();
      const bare = kit.journal(kit.pool(2), { ...names, createTables: false });
      const error = await bare.liveCheckoutHints().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toMatch(/could not read the checkout hints/);
      await kit.migrate(names);
      await expectCheckout(bare, 'Eve', { transactionId: 'tx-1' });
      expect((await bare.liveCheckoutHints()).map((h) => h.transactionId)).toEqual(['tx-1']);
    });
  });
});
