/**
 * The setup of the delivery guide ("Several game servers, one key"): the game's grant
 * opens its transaction on the same pool the journal was given. With as many players
 * delivered at once as the pool has connections, a journal that let every player's lock
 * hold a connection would leave none for the grants: every lock waits for its grant, every
 * grant for a connection, forever (the claims already went through). The journal keeps
 * one connection of the pool free of locks; this suite proves it on the real servers at
 * pool max = players (and with more players than connections: they take turns), counting
 * every purchase granted exactly once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveredItem, DeliveryReport, GrantFunction } from 'teamgames-sdk';
import { KEY, inProcessStore } from '../support/reliability.js';
import { uniqueName } from '../support/databases.js';
import { engineKits, type EngineKit } from './kits.js';

const { mock, sleep, client } = inProcessStore();
afterEach(() => mock.reset());

/** How long all the deliveries may take before the run counts as hung (they take well under a second). */
const HUNG_AFTER_MS = 8_000;

describe.each(engineKits())('$label', (kit: EngineKit) => {
  it.skipIf(kit.url === undefined).each([
    { players: 4, size: 4, mode: 'fast' },
    { players: 20, size: 20, mode: 'fast' },
    { players: 4, size: 4, mode: 'exactlyOnce' },
    { players: 12, size: 4, mode: 'fast' },
  ] as const)(
    "$players players at once on a pool of $size connections ($mode), the guide's grant on the same pool: no hang, every purchase granted once",
    async ({ players, size, mode }) => {
      const names = { table: uniqueName('journal'), grantedTable: uniqueName('granted') };
      const applied = uniqueName('applied');
      const pool = kit.pool(size);
      const journal = kit.journal(pool, { ...names, lockTimeoutMs: 5_000 });
      await journal.createTables();
      await kit.query(`CREATE TABLE ${applied} (delivery_id VARCHAR(255) NOT NULL, player VARCHAR(64) NOT NULL, units INTEGER NOT NULL)`);

      /** The guide's grant: a transaction on the journal's own pool, applied only when the id is new. */
      const grant: GrantFunction = async (item: DeliveredItem) => {
        const tx = await kit.begin(pool);
        try {
          if (await tx.record(item.deliveryId, names.grantedTable)) {
            await tx.run(`INSERT INTO ${applied} (delivery_id, player, units) VALUES (?, ?, ?)`, [item.deliveryId, item.player_name, item.quantity_to_grant]);
          }
          await tx.commit();
        } catch (error) {
          await tx.rollback().catch(() => undefined);
          throw error;
        }
      };

      const playerNames = Array.from({ length: players }, (_, i) => `Player${i}`);
      for (const [i, player] of playerNames.entries()) mock.addPurchase(KEY, { playerName: player, id: 1 + (i % 5), quantity: 1 });
      const c = client(journal);
      const all = Promise.all(playerNames.map((player) => c.deliver(player, grant, { mode, sleep })));
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), HUNG_AFTER_MS)));
      const reports: DeliveryReport[] | 'hung' = await Promise.race([all, hung]).finally(() => clearTimeout(timer));
      const delivered = mock.purchases(KEY).filter((r) => r.deliverystatus !== 'Undelivered').length;
      expect(reports, `${players} deliveries did not settle within ${HUNG_AFTER_MS} ms (${delivered} purchases already marked delivered by the service): the pool is deadlocked`).not.toBe('hung');

      const rows = await kit.query(`SELECT delivery_id, player, units FROM ${applied}`);
      expect((reports as DeliveryReport[]).map((r) => r.code)).toEqual(playerNames.map(() => 'SUCCESS'));
      expect(rows).toHaveLength(players);
      expect(new Set(rows.map((r) => String(r['delivery_id']))).size).toBe(players);
      expect(new Set(rows.map((r) => String(r['player'])))).toEqual(new Set(playerNames));
      expect(mock.purchases(KEY).filter((r) => r.deliverystatus === 'Undelivered')).toEqual([]);
      expect(await journal.pending()).toEqual([]);
    },
  );
});
