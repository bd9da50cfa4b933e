/**
 * What the PostgreSQL and MySQL journals share (src/journals/sql/common.ts), through the
 * public classes on pools of the test's making (no server): the rows read back (a damaged
 * row is a JournalError naming the journal and what is wrong, never an item to grant), the
 * driver failures as JournalError naming what could not be done, a window's rounds of
 * compare-and-set, the checkout hints' cleanup (once a minute) and endCheckoutHint's
 * argument checks, the turns of the pool's lock connections, the calls
 * made after a lock was released, and the limits and names the module starts with.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, JournalError, type JournalEntry } from 'teamgames-sdk';
import { MySqlJournal, type MySqlPool, type MySqlPoolConnection } from 'teamgames-sdk/mysql';
import { PostgresJournal, type PgPool, type PgPoolClient } from 'teamgames-sdk/postgres';
import { deferred } from '../support/answers.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { journalLine, journalWindow } from '../support/journal.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Lets every callback already due run (promise jobs and the I/O phase), without waiting for time. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** What a fake pool's query answers: the `entry` column of the rows read, or a failure. */
type Answer = { entries: unknown[] } | { fail: unknown };

/** A pg-shaped pool and a mysql2-shaped pool answering every query with `answer(sql)`, logging where each ran (and the statement's first word). */
const engines = [
  {
    name: 'PostgresJournal',
    /** The statements of a read's cleanup of the checkout hints. */
    cleanup: ['pool: DELETE'],
    journal(answer: (sql: string) => Answer, log: string[] = [], options: object = { createTables: false }) {
      const run = async (where: string, sql: string) => {
        log.push(`${where}: ${sql.split(' ')[0]}`);
        const a = answer(sql);
        if ('fail' in a) throw a.fail;
        return { rows: a.entries.map((entry) => ({ entry })), rowCount: a.entries.length };
      };
      const client: PgPoolClient = {
        query: (sql: string) => (sql.includes('advisory') || sql.includes('lock_timeout') ? Promise.resolve({ rows: [], rowCount: 0 }) : run('lock connection', sql)),
        release: () => undefined,
        on: () => undefined,
        removeListener: () => undefined,
      };
      const pool = { options: { max: 3 }, query: (sql: string) => run('pool', sql), connect: async () => client };
      return new PostgresJournal(pool as unknown as PgPool, options);
    },
  },
  {
    name: 'MySqlJournal',
    cleanup: ['pool: DELETE', 'pool: DELETE'],
    journal(answer: (sql: string) => Answer, log: string[] = [], options: object = { createTables: false }) {
      const run = async (where: string, sql: string) => {
        log.push(`${where}: ${sql.split(' ')[0]}`);
        const a = answer(sql);
        if ('fail' in a) throw a.fail;
        // A read gives rows; a write, mysql2's result header.
        return [sql.startsWith('SELECT') ? a.entries.map((entry) => ({ entry })) : { affectedRows: a.entries.length }, []] as [unknown, unknown];
      };
      const connection = {
        query: (sql: string) => (sql.includes('GET_LOCK') ? Promise.resolve([[{ got: 1 }], []]) : sql.includes('RELEASE_LOCK') ? Promise.resolve([[{ released: 1 }], []]) : run('lock connection', sql)),
        release: () => undefined,
        destroy: () => undefined,
        on: () => undefined,
        removeListener: () => undefined,
      };
      const pool = { config: { connectionLimit: 3 }, query: (sql: string) => run('pool', sql), getConnection: async () => connection as unknown as MySqlPoolConnection };
      return new MySqlJournal(pool as unknown as MySqlPool, options);
    },
  },
];

