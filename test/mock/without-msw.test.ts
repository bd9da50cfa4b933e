import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// msw is an optional peer of `teamgames-sdk/mock`: only `mock.handlers` may need it. The
// program is bundled (ky and zod inside) into a temporary directory, with msw left
// external: there it cannot be resolved, as in a project that never installed it.
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'teamgames-without-msw-'));
  await build({
    config: false,
    entry: { program: fileURLToPath(new URL('./programs/without-msw.ts', import.meta.url)) },
    outDir: dir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    noExternal: [/^(?!msw)/],
    external: ['msw'],
    silent: true,
    dts: false,
    sourcemap: false,
  });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the mock without msw installed', () => {
  it('imports, answers in process and over HTTP, exits by itself, and names `npm i -D msw` only for mock.handlers', async () => {
    // The time limit turns a process kept alive by an open handle into a failure.
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'program.js')], { timeout: 20_000 });
    const result = JSON.parse(stdout) as { inProcess: number; overHttp: number; handlersError: string };
    expect(result.inProcess).toBeGreaterThan(0);
    expect(result.overHttp).toBe(result.inProcess);
    expect(result.handlersError).toContain('npm i -D msw');
    expect(result.handlersError.split('\n')).toHaveLength(1);
  }, 30_000);
});
