/**
 * `teamgames journal` with its modules loaded afresh for each test (issue #46 point 2):
 * what is decided at module level (the pattern of a URL's password, masked in a driver's
 * message; the commands, the arguments and options each takes and the names an unknown one
 * is told, the usage `--help` prints; the driver codes and messages that are a database
 * timeout, exit 4) is seen by StrykerJS only in a suite that loads it after each mutant is
 * set. Nothing here imports the command statically; the drivers are the test's.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Program from '../../src/cli/program.js';
import type * as Support from '../support/cli.js';

let program: typeof Program;
let support: typeof Support;
beforeEach(async () => {
  vi.resetModules();
  program = await import('../../src/cli/program.js');
  support = await import('../support/cli.js');
});

/** `teamgames <argv>` in process, the database driver `pg` a pool whose every query and connection fails with `error`. */
async function failingWith(argv: string[], error: Error, env: Record<string, string> = { DB: 'postgres://u@h/db' }) {
  const out = { stdout: '', stderr: '' };
  const Pool = class {
    query = async () => Promise.reject(error);
    connect = async () => Promise.reject(error);
    on() {}
    end = async () => {};
  };
  const io = { stdout: support.stream((t) => (out.stdout += t)), stderr: support.stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false };
  const code = await program.runTeamgames(argv, io, env, {}, { now: () => 0, importDriver: async () => ({ Pool }) });
  return { code, ...out };
}

describe("teamgames journal: a URL's password in a driver's message", () => {
  it('masked wherever the URL starts: after a space, a parenthesis or a quote', async () => {
    const r = await failingWith(
      ['journal', 'pending', '--postgres-env', 'DB'],
      new Error(`could not connect to postgres://u:hunter2@h:5432/db (from 'postgresql://v:swordfish@h2/db') [mysql://w:letmein@h3/db]`),
      { DB: 'postgres://u@h/db' },
    );
    expect(r).toEqual({
      code: program.EXIT.FAILURE,
      stdout: '',
      stderr: `teamgames journal: PostgresJournal: could not read the journal: could not connect to postgres://u:***@h:5432/db (from 'postgresql://v:***@h2/db') [mysql://w:***@h3/db]\n`,
    });
  });
});