describe.each(engines)('$name: the rows read back', ({ name, journal }) => {
  const reading = (...entries: unknown[]) => journal(() => ({ entries }));

  it('are entries whether the column gives JSON text, bytes or a parsed object (a table made by hand with another type)', async () => {
    const [a, b, c] = [journalLine('a'), journalLine('b', 'Bo', 'intended'), journalLine('c')];
    expect(await reading(JSON.stringify(a), Buffer.from(JSON.stringify(b)), structuredClone(c)).pending()).toEqual([a, b, c]);
  });

  it.each([
    ['text cut short', '{"deliveryId":"a","playerName":'],
    ['bytes that are not JSON', Buffer.from('not json')],
    ['no column at all', undefined],
  ])('that are not JSON (%s): a JournalError naming the journal and the parser\'s complaint, with its error as cause', async (_what, text) => {
    const error = expectInstance(await failureOf(reading(JSON.stringify(journalLine('fine')), text).pending()), JournalError);
    const cause = error.cause as Error;
    expect(cause).toBeInstanceOf(Error);
    expect(error.message).toBe(`${name}: a row of the journal is not JSON (${cause.message}); it was changed outside the SDK`);
  });

  it.each([
    ['JSON null', 'null', 'not an object (null)'],
    ['SQL NULL', null, 'not an object (null)'],
    ['a number', '5', 'not an object (5)'],
    ['a string', '"a"', 'not an object ("a")'],
    ['an array', [journalLine('a')], 'not an object (an array)'],
    ['no deliveryId', { ...journalLine('a'), deliveryId: undefined }, 'deliveryId is not a non-empty string'],
    ['a number as deliveryId', JSON.stringify({ ...journalLine('a'), deliveryId: 7 }), 'deliveryId is not a non-empty string'],
    ['no playerName', JSON.stringify({ ...journalLine('a'), playerName: undefined }), 'playerName is not a non-empty string'],
    ['no state', JSON.stringify({ ...journalLine('a'), state: undefined }), "state is not 'claimed', 'intended', 'claiming', 'unverified', 'resolved', 'voteClaiming', 'voteClaimed' or 'voteCounters' (undefined)"],
    ['an unknown state', JSON.stringify({ ...journalLine('a'), state: 'granted' }), "state is not 'claimed', 'intended', 'claiming', 'unverified', 'resolved', 'voteClaiming', 'voteClaimed' or 'voteCounters' (\"granted\")"],
    ['a claimed line without its item', JSON.stringify({ ...journalLine('a'), item: undefined }), 'item is not an object (undefined)'],
    ['a quantity that is not a number', JSON.stringify({ ...journalLine('a'), item: { ...journalLine('a').item, quantity_to_grant: '1' } }), 'item.quantity_to_grant is not a number'],
  ])('that are not journal entries (%s): a JournalError naming the journal and what is wrong, never an item to grant', async (_what, text, problem) => {
    const error = expectInstance(await failureOf(reading(JSON.stringify(journalLine('fine')), text).pending()), JournalError);
    expect(error.message).toBe(`${name}: a row of the journal is not a journal entry (${problem}); it was changed outside the SDK`);
  });
});

describe.each(engines)('$name: a failure of the database', ({ name, journal }) => {
  it("is a JournalError saying what the journal could not do, the driver's message cut to 300 characters, the driver's error as cause", async () => {
    const driver = new Error(`${'x'.repeat(300)}${'y'.repeat(50)}`);
    const error = expectInstance(await failureOf(journal(() => ({ fail: driver })).pending()), JournalError);
    expect(error.message).toBe(`${name}: could not read the journal: ${'x'.repeat(300)}`);
    expect(error.cause).toBe(driver);
    const odd = expectInstance(await failureOf(journal(() => ({ fail: 'socket hang up' })).acknowledge(['a'])), JournalError);
    expect(odd.message).toBe(`${name}: could not acknowledge in the journal: socket hang up`);
  });

  it('names what the journal could not do: resolve a window, write, read, clean up and delete checkout hints', async () => {
    const down = journal(() => ({ fail: new Error('connection refused') }));
    const calls: Array<[string, Promise<unknown>]> = [
      ['resolve a window in the journal', down.resolveWindow('window:w1', { by: 'mod:alice', at: 1, note: 'checked' })],
      ['write a checkout hint', down.addCheckoutHint('Ann')],
      ['read the checkout hints', down.liveCheckoutHints()],
      ['delete a checkout hint', down.endCheckoutHint('Ann', 'tx-1')],
    ];
    for (const [doing, call] of calls) {
      expect(expectInstance(await failureOf(call), JournalError).message).toBe(`${name}: could not ${doing}: connection refused`);
    }
    // The hints read, then their cleanup refused.
    const cleanup = journal((sql) => (sql.startsWith('DELETE') ? { fail: new Error('connection refused') } : { entries: [] }));
    expect(expectInstance(await failureOf(cleanup.liveCheckoutHints()), JournalError).message).toBe(`${name}: could not delete the expired checkout hints: connection refused`);
  });

  it('that is a JournalError already (the tables could not be created) is passed on as it is, not wrapped again', async () => {
    const denied = new Error('permission denied for schema public');
    const failing = journal(() => ({ fail: denied }), [], { table: 'game.deliveries' });
    const error = expectInstance(await failureOf(failing.append([journalLine('a')])), JournalError);
    expect(error.message).toBe(`${name}: could not create the tables game.deliveries, teamgames_granted and teamgames_hints: permission denied for schema public`);
    expect(error.cause).toBe(denied);
  });

  it('no connection within lockTimeoutMs: the timeout as it is, and a connection failure after it changes nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const connecting = deferred<never>();
    const pool = { options: { max: 3 }, query: async () => ({ rows: [], rowCount: 0 }), connect: () => connecting.promise };
    const refused = failureOf(new PostgresJournal(pool as unknown as PgPool, { createTables: false, lockTimeoutMs: 500 }).withPlayerLock('Ann', async () => 'never'));
    await vi.advanceTimersByTimeAsync(500);
    const error = expectInstance(await refused, JournalError);
    expect(error.message).toBe('PostgresJournal: no connection of the pool was free within 500 ms to take the lock on player "Ann"; nothing was done. Give the pool more connections than players delivered at once.');
    connecting.reject(new Error('ECONNREFUSED'));
    await settle();
  });
});

