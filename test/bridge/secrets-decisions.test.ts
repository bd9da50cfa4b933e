/**
 * The bridge's secrets, in process (issue #46 point 1): the token's 32-character minimum at
 * 31 and 32, blanks trimmed and refused, where each secret is read from (a variable or a
 * file, and the names a problem is told under), every problem named in one run, and whose
 * file the bridge trusts (the bridge's own read refuses another user's; staff's does not).
 */
import { chmod, chown, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BridgeConfig } from '../../src/bridge/config.js';
import { readSecrets, withSecretProblems } from '../../src/bridge/secrets.js';
import { MIN_TOKEN_LENGTH, tokenOf } from '../../src/host/secrets.js';
import { UsageError } from '../../src/common/command-line.js';
import { needsRoot, secondUser } from '../support/second-user.js';

const KEY = 'key-of-the-store';
const TOKEN = 't'.repeat(32);
const webhook = { journal: { kind: 'file', path: '/srv/j' }, give: { webhook: {} } } as unknown as BridgeConfig;
const sql = (kind: 'postgres' | 'mysql', source: { urlEnv?: string; urlFile?: string }) => ({ journal: { kind, ...source }, give: { webhook: {} } }) as unknown as BridgeConfig;
const rcon = (source: { passwordEnv?: string; passwordFile?: string }) => ({ journal: { kind: 'file', path: '/srv/j' }, give: { rcon: source } }) as unknown as BridgeConfig;
const messageOf = async (work: Promise<unknown>) => {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as Error).message;
};

async function secretFile(text: string, mode = 0o600): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bridge-secret-'));
  const path = join(dir, 'secret');
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

describe('the token', () => {
  it('is at least 32 characters: 31 refused (the length said, never the value), 32 taken, both as a variable and from a file', async () => {
    expect(MIN_TOKEN_LENGTH).toBe(32);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN: 's'.repeat(31) }))).toBe('TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 31 (openssl rand -hex 32 makes one)');
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN: `  ${TOKEN}\t` })).toBe(TOKEN);
    const short = await secretFile(`${'s'.repeat(31)}\n`);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: short }))).toBe('TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 31 (openssl rand -hex 32 makes one)');
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: ` ${await secretFile(`\n${TOKEN}\n`)} ` })).toBe(TOKEN);
  });

  it('a blank variable falls back to the file; neither set, or both blank, is named with how to make one', async () => {
    const file = await secretFile(`${TOKEN}\n`);
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN: '   ', TEAMGAMES_BRIDGE_TOKEN_FILE: file })).toBe(TOKEN);
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN: 'u'.repeat(40), TEAMGAMES_BRIDGE_TOKEN_FILE: '/nowhere/at/all' })).toBe('u'.repeat(40));
    const unset = 'TEAMGAMES_BRIDGE_TOKEN is not set (the token the game sends on every request, at least 32 characters: openssl rand -hex 32; or TEAMGAMES_BRIDGE_TOKEN_FILE, a file holding it)';
    expect(await messageOf(tokenOf({}))).toBe(unset);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN: ' ', TEAMGAMES_BRIDGE_TOKEN_FILE: ' ' }))).toBe(unset);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: await secretFile('\n\n') }))).toBe(unset);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: '/nowhere/at/all' }))).toBe('TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read /nowhere/at/all (ENOENT)');
  });

  it('a file other users may read is refused even for staff (ownOnly); its group may read it', async () => {
    const file = await secretFile(`${TOKEN}\n`, 0o604);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: file }))).toBe(`TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read ${file} (other users may read or change it, mode 0604: chmod o-rwx ${file})`);
    await chmod(file, 0o640);
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: file })).toBe(TOKEN);
  });

  const other = secondUser();
  it.skipIf(other === undefined)(needsRoot("a file another user owns: refused to the bridge's own read, taken for staff's (`journal resolve --bridge`)", other), async () => {
    const file = await secretFile(`${TOKEN}\n`);
    await chown(file, other!.uid, other!.gid);
    expect(await tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: file })).toBe(TOKEN);
    expect(await messageOf(tokenOf({ TEAMGAMES_BRIDGE_TOKEN_FILE: file }, true))).toContain(`(owned by user ${other!.uid}, who may change it`);
    // With a config problem too: the bridge's own read, so the owner is named.
    const named = (await withSecretProblems(new UsageError('the config has 1 problem'), { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN_FILE: file })) as Error;
    expect(named.message).toContain(`and 1 secret is missing or bad:\n  TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read ${file} (owned by user ${other!.uid}`);
    const key = await secretFile('key-1\n');
    await chown(key, other!.uid, other!.gid);
    expect(await messageOf(readSecrets(webhook, { TEAMGAMES_API_KEY_FILE: key, TEAMGAMES_BRIDGE_TOKEN: TOKEN }))).toContain(`TEAMGAMES_API_KEY_FILE: cannot read ${key} (owned by user ${other!.uid}`);
    const url = await secretFile('postgres://db/game\n');
    await chown(url, other!.uid, other!.gid);
    expect(await messageOf(readSecrets(sql('postgres', { urlFile: url }), { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }))).toContain(`journal.postgres.urlFile: cannot read ${url} (owned by user ${other!.uid}`);
  });
});

