/**
 * Throwaway database servers for the tests and the campaigns: a PostgreSQL and a MariaDB
 * (the MySQL protocol), each initialized in its own temp directory from Debian's packages
 * (`postgresql`, `mariadb-server`), listening on a free loopback port, and deleted when
 * stopped. Durability is turned off (`fsync=off`, no InnoDB flush): they are for tests.
 *
 *   npm run db                        start both, print their URLs, stop on Ctrl-C
 *   npm run db -- --engine postgres   only one engine (postgres or mysql)
 *   npm run db -- <command> [args…]   run a command with the URLs in its environment,
 *                                     then stop the servers; exits with its code
 *
 * The URLs are exported as TEAMGAMES_TEST_POSTGRES_URL and TEAMGAMES_TEST_MYSQL_URL.
 * When one of these is already set, {@link useDatabase} uses that server and starts
 * nothing, so a suite or a campaign can be pointed at a server of your own.
 *
 * From code (the vitest global setup, the crash campaign):
 *
 *   const db = await useDatabase('postgres');   // NotInstalledError when the engine is missing
 *   try { … new pg.Pool({ connectionString: db.url }) … } finally { await db.stop(); }
 *
 * Both servers refuse to run as root: as root, PostgreSQL runs as the `postgres` user and
 * MariaDB as `mysql` (the users the Debian packages create; `nobody` otherwise).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The engines: `mysql` is served by MariaDB here (the tests' MySQL-protocol server). */
export type Engine = 'postgres' | 'mysql';

export const ENGINES: Record<Engine, { label: string; variable: string; debianPackage: string }> = {
  postgres: { label: 'PostgreSQL', variable: 'TEAMGAMES_TEST_POSTGRES_URL', debianPackage: 'postgresql' },
  mysql: { label: 'MariaDB', variable: 'TEAMGAMES_TEST_MYSQL_URL', debianPackage: 'mariadb-server' },
};

