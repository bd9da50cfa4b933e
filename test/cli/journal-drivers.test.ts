/**
 * `teamgames journal --postgres… / --mysql…` against drivers of the test (issue #33 point
 * 10): how the command builds its pool (bounds, connection limits), what it makes of the
 * drivers' failures (a missing table, their own timeouts however deep in the causes, a
 * package that cannot load), and a pool that never ends. The real drivers and servers:
 * journal-database.test.ts and test/databases/journal-cli.db.test.ts.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JournalDeps } from '../../src/cli/journal-command.js';
import { stream } from '../support/cli.js';
import { EXIT, runTeamgames, type TeamgamesEnv } from '../../src/cli/program.js';
import { journalWindow } from '../support/journal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function run(argv: string[], deps: JournalDeps, env: TeamgamesEnv = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, env, {}, { now: () => 0, ...deps });
  return { code, ...out };
}

/** A driver error, its causes nested `depth` deep. */
function nested(error: object, depth: number): Error {
  let e: object = error;
  for (let i = 0; i < depth; i++) e = Object.assign(new Error(`wrapper ${i}`), { cause: e });
  return e as Error;
}

interface Made {
  config?: unknown;
  events: string[];
  ended: number;
  sql: string[];
}

/** A `pg` whose every query and connection fails with `error` (or never answers: `silent`); what the command made of it in `made`. */
function fakePg(error: unknown, made: Made, options: { endNever?: boolean; esm?: boolean; silent?: boolean } = {}) {
  const Pool = class {
    constructor(config: unknown) {
      made.config = config;
    }
    query = async (sql: string) => {
      made.sql.push(sql);
      return options.silent === true ? new Promise(() => {}) : Promise.reject(error);
    };
    connect = async () => (options.silent === true ? new Promise(() => {}) : Promise.reject(error));
    on(event: string) {
      made.events.push(event);
      return this;
    }
    end = () => {
      made.ended++;
      return options.endNever === true ? new Promise<void>(() => {}) : Promise.resolve();
    };
  };
  return async (name: string) => {
    expect(name).toBe('pg');
    return options.esm === true ? { Pool } : { default: { Pool } };
  };
}

function fakeMysql(error: unknown, made: Made) {
  return async (name: string) => {
    expect(name).toBe('mysql2/promise');
    return {
      default: {
        createPool(config: unknown) {
          made.config = config;
          const fail = async (sql: string) => {
            made.sql.push(sql);
            return Promise.reject(error);
          };
          return { query: fail, execute: fail, getConnection: async () => Promise.reject(error), end: async () => void made.ended++ };
        },
      },
    };
  };
}

const made = (): Made => ({ events: [], ended: 0, sql: [] });