describe('readSecrets', () => {
  it('reads the key and the token for a file journal and a webhook, and nothing more', async () => {
    // toStrictEqual: no databaseUrl or rconPassword key at all, not one holding undefined.
    expect(await readSecrets(webhook, { TEAMGAMES_API_KEY: ` ${KEY} `, TEAMGAMES_BRIDGE_TOKEN: TOKEN, DATABASE_URL: 'postgres://x', RCON: 'pw' })).toStrictEqual({ apiKey: KEY, token: TOKEN });
  });

  it('a missing key alone is its own message', async () => {
    expect(await messageOf(readSecrets(webhook, { TEAMGAMES_BRIDGE_TOKEN: TOKEN }))).toBe('TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)');
    expect(await messageOf(readSecrets(webhook, { TEAMGAMES_API_KEY: '  ', TEAMGAMES_BRIDGE_TOKEN: TOKEN }))).toMatch(/^TEAMGAMES_API_KEY is not set/);
  });

  it('the database URL from its variable (trimmed) or its file, each named under its field when missing', async () => {
    const env = { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN };
    expect(await readSecrets(sql('postgres', { urlEnv: 'DB' }), { ...env, DB: ' postgres://u:p@db/game\n' })).toEqual({ apiKey: KEY, token: TOKEN, databaseUrl: 'postgres://u:p@db/game' });
    expect(await readSecrets(sql('mysql', { urlFile: await secretFile('\nmysql://u:p@db/game\n') }), env)).toEqual({ apiKey: KEY, token: TOKEN, databaseUrl: 'mysql://u:p@db/game' });
    expect(await messageOf(readSecrets(sql('postgres', { urlEnv: 'DB' }), { ...env, DB: '  ' }))).toBe('journal.postgres.urlEnv: the environment variable DB is not set');
    expect(await messageOf(readSecrets(sql('mysql', { urlEnv: 'DB' }), env))).toBe('journal.mysql.urlEnv: the environment variable DB is not set');
    const empty = await secretFile(' \n');
    expect(await messageOf(readSecrets(sql('mysql', { urlFile: empty }), env))).toBe(`journal.mysql.urlFile: ${empty} holds nothing on its first line`);
    const open = await secretFile('postgres://db\n', 0o644);
    expect(await messageOf(readSecrets(sql('postgres', { urlFile: open }), env))).toBe(`journal.postgres.urlFile: cannot read ${open} (other users may read or change it, mode 0644: chmod o-rwx ${open})`);
  });

  it('the RCON password from its variable or its file, named under give.rcon', async () => {
    const env = { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN };
    expect(await readSecrets(rcon({ passwordEnv: 'RCON_PW' }), { ...env, RCON_PW: 'hunter2' })).toEqual({ apiKey: KEY, token: TOKEN, rconPassword: 'hunter2' });
    expect(await readSecrets(rcon({ passwordFile: await secretFile('hunter3\n') }), env)).toEqual({ apiKey: KEY, token: TOKEN, rconPassword: 'hunter3' });
    expect(await messageOf(readSecrets(rcon({ passwordEnv: 'RCON_PW' }), env))).toBe('give.rcon.passwordEnv: the environment variable RCON_PW is not set');
    const empty = await secretFile('');
    expect(await messageOf(readSecrets(rcon({ passwordFile: empty }), env))).toBe(`give.rcon.passwordFile: ${empty} holds nothing on its first line`);
  });

  it('every problem in one message, counted, one per line', async () => {
    expect(await messageOf(readSecrets(rcon({ passwordEnv: 'RCON_PW' }), { TEAMGAMES_BRIDGE_TOKEN: 'short' }))).toBe(
      '3 secrets are missing or bad:\n  TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)\n  TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 5 (openssl rand -hex 32 makes one)\n  give.rcon.passwordEnv: the environment variable RCON_PW is not set',
    );
  });
});

describe('withSecretProblems', () => {
  const configProblem = new UsageError('the config has 1 problem:\n  give: needs exactly one of "webhook" or "rcon"');

  it('adds the missing key and token to a config problem, counted', async () => {
    const both = (await withSecretProblems(configProblem, {})) as Error;
    expect(both).toBeInstanceOf(UsageError);
    expect(both.message).toBe(
      'the config has 1 problem:\n  give: needs exactly one of "webhook" or "rcon"\nand 2 secrets are missing or bad:\n  TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)\n  TEAMGAMES_BRIDGE_TOKEN is not set (the token the game sends on every request, at least 32 characters: openssl rand -hex 32; or TEAMGAMES_BRIDGE_TOKEN_FILE, a file holding it)',
    );
    const one = (await withSecretProblems(configProblem, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: 'short' })) as Error;
    expect(one.message).toBe('the config has 1 problem:\n  give: needs exactly one of "webhook" or "rcon"\nand 1 secret is missing or bad:\n  TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 5 (openssl rand -hex 32 makes one)');
  });

  it('keeps the config problem as it is when the secrets are fine, and any other error as it is', async () => {
    expect(await withSecretProblems(configProblem, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN })).toBe(configProblem);
    const other = new Error('EACCES');
    expect(await withSecretProblems(other, {})).toBe(other);
  });
});
