/**
 * Who may log in, at the edges: the password's length bounds, the scrypt parameters a hash
 * line may carry (checked against node:crypto itself), the name and field rules of a line,
 * and the accounts file's owner, mode, size and kind, with the exact reason the bridge gives.
 */
import { scrypt as scryptCallback, type ScryptOptions } from 'node:crypto';
import { chmod, chown, mkdtemp, readdir, readlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Accounts from '../../../src/bridge/staff-page/accounts.js';

let hashPassword: typeof Accounts.hashPassword;
let parseAccounts: typeof Accounts.parseAccounts;
let readAccounts: typeof Accounts.readAccounts;
let verifyPassword: typeof Accounts.verifyPassword;

// Loaded afresh for each test: the name and hash patterns, the roles and the file's size
// bound are module-level constants, which a module loaded once before any test would hide
// from every test here (StrykerJS's mutants of module-level code; issue #46).
beforeEach(async () => {
  vi.resetModules();
  ({ hashPassword, parseAccounts, readAccounts, verifyPassword } = await import('../../../src/bridge/staff-page/accounts.js'));
});

const ROOT = process.geteuid?.() === 0;
const LINUX = process.platform === 'linux';

afterEach(() => {
  vi.restoreAllMocks();
});

const SALT = Buffer.from('0123456789abcdef');
function key(password: string, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(password, SALT, 32, { ...options, maxmem: 2 ** 30 }, (error, k) => (error === null ? resolve(k) : reject(error))));
}
/** A hash line made with node:crypto directly, with the given parameters. */
async function lineHash(password: string, N: number, r: number, p: number): Promise<string> {
  return `scrypt$${N}$${r}$${p}$${SALT.toString('base64url')}$${(await key(password, { N, r, p })).toString('base64url')}`;
}

async function messageOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  return '(no error)';
}

describe('password hashes at their bounds', () => {
  it('hashes and verifies a password of exactly 1024 characters; one more is refused both ways', async () => {
    const longest = 'p'.repeat(1024);
    const hash = await hashPassword(longest);
    expect(await verifyPassword(longest, hash)).toBe(true);
    expect(await messageOf(() => hashPassword(`${longest}p`))).toBe('the password must be at most 1024 characters');
    // A line made elsewhere from a longer password is refused without hashing it.
    expect(await verifyPassword(`${longest}p`, await lineHash(`${longest}p`, 1024, 1, 1))).toBe(false);
    expect(await messageOf(() => hashPassword(''))).toBe('the password is empty');
  });

  it('makes hashes with N = 2^15, r = 8, p = 1 as node:crypto computes them', async () => {
    const hash = await hashPassword('a long enough password');
    const [, N, r, p, salt, stored] = hash.split('$');
    expect([N, r, p]).toEqual(['32768', '8', '1']);
    const expected = await new Promise<Buffer>((resolve, reject) =>
      scryptCallback('a long enough password', Buffer.from(salt as string, 'base64url'), 32, { N: 32768, r: 8, p: 1, maxmem: 2 ** 26 }, (e, k) => (e === null ? resolve(k) : reject(e))),
    );
    expect(stored).toBe(expected.toString('base64url'));
  });

  it('verifies a line with other parameters by those parameters', async () => {
    expect(await verifyPassword('right', await lineHash('right', 1024, 4, 2))).toBe(true);
    expect(await verifyPassword('wrong', await lineHash('right', 1024, 4, 2))).toBe(false);
  });

  it('checks a hash with r = 32 or p = 16, and refuses r = 33 or p = 17 even when the password is right', async () => {
    expect(await verifyPassword('pw', await lineHash('pw', 2, 32, 1))).toBe(true);
    expect(await verifyPassword('pw', await lineHash('pw', 2, 1, 16))).toBe(true);
    expect(await verifyPassword('pw', await lineHash('pw', 2, 33, 1))).toBe(false);
    expect(await verifyPassword('pw', await lineHash('pw', 2, 1, 17))).toBe(false);
  });

  it('answers false, not an error, for a line whose parameters scrypt refuses (a login is a 401, not a 500)', async () => {
    const tail = `${SALT.toString('base64url')}$${'A'.repeat(43)}`;
    expect(await verifyPassword('pw', `scrypt$1000$8$1$${tail}`)).toBe(false);
    expect(await verifyPassword('pw', `scrypt$0$8$1$${tail}`)).toBe(false);
    expect(await verifyPassword('pw', `scrypt$1024$0$1$${tail}`)).toBe(false);
    expect(await verifyPassword('pw', `scrypt$65536$1$1$${tail}`)).toBe(false);
  });

  it('throws what scrypt reports through its callback (a failure while hashing, not a refused parameter), never a false or a key', async () => {
    // Parameters scrypt refuses are refused before it starts (the test above); a failure of
    // the hashing itself (OpenSSL out of memory) comes back through the callback instead.
    vi.resetModules();
    vi.doMock('node:crypto', async (original) => ({
      ...(await original<typeof import('node:crypto')>()),
      scrypt: (...args: unknown[]) => {
        const done = args.at(-1) as (error: Error | null, key?: Buffer) => void;
        setImmediate(() => done(Object.assign(new Error('scrypt: memory allocation failed'), { code: 'ERR_CRYPTO_OPERATION_FAILED' })));
      },
    }));
    try {
      const fresh = await import('../../../src/bridge/staff-page/accounts.js');
      await expect(fresh.verifyPassword('pw', await lineHash('pw', 1024, 1, 1))).rejects.toThrow('scrypt: memory allocation failed');
      await expect(fresh.hashPassword('pw')).rejects.toThrow('scrypt: memory allocation failed');
    } finally {
      vi.doUnmock('node:crypto');
    }
  });

  it('checks a hash with N = 2^20 (the highest allowed)', async () => {
    expect(await verifyPassword('pw', await lineHash('pw', 2 ** 20, 2, 1))).toBe(true);
  }, 30_000);

  it('refuses a hash with N = 2^21 even when the password is right, without hashing it', async () => {
    expect(await verifyPassword('pw', await lineHash('pw', 2 ** 21, 2, 1))).toBe(false);
  }, 30_000);
});

