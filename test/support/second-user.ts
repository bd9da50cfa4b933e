/**
 * A second Unix user for the suites about files another local user could plant (issue #34
 * point 1): when the tests run as root (as CI does), the system user `tgtest` (created
 * once, without a home, if missing) whose uid and gid the suites chown planted files to;
 * otherwise `undefined`, and the suites that need it are skipped, saying
 * "skipped: needs root" in their title.
 */
import { execFileSync } from 'node:child_process';

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
  if (process.geteuid?.() !== 0) return (cached = undefined);
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
