/**
 * A second Unix user for the suites about files another local user could plant (issue #34
 * point 1): when the tests run as root (as CI does), the system user `tgtest` (created
 * once, without a home, if missing) whose uid and gid the suites chown planted files to;
 * otherwise `undefined`, and the suites that need it are skipped, saying
 * "skipped: needs root" in their title; with CI=true (CI runs as root) a skip is a failure.
 *
 * A process run as that user must not need to read the checkout: a clone may lie in a
 * directory only its owner may enter (a home at mode 0700, `mktemp -d`; issue #49), so
 * {@link teamgamesForSecondUser} bundles the `teamgames` command into a directory of its own
 * that the second user may read, with a Node that user may run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The second user's ids. */
export interface SecondUser {
  uid: number;
  gid: number;
}

const NAME = 'tgtest';

function ids(): SecondUser | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', NAME], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', NAME], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

let cached: SecondUser | undefined | null = null;

/** The second user when running as root (created on first call if missing); `undefined` otherwise. */
export function secondUser(): SecondUser | undefined {
  if (cached !== null) return cached;
  if (process.geteuid?.() !== 0) {
    if (process.env['CI'] === 'true' || process.env['CI'] === '1') throw new Error('the suites about another Unix user need root, and CI=true may not skip them: run CI as root');
    return (cached = undefined);
  }
  cached = ids();
  if (cached === undefined) {
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', NAME], { stdio: 'ignore' });
    } catch {
      // Another suite created it meanwhile, or useradd is missing: read again below.
    }
    cached = ids();
  }
  if (cached === undefined) throw new Error(`running as root, but the test user ${NAME} could not be created (useradd)`);
  return cached;
}

/** A suite title, with "(skipped: needs root)" when there is no second user. */
export function needsRoot(title: string, user: SecondUser | undefined): string {
  return user === undefined ? `${title} (skipped: needs root)` : title;
}

/** The `teamgames` command as the second user can run it: `node` and the bundled `script`. */
export interface CommandForSecondUser {
  /** A Node binary the second user may run. */
  node: string;
  /** The bundled `teamgames` command (src/cli/index.ts), readable by anyone. */
  script: string;
  /** Removes the directory the bundle (and a copied Node) were written to. */
  remove(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Whether `user` may run `node` (an empty script, exit 0). */
function mayRun(node: string, user: SecondUser): boolean {
  const tried = spawnSync(node, ['-e', ''], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return tried.error === undefined && tried.status === 0;
}

/**
 * The `teamgames` command for the second user, from wherever the checkout lies: the sources
 * bundled with esbuild (dependencies inside; the database drivers and msw left out, as
 * the command loads them only for --postgres, --mysql and the mock) into a fresh directory of mode 0755 under the system's temp directory, and
 * this Node, or a copy of it there when it lies where that user cannot reach it (a private
 * home, npx's cache under /root for CI's Node 22 and 24).
 */
export async function teamgamesForSecondUser(user: SecondUser): Promise<CommandForSecondUser> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-second-user-'));
  await chmod(dir, 0o755);
  const script = join(dir, 'teamgames.mjs');
  await writeFile(join(dir, 'package.json'), '{"type":"module"}', { mode: 0o644 });
  await build({
    entryPoints: [join(ROOT, 'src/cli/index.ts')],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['msw', 'pg', 'mysql2'],
    // A CommonJS module bundled into ESM still calls require for Node's built-ins.
    banner: { js: "import { createRequire as __teamgamesRequire } from 'node:module'; const require = __teamgamesRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  await chmod(script, 0o644);
  let node = process.execPath;
  if (!mayRun(node, user)) {
    node = join(dir, 'node');
    await copyFile(process.execPath, node);
    await chmod(node, 0o755);
  }
  return { node, script, remove: () => rm(dir, { recursive: true, force: true }) };
}