describe('the lines of the accounts file', () => {
  const hash = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

  it('takes fields separated by any run of blanks, around blanks, and CRLF lines', () => {
    const accounts = parseAccounts(`  alice \t resolve    ${hash}  \r\n\tbob read ${hash}\r\n`, 'f');
    expect([...accounts.values()]).toEqual([
      { name: 'alice', role: 'resolve', hash },
      { name: 'bob', role: 'read', hash },
    ]);
  });

  it('names a bad name (one problem: "problem", not "problems")', async () => {
    expect(await messageOf(() => parseAccounts(`al!ce read ${hash}\n`, 'staff-accounts'))).toBe(
      'staff.accountsFile has 1 problem:\n  staff-accounts line 1: the name must be 1 to 64 letters, digits or . _ - @ :',
    );
    expect(await messageOf(() => parseAccounts(`${'a'.repeat(65)} read ${hash}\nbob read\n`, 'f'))).toBe(
      'staff.accountsFile has 2 problems:\n  f line 1: the name must be 1 to 64 letters, digits or . _ - @ :\n  f line 2: the hash must be a line made by teamgames bridge staff-hash (scrypt$N$r$p$salt$hash)',
    );
    expect([...parseAccounts(`${'a'.repeat(64)} read ${hash}\nx.y_z-1@h:2 read ${hash}\n`, 'f').keys()]).toEqual(['a'.repeat(64), 'x.y_z-1@h:2']);
    expect(await messageOf(() => parseAccounts('# nobody\n', 'f'))).toBe('staff.accountsFile: f lists no account (make one with teamgames bridge staff-hash)');
  });

  it('takes a hash only whole: nothing before "scrypt$" nor after the key', async () => {
    const refused = 'staff.accountsFile has 1 problem:\n  f line 1: the hash must be a line made by teamgames bridge staff-hash (scrypt$N$r$p$salt$hash)';
    expect(await messageOf(() => parseAccounts(`bob read x${hash}\n`, 'f'))).toBe(refused);
    expect(await messageOf(() => parseAccounts(`bob read ${hash}!\n`, 'f'))).toBe(refused);
    expect(await verifyPassword('x', `x${hash}`)).toBe(false);
  });

  it("checks an unknown name's password against a hash of the same form and cost as a real one (the same time)", async () => {
    const { UNKNOWN_ACCOUNT_HASH } = await import('../../../src/bridge/staff-page/accounts.js');
    const real = (await hashPassword('x')).split('$');
    const unknown = UNKNOWN_ACCOUNT_HASH.split('$');
    expect(unknown.slice(0, 4)).toEqual(real.slice(0, 4));
    expect(unknown.map((part) => part.length)).toEqual(real.map((part) => part.length));
    expect(parseAccounts(`nobody read ${UNKNOWN_ACCOUNT_HASH}\n`, 'f').get('nobody')?.hash).toBe(UNKNOWN_ACCOUNT_HASH);
  });
});

