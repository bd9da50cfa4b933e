/**
 * The staff page's accounts: one line per staff member in a file the bridge reads at start
 * (`staff.accountsFile`), `name role scrypt$N$r$p$salt$hash`. The file is a secret like the
 * bridge's others: a regular file owned by the bridge's user (or root) that no other user
 * may read or change (mode 0600 or 0400), else the bridge refuses to start. Passwords are
 * kept as node:crypto scrypt hashes with a salt per account and compared with
 * `timingSafeEqual`; `teamgames bridge staff-hash <name> <role>` makes a line from a
 * password read on stdin.
 *
 * @module
 * @internal
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Stats } from 'node:fs';
import { UsageError } from '../../common/command-line.js';
import { readSmallFile } from '../../host/secrets.js';

/** What a staff member may do: look (`read`), or look and resolve windows (`resolve`). */
export type StaffRole = 'read' | 'resolve';

/** One account of the file. */
export interface StaffAccount {
  /** The name staff log in with, and that a resolution records (`by`). */
  name: string;
  role: StaffRole;
  /** The stored hash, `scrypt$N$r$p$salt$hash` (salt and hash base64url). */
  hash: string;
}

const ROLES: readonly StaffRole[] = ['read', 'resolve'];
/** A name: 1 to 64 letters, digits and `. _ - @ :` (it is the `by` of a resolution). */
const NAME = /^[A-Za-z0-9._@:-]{1,64}$/;
const HASH = /^scrypt\$(\d{1,7})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,128})\$([A-Za-z0-9_-]{32,256})$/;
/**
 * scrypt's cost for new hashes: N = 2^15, r = 8, p = 1, 32 MiB and some tens of ms per try
 * (below OWASP's 2^17 to bound the memory of a login on a small game host; the wrong-password
 * slowdown limits tries, and each hash carries its parameters, so they can be raised).
 */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const MAX_FILE_BYTES = 64 * 1024;
const MAX_PASSWORD_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  // OpenSSL needs 128·r·(N + 2) bytes for V and 128·r·p for B (twice that allowed): with a
  // small N and a large p, B is not negligible.
  const { N = 0, r = 0, p = 0 } = options;
  return new Promise((resolve, reject) => scryptCallback(password, salt, length, { ...options, maxmem: 256 * r * (N + 2 + p) }, (error, key) => (error === null ? resolve(key) : reject(error))));
}

/** Checks a staff name; returns the rule it breaks, if any. */
export function staffNameProblem(name: string): string | undefined {
  return NAME.test(name) ? undefined : 'must be 1 to 64 letters, digits or . _ - @ :';
}

/**
 * The hash of `password` to store, with a fresh random salt.
 * @throws UsageError for an empty or too long password.
 */
export async function hashPassword(password: string): Promise<string> {
  if (password.length === 0) throw new UsageError('the password is empty');
  if (password.length > MAX_PASSWORD_LENGTH) throw new UsageError(`the password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `password` matches `hash` (a hash this module made; any other answers false). The comparison takes the same time wherever the first difference is. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const m = HASH.exec(hash);
  if (m === null || password.length > MAX_PASSWORD_LENGTH) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // A hash the file holds with absurd parameters would cost minutes or gigabytes: refused.
  if (N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5] as string, 'base64url');
  let key: Buffer;
  try {
    key = await scrypt(password, Buffer.from(m[4] as string, 'base64url'), expected.length, { N, r, p });
  } catch (error) {
    // Parameters scrypt refuses (N not a power of 2, N too large for r, r or p of 0): no password matches.
    if ((error as { code?: unknown }).code === 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS') return false;
    throw error;
  }
  return timingSafeEqual(key, expected);
}

/** A hash no password matches, checked for an unknown account so that it costs the same as a known one. */
export const UNKNOWN_ACCOUNT_HASH = `scrypt$${COST.N}$${COST.r}$${COST.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LENGTH).toString('base64url')}`;

/**
 * The accounts of the file's text; lines empty or starting with `#` are skipped.
 * @throws UsageError naming every bad line (by number, never its hash).
 */
export function parseAccounts(text: string, where: string): Map<string, StaffAccount> {
  const accounts = new Map<string, StaffAccount>();
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const [name = '', role = '', hash = '', ...rest] = line.split(/\s+/);
    const at = `${where} line ${index + 1}`;
    if (rest.length > 0) problems.push(`${at}: must be "name role hash" (3 fields), got ${3 + rest.length}`);
    else if (staffNameProblem(name) !== undefined) problems.push(`${at}: the name ${staffNameProblem(name)}`);
    else if (!ROLES.includes(role as StaffRole)) problems.push(`${at}: the role must be "read" or "resolve"`);
    else if (!HASH.test(hash)) problems.push(`${at}: the hash must be a line made by teamgames bridge staff-hash (scrypt$N$r$p$salt$hash)`);
    else if (accounts.has(name)) problems.push(`${at}: the name ${name} is listed twice`);
    else accounts.set(name, { name, role: role as StaffRole, hash });
  });
  if (problems.length > 0) throw new UsageError(`staff.accountsFile has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`);
  if (accounts.size === 0) throw new UsageError(`staff.accountsFile: ${where} lists no account (make one with teamgames bridge staff-hash)`);
  return accounts;
}

/**
 * Reads the accounts file, refusing what another local user could read, plant or change:
 * not a regular file (a FIFO, a device, a link), owned by another user than this process's
 * or root, or with any permission for its group or others.
 * @throws UsageError saying why (never the file's content).
 */
export async function readAccounts(path: string): Promise<Map<string, StaffAccount>> {
  const check = (stat: Stats): string | undefined => {
    const uid = process.geteuid?.();
    if (uid !== undefined) {
      if (stat.uid !== uid && stat.uid !== 0) return `owned by user ${stat.uid}, not by this process's user (${uid}) or root: chown ${uid} ${path}`;
      if ((stat.mode & 0o077) !== 0) return `its group or other users may read or change it, mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}: chmod 600 ${path}`;
    }
    return stat.size > MAX_FILE_BYTES ? `larger than ${MAX_FILE_BYTES} bytes` : undefined;
  };
  const text = await readSmallFile(path, { refuse: (why) => new UsageError(`staff.accountsFile: cannot use ${path} (${why})`), maxBytes: MAX_FILE_BYTES, noFollow: true, check });
  return parseAccounts(text, path);
}
