/**
 * For the `*.db.test.ts` suites: the URL of each throwaway server the global setup
 * (`./database-servers.ts`) started, pools that are closed after the file, and names that
 * keep suites running at once on one server apart.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { ENGINES, type Engine } from './throwaway-databases.js';

/** What the global setup provides: a URL per engine, or why its suites are skipped. */
export type ProvidedDatabases = Partial<Record<Engine, { url?: string; skipped?: string }>>;

declare module 'vitest' {
  export interface ProvidedContext {
    databases: ProvidedDatabases;
  }
}

/**
 * The engine's server for this run, or undefined when its suites are skipped (the global
 * setup said why). Use with `describe.skipIf(!url)`.
 */
export function databaseUrl(engine: Engine): string | undefined {
  const provided = inject('databases')?.[engine];
  if (provided?.url !== undefined) return provided.url;
  const why = provided?.skipped ?? `no server: run the suite in the \`databases\` project (a *.db.test.ts file) or set ${ENGINES[engine].variable}`;
  if (process.env['CI'] === 'true') throw new Error(`${ENGINES[engine].label} suite cannot be skipped in CI: ${why}`);
  // The global setup has said why already, once for the run.
  if (provided?.skipped === undefined) console.warn(`${ENGINES[engine].label} suite skipped: ${why}`);
  return undefined;
}

/** The password {@link urlWithPassword} adds to a URL that has none. */
export const ADDED_PASSWORD = 'never-in-the-log-7Qx';

/**
 * `url` with a password in it, so a test of "never prints the password" checks something on
 * every engine: the throwaway PostgreSQL trusts loopback logins and its URL has none, so
 * {@link ADDED_PASSWORD} is added (a trusting server ignores it); a URL with one is kept.
 */
export function urlWithPassword(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const parsed = new URL(url);
  if (parsed.password === '') parsed.password = ADDED_PASSWORD;
  return parsed.toString();
}

/** A name unique to this run and file: tables, players, lock keys never meet another suite's. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid.toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
}

const pgPools = new Set<pg.Pool>();
const mysqlPools = new Set<mysql.Pool>();
afterAll(async () => {
  await Promise.all([...pgPools].map((p) => p.end().catch(() => undefined)));
  await Promise.all([...mysqlPools].map((p) => p.end().catch(() => undefined)));
});

/** A `pg` pool closed after the file; one pool is one node. */
export function pgPool(url: string, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 5, ...options });
  // An idle connection the server ended (a test killing a node) must not crash the run.
  pool.on('error', () => undefined);
  pgPools.add(pool);
  return pool;
}

/** A `mysql2/promise` pool closed after the file; one pool is one node. */
export function mysqlPool(url: string, options: mysql.PoolOptions = {}): mysql.Pool {
  const pool = mysql.createPool({ uri: url, connectionLimit: 5, ...options });
  mysqlPools.add(pool);
  return pool;
}