describe.each(engines)('$name: resolving a window', ({ name, journal }) => {
  const resolution = { by: 'mod:alice', at: 1_767_300_000_000, note: 'checked' };
  /** A row read open every time, whose UPDATE finds it changed `changes` times (0 rows), then matches; at most 10 reads. */
  const changing = (changes: number, log: string[]) => {
    let updates = 0;
    let reads = 0;
    return journal((sql) => {
      if (sql.startsWith('SELECT')) return ++reads > 10 ? { fail: new Error('read 10 times') } : { entries: [JSON.stringify(journalWindow('window:w1'))] };
      // An UPDATE: as many rows changed as `entries` has (pg's rowCount, mysql2's affectedRows).
      return ++updates > changes ? { entries: [''] } : { entries: [] };
    }, log);
  };

  it('whose row something outside the SDK keeps rewriting: three rounds of read and compare-and-set, then a JournalError saying so', async () => {
    const log: string[] = [];
    const error = expectInstance(await failureOf(changing(Number.POSITIVE_INFINITY, log).resolveWindow('window:w1', resolution)), JournalError);
    expect(error.message).toBe(`${name}: could not resolve the window "window:w1": its row kept changing while it was open; nothing was written`);
    expect(log).toEqual(Array.from({ length: 3 }, () => ['pool: SELECT', 'pool: UPDATE']).flat());
  });

  it('with no row: notFound; resolved already: alreadyResolved with the first resolution; either after one read, nothing written', async () => {
    const first = { ...journalWindow('window:w1'), state: 'resolved', resolution: { by: 'mod:bob', at: 1_767_200_000_000, note: 'first' } };
    for (const [rows, outcome] of [
      [[], { outcome: 'notFound' }],
      [[JSON.stringify(first)], { outcome: 'alreadyResolved', window: first }],
    ] as const) {
      const log: string[] = [];
      expect(await journal(() => ({ entries: [...rows] }), log).resolveWindow('window:w1', resolution)).toEqual(outcome);
      expect(log).toEqual(['pool: SELECT']);
    }
  });

  it('whose row changed twice while it was open: the third round resolves it', async () => {
    const log: string[] = [];
    expect(await changing(2, log).resolveWindow('window:w1', resolution)).toEqual({ outcome: 'resolved', window: { ...journalWindow('window:w1'), state: 'resolved', resolution } });
    expect(log).toHaveLength(6);
  });
});

