/**
 * PostgresJournal and MySqlJournal against real servers (a throwaway PostgreSQL and
 * MariaDB, started by the `databases` project's global setup): the journal contract, the
 * tables created on first use, the player's lock across nodes (waits, timeout, a node
 * dying while it holds it) and the game's shared dedupe inside its own transactions.
 * Each test uses tables of its own, so suites can share the servers.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JournalError, isStorefrontError } from 'teamgames-sdk';
import { journalContract } from '../support/journal-contract.js';
import { uniqueName } from '../support/databases.js';
import { journalLine } from '../support/journal.js';
import { engineKits, gate, until, type EngineKit } from './kits.js';

const LOCK_HOLDER = fileURLToPath(new URL('./lock-holder.ts', import.meta.url));

const tables = () => ({ table: uniqueName('journal'), grantedTable: uniqueName('granted') });

describe.each(engineKits())('$label', (kit: EngineKit) => {
  describe.skipIf(kit.url === undefined)('journal', () => {
    describe('the DeliveryJournal contract', () => {
      journalContract(() => kit.journal(kit.pool(2), tables()));
    });

    it('is shared: what one node appends, another lists and acknowledges', async () => {
      const names = tables();
      const a = kit.journal(kit.pool(), names);
      const b = kit.journal(kit.pool(), names);
      await a.append([journalLine('a1'), journalLine('b1', 'Bob')]);
      await b.append([journalLine('a2')]);
      expect((await b.pending('Ann')).map((e) => e.deliveryId)).toEqual(['a1', 'a2']);
      await b.acknowledge(['a1', 'b1']);
      expect((await a.pending()).map((e) => e.deliveryId)).toEqual(['a2']);
    });

    it('gives each journal object its own node id unless one is given', () => {
      const pool = kit.pool();
      const [a, b] = [kit.journal(pool), kit.journal(pool)];
      expect(a.nodeId).toMatch(/^.+:\d+:[0-9a-f]{8}$/);
      expect(a.nodeId).not.toBe(b.nodeId);
      expect(kit.journal(pool, { nodeId: 'lobby-1' }).nodeId).toBe('lobby-1');
    });

    it('appends all the entries of one call or none', async () => {
      const journal = kit.journal(kit.pool(), tables());
      await journal.append([journalLine('a')]);
      // An entry that cannot be stored (a NUL byte PostgreSQL refuses in text, an id too long for MariaDB's column) fails the whole call.
      const bad = kit.engine === 'postgres' ? { ...journalLine('b'), playerName: 'Ann\u0000' } : journalLine('b'.repeat(600));
      await expect(journal.append([journalLine('c'), bad])).rejects.toBeInstanceOf(JournalError);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a']);
    });
  });

  describe.skipIf(kit.url === undefined)('tables', () => {
    it('are created on first use, once, by many nodes starting together', async () => {
      const names = tables();
      const nodes = Array.from({ length: 6 }, () => kit.journal(kit.pool(2), names));
      await Promise.all(nodes.map((journal, i) => journal.append([journalLine(`n${i}`)])));
      expect(await kit.tableExists(names.table)).toBe(true);
      expect(await kit.tableExists(names.grantedTable)).toBe(true);
      expect((await nodes[0]!.pending()).map((e) => e.deliveryId).sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
    });

    it('createTables() races safely, and on existing tables changes nothing', async () => {
      const names = tables();
      await Promise.all(Array.from({ length: 6 }, () => kit.journal(kit.pool(2), names).createTables()));
      const first = kit.journal(kit.pool(), names);
      await first.append([journalLine('kept')]);
      const later = kit.journal(kit.pool(), names);
      await later.createTables();
      expect((await later.pending()).map((e) => e.deliveryId)).toEqual(['kept']);
    });

    it('can be made by hand from the exported DDL; createTables: false then runs no DDL', async () => {
      const names = tables();
      const journal = kit.journal(kit.pool(), { ...names, createTables: false });
      const missing = await journal.pending().catch((e: unknown) => e);
      expect(isStorefrontError(missing, 'JOURNAL_FAILED')).toBe(true);
      expect((missing as Error).message.startsWith(`${journal.constructor.name}: could not read the journal: `)).toBe(true);
      expect(await kit.tableExists(names.table)).toBe(false);

      await kit.migrate(names);
      await kit.migrate(names); // the DDL itself is idempotent
      await journal.append([journalLine('a')]);
      expect((await journal.pending()).map((e) => e.deliveryId)).toEqual(['a']);
    });
  });

  describe.skipIf(kit.url === undefined)("the player's lock across nodes", () => {
    it('makes a second node wait while the first holds the player, and blocks no other player', async () => {
      const names = tables();
      const a = kit.journal(kit.pool(), names);
      const b = kit.journal(kit.pool(), names);
      const events: string[] = [];
      const inside = gate();
      const leave = gate();
      const aDone = a.withPlayerLock('Ann', async () => {
        events.push('a in');
        inside.open();
        await leave.promise;
        events.push('a out');
        return 'a';
      });
      await inside.promise;
      const bDone = b.withPlayerLock('Ann', async () => {
        events.push('b in');
        return 'b';
      });
      await until(async () => (await kit.lockWaiters(names.table, 'Ann')) === 1, 'node b waits for the lock');
      expect(await b.withPlayerLock('Bob', async () => events.push('bob'))).toBe(2);
      expect(events).toEqual(['a in', 'bob']);
      leave.open();
      expect(await aDone).toBe('a');
      expect(await bDone).toBe('b');
      expect(events).toEqual(['a in', 'bob', 'a out', 'b in']);
      expect(await kit.lockHolder(names.table, 'Ann')).toBeUndefined();
    });

    it('is held on one connection, which also carries the journal calls of the work', async () => {
      const names = tables();
      // One connection in the pool, all of it for the locks: the work's journal calls could not get another.
      const journal = kit.journal(kit.pool(1), { ...names, maxLockConnections: 1 });
      const seen = await journal.withPlayerLock('Ann', async () => {
        await journal.append([journalLine('a')]);
        return journal.pending('Ann');
      });
      expect(seen.map((e) => e.deliveryId)).toEqual(['a']);
    });

    it('times out: a JournalError without running the work, and the node stays usable', async () => {
      const names = tables();
      const a = kit.journal(kit.pool(), names);
      const b = kit.journal(kit.pool(), { ...names, lockTimeoutMs: 300 });
      const inside = gate();
      const leave = gate();
      const aDone = a.withPlayerLock('Ann', async () => {
        inside.open();
        await leave.promise;
      });
      await inside.promise;
      let ran = false;
      const started = Date.now();
      const error = await b
        .withPlayerLock('Ann', async () => {
          ran = true;
        })
        .catch((e: unknown) => e);
      const waited = Date.now() - started;
      expect(error).toBeInstanceOf(JournalError);
      expect((error as JournalError).message).toMatch(new RegExp(`^${b.constructor.name}: the lock on player "Ann" was not free within 300 ms .*nothing was done`));
      // PostgreSQL says why (lock_not_available); MySQL's GET_LOCK only answers 0.
      // branch: one engine has a reason to check
      if (kit.engine === 'postgres') expect(((error as Error).cause as { code?: string }).code).toBe('55P03');
      expect(ran).toBe(false);
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(5_000);
      leave.open();
      await aDone;
      expect(await b.withPlayerLock('Ann', async () => 'now')).toBe('now');
    });

    it('times out waiting for a connection of a pool the game exhausted', async () => {
      const names = tables();
      const pool = kit.pool(2);
      const journal = kit.journal(pool, { ...names, lockTimeoutMs: 200 });
      await journal.createTables();
      // The game holds both connections: the lock has its turn but no connection.
      const games = [await kit.begin(pool), await kit.begin(pool)];
      let ran = false;
      const error = await journal
        .withPlayerLock('Bob', async () => {
          ran = true;
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toMatch(/no connection of the pool was free within 200 ms to take the lock on player "Bob"; nothing was done/);
      expect(ran).toBe(false);
      await Promise.all(games.map((game) => game.rollback()));
      expect(await journal.withPlayerLock('Bob', async () => 'ok')).toBe('ok');
    });

    it("never takes the pool's last connection: a lock past maxLockConnections waits its turn (within lockTimeoutMs), and the grant's transaction finds a connection meanwhile", async () => {
      const names = tables();
      const pool = kit.pool(3);
      // Two journal objects on one pool (two clients, two tables) share its lock connections.
      const journal = kit.journal(pool, { ...names, lockTimeoutMs: 300 });
      const other = kit.journal(pool, { ...tables(), lockTimeoutMs: 300 });
      await Promise.all([journal.createTables(), other.createTables()]);
      const inside = [gate(), gate()];
      const leave = gate();
      const holders = [journal, other].map((j, i) =>
        j.withPlayerLock(`P${i}`, async () => {
          inside[i]!.open();
          await leave.promise;
        }),
      );
      await Promise.all(inside.map((g) => g.promise));
      // Two locks hold two of three connections: the third is the game's.
      const game = await kit.begin(pool);
      await game.rollback();
      let ran = false;
      const started = performance.now();
      const error = await journal
        .withPlayerLock('P2', async () => {
          ran = true;
        })
        .catch((e: unknown) => e);
      const waited = performance.now() - started;
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toMatch(/players' locks already hold 2 connections of the pool, the most they may \(maxLockConnections: 2\), and none was released within 300 ms to take the lock on player "P2"; nothing was done/);
      expect(ran).toBe(false);
      expect(waited).toBeGreaterThanOrEqual(250);
      // A turn given back goes to the next waiter.
      const next = journal.withPlayerLock('P2', async () => 'in');
      leave.open();
      await Promise.all(holders);
      expect(await next).toBe('in');
    });

    it('is released when the node holding it is killed (SIGKILL): the other node takes it then, not before', async () => {
      const names = tables();
      const b = kit.journal(kit.pool(), names);
      await b.createTables();
      const node = spawn(process.execPath, ['--import', 'tsx', LOCK_HOLDER, kit.engine, kit.url as string, names.table, 'Ann'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      node.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      node.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => node.on('exit', (_code, signal) => resolve(signal)));
      try {
        await until(() => output.includes('locked ') || node.exitCode !== null, 'the other node holds the lock', 20_000);
        expect(output).toMatch(/^locked \S+:\d+:[0-9a-f]{8}\n$/);
        expect(await kit.lockHolder(names.table, 'Ann')).toBeTypeOf('number');

        let enteredAt = 0;
        const bDone = b.withPlayerLock('Ann', async () => {
          enteredAt = Date.now();
        });
        await until(async () => (await kit.lockWaiters(names.table, 'Ann')) === 1, 'node b waits for the lock');
        const killedAt = Date.now();
        node.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
        await bDone;
        expect(enteredAt).toBeGreaterThanOrEqual(killedAt);
        expect(await kit.lockHolder(names.table, 'Ann')).toBeUndefined();
      } finally {
        node.kill('SIGKILL');
      }
    });

    it('is released when the connection of the node holding it dies; that node writes nothing more under it', async () => {
      const names = tables();
      const a = kit.journal(kit.pool(), names);
      const b = kit.journal(kit.pool(), names);
      const inside = gate();
      const killed = gate();
      const aDone = a.withPlayerLock('Ann', async () => {
        inside.open();
        await killed.promise;
        // The lock went with the connection: a write now must fail, not run unlocked.
        const write = await a.append([journalLine('after-death')]).catch((e: unknown) => e);
        return write;
      });
      await inside.promise;
      const holder = await kit.lockHolder(names.table, 'Ann');
      expect(holder).toBeTypeOf('number');
      const bDone = b.withPlayerLock('Ann', async () => 'b got it');
      await until(async () => (await kit.lockWaiters(names.table, 'Ann')) === 1, 'node b waits for the lock');

      await kit.kill(holder as number);
      expect(await bDone).toBe('b got it');
      killed.open();
      const write = await aDone;
      expect(write).toBeInstanceOf(JournalError);
      expect(await b.pending()).toEqual([]);
      // The node itself carries on with a new connection.
      expect(await a.withPlayerLock('Ann', async () => 'a again')).toBe('a again');
    });
  });

  describe.skipIf(kit.url === undefined)('recordDelivery, the shared dedupe', () => {
    const setUp = async () => {
      const names = tables();
      await kit.journal(kit.pool(), names).createTables();
      return names.grantedTable;
    };

    it('records nothing in a transaction that rolls back: the retried grant applies', async () => {
      const granted = await setUp();
      const node = kit.pool();
      const first = await kit.begin(node);
      expect(await first.record('invoice:1', granted)).toBe(true);
      await first.rollback();
      const retry = await kit.begin(node);
      expect(await retry.record('invoice:1', granted)).toBe(true);
      await retry.commit();
      expect(await kit.query(`SELECT delivery_id FROM ${granted}`)).toHaveLength(1);
    });

    it('says false once any node committed the id', async () => {
      const granted = await setUp();
      const a = await kit.begin(kit.pool());
      expect(await a.record('invoice:2', granted)).toBe(true);
      await a.commit();
      const b = await kit.begin(kit.pool());
      expect(await b.record('invoice:2', granted)).toBe(false);
      expect(await b.record('invoice:3', granted)).toBe(true);
      await b.commit();
    });

    it.each(['commit', 'rollback'] as const)('makes a second node wait for the first one’s open transaction, then follows its %s', async (end) => {
      const granted = await setUp();
      const a = await kit.begin(kit.pool());
      const b = await kit.begin(kit.pool());
      expect(await a.record('invoice:4', granted)).toBe(true);
      let settled = false;
      const second = b.record('invoice:4', granted).finally(() => (settled = true));
      await until(async () => (await kit.rowLockWaiters(granted)) === 1, "node b waits on a's uncommitted row");
      expect(settled).toBe(false);
      await (end === 'commit' ? a.commit() : a.rollback());
      expect(await second).toBe(end === 'rollback');
      await b.commit();
    });

    it('fails clearly when the dedupe table does not exist', async () => {
      const tx = await kit.begin(kit.pool());
      const error = await tx.record('invoice:5', uniqueName('missing')).catch((e: unknown) => e);
      await tx.rollback();
      expect(isStorefrontError(error, 'JOURNAL_FAILED')).toBe(true);
      expect((error as Error).message).toMatch(/^recordDelivery: the dedupe table missing_\w+ does not exist; .*createTables\(\)/);
    });
  });
});
