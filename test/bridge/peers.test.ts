/**
 * pino, prom-client and rcon-client are the bridge's optional peers: the `teamgames` bin,
 * bundled as the package ships it (esbuild with code splitting, the peers external),
 * installed where only its dependencies are (`ky`, `zod`), says which packages
 * `teamgames bridge` needs (exit 2), and every other command still runs without them.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const exec = promisify(execFile);
let app = '';

beforeAll(async () => {
  app = await mkdtemp(join(tmpdir(), 'tg-bridge-peers-'));
  await mkdir(join(app, 'node_modules'));
  for (const dependency of ['ky', 'zod']) await symlink(join(ROOT, 'node_modules', dependency), join(app, 'node_modules', dependency));
  await writeFile(join(app, 'package.json'), '{"type":"module"}');
  await writeFile(join(app, 'bridge.json'), JSON.stringify({ give: { webhook: { url: 'http://127.0.0.1:9/x' } } }));
  await build({ entryPoints: { 'cli/index': join(ROOT, 'src/cli/index.ts') }, outdir: join(app, 'dist'), bundle: true, splitting: true, platform: 'node', format: 'esm', target: 'node20', external: ['ky', 'zod', 'msw', 'pg', 'mysql2', 'pino', 'prom-client', 'rcon-client'], logLevel: 'silent' });
}, 30_000);
afterAll(() => rm(app, { recursive: true, force: true }));

async function teamgames(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(app, 'dist/cli/index.js'), ...args], { cwd: app, env: { PATH: process.env.PATH, NO_COLOR: '1', TEAMGAMES_API_KEY: 'k', TEAMGAMES_BRIDGE_TOKEN: 't'.repeat(32) } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('teamgames bridge where pino, prom-client and rcon-client are not installed', () => {
  it('says what to install (exit 2)', async () => {
    expect(await teamgames(['bridge', '--config', join(app, 'bridge.json')])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'teamgames bridge: the bridge needs the optional package pino: npm install pino prom-client rcon-client (see teamgames bridge --help)\n',
    });
  });

  it('--help and the other commands need none of them', async () => {
    expect(await teamgames(['bridge', '--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('Usage: teamgames bridge --config <bridge.json>') });
    expect(await teamgames(['--help'])).toMatchObject({ code: 0, stdout: expect.stringContaining('bridge --config <bridge.json>') });
    const path = join(app, 'journal.jsonl');
    await writeFile(path, '');
    expect((await teamgames(['journal', 'status', '--file', path])).code).toBe(0);
  });

  it('a bad command line is a usage error (exit 2)', async () => {
    expect(await teamgames(['bridge'])).toMatchObject({ code: 2, stderr: 'teamgames bridge: --config <bridge.json> is required (see teamgames bridge --help)\n' });
    expect(await teamgames(['bridge', '--config', 'x', 'extra'])).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument "extra"') });
  });
});