describe.each(engines)("$name: the checkout hints' cleanup and ending", ({ journal, cleanup }) => {
  it('a read deletes the expired hints on the first read, then at most once a minute by the monotonic clock', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const log: string[] = [];
    const hints = journal(() => ({ entries: [] }), log);
    const read = async () => {
      log.length = 0;
      expect(await hints.liveCheckoutHints()).toEqual([]);
      return log;
    };
    expect(await read()).toEqual(['pool: SELECT', ...cleanup]);
    expect(await read()).toEqual(['pool: SELECT']);
    vi.advanceTimersByTime(59_999);
    expect(await read()).toEqual(['pool: SELECT']);
    vi.advanceTimersByTime(1);
    expect(await read()).toEqual(['pool: SELECT', ...cleanup]);
    expect(await read()).toEqual(['pool: SELECT']);
  });

  it('endCheckoutHint refuses a blank player name and a transactionId that is not a string, before any statement', async () => {
    const log: string[] = [];
    const hints = journal(() => ({ entries: [] }), log);
    expect(expectInstance(await failureOf(hints.endCheckoutHint(' ')), InvalidInputError)).toMatchObject({ argument: 'playerName', rule: 'must not be blank' });
    expect(expectInstance(await failureOf(hints.endCheckoutHint('Ann', 5 as never)), InvalidInputError)).toMatchObject({ argument: 'transactionId', rule: 'must be a string or undefined, got 5' });
    expect(log).toEqual([]);
    await hints.endCheckoutHint('Ann');
    await hints.endCheckoutHint('Ann', 'tx-1');
    expect(log).toEqual(['pool: DELETE', 'pool: DELETE']);
  });
});

/** A mysql2-shaped pool of `size` connections that logs where each journal query ran. */
function loggingPool(size: number) {
  const log: string[] = [];
  let next = 0;
  const pool = {
    config: { connectionLimit: size },
    query: async (sql: string) => {
      log.push(`pool: ${sql.split(' ')[0]}`);
      return [[], []];
    },
    getConnection: async () => {
      const id = ++next;
      return {
        query: async (sql: string) => {
          if (sql.includes('GET_LOCK')) return [[{ got: 1 }], []];
          if (sql.includes('RELEASE_LOCK')) return [[{ released: 1 }], []];
          log.push(`connection ${id}: ${sql.split(' ')[0]}`);
          return [[], []];
        },
        release: () => void log.push(`release ${id}`),
        destroy: () => void log.push(`destroy ${id}`),
        on: () => undefined,
        removeListener: () => undefined,
      } as unknown as MySqlPoolConnection;
    },
  };
  return { pool: pool as unknown as MySqlPool, log };
}

describe("the turns among the pool's lock connections", () => {
  it('a waiter let in holds its turn: with maxLockConnections 1, the third player waits for the second', async () => {
    const { pool } = loggingPool(3);
    const journal = new MySqlJournal(pool, { createTables: false, maxLockConnections: 1 });
    const ran: string[] = [];
    const gates = { Ann: deferred(), Bo: deferred(), Cy: deferred() };
    const lock = (player: keyof typeof gates) =>
      journal.withPlayerLock(player, async () => {
        ran.push(player);
        await gates[player].promise;
      });
    const ann = lock('Ann');
    await settle();
    const bo = lock('Bo');
    await settle();
    expect(ran).toEqual(['Ann']);
    gates.Ann.resolve();
    await ann;
    await settle();
    expect(ran).toEqual(['Ann', 'Bo']);
    const cy = lock('Cy');
    await settle();
    // Bo holds the only turn.
    expect(ran).toEqual(['Ann', 'Bo']);
    gates.Bo.resolve();
    await bo;
    await settle();
    expect(ran).toEqual(['Ann', 'Bo', 'Cy']);
    gates.Cy.resolve();
    await cy;
  });

  it('a turn given back lets no one in whose own limit is reached (two journals with different limits on one pool)', async () => {
    const { pool } = loggingPool(4);
    const wide = new MySqlJournal(pool, { createTables: false, maxLockConnections: 2 });
    const narrow = new MySqlJournal(pool, { createTables: false, maxLockConnections: 1 });
    const gates = [deferred(), deferred()];
    const held = [wide.withPlayerLock('Ann', () => gates[0]!.promise), wide.withPlayerLock('Bo', () => gates[1]!.promise)];
    await settle();
    let narrowRan = false;
    const waiting = narrow.withPlayerLock('Cy', async () => void (narrowRan = true));
    gates[0]!.resolve();
    await held[0];
    await settle();
    // One turn held, the narrow journal's limit: Cy still waits.
    expect(narrowRan).toBe(false);
    gates[1]!.resolve();
    await held[1];
    await waiting;
    expect(narrowRan).toBe(true);
  });
});