/** `teamgames journal <args> --postgres-env DB`, the database down (`down`). */
const journal = (args: string[]) => failingWith(['journal', ...args, '--postgres-env', 'DB'], new Error('down'));
const usage = (message: string) => ({ code: program.EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
const down = { code: 1, stdout: '', stderr: 'teamgames journal: PostgresJournal: could not read the journal: down\n' };

describe('teamgames journal: the commands, their arguments and options', () => {
  it.each<[string[], string]>([
    [['status', 'extra'], 'unexpected argument "extra"'],
    [['windows', 'extra'], 'unexpected argument "extra"'],
    [['pending', 'extra'], 'unexpected argument "extra"'],
    [['resolve', 'Ann', 'extra', '--note', 'n', '--by', 'mod'], 'unexpected argument "extra"'],
    [['resolve', '--note', 'n', '--by', 'mod'], 'missing <player> (or --window <id>)'],
    [['status', '--all'], '--all does not apply to this command'],
    [['pending', '--all'], '--all does not apply to this command'],
    [['resolve', 'Ann', '--note', 'n', '--all'], '--all does not apply to this command'],
    ...['status', 'windows', 'pending'].flatMap((command): [string[], string][] => [
      [[command, '--window', 'w1'], '--window does not apply to this command'],
      [[command, '--note', 'n'], '--note does not apply to this command'],
      [[command, '--by', 'mod'], '--by does not apply to this command'],
      [[command, '--bridge', 'http://127.0.0.1:8787'], '--bridge does not apply to this command'],
    ]),
    [['frobnicate'], 'unknown command "frobnicate" (status, windows, pending or resolve)'],
    [[], 'missing command (status, windows, pending or resolve)'],
  ])('journal %j: refused, exit 2, one line', async (args, message) => {
    expect(await journal(args)).toEqual(usage(message));
  });

  it.each([
    [['windows']],
    [['windows', '--all']],
    [['pending']],
    [['resolve', 'Ann', '--note', 'n', '--by', 'mod']],
    [['resolve', 'Ann', '--window', 'w1', '--note', 'n', '--by', 'mod']],
    [['resolve', '--window', 'w1', '--note', 'n', '--by', 'mod']],
  ])('journal %j: taken as it is, the database asked (down: exit 1)', async (args) => {
    expect(await journal(args)).toEqual(down);
  });

  it('journal status: taken without an argument, the database asked (down: its health, exit 1)', async () => {
    expect(await journal(['status'])).toEqual({
      ...down,
      stdout: 'journal   PostgreSQL postgres://u@h/db, table teamgames_deliveries\nreadable  no: PostgresJournal: could not read the journal: down\n',
    });
  });

  it('journal resolve --bridge: taken, the URL checked as the bridge\'s (alone, exit 2 on a bad one)', async () => {
    expect(await failingWith(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--bridge', 'not a url'], new Error('down'))).toEqual(
      usage('--bridge must be the bridge\'s HTTP API, as http://127.0.0.1:8787 (its listen.host and listen.port), got "not a url"'),
    );
  });

  it('journal --help: the usage on stdout (exit 0)', async () => {
    const r = await failingWith(['journal', '--help'], new Error('down'));
    expect(r).toEqual({ code: program.EXIT.OK, stdout: (await import('../../src/cli/journal-command.js')).JOURNAL_USAGE, stderr: '' });
    expect(r.stdout).toMatch(/^Usage: teamgames journal <command> <journal> \[options\]\n\nWhat a delivery journal holds for staff/);
    expect(r.stdout).toContain('\nCommands:\n  status   ');
    expect(r.stdout).toContain('\n  resolve <player> --note <text> [--window <id>] [--by <name>] [--bridge <url>]\n');
    expect(r.stdout).toMatch(/\n  7  resolve: the window was already resolved .*\n.*\n.*\n.*WINDOW_ALREADY_RESOLVED, with the window's resolution\)\n$/);
  });
});

describe('teamgames journal: what is a database timeout (exit 4, DATABASE_TIMEOUT)', () => {
  const timedOut = (said: string) => ({
    error: 'DATABASE_TIMEOUT',
    message: `journal: the database did not answer within 250 ms (--timeout): PostgresJournal: could not read the journal: ${said}. Check that the server is up and that no session holds a lock on the journal's table; a resolve may or may not have been written (teamgames journal windows --all)`,
  });
  const pending = async (error: Error) => {
    const r = await failingWith(['journal', 'pending', '--json', '--timeout', '250', '--postgres-env', 'DB'], error);
    return { code: r.code, stdout: r.stdout, stderr: JSON.parse(r.stderr) as unknown };
  };

  it.each(['57014', '55P03', 'ETIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_LOCK_WAIT_TIMEOUT', 'ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT'])('the code %s, on the error or on its cause', async (code) => {
    expect(await pending(Object.assign(new Error('bound ran out'), { code }))).toEqual({ code: program.EXIT.NETWORK, stdout: '', stderr: timedOut('bound ran out') });
    expect(await pending(new Error('wrapped', { cause: Object.assign(new Error('bound ran out'), { code }) }))).toEqual({ code: program.EXIT.NETWORK, stdout: '', stderr: timedOut('wrapped') });
  });

  it.each(['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout', 'Query read timeout'])('a message starting "%s", on the error or on its cause', async (start) => {
    expect(await pending(new Error(`${start} (250 ms)`))).toEqual({ code: program.EXIT.NETWORK, stdout: '', stderr: timedOut(`${start} (250 ms)`) });
    expect(await pending(new Error('wrapped', { cause: new Error(start) }))).toEqual({ code: program.EXIT.NETWORK, stdout: '', stderr: timedOut('wrapped') });
  });

  it.each<[string, Error]>([
    ['another code', Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' })],
    ['a code only close to one', Object.assign(new Error('connection refused'), { code: 'ER_LOCK_WAIT' })],
    ...['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout', 'Query read timeout'].map((start): [string, Error] => [`"${start}" not at the start`, new Error(`said: ${start}`)]),
  ])('%s: no timeout, the failure as it is (exit 1)', async (_what, error) => {
    expect(await pending(error)).toEqual({ code: program.EXIT.FAILURE, stdout: '', stderr: { error: 'JOURNAL_FAILED', message: `journal: PostgresJournal: could not read the journal: ${error.message}` } });
  });
});
