/**
 * A `deliver` aborted at any moment around the player's lock of PostgresJournal and
 * MySqlJournal, on the real servers: before the lock is asked for, while another node holds
 * it, and just as it answers. Each rejects with the signal's reason, and leaves the player
 * free: the server holds no lock on them and no connection waits for one, and the next
 * `deliver` for them grants what they bought.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryJournal } from 'teamgames-sdk';
import { Game, KEY, inProcessStore } from '../support/reliability.js';
import { uniqueName } from '../support/databases.js';
import { engineKits, gate, until, type EngineKit, type SqlJournal } from './kits.js';

const { mock, sleep, client, outcome } = inProcessStore();
afterEach(() => mock.reset());

const tables = () => ({ table: uniqueName('journal'), grantedTable: uniqueName('granted') });

/** The journal, with `before` run synchronously each time its lock is asked for, and `handing` as the lock hands over to the work. */
function watched(journal: SqlJournal, hooks: { before?: () => void; handing?: () => void }): DeliveryJournal {
  return {
    append: (e) => journal.append(e),
    pending: (p) => journal.pending(p),
    acknowledge: (ids) => journal.acknowledge(ids),
    withPlayerLock: (player, work) => {
      hooks.before?.();
      return journal.withPlayerLock(player, () => {
        hooks.handing?.();
        return work();
      });
    },
  };
}

describe.each(engineKits())('$label', (kit: EngineKit) => {
  describe.skipIf(kit.url === undefined)('a deliver aborted around the player\'s lock', () => {
    /** The player is free again: no lock held or waited for on the server, and the next deliver grants their purchase. */
    const expectFree = async (table: string, journal: DeliveryJournal) => {
      await until(async () => (await kit.lockHolder(table, 'Ann')) === undefined && (await kit.lockWaiters(table, 'Ann')) === 0, 'the lock is free');
      expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Undelivered');
      const game = new Game();
      const report = await client(journal).deliver('Ann', game.grant(), { sleep });
      expect(report.code).toBe('SUCCESS');
      expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
    };

    it('while another node holds the lock: rejects with signal.reason at once; the lock, once had, is given back unused', async () => {
      const names = tables();
      mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
      const a = kit.journal(kit.pool(), names);
      const b = kit.journal(kit.pool(), names);
      await a.createTables();
      const inside = gate();
      const leave = gate();
      const held = b.withPlayerLock('Ann', async () => {
        inside.open();
        await leave.promise;
      });
      await inside.promise;
      const controller = new AbortController();
      const reason = new Error('the player logged out');
      const delivering = client(a).deliver('Ann', () => {}, { sleep, signal: controller.signal });
      await until(async () => (await kit.lockWaiters(names.table, 'Ann')) === 1, 'node a waits for the lock');
      controller.abort(reason);
      await expect(delivering).rejects.toBe(reason);
      leave.open();
      await held;
      await expectFree(names.table, a);
    });

    it('just as the lock answers: rejects with signal.reason, the work never runs, the lock is released', async () => {
      const names = tables();
      mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
      const real = kit.journal(kit.pool(), names);
      const controller = new AbortController();
      const reason = new Error('shutting down');
      let reads = 0;
      const journal = watched(real, { handing: () => controller.abort(reason) });
      const counted: DeliveryJournal = { ...journal, pending: (p) => ((reads += 1), journal.pending(p)) };
      await expect(client(counted).deliver('Ann', () => {}, { sleep, signal: controller.signal })).rejects.toBe(reason);
      expect(reads).toBe(0);
      await expectFree(names.table, real);
    });

    it('between the player\'s turn and the lock (aborted as the lock is asked for): rejects with signal.reason, never hangs', async () => {
      const names = tables();
      mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
      const real = kit.journal(kit.pool(), names);
      const controller = new AbortController();
      const reason = new Error('the player logged out');
      const journal = watched(real, { before: () => controller.abort(reason) });
      await expect(client(journal).deliver('Ann', () => {}, { sleep, signal: controller.signal })).rejects.toBe(reason);
      await expectFree(names.table, real);
    });
  });
});
