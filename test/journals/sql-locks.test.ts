/**
 * The SQL journals' lock bookkeeping on a pool of the test's making (src/journals/sql/):
 * what the players' locks may take of a pool, who waits and who goes first, what happens
 * to a connection whose lock failed, and that every turn and every connection goes back.
 * No server: the fake pool answers the lock statements; the real servers' suites are
 * test/databases/*.db.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalError } from 'teamgames-sdk';
import { MySqlJournal, type MySqlPool, type MySqlPoolConnection } from 'teamgames-sdk/mysql';
import { PostgresJournal, type PgPool, type PgPoolClient } from 'teamgames-sdk/postgres';
import { deferred } from '../support/answers.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A mysql2-shaped pool whose connections answer GET_LOCK with `got` and record what happened to them. */
function mysqlPool(size: number, options: { got?: () => unknown; release?: () => unknown; connect?: () => Promise<void> } = {}) {
  const log: string[] = [];
  let next = 0;
  const connections: Array<{ id: number; fail: (error: Error) => void }> = [];
  const pool = {
    config: { connectionLimit: size },
    query: async () => [[], []],
    getConnection: async () => {
      await options.connect?.();
      const id = ++next;
      let onError: ((error: Error) => void) | undefined;
      const connection = {
        id,
        query: async (sql: string) => {
          if (sql.includes('GET_LOCK')) return [[{ got: options.got === undefined ? 1 : options.got() }], []];
          if (sql.includes('RELEASE_LOCK')) {
            log.push(`unlock ${id}`);
            return [[{ released: options.release?.() ?? 1 }], []];
          }
          return [[], []];
        },
        release: () => void log.push(`release ${id}`),
        destroy: () => void log.push(`destroy ${id}`),
        on: (_event: 'error', listener: (error: Error) => void) => void (onError = listener),
        removeListener: () => void (onError = undefined),
        fail: (error: Error) => onError?.(error),
      };
      connections.push(connection);
      return connection as unknown as MySqlPoolConnection;
    },
  };
  return { pool: pool as unknown as MySqlPool, log, connections };
}

describe("the players' locks on a pool", () => {
  it('take at most maxLockConnections connections; the next player waits its turn and goes when one is given back', async () => {
    const { pool, log } = mysqlPool(3);
    const journal = new MySqlJournal(pool, { createTables: false });
    expect(journal.maxLockConnections).toBe(2);
    const gates = [deferred(), deferred()];
    const held = [journal.withPlayerLock('Ann', () => gates[0]!.promise), journal.withPlayerLock('Bo', () => gates[1]!.promise)];
    let third = false;
    const waiting = journal.withPlayerLock('Cy', async () => void (third = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(third).toBe(false);
    gates[1]!.resolve();
    await held[1];
    await waiting;
    expect(third).toBe(true);
    gates[0]!.resolve();
    await held[0];
    // Every lock released on its own connection, every connection back in the pool.
    expect(log.filter((l) => l.startsWith('release')).length).toBe(3);
    expect(log.filter((l) => l.startsWith('destroy'))).toEqual([]);
  });

  it('a player who waits past lockTimeoutMs for a turn is refused with what to do, and leaves the queue: the next one still gets the turn', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { pool } = mysqlPool(2);
    const journal = new MySqlJournal(pool, { createTables: false, lockTimeoutMs: 1_000 });
    const first = deferred();
    const holding = journal.withPlayerLock('Ann', () => first.promise);
    await vi.advanceTimersByTimeAsync(0);
    const refused = journal.withPlayerLock('Bo', async () => 'never').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    const later = journal.withPlayerLock('Cy', async () => 'Cy ran');
    await vi.advanceTimersByTimeAsync(500);
    const error = (await refused) as Error;
    expect(error).toBeInstanceOf(JournalError);
    expect(error.message).toMatch(/players' locks already hold 1 connections of the pool, the most they may \(maxLockConnections: 1\), and none was released within 1000 ms to take the lock on player "Bo"; nothing was done/);
    first.resolve();
    await holding;
    await vi.advanceTimersByTimeAsync(0);
    expect(await later).toBe('Cy ran');
  });

  it('a waiter is let in only when the turns held are under its own limit (two journals with different limits on one pool)', async () => {
    const { pool } = mysqlPool(4);
    const wide = new MySqlJournal(pool, { createTables: false, maxLockConnections: 2 });
    const narrow = new MySqlJournal(pool, { createTables: false, maxLockConnections: 1 });
    const gates = [deferred(), deferred()];
    const a = wide.withPlayerLock('Ann', () => gates[0]!.promise);
    const b = wide.withPlayerLock('Bo', () => gates[1]!.promise);
    const order: string[] = [];
    const narrowWaits = narrow.withPlayerLock('Cy', async () => void order.push('narrow'));
    const wideWaits = wide.withPlayerLock('Dee', async () => void order.push('wide'));
    await new Promise((r) => setTimeout(r, 10));
    gates[0]!.resolve();
    await a;
    await wideWaits;
    // One turn back: 1 held, under the wide limit (2) but not the narrow one (1).
    expect(order).toEqual(['wide']);
    gates[1]!.resolve();
    await b;
    await narrowWaits;
    expect(order).toEqual(['wide', 'narrow']);
  });

  it('a connection the pool hands out after the wait gave up goes straight back; the refused player gets a JournalError', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const slow = deferred();
    const { pool, log } = mysqlPool(5, { connect: () => slow.promise });
    const journal = new MySqlJournal(pool, { createTables: false, lockTimeoutMs: 1_000 });
    const refused = journal.withPlayerLock('Ann', async () => 'never').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(((await refused) as Error).message).toMatch(/no connection of the pool was free within 1000 ms to take the lock on player "Ann"; nothing was done/);
    slow.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['release 1']);
    // The turn went back too: the locks can take every turn they may.
    vi.useRealTimers();
    const fast = new MySqlJournal(pool, { createTables: false, maxLockConnections: 1 });
    expect(await fast.withPlayerLock('Bo', async () => 'ok')).toBe('ok');
  });

  it('a pool that fails to connect: a JournalError naming the lock, and the turn given back', async () => {
    const { pool } = mysqlPool(2, { connect: () => Promise.reject(new Error('ECONNREFUSED')) });
    const journal = new MySqlJournal(pool, { createTables: false });
    for (let i = 0; i < 3; i++) {
      await expect(journal.withPlayerLock('Ann', async () => 'never')).rejects.toThrow(/could not connect to take the lock on player "Ann"; nothing was done: ECONNREFUSED/);
    }
  });
});

