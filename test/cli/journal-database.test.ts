/**
 * Issue #34 points 4 and 5 on `teamgames journal --postgres… / --mysql…`, without a real
 * server: the URL from an environment variable or a file (no password on the command
 * line, a warning when there is one), its secrets masked wherever it is printed, and a
 * server that accepts the connection (PostgreSQL: the login too) and then never answers
 * ends the command in bounded time with exit 4, in process (as the real bin: journal-bin.test.ts). The
 * servers are loopback TCP servers of the test; the real-server cases (a lock held) are in
 * test/databases/journal-cli.db.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stream } from '../support/cli.js';
import { closeSilentServers, silentServer } from '../support/silent-server.js';
import { EXIT, runTeamgames, type TeamgamesEnv } from '../../src/cli/program.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  await closeSilentServers();
});

async function run(argv: string[], env: TeamgamesEnv = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, env, {}, { now: () => 0 });
  return { code, ...out };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('teamgames journal: the database URL off the command line, its secrets never printed', () => {
  const secrets = ['pw-secret', 'q-secret', 'ssl-secret', 'tok-secret'];
  const urlWith = (port: number) => `postgres://staff:pw-secret@127.0.0.1:${port}/game?sslpassword=ssl-secret&application_name=journal&password=q-secret&auth_token=tok-secret`;

  it('--postgres-env: status shows the URL with every password masked (user info and query parameters), no warning', async () => {
    const port = await closedPort();
    const r = await run(['journal', 'status', '--postgres-env', 'GAME_DB'], { GAME_DB: urlWith(port) });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stdout).toMatch(new RegExp(`^journal +PostgreSQL postgres://staff:\\*\\*\\*@127\\.0\\.0\\.1:${port}/game\\?sslpassword=\\*\\*\\*&application_name=journal&password=\\*\\*\\*&auth_token=\\*\\*\\*, table teamgames_deliveries\\n`));
    for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stderr).not.toContain('warning');
    const json = await run(['journal', 'status', '--json', '--postgres-env', 'GAME_DB'], { GAME_DB: urlWith(port) });
    for (const secret of secrets) expect(json.stdout + json.stderr).not.toContain(secret);
    expect(JSON.parse(json.stdout)).toMatchObject({ journal: { kind: 'postgres', url: expect.stringContaining('password=***') } });
  });

  it('--mysql-file: the URL from the first line of a file, masked the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-journal-url-'));
    dirs.push(dir);
    const port = await closedPort();
    await writeFile(join(dir, 'db-url'), `mysql://staff:pw-secret@127.0.0.1:${port}/game?password=q-secret\n`, { mode: 0o600 });
    const r = await run(['journal', 'status', '--mysql-file', join(dir, 'db-url')]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stdout).toMatch(new RegExp(`^journal +MySQL mysql://staff:\\*\\*\\*@127\\.0\\.0\\.1:${port}/game\\?password=\\*\\*\\*, table teamgames_deliveries\\nreadable +no: `));
    for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stderr).not.toContain('warning');
    await chmod(join(dir, 'db-url'), 0o644);
    expect((await run(['journal', 'status', '--mysql-file', join(dir, 'db-url')])).stderr).toMatch(new RegExp(`^teamgames journal: warning: ${join(dir, 'db-url')} holds a password and other users may read it; chmod 600 `));
    expect(await run(['journal', 'status', '--mysql-file', join(dir, 'absent')])).toMatchObject({ code: EXIT.USAGE, stderr: `teamgames journal: --mysql-file: cannot read ${join(dir, 'absent')} (ENOENT) (see teamgames journal --help)\n` });
  });

  it('a URL file that is a FIFO, /dev/zero or a directory: refused at once (exit 2), never read whole or waited on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-journal-url-'));
    dirs.push(dir);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    for (const path of [join(dir, 'fifo'), '/dev/zero', dir]) {
      expect(await run(['journal', 'status', '--postgres-file', path])).toMatchObject({ code: EXIT.USAGE, stderr: `teamgames journal: --postgres-file: cannot read ${path} (not a regular file) (see teamgames journal --help)\n` });
    }
    expect((await run(['journal', 'status', '--file', join(dir, 'absent')], { TEAMGAMES_API_KEY_FILE: '/dev/zero' })).code).toBe(EXIT.FAILURE);
  });

  it('an unset variable, or a variable name that is not one: exit 2', async () => {
    expect(await run(['journal', 'status', '--postgres-env', 'GAME_DB'])).toMatchObject({ code: EXIT.USAGE, stderr: 'teamgames journal: --postgres-env: the environment variable GAME_DB is not set (see teamgames journal --help)\n' });
    expect((await run(['journal', 'status', '--postgres-env', 'postgres://x'])).code).toBe(EXIT.USAGE);
    expect((await run(['journal', 'status', '--postgres-env', 'A', '--mysql-file', 'b'])).stderr).toBe('teamgames journal: one journal at a time: got --postgres-env and --mysql-file (see teamgames journal --help)\n');
  });

  it('--postgres with a password still works, with a warning on stderr that ps shows it; none without a password', async () => {
    const port = await closedPort();
    const warning = 'teamgames journal: warning: the password in --postgres can be read by every user of this machine (ps, /proc) while the command runs; pass the URL with --postgres-env <VAR> or --postgres-file <path> instead\n';
    for (const url of [`postgres://staff:pw-secret@127.0.0.1:${port}/game`, `postgres://staff@127.0.0.1:${port}/game?password=q-secret`]) {
      const r = await run(['journal', 'status', '--postgres', url]);
      expect(r.stderr.startsWith(warning)).toBe(true);
      for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
    }
    expect((await run(['journal', 'status', '--postgres', `postgres://staff@127.0.0.1:${port}/game`])).stderr).not.toContain('warning');
    const json = await run(['journal', 'status', '--json', '--mysql', `mysql://staff:pw-secret@127.0.0.1:${port}/game`]);
    expect(JSON.parse(json.stderr.split('\n')[0] as string)).toMatchObject({ warning: 'PASSWORD_ON_COMMAND_LINE', message: expect.stringContaining('--mysql-env <VAR>') });
  });
});

describe('teamgames journal: a database that never answers', () => {
  it('PostgreSQL, silent after the login: exit 4 within --timeout, one line saying what to check', async () => {
    const port = await silentServer(true);
    const started = performance.now();
    const r = await run(['journal', 'windows', '--timeout', '300', '--postgres-env', 'DB'], { DB: `postgres://staff@127.0.0.1:${port}/game` });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r).toMatchObject({ code: EXIT.NETWORK, stdout: '' });
    expect(r.stderr).toMatch(/^teamgames journal: the database did not answer within 300 ms \(--timeout\)(: .*)?\. Check that the server is up and that no session holds a lock on the journal's table; .*\n$/);
    const status = await run(['journal', 'status', '--json', '--timeout', '300', '--postgres-env', 'DB'], { DB: `postgres://staff@127.0.0.1:${port}/game` });
    expect(status.code).toBe(EXIT.NETWORK);
    expect(JSON.parse(status.stderr)).toMatchObject({ error: 'DATABASE_TIMEOUT' });
  });

  it('PostgreSQL, silent before the login: exit 4 within --timeout', async () => {
    const port = await silentServer(false);
    const started = performance.now();
    const r = await run(['journal', 'status', '--timeout', '300', '--postgres-env', 'DB'], { DB: `postgres://staff@127.0.0.1:${port}/game` });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r.code).toBe(EXIT.NETWORK);
  });

  it('MySQL, silent: exit 4 within --timeout', async () => {
    const port = await silentServer(false);
    const started = performance.now();
    const r = await run(['journal', 'pending', '--timeout', '300', '--mysql-env', 'DB'], { DB: `mysql://staff@127.0.0.1:${port}/game` });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r).toMatchObject({ code: EXIT.NETWORK, stdout: '' });
    expect(r.stderr).toMatch(/did not answer within 300 ms/);
  });

  it('refuses a --timeout that is not a positive number of ms, and one for a file (exit 2)', async () => {
    expect((await run(['journal', 'status', '--timeout', '0', '--postgres-env', 'DB'], { DB: 'postgres://h/db' })).code).toBe(EXIT.USAGE);
    expect((await run(['journal', 'status', '--timeout', '10s', '--postgres-env', 'DB'], { DB: 'postgres://h/db' })).code).toBe(EXIT.USAGE);
    expect((await run(['journal', 'status', '--timeout', '100', '--file', 'x'])).stderr).toBe('teamgames journal: --timeout applies to a database journal, not --file (see teamgames journal --help)\n');
  });
});
