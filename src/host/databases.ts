/**
 * The database journals as the commands open them: the optional driver loaded on demand
 * (`pg`, `mysql2/promise`, the user's optional peers), the URL checked and shown with its
 * secrets masked, and a journal on a bounded pool. `teamgames journal` reads with it;
 * `teamgames bridge` runs on it.
 *
 * @module
 * @internal
 */
import { UsageError } from '../common/command-line.js';
import type { DeliveryJournal } from '../journals/contract.js';
import { MySqlJournal, type MySqlPool } from '../journals/mysql/index.js';
import { PostgresJournal, type PgPool } from '../journals/postgres/index.js';

/** What a command's journals take from outside, injectable for tests. */
export interface JournalDeps {
  /** Loads an optional database driver (`pg`, `mysql2/promise`). Default: `import()`. */
  importDriver?: (name: string) => Promise<unknown>;
  /** The clock for ages and a resolution's time, epoch ms (`teamgames journal`). Default: `Date.now`. */
  now?: () => number;
  /** Who resolves when `--by` is not given (`teamgames journal`). Default: the OS user name. */
  userName?: () => string;
}

/** A failure of the command (exit 1), said in one line. */
export class CommandFailure extends Error {
  // Stryker disable next-line StringLiteral: both commands tell it by instanceof and print only its message (as DatabaseTimeout and BridgeUnreachable); this name is printed nowhere
  override name = 'CommandFailure';
}

/** An error as one line, any password in a URL masked. */
export function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim().replace(URL_PASSWORD, '$1***@');
}

/** What `pg` and `mysql2/promise` export that the command uses. */
export interface PgModule {
  Pool: new (config: { connectionString: string; max: number; connectionTimeoutMillis: number; query_timeout: number }) => PgPool & {
    end(): Promise<void>;
    on(event: 'error', listener: () => void): unknown;
    on(event: 'connect', listener: (client: { query(sql: string): Promise<unknown> }) => void): unknown;
  };
}
export interface MySqlModule {
  createPool(config: { uri: string; connectionLimit: number; connectTimeout: number }): MySqlPool & { end(): Promise<void> };
}

export async function loadDriver<T>(deps: JournalDeps, flag: string, name: string, pkg: string): Promise<T> {
  let loaded: unknown;
  try {
    loaded = await (deps.importDriver ?? ((n: string) => import(n)))(name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && oneLine(error).includes(`'${pkg}'`)) throw new CommandFailure(`${flag} needs the ${pkg} package: npm i ${pkg}`);
    throw new CommandFailure(`${flag}: the ${pkg} package could not be loaded (${oneLine(error)})`);
  }
  const module = loaded as { default?: unknown };
  return (module.default ?? module) as T;
}

// Query parameters that carry a secret (`password`, `sslpassword`, `passwd`, `pwd`, an
// auth token…), masked like the user-info password.
const SECRET_PARAMETER = /pass|pwd|secret|token/i;

/** The URL's secrets: its user-info password and the values of its secret parameters. */
export function urlSecrets(url: URL): string[] {
  const secrets = url.password === '' ? [] : [url.password];
  url.searchParams.forEach((value, name) => {
    if (SECRET_PARAMETER.test(name) && value !== '') secrets.push(value);
  });
  return secrets;
}

export function urlHoldsPassword(url: string): boolean {
  return URL.canParse(url) && urlSecrets(new URL(url)).length > 0;
}

/** The URL as printed: the user-info password and every secret parameter's value shown as `***`. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...new Set(parsed.searchParams.keys())]) {
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

// `scheme://user:password@`, anywhere in a driver's message: the password masked.
export const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s@/]*@/gi;

export function checkUrl(url: string, flag: string, schemes: readonly string[]): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new UsageError(`${flag} must be a URL (${schemes[0]}//user@host:port/database), got something else`);
  }
  if (!schemes.includes(protocol)) throw new UsageError(`${flag} must be a ${schemes.join(' or ')} URL, got ${protocol}`);
}

/** How a database journal is opened: its table, its bounds, whether it may create its tables. */
export interface DatabaseJournalOptions {
  /** The flag or config field the URL came from, named in errors (`--postgres-env`, `journal.postgres`). */
  origin: string;
  table: string | undefined;
  /** Bounds the connection, the login and each answer, in ms. */
  timeoutMs: number;
  /** Connections in the pool. */
  connections: number;
  /** `teamgames journal` never creates a table; a bridge does on first use. */
  createTables: boolean;
}

/**
 * A PostgreSQL or MySQL/MariaDB journal on its own pool, with the call that ends the pool.
 * @throws UsageError when the URL is not one of the engine's; CommandFailure when the driver is missing.
 */
export async function openDatabaseJournal(engine: 'postgres' | 'mysql', url: string, options: DatabaseJournalOptions, deps: JournalDeps): Promise<{ journal: DeliveryJournal; end: () => Promise<void> }> {
  const { origin, table, timeoutMs, connections, createTables } = options;
  // An undefined table is the default one to both journals (table ?? DEFAULT_TABLE).
  const tableOption = { table } as { table?: string };
  if (engine === 'postgres') {
    checkUrl(url, origin, ['postgres:', 'postgresql:']);
    const pg = await loadDriver<PgModule>(deps, origin, 'pg', 'pg');
    // Every wait bounded: the connection and login, and each answer on the client (a server
    // that went silent, a statement behind a lock held by another session). No server-side
    // statement_timeout: as a startup parameter PgBouncer refuses it, and set from the pool's
    // 'connect' event it races the first statement on the same connection (pg warns, and
    // pg 9 will refuse).
    const pool = new pg.Pool({ connectionString: url, max: connections, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    // An idle connection the server ends must not end the process with an unhandled error.
    pool.on('error', () => undefined);
    return { journal: new PostgresJournal(pool, { ...tableOption, createTables }), end: () => pool.end() };
  }
  checkUrl(url, origin, ['mysql:', 'mariadb:']);
  const mysql = await loadDriver<MySqlModule>(deps, origin, 'mysql2/promise', 'mysql2');
  // mysql2 bounds the connection and login; nothing bounds a statement but the caller's guard.
  const pool = mysql.createPool({ uri: url.replace(/^mariadb:/, 'mysql:'), connectionLimit: connections, connectTimeout: timeoutMs });
  return { journal: new MySqlJournal(pool, { ...tableOption, createTables }), end: () => pool.end() };
}
