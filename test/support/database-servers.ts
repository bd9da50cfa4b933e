/**
 * The vitest global setup of the `databases` project (`*.db.test.ts`): one throwaway
 * PostgreSQL and one MariaDB for the whole run (test/support/throwaway-databases.ts), or the servers
 * named by TEAMGAMES_TEST_POSTGRES_URL / TEAMGAMES_TEST_MYSQL_URL. Their URLs reach the
 * suites through `inject('databases')` (see `./databases.ts`); the servers stop when the
 * run ends.
 *
 * An engine that is not installed skips its suites, saying so; with CI=true it fails the
 * run instead: CI must never skip them. A server that is installed but fails to start
 * fails the run.
 */
import type { TestProject } from 'vitest/node';
import { ENGINES, NotInstalledError, useDatabase, type DatabaseServer, type Engine } from './throwaway-databases.js';
import type { ProvidedDatabases } from './databases.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const ci = process.env['CI'] === 'true' || process.env['CI'] === '1';
  const engines = Object.keys(ENGINES) as Engine[];
  const results = await Promise.allSettled(engines.map((engine) => useDatabase(engine)));
  const servers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stop = async () => {
    await Promise.all(servers.map((server: DatabaseServer) => server.stop()));
  };
  const provided: ProvidedDatabases = {};
  const problems: string[] = [];
  results.forEach((result, i) => {
    const engine = engines[i] as Engine;
    if (result.status === 'fulfilled') {
      provided[engine] = { url: result.value.url };
      return;
    }
    const reason = result.reason instanceof Error ? result.reason.message : String(result.reason);
    if (result.reason instanceof NotInstalledError && !ci) {
      provided[engine] = { skipped: reason };
      process.stderr.write(`\n${ENGINES[engine].label} suites skipped: ${reason} (or set ${ENGINES[engine].variable} to a server of yours)\n`);
    } else {
      problems.push(`${ENGINES[engine].label}: ${reason}`);
    }
  });
  if (problems.length > 0) {
    await stop();
    throw new Error(`the database suites cannot run${ci ? ' (CI=true: they may not be skipped)' : ''}:\n${problems.join('\n')}`);
  }
  project.provide('databases', provided);
  return stop;
}
