/**
 * `teamgames journal` against a database that accepts the login and then never answers,
 * as the real bin in a child process (issue #34 point 5): it exits 4 in bounded time,
 * nothing the silent server keeps open holding the process. Apart from the in-process
 * cases (journal-database.test.ts) since a child process cannot see StrykerJS's mutants:
 * vitest.mutate.config.ts leaves this file out.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/program.js';
import { closeSilentServers, silentServer } from '../support/silent-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
afterEach(closeSilentServers);

describe('teamgames journal: a database that never answers', () => {
  it('the bin, as a process: exits 4 in bounded time (nothing the silent server keeps open holds it)', async () => {
    const port = await silentServer(true);
    const started = performance.now();
    const child = spawn(`${ROOT}node_modules/.bin/tsx`, ['src/cli/index.ts', 'journal', 'status', '--timeout', '500', '--postgres-env', 'DB'], { cwd: ROOT, env: { ...process.env, DB: `postgres://staff@127.0.0.1:${port}/game` }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
    expect(stderr).toMatch(/did not answer within 500 ms/);
    expect(code).toBe(EXIT.NETWORK);
    expect(performance.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