describe('a lock that cannot be taken', () => {
  it('GET_LOCK timed out (0): busy, the connection closed, the turn given back', async () => {
    const { pool, log } = mysqlPool(2, { got: () => 0 });
    const journal = new MySqlJournal(pool, { createTables: false, lockTimeoutMs: 1_000 });
    const error = (await journal.withPlayerLock('Ann', async () => 'never').catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(JournalError);
    expect(error.message).toMatch(/the lock on player "Ann" was not free within 1000 ms \(another node is delivering for this player\); nothing was done/);
    expect(log).toEqual(['destroy 1']);
  });

  it('GET_LOCK answered NULL (an error on the server): a JournalError saying so, the connection closed', async () => {
    const { pool, log } = mysqlPool(2, { got: () => null });
    const journal = new MySqlJournal(pool, { createTables: false });
    await expect(journal.withPlayerLock('Ann', async () => 'never')).rejects.toThrow(/could not take the lock on player "Ann"; nothing was done: GET_LOCK returned null/);
    expect(log).toEqual(['destroy 1']);
    // The turn went back: another lock still gets a connection.
    const { pool: other } = mysqlPool(2);
    expect(await new MySqlJournal(other, { createTables: false }).withPlayerLock('Bo', async () => 1)).toBe(1);
  });
});

describe('the connection holding a lock', () => {
  it('carries the journal calls of the work; once it fails, the next write fails loudly and the connection is closed, not reused', async () => {
    const { pool, log, connections } = mysqlPool(3);
    const journal = new MySqlJournal(pool, { createTables: false });
    const result = await journal
      .withPlayerLock('Ann', async () => {
        connections[0]!.fail(new Error('server closed the connection'));
        await journal.acknowledge(['x']);
      })
      .catch((e: unknown) => e as Error);
    expect(result).toBeInstanceOf(JournalError);
    expect((result as Error).message).toMatch(/could not acknowledge in the journal: the connection holding the player's lock failed \(server closed the connection\); the lock is gone/);
    expect(log).toEqual(['destroy 1']);
  });

  it('a release that fails closes the connection instead of giving it back', async () => {
    const { pool, log } = mysqlPool(3, {
      release: () => {
        throw new Error('connection reset');
      },
    });
    const journal = new MySqlJournal(pool, { createTables: false });
    expect(await journal.withPlayerLock('Ann', async () => 'done')).toBe('done');
    expect(log).toEqual(['unlock 1', 'destroy 1']);
  });

  it('PostgreSQL: a lock whose connection failed is released with the failure, so pg closes it', async () => {
    const released: unknown[] = [];
    let onError: ((error: Error) => void) | undefined;
    const client: PgPoolClient = {
      query: async () => ({ rows: [], rowCount: 0 }),
      release: (destroy) => void released.push(destroy),
      on: (_event, listener) => void (onError = listener),
      removeListener: () => void (onError = undefined),
    };
    const pool = { options: { max: 3 }, query: async () => ({ rows: [], rowCount: 0 }), connect: async () => client } as unknown as PgPool;
    const journal = new PostgresJournal(pool, { createTables: false });
    const lost = new Error('terminating connection');
    await journal.withPlayerLock('Ann', async () => onError?.(lost));
    expect(released).toEqual([lost]);
    await journal.withPlayerLock('Bo', async () => undefined);
    expect(released).toEqual([lost, undefined]);
  });
});