describe('a journal call made after its lock was released', () => {
  it('runs on the pool, not on the connection that held the lock (it went back to the pool)', async () => {
    const { pool, log } = loggingPool(3);
    const journal = new MySqlJournal(pool, { createTables: false });
    const later = deferred();
    let late: Promise<JournalEntry[]> | undefined;
    await journal.withPlayerLock('Ann', async () => {
      await journal.pending('Ann');
      // Work left running past the lock, e.g. a timer the grant started.
      late = later.promise.then(() => journal.pending('Ann'));
    });
    later.resolve();
    await late;
    expect(log).toEqual(['connection 1: SELECT', 'release 1', 'pool: SELECT']);
  });
});

describe('the limits and names the journals start with', () => {
  // Read once when src/journals/sql/common.ts loads: each test loads the modules afresh,
  // so that what it checks is what the module set up.
  async function fresh() {
    vi.resetModules();
    const [sdk, postgres] = await Promise.all([import('teamgames-sdk'), import('teamgames-sdk/postgres')]);
    const pool = { query: () => Promise.reject(new Error('no query expected')), connect: () => Promise.reject(new Error('no connection expected')) };
    const make = (options?: object) => new postgres.PostgresJournal(pool as unknown as PgPool, options);
    const refusal = (options: object) => {
      try {
        make(options);
      } catch (error) {
        return expectInstance(error, sdk.InvalidInputError);
      }
      throw new Error(`${JSON.stringify(options)} was accepted`);
    };
    return { ...postgres, make, refusal };
  }

  it('the tables teamgames_deliveries and teamgames_granted by default; every option known', async () => {
    const { make, postgresSchema } = await fresh();
    expect(make().table).toBe('teamgames_deliveries');
    expect(postgresSchema()).toContain('CREATE TABLE IF NOT EXISTS "teamgames_granted" (');
    const all = make({ table: 't', grantedTable: 'g', hintsTable: 'h', lockTimeoutMs: 5, maxLockConnections: 2, nodeId: 'n', createTables: false });
    expect([all.table, all.nodeId, all.maxLockConnections]).toEqual(['t', 'n', 2]);
  });

  it('lockTimeoutMs up to 24 hours', async () => {
    const { make, refusal } = await fresh();
    expect(() => make({ lockTimeoutMs: 86_400_000 })).not.toThrow();
    expect(refusal({ lockTimeoutMs: 86_400_001 })).toMatchObject({ argument: 'options.lockTimeoutMs', rule: 'must be an integer from 1 to 86,400,000, got 86400001' });
  });

  it.each(['_', 'a', 'x'.repeat(48), 'game_2.deliveries_v2', `${'s'.repeat(48)}.${'t'.repeat(48)}`])('takes the table name %j', async (table) => {
    const { make } = await fresh();
    expect(make({ table }).table).toBe(table);
  });

  it.each(['', 'x'.repeat(49), '1st', '9', 'Deliveries', 'deliverieS', 'game.Deliveries', 'Game.deliveries', 'a-b', 'a b', '.x', 'x.', 'a.b.c'])('refuses the table name %j', async (table) => {
    const { refusal } = await fresh();
    const error = refusal({ grantedTable: table });
    expect(error.argument).toBe('options.grantedTable');
    expect(error.rule).toMatch(/^must be a table name, `name` or `schema.name`, each of lower-case letters, digits and _ \(not first\), up to 48 characters; got /);
  });
});

describe('the options checked', () => {
  const pool = { query: () => Promise.reject(new Error('no query expected')), connect: () => Promise.reject(new Error('no connection expected')) } as unknown as PgPool;

  it('a nodeId of up to 200 characters', () => {
    expect(new PostgresJournal(pool, { nodeId: 'n'.repeat(200) }).nodeId).toBe('n'.repeat(200));
    expect(() => new PostgresJournal(pool, { nodeId: 'n'.repeat(201) })).toThrow(expect.objectContaining({ argument: 'options.nodeId', rule: 'must be at most 200 characters, got 201' }));
  });

  it.each([5, true, {}])('a table name that is not a string (%j) is refused, saying so', (table) => {
    expect(() => new PostgresJournal(pool, { table: table as never })).toThrow(InvalidInputError);
    expect(() => new PostgresJournal(pool, { table: table as never })).toThrow(/invalid options.table: must be a table name \(a string\), got /);
  });
});