describe('the accounts file on disk', () => {
  const line = 'alice resolve scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n';
  async function accountsFile(text: string, mode = 0o600): Promise<string> {
    const path = join(await mkdtemp(join(tmpdir(), 'staff-rules-')), 'staff-accounts');
    await writeFile(path, text, { mode });
    await chmod(path, mode);
    return path;
  }

  it('is read up to 64 KiB; one byte more is refused', async () => {
    const padded = (size: number) => `${line}${'#'.repeat(size - line.length - 1)}\n`;
    const full = await accountsFile(padded(64 * 1024));
    expect([...(await readAccounts(full)).keys()]).toEqual(['alice']);
    const over = await accountsFile(padded(64 * 1024 + 1));
    expect(await messageOf(() => readAccounts(over))).toBe(`staff.accountsFile: cannot use ${over} (larger than 65536 bytes)`);
  });

  it('says exactly why a link or a missing file is refused', async () => {
    const missing = join(tmpdir(), 'no-such-staff-file');
    expect(await messageOf(() => readAccounts(missing))).toBe(`staff.accountsFile: cannot use ${missing} (ENOENT)`);
  });

  it.runIf(ROOT)("is read when root owns it though the bridge runs as another user (root could change it anyway), refused when a third user owns it", async () => {
    vi.spyOn(process, 'geteuid').mockReturnValue(1000);
    const rootOwned = await accountsFile(line);
    expect([...(await readAccounts(rootOwned)).keys()]).toEqual(['alice']);
    const own = await accountsFile(line);
    await chown(own, 1000, 1000);
    expect([...(await readAccounts(own)).keys()]).toEqual(['alice']);
    const planted = await accountsFile(line);
    await chown(planted, 65534, 65534);
    expect(await messageOf(() => readAccounts(planted))).toBe(`staff.accountsFile: cannot use ${planted} (owned by user 65534, not by this process's user (1000) or root: chown 1000 ${planted})`);
  });

  it('is read whatever its owner and mode where the system has no user ids (Windows)', async () => {
    const open = await accountsFile(line, 0o644);
    const original = Object.getOwnPropertyDescriptor(process, 'geteuid') as PropertyDescriptor;
    Object.defineProperty(process, 'geteuid', { value: undefined, configurable: true, writable: true });
    try {
      expect([...(await readAccounts(open)).keys()]).toEqual(['alice']);
    } finally {
      Object.defineProperty(process, 'geteuid', original);
    }
  });

  it.runIf(LINUX && ROOT)('names the error of a file that cannot be read (EIO), never as a bare system error', async () => {
    expect(await messageOf(() => readAccounts('/proc/self/mem'))).toBe('staff.accountsFile: cannot use /proc/self/mem (EIO)');
  });

  it.runIf(LINUX)('closes the file it opened, read or refused', async () => {
    const good = await accountsFile(line);
    const open = await accountsFile(line, 0o640);
    const over = await accountsFile('#'.repeat(70_000));
    for (let i = 0; i < 3; i++) {
      await readAccounts(good);
      await readAccounts(open).catch(() => undefined);
      await readAccounts(over).catch(() => undefined);
    }
    const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    expect(targets.filter((t) => t === good || t === open || t === over)).toEqual([]);
  });
});
