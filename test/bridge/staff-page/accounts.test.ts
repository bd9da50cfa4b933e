/**
 * The staff accounts: `teamgames bridge staff-hash` makes a line from a password on stdin,
 * the bridge reads the file only when nobody else could read or change it, hashes are
 * scrypt with a salt each, and a bridge with a `staff` section serves the page and the
 * accounts' logins.
 */
import { chmod, chown, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import { startBridge, type RunningBridge } from '../../../src/bridge/bridge.js';
import { parseAccounts, readAccounts, verifyPassword } from '../../../src/bridge/staff-page/accounts.js';
import { BRIDGE_USAGE, runBridgeCommand } from '../../../src/bridge/command.js';
import { stream } from '../../support/cli.js';
import { KEY, storeSeed } from '../../support/fixtures.js';

const TOKEN = 'staff-token-0123456789abcdef0123456789ab';
const ROOT = process.geteuid?.() === 0;

async function staffHash(args: string[], input: string) {
  const out = { stdout: '', stderr: '' };
  const io = { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false };
  const code = await runBridgeCommand(['staff-hash', ...args], io, {}, { stdin: Readable.from([input]) });
  return { code, ...out };
}

async function accountsFile(text: string, mode = 0o600): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'staff-accounts-'));
  const path = join(dir, 'staff-accounts');
  await writeFile(path, text, { mode });
  await chmod(path, mode);
  return path;
}

describe('teamgames bridge staff-hash', () => {
  it('prints "name role hash" for the password on the first line of stdin; the hash verifies it, a salt each', async () => {
    const one = await staffHash(['alice', 'resolve'], 'a long enough password\nignored line\n');
    expect(one).toMatchObject({ code: 0, stderr: '' });
    const [name, role, hash] = one.stdout.trim().split(' ');
    expect([name, role]).toEqual(['alice', 'resolve']);
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('a long enough password', hash as string)).toBe(true);
    expect(await verifyPassword('a long enough passwore', hash as string)).toBe(false);
    expect(one.stdout).not.toContain('a long enough password');
    const two = await staffHash(['alice', 'resolve'], 'a long enough password');
    expect(two.stdout).not.toBe(one.stdout);
    expect(parseAccounts(`${one.stdout}# comment\n\n${(await staffHash(['rita', 'read'], 'another good password')).stdout}`, 'f')).toEqual(
      new Map([
        ['alice', { name: 'alice', role: 'resolve', hash }],
        ['rita', { name: 'rita', role: 'read', hash: expect.stringMatching(/^scrypt\$/) }],
      ]),
    );
  });

  it('says how to use it with --help, and teamgames bridge --help names it', async () => {
    const help = await staffHash(['--help'], '');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: teamgames bridge staff-hash <name> <read\|resolve>/);
    expect(help.stdout).toContain("printf '%s\\n' \"$pw\" | teamgames bridge staff-hash alice resolve >> staff-accounts");
    expect(BRIDGE_USAGE).toContain('teamgames bridge staff-hash <name> <read|resolve>');
  });

  it('refuses a short password, a bad name or role, and a missing argument (exit 2)', async () => {
    expect(await staffHash(['alice', 'resolve'], 'short\n')).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('at least 12 characters') });
    expect(await staffHash(['al ice', 'resolve'], 'a long enough password')).toMatchObject({ code: 2, stderr: expect.stringContaining('the name must be 1 to 64') });
    expect(await staffHash(['alice', 'admin'], 'a long enough password')).toMatchObject({ code: 2, stderr: expect.stringContaining('the role must be "read" or "resolve"') });
    expect(await staffHash(['alice'], 'a long enough password')).toMatchObject({ code: 2, stderr: expect.stringContaining('give the name and the role') });
  });
});

describe('the accounts file', () => {
  const line = 'alice resolve scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n';

  it('is read when it is a regular file of this user, mode 0600', async () => {
    expect([...(await readAccounts(await accountsFile(line))).keys()]).toEqual(['alice']);
  });

  it('is refused when its group or others may read it, when it is a link, a directory or missing, never showing its content', async () => {
    const open = await accountsFile(line, 0o640);
    await expect(readAccounts(open)).rejects.toThrow(`staff.accountsFile: cannot use ${open} (its group or other users may read or change it, mode 0640: chmod 600 ${open})`);
    const link = `${open}.link`;
    await symlink(await accountsFile(line), link);
    await expect(readAccounts(link)).rejects.toThrow('a symbolic link: name the file itself');
    await expect(readAccounts(tmpdir())).rejects.toThrow('not a regular file');
    await expect(readAccounts(join(tmpdir(), 'no-such-staff-file'))).rejects.toThrow('(ENOENT)');
    await expect(readAccounts(open)).rejects.not.toThrow(/scrypt/);
  });

  it.runIf(ROOT)('is refused when another user owns it (another local user could have planted it)', async () => {
    const planted = await accountsFile(line);
    await chown(planted, 65534, 65534);
    await expect(readAccounts(planted)).rejects.toThrow(`owned by user 65534, not by this process's user (0) or root`);
  });

  it('names every bad line by number, never its hash', async () => {
    const text = `${line}bob admin scrypt$1$1$1$x$y\ncarol read not-a-hash\n${line}dave read a b c\n`;
    let message = '';
    try {
      parseAccounts(text, 'staff-accounts');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'staff.accountsFile has 4 problems:\n  staff-accounts line 2: the role must be "read" or "resolve"\n  staff-accounts line 3: the hash must be a line made by teamgames bridge staff-hash (scrypt$N$r$p$salt$hash)\n  staff-accounts line 4: the name alice is listed twice\n  staff-accounts line 5: must be "name role hash" (3 fields), got 5',
    );
    expect(() => parseAccounts('# nobody\n', 'f')).toThrow('lists no account');
  });
});

describe('a bridge with a staff section', () => {
  let bridge: RunningBridge | undefined;
  afterEach(async () => {
    await bridge?.stop();
    bridge = undefined;
  });

  it('serves the page on its own loopback port; an accounts file others may read stops the start', async () => {
    const mock = createMockService({ seed: storeSeed });
    const { stdout } = await staffHash(['alice', 'resolve'], 'alice-password-long');
    const accounts = await accountsFile(stdout);
    const dir = await mkdtemp(join(tmpdir(), 'staff-bridge-'));
    const config = join(dir, 'bridge.json');
    const write = (file: string) => writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: 'http://127.0.0.1:9', journal: { file: 'journal.jsonl' }, give: { webhook: { url: 'http://127.0.0.1:9/x' } }, log: { level: 'silent' }, staff: { listen: { port: 0 }, accountsFile: file } }));
    await write(accounts);
    bridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: mock.fetch });
    expect(bridge.staffUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(bridge.staffUrl).not.toBe(bridge.url);
    const login = await fetch(`${bridge.staffUrl}/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=alice&password=alice-password-long' });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') as string).split(';')[0] as string;
    const health = await fetch(`${bridge.staffUrl}/health`, { headers: { cookie } });
    expect(health.status).toBe(200);
    expect(await health.text()).toContain('Game (webhook http://127.0.0.1:9/x)');
    // The game's API does not serve the page, nor the page the API.
    expect((await fetch(`${bridge.url}/health`)).status).toBe(401);
    expect((await fetch(`${bridge.staffUrl}/v1/health`, { headers: { cookie } })).status).toBe(404);
    await bridge.stop();
    bridge = undefined;

    await chmod(accounts, 0o644);
    await expect(startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: mock.fetch })).rejects.toThrow('mode 0644: chmod 600');
  });
});