describe('teamgames journal: the pool it builds', () => {
  it('PostgreSQL: two connections, the connection and each answer bounded by --timeout, idle errors handled, ended after', async () => {
    const m = made();
    const r = await run(['journal', 'status', '--timeout', '600000', '--postgres-env', 'DB'], { importDriver: fakePg(new Error('refused'), m) }, { DB: 'postgresql://u@h/db' });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(m.config).toEqual({ connectionString: 'postgresql://u@h/db', max: 2, connectionTimeoutMillis: 600_000, query_timeout: 600_000 });
    expect(m.events).toEqual(['error']);
    expect(m.ended).toBe(1);
    expect(r.stdout).toBe('journal   PostgreSQL postgresql://u@h/db, table teamgames_deliveries\nreadable  no: PostgresJournal: could not read the journal: refused\n');
  });

  it('MySQL: a mariadb: URL given to mysql2 as mysql:, two connections, the connection bounded, ended after', async () => {
    const m = made();
    const r = await run(['journal', 'windows', '--mysql-env', 'DB'], { importDriver: fakeMysql(new Error('refused'), m) }, { DB: ' mariadb://u@h/db ' });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(m.config).toEqual({ uri: 'mysql://u@h/db', connectionLimit: 2, connectTimeout: 15_000 });
    expect(m.ended).toBe(1);
  });

  it('--table: the journal reads that table, and creates none', async () => {
    for (const [flag, deps] of [['--postgres-env', (m: Made) => fakePg(new Error('refused'), m)], ['--mysql-env', (m: Made) => fakeMysql(new Error('refused'), m)]] as const) {
      const m = made();
      const r = await run(['journal', 'pending', flag, 'DB', '--table', 'game.deliveries'], { importDriver: deps(m) }, { DB: flag === '--postgres-env' ? 'postgres://u@h/db' : 'mysql://u@h/db' });
      expect(r.code).toBe(EXIT.FAILURE);
      expect(m.sql.length).toBeGreaterThan(0);
      for (const sql of m.sql) {
        expect(sql).toMatch(/game["`]?\.["`]?deliveries/);
        expect(sql).not.toMatch(/create/i);
      }
    }
  });

  it('a MySQL host named mariadb keeps its name', async () => {
    const m = made();
    await run(['journal', 'pending', '--mysql-env', 'DB'], { importDriver: fakeMysql(new Error('refused'), m) }, { DB: 'mysql://u@mariadb:3306/db' });
    expect(m.config).toMatchObject({ uri: 'mysql://u@mariadb:3306/db' });
  });

  it('a driver module without a default export (ESM) is used as it is', async () => {
    const m = made();
    await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: fakePg(new Error('refused'), m, { esm: true }) }, { DB: 'postgres://u@h/db' });
    expect(m.config).toMatchObject({ max: 2 });
  });

  it('a pool that never ends does not hold the command', async () => {
    const m = made();
    const started = performance.now();
    const r = await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: fakePg(new Error('refused'), m, { endNever: true }) }, { DB: 'postgres://u@h/db' });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(m.ended).toBe(1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('teamgames journal: a database journal that answers', () => {
  it('an empty journal table: readable, nothing pending, no window', async () => {
    const pool = class {
      query = async () => ({ rows: [] });
      connect = async () => ({ query: async () => ({ rows: [] }), release() {}, on() {}, removeListener() {} });
      on() {}
      end = async () => {};
    };
    const r = await run(['journal', 'status', '--postgres-env', 'DB', '--table', 'game.deliveries'], { importDriver: async () => ({ Pool: pool }) }, { DB: 'postgres://u@h/db' });
    expect(r).toEqual({
      code: EXIT.OK,
      stderr: '',
      stdout: 'journal           PostgreSQL postgres://u@h/db, table game.deliveries\nreadable          yes\npending           0 lines\nopen windows      0\nresolved windows  0\n',
    });
    const out = { stdout: '', stderr: '' };
    const tty = (keep: (t: string) => void) => ({ ...stream(keep), isTTY: true });
    await runTeamgames(['journal', 'status', '--postgres-env', 'DB'], { stdout: tty((t) => (out.stdout += t)), stderr: tty((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, { DB: 'postgres://u@h/db' }, {}, { importDriver: async () => ({ Pool: pool }) });
    expect(out.stdout).toContain('\nreadable          \u001b[32myes\u001b[39m\n');
  });

  it("resolve: a second open window of the player's written by the bridge between the look and the resolve: refused naming the player, nothing written (exit 1)", async () => {
    // The table holds Ann's window:w1; the bridge adds window:w2 after the command has looked
    // at Ann's windows (its second read of them is the resolve's own).
    const w1 = journalWindow('window:w1');
    const w2 = journalWindow('window:w2');
    const sql: string[] = [];
    let annReads = 0;
    const pool = class {
      query = async (text: string, params: unknown[] = []) => {
        sql.push(text);
        if (params[0] !== 'Ann') return { rows: [{ entry: w1 }] };
        annReads++;
        return { rows: annReads === 1 ? [{ entry: w1 }] : [{ entry: w1 }, { entry: w2 }] };
      };
      connect = async () => Promise.reject(new Error('no connection expected'));
      on() {}
      end = async () => {};
    };
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--postgres-env', 'DB'], { importDriver: async () => ({ Pool: pool }) }, { DB: 'postgres://u@h/db' });
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: Ann: is needed: "Ann" has 2 open windows (window:w1, window:w2)\n' });
    expect(annReads).toBe(2);
    expect(sql.every((text) => text.startsWith('SELECT entry FROM'))).toBe(true);
  });
});

describe("teamgames journal: the drivers' failures", () => {
  it.each([
    ['PostgreSQL', '42P01'],
    ['PostgreSQL', '3F000'],
    ['MySQL', 'ER_NO_SUCH_TABLE'],
    ['MySQL', 'ER_BAD_DB_ERROR'],
  ])('%s %s: no journal table (exit 1)', async (engine, code) => {
    const error = Object.assign(new Error(`no such thing ${code}`), { code });
    const deps = { importDriver: engine === 'PostgreSQL' ? fakePg(error, made()) : fakeMysql(error, made()) };
    for (const command of [['pending'], ['resolve', 'Ann', '--note', 'n', '--by', 'mod']]) {
      const r = await run(['journal', ...command, engine === 'PostgreSQL' ? '--postgres-env' : '--mysql-env', 'DB'], deps, { DB: engine === 'PostgreSQL' ? 'postgres://u@h/db' : 'mysql://u@h/db' });
      expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: no journal table teamgames_deliveries in this database (nothing was created). A bridge creates it on first use; check the URL and --table\n' });
    }
  });

  it('another failure with a code (its cause null) is said as it is, and leaves no timer behind', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const r = await run(['journal', 'pending', '--postgres-env', 'DB'], { importDriver: fakePg(Object.assign(new Error('permission denied'), { code: '42501', cause: null }), made()) }, { DB: 'postgres://u@h/db' });
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: PostgresJournal: could not read the journal: permission denied\n' });
    expect(timers()).toBe(before);
  });

  it.each([
    ['a statement timeout', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }), 0],
    ['a lock timeout, three causes deep', Object.assign(new Error('lock'), { code: '55P03' }), 3],
    ["pg's login timeout, by its message, three causes deep", new Error('timeout exceeded when trying to connect'), 3],
    ["pg's answer timeout", new Error('Query read timeout'), 0],
    ['a connection timeout', new Error('Connection terminated due to connection timeout'), 0],
  ])('%s: exit 4, the driver saying what', async (_what, error, depth) => {
    const r = await run(['journal', 'windows', '--timeout', '250', '--postgres-env', 'DB'], { importDriver: fakePg(nested(error, depth), made()) }, { DB: 'postgres://u:pw@h/db' });
    expect(r.code).toBe(EXIT.NETWORK);
    expect(r.stderr).toMatch(/^teamgames journal: the database did not answer within 250 ms \(--timeout\): PostgresJournal: could not read the journal: .+\. Check that the server is up and that no session holds a lock on the journal's table; a resolve may or may not have been written \(teamgames journal windows --all\)\n$/);
  });

  it("a driver that never answers, its own bounds gone: the command's bound ends it a second after --timeout (exit 4)", async () => {
    vi.useFakeTimers();
    try {
      let ended: { code: number; stdout: string; stderr: string } | undefined;
      const running = run(['journal', 'windows', '--timeout', '250', '--postgres-env', 'DB'], { importDriver: fakePg(undefined, made(), { silent: true }) }, { DB: 'postgres://u@h/db' }).then((r) => (ended = r));
      await vi.advanceTimersByTimeAsync(1_249);
      expect(ended).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await running;
      expect(ended).toEqual({
        code: EXIT.NETWORK,
        stdout: '',
        stderr: "teamgames journal: the database did not answer within 250 ms (--timeout). Check that the server is up and that no session holds a lock on the journal's table; a resolve may or may not have been written (teamgames journal windows --all)\n",
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('a timeout code five causes deep is not looked for (exit 1)', async () => {
    const r = await run(['journal', 'windows', '--postgres-env', 'DB'], { importDriver: fakePg(nested(Object.assign(new Error('deep'), { code: '57014' }), 4), made()) }, { DB: 'postgres://u@h/db' });
    expect(r.code).toBe(EXIT.FAILURE);
    // Four deep (the journal's error is the first), found.
    const found = await run(['journal', 'windows', '--postgres-env', 'DB'], { importDriver: fakePg(nested(Object.assign(new Error('deep'), { code: '57014' }), 3), made()) }, { DB: 'postgres://u@h/db' });
    expect(found.code).toBe(EXIT.NETWORK);
  });

  it('a driver that cannot load for another reason: said with its error (exit 1)', async () => {
    const broken = async () => {
      throw Object.assign(new Error("Cannot find package 'pg-types' imported from /app/node_modules/pg/lib/index.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    };
    expect(await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: broken }, { DB: 'postgres://u@h/db' })).toEqual({
      code: EXIT.FAILURE,
      stdout: '',
      stderr: "teamgames journal: --postgres-env: the pg package could not be loaded (Cannot find package 'pg-types' imported from /app/node_modules/pg/lib/index.js)\n",
    });
    const cjs = async () => {
      throw Object.assign(new Error("Cannot find module 'mysql2'\nRequire stack:\n- /app/x.js"), { code: 'MODULE_NOT_FOUND' });
    };
    expect((await run(['journal', 'status', '--mysql-env', 'DB'], { importDriver: cjs }, { DB: 'mysql://u@h/db' })).stderr).toBe('teamgames journal: --mysql-env needs the mysql2 package: npm i mysql2\n');
    const syntax = async () => {
      throw new SyntaxError('Unexpected token');
    };
    expect((await run(['journal', 'status', '--mysql-env', 'DB'], { importDriver: syntax }, { DB: 'mysql://u@h/db' })).stderr).toBe('teamgames journal: --mysql-env: the mysql2 package could not be loaded (Unexpected token)\n');
    // Naming the package is not enough: only a module that is not found is "needs the package".
    const linked = async () => {
      throw new SyntaxError("The requested module 'pg' does not provide an export named 'Pool'");
    };
    expect((await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: linked }, { DB: 'postgres://u@h/db' })).stderr).toBe(
      "teamgames journal: --postgres-env: the pg package could not be loaded (The requested module 'pg' does not provide an export named 'Pool')\n",
    );
    // A message over several lines is said in one.
    const lines = async () => {
      throw new SyntaxError('Unexpected token\n    at /app/node_modules/pg/index.js:1\n');
    };
    expect((await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: lines }, { DB: 'postgres://u@h/db' })).stderr).toBe(
      'teamgames journal: --postgres-env: the pg package could not be loaded (Unexpected token at /app/node_modules/pg/index.js:1)\n',
    );
  });
});

describe('teamgames journal: the database flags to the message (exit 2)', () => {
  const dir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'tg-journal-drivers-'));
    dirs.push(d);
    return d;
  };

  it.each([
    [['--timeout', '600001', '--postgres-env', 'DB'], '--timeout must be a whole number of milliseconds from 1 to 600000, got "600001"'],
    [['--timeout', '01', '--postgres-env', 'DB'], '--timeout must be a whole number of milliseconds from 1 to 600000, got "01"'],
    [['--mysql-env', 'GAME-DB'], '--mysql-env takes the name of an environment variable (DATABASE_URL), got "GAME-DB"'],
    [['--mysql-env', 'BLANK'], '--mysql-env: the environment variable BLANK is not set'],
    [['--postgres-file', ' '], '--postgres-file must not be blank'],
    [['--file', ' '], '--file must not be blank'],
    [['--file', 'x', '--timeout', '5'], '--timeout applies to a database journal, not --file'],
    [['--mysql', 'postgres://h/db'], '--mysql must be a mysql: or mariadb: URL, got postgres:'],
    [['--mysql', 'h/db'], '--mysql must be a URL (mysql://user@host:port/database), got something else'],
  ])('%j', async (flags, message) => {
    const r = await run(['journal', 'status', ...flags], { importDriver: fakePg(new Error('unused'), made()) }, { DB: 'postgres://h/db', BLANK: '  ' });
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
  });

  it('a URL file holding no URL; a URL file others may read: warned only when the URL holds a secret', async () => {
    const d = await dir();
    await writeFile(join(d, 'empty'), '\n  \n', { mode: 0o600 });
    expect((await run(['journal', 'status', '--mysql-file', join(d, 'empty')], {})).stderr).toBe(`teamgames journal: --mysql-file: ${join(d, 'empty')} holds no URL (see teamgames journal --help)\n`);
    await writeFile(join(d, 'plain'), 'mysql://u@h/db?password=\n');
    await chmod(join(d, 'plain'), 0o644);
    const plain = await run(['journal', 'status', '--mysql-file', join(d, 'plain')], { importDriver: fakeMysql(new Error('refused'), made()) });
    expect(plain.stderr).toBe('teamgames journal: MySqlJournal: could not read the journal: refused\n');
    expect(plain.stdout).toMatch(/^journal +MySQL mysql:\/\/u@h\/db\?password=\*\*\*, table teamgames_deliveries\n/);
    await writeFile(join(d, 'group'), 'mysql://u:pw@h/db\n');
    await chmod(join(d, 'group'), 0o640);
    const group = await run(['journal', 'status', '--mysql-file', join(d, 'group')], { importDriver: fakeMysql(new Error('refused'), made()) });
    expect(group.stderr.split('\n')[0]).toBe(`teamgames journal: warning: ${join(d, 'group')} holds a password and other users may read it; chmod 600 ${join(d, 'group')}`);
  });

  it('a URL on the command line with an empty password parameter: no warning; each secret parameter masked once', async () => {
    const r = await run(['journal', 'status', '--postgres', 'postgres://u@h/db?password=&sslmode=require'], { importDriver: fakePg(new Error('refused'), made()) });
    expect(r.stderr).toBe('teamgames journal: PostgresJournal: could not read the journal: refused\n');
    expect(r.stdout).toMatch(/^journal +PostgreSQL postgres:\/\/u@h\/db\?password=\*\*\*&sslmode=require, table teamgames_deliveries\n/);
    const masked = await run(['journal', 'status', '--postgres-env', 'DB'], { importDriver: fakePg(new Error('refused'), made()) }, { DB: 'postgres://u@h/db?password=a&password=b&apiToken=t' });
    expect(masked.stdout).toMatch(/^journal +PostgreSQL postgres:\/\/u@h\/db\?password=\*\*\*&apiToken=\*\*\*, table teamgames_deliveries\n/);
  });

  it('a driver error naming a URL with its password: the password masked', async () => {
    const r = await run(['journal', 'pending', '--postgres-env', 'DB'], { importDriver: fakePg(new Error('could not connect to postgres://u:hunter2@h:5432/db\n  at connect'), made()) }, { DB: 'postgres://u@h/db' });
    expect(r.stderr).toBe('teamgames journal: PostgresJournal: could not read the journal: could not connect to postgres://u:***@h:5432/db at connect\n');
  });
});
