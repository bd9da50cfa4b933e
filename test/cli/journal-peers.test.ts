/**
 * The database drivers are the user's optional peers (issue #24 point 3): the `teamgames`
 * bin, bundled as the package ships it (esbuild, `pg` and `mysql2` external), installed
 * where only its dependencies are (`ky`, `zod`), says in one line which package
 * `--postgres` / `--mysql` needs, and still reads a journal file.
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
  app = await mkdtemp(join(tmpdir(), 'tg-journal-peers-'));
  await mkdir(join(app, 'node_modules'));
  for (const dependency of ['ky', 'zod']) await symlink(join(ROOT, 'node_modules', dependency), join(app, 'node_modules', dependency));
  await writeFile(join(app, 'package.json'), '{"type":"module"}');
  await build({ entryPoints: [join(ROOT, 'src/cli/index.ts')], outfile: join(app, 'dist/cli.js'), bundle: true, platform: 'node', format: 'esm', target: 'node20', external: ['ky', 'zod', 'msw', 'pg', 'mysql2'], logLevel: 'silent' });
}, 30_000);
afterAll(() => rm(app, { recursive: true, force: true }));

async function teamgames(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(app, 'dist/cli.js'), ...args], { cwd: app, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('teamgames journal where pg and mysql2 are not installed', () => {
  it('--postgres: one line naming the package to install (exit 1)', async () => {
    expect(await teamgames(['journal', 'status', '--postgres', 'postgres://u@127.0.0.1:1/db'])).toEqual({ code: 1, stdout: '', stderr: 'teamgames journal: --postgres needs the pg package: npm i pg\n' });
  });

  it('--mysql: the same (exit 1)', async () => {
    expect(await teamgames(['journal', 'windows', '--mysql', 'mysql://u@127.0.0.1:1/db'])).toEqual({ code: 1, stdout: '', stderr: 'teamgames journal: --mysql needs the mysql2 package: npm i mysql2\n' });
  });

  it('--file needs neither', async () => {
    const path = join(app, 'journal.jsonl');
    await writeFile(path, '');
    const r = await teamgames(['journal', 'status', '--json', '--file', path]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ journal: { kind: 'file', readable: true, lines: 0 }, pending: 0, openWindows: 0 });
  });
});