/** A running server (or one named by its environment variable). */
export interface DatabaseServer {
  engine: Engine;
  /** `postgres://…` or `mysql://…`, with the user, password and database. */
  url: string;
  /** False when the URL came from the environment: `stop()` then does nothing. */
  started: boolean;
  /** Stops the server and deletes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** The engine's binaries are not on this machine. */
export class NotInstalledError extends Error {
  constructor(readonly engine: Engine, looked: string) {
    super(`${ENGINES[engine].label} is not installed (looked for ${looked}); install it with: apt-get install ${ENGINES[engine].debianPackage}`);
    this.name = 'NotInstalledError';
  }
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** The server named by the engine's variable, or a new throwaway one. */
export async function useDatabase(engine: Engine): Promise<DatabaseServer> {
  const url = process.env[ENGINES[engine].variable];
  if (url !== undefined && url !== '') return { engine, url, started: false, stop: async () => undefined };
  return startDatabase(engine);
}

/** Starts a throwaway server of the engine. Rejects with {@link NotInstalledError} when it is missing. */
export function startDatabase(engine: Engine): Promise<DatabaseServer> {
  return engine === 'postgres' ? startPostgres() : startMariaDb();
}

// ---------------------------------------------------------------- PostgreSQL

async function startPostgres(): Promise<DatabaseServer> {
  const bin = postgresBinDir();
  const owner = serviceUser('postgres');
  const dir = newDir('teamgames-postgres-', owner);
  try {
    await run(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-U', 'teamgames', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], { cwd: dir, owner });
    const server = await onFreePort((port) =>
      serve(
        join(bin, 'postgres'),
        // Unix sockets in the temp dir: nothing is written to /var/run/postgresql.
        ['-D', join(dir, 'data'), '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
        { cwd: dir, owner, ready: /database system is ready to accept connections/ },
      ).then((child) => ({ child, port })),
    );
    return running('postgres', `postgres://teamgames@127.0.0.1:${server.port}/postgres`, server.child, 'SIGINT', dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function postgresBinDir(): string {
  const has = (dir: string) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'postgres'));
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  const found = [...versions.map((v) => join(root, v, 'bin')), ...pathDirs()].find(has);
  if (found === undefined) throw new NotInstalledError('postgres', 'initdb and postgres under /usr/lib/postgresql/*/bin and on PATH');
  return found;
}

// ---------------------------------------------------------------- MariaDB

async function startMariaDb(): Promise<DatabaseServer> {
  const dirs = [...pathDirs(), '/usr/sbin', '/usr/local/sbin'];
  const server = dirs.map((d) => join(d, 'mariadbd')).find(isExecutable);
  const install = dirs.map((d) => join(d, 'mariadb-install-db')).find(isExecutable);
  if (server === undefined || install === undefined) throw new NotInstalledError('mysql', 'mariadbd and mariadb-install-db on PATH and in /usr/sbin');
  const owner = serviceUser('mysql');
  const dir = newDir('teamgames-mariadb-', owner);
  // As root without a `mysql` user, mariadbd must be told to stay root.
  const asRoot = isRoot() && owner === undefined ? ['--user=root'] : [];
  // For a test server: no flushes, small files. Given to the bootstrap and to the server.
  const fast = ['--innodb-flush-log-at-trx-commit=0', '--innodb-flush-method=nosync', '--innodb-doublewrite=0', '--sync-frm=0', '--innodb-log-file-size=8M', '--innodb-buffer-pool-size=32M'];
  try {
    await run(install, ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--skip-name-resolve', ...asRoot, ...fast], { cwd: dir, owner });
    // The bootstrap runs without grant tables: the user is created when the server starts.
    const init = join(dir, 'init.sql');
    writeFileSync(
      init,
      [
        'CREATE DATABASE IF NOT EXISTS teamgames CHARACTER SET utf8mb4;',
        "CREATE USER IF NOT EXISTS 'teamgames'@'%' IDENTIFIED BY 'teamgames';",
        "GRANT ALL PRIVILEGES ON *.* TO 'teamgames'@'%';",
        '',
      ].join('\n'),
    );
    if (owner !== undefined) chownSync(init, owner.uid, owner.gid);
    const started = await onFreePort((port) =>
      serve(
        server,
        [
          '--no-defaults',
          `--datadir=${join(dir, 'data')}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${join(dir, 'mysqld.sock')}`,
          `--pid-file=${join(dir, 'mysqld.pid')}`,
          `--tmpdir=${dir}`,
          `--init-file=${init}`,
          '--skip-name-resolve',
          '--character-set-server=utf8mb4',
          '--max-connections=300',
          ...asRoot,
          ...fast,
        ],
        { cwd: dir, owner, ready: /ready for connections/ },
      ).then((child) => ({ child, port })),
    );
    return running('mysql', `mysql://teamgames:teamgames@127.0.0.1:${started.port}/teamgames`, started.child, 'SIGTERM', dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

// ---------------------------------------------------------------- processes

interface Owner {
  uid: number;
  gid: number;
}

const live = new Map<ChildProcess, string>();
let exitHookInstalled = false;

/** A server that outlives this process would keep its port and its directory: kill it on exit. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [child, dir] of live) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

function running(engine: Engine, url: string, child: ChildProcess, signal: NodeJS.Signals, dir: string): DatabaseServer {
  let stopping: Promise<void> | undefined;
  return {
    engine,
    url,
    started: true,
    stop: () =>
      (stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill(signal);
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(timer);
        }
        live.delete(child);
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}

/** Runs a setup command to its end; rejects with its output when it fails. */
function run(file: string, args: string[], options: { cwd: string; owner: Owner | undefined }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(options.owner ?? {}) });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} failed (${signal ?? `exit ${code}`}):\n${output.trim()}`));
    });
  });
}

/** Starts a server and resolves once its log says it is ready. */
function serve(file: string, args: string[], options: { cwd: string; owner: Owner | undefined; ready: RegExp }): Promise<ChildProcess> {
  installExitHook();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(options.owner ?? {}) });
    live.set(child, options.cwd);
    let log = '';
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      live.delete(child);
      reject(new Error(`${file} ${why}:\n${log.trim().slice(-4_000)}`));
    };
    const timer = setTimeout(() => fail(`was not ready after ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const watch = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-16_000);
      if (!settled && options.ready.test(log)) {
        settled = true;
        clearTimeout(timer);
        // Keep draining the pipes: a full pipe would stall the server.
        log = '';
        resolve(child);
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.on('error', (error) => fail(`could not be started (${error.message})`));
    child.on('exit', (code, signal) => fail(`exited while starting (${signal ?? `exit ${code}`})`));
  });
}

/** Tries a free loopback port; another process may take it first, so a failed start tries another. */
async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= 3 || !/already in use|could not bind|Can't start server/i.test(String(error))) throw error;
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function newDir(prefix: string, owner: Owner | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** As root: the engine's own system user (or `nobody`); otherwise this process's user. */
function serviceUser(name: string): Owner | undefined {
  if (!isRoot()) return undefined;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const wanted of [name, 'nobody']) {
    const line = passwd.split('\n').find((l) => l.startsWith(`${wanted}:`));
    const [, , uid, gid] = line?.split(':') ?? [];
    if (uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

function pathDirs(): string[] {
  return (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- CLI

const USAGE = 'usage: npm run db -- [--engine postgres|mysql|all] [<command> [args…]]';

async function main(argv: string[]): Promise<number> {
  let engines: Engine[] = ['postgres', 'mysql'];
  let rest = argv;
  while (rest[0]?.startsWith('--')) {
    const [flag, inline] = rest[0].split('=', 2) as [string, string | undefined];
    if (flag === '--') {
      rest = rest.slice(1);
      break;
    }
    if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (flag !== '--engine') {
      process.stderr.write(`db: unknown option ${flag}\n${USAGE}\n`);
      return 2;
    }
    const value = inline ?? rest[1];
    if (value !== 'postgres' && value !== 'mysql' && value !== 'all') {
      process.stderr.write(`db: --engine must be postgres, mysql or all\n${USAGE}\n`);
      return 2;
    }
    engines = value === 'all' ? ['postgres', 'mysql'] : [value];
    rest = rest.slice(inline === undefined ? 2 : 1);
  }

  const servers: DatabaseServer[] = [];
  const stopAll = () => Promise.all(servers.map((s) => s.stop()));
  try {
    const results = await Promise.allSettled(engines.map((engine) => useDatabase(engine)));
    for (const result of results) if (result.status === 'fulfilled') servers.push(result.value);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  } catch (error) {
    await stopAll();
    process.stderr.write(`db: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof NotInstalledError ? 3 : 1;
  }
  const env: Record<string, string> = {};
  for (const server of servers) env[ENGINES[server.engine].variable] = server.url;

  if (rest.length === 0) {
    for (const [name, value] of Object.entries(env)) process.stdout.write(`export ${name}=${value}\n`);
    process.stderr.write('db: running; Ctrl-C stops and deletes them\n');
    await new Promise<void>((resolve) => {
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolve());
    });
    await stopAll();
    return 0;
  }

  const [command, ...args] = rest as [string, ...string[]];
  const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  // Ctrl-C reaches the command too (same process group): wait for it, then stop the servers.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  const code = await new Promise<number>((resolve) => {
    child.on('error', (error) => {
      process.stderr.write(`db: could not run ${command}: ${error.message}\n`);
      resolve(127);
    });
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal === null ? 1 : 128)));
  });
  await stopAll();
  return code;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
