/**
 * bridge.json checked as the client's options are: every wrong field named with its rule,
 * all at once; secrets refused with the place to put them instead, never echoed.
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Config from '../../src/bridge/config.js';
import type * as Template from '../../src/bridge/rcon/template.js';
import { exampleSeed } from '../../src/mock/service/example-seed.js';
import type * as Secrets from '../../src/bridge/secrets.js';
import type * as CommandLine from '../../src/common/command-line.js';
import { needsRoot, secondUser } from '../support/second-user.js';

// Loaded afresh before each test: the config's schema and the secrets' bounds are
// module-level decisions, and modules loaded once before the tests would hide a change to
// them (StrykerJS's mutants of module-level code, issue #46). The error class with them, so
// that `toBeInstanceOf` compares with the same copy.
let checkBridgeConfig: typeof Config.checkBridgeConfig;
let readBridgeConfig: typeof Config.readBridgeConfig;
let render: typeof Template.render;
let readSecrets: typeof Secrets.readSecrets;
let UsageError: typeof CommandLine.UsageError;
beforeEach(async () => {
  vi.resetModules();
  ({ checkBridgeConfig, readBridgeConfig } = await import('../../src/bridge/config.js'));
  ({ render } = await import('../../src/bridge/rcon/template.js'));
  ({ readSecrets } = await import('../../src/bridge/secrets.js'));
  ({ UsageError } = await import('../../src/common/command-line.js'));
});

const WEBHOOK = { webhook: { url: 'http://127.0.0.1:9000/teamgames' } };

function problems(raw: unknown): string {
  try {
    checkBridgeConfig(raw, '/srv/game');
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
}

describe('bridge.json', () => {
  it('fills the defaults: loopback, port 8787, a file journal beside the config, info logs', () => {
    expect(checkBridgeConfig({ give: WEBHOOK }, '/srv/game')).toEqual({
      listen: { host: '127.0.0.1', port: 8787 },
      journal: { kind: 'file', path: '/srv/game/.teamgames-journal.jsonl' },
      loop: {},
      give: { webhook: { url: 'http://127.0.0.1:9000/teamgames', timeoutMs: 10_000 } },
      log: { level: 'info' },
    });
  });

  it('names every wrong field with its rule, all at once', () => {
    const text = problems({
      listen: { port: 70_000, extra: true },
      baseUrl: 'ftp://store',
      journal: { file: 'a', mysql: { urlEnv: 'DB' } },
      loop: { pollIntervalMs: 5, claimMode: 'slow', give: 'x' },
      give: { webhook: { url: 'not a url', timeoutMs: 0 } },
      log: { level: 'loud' },
    });
    for (const line of [
      'listen.port: must be an integer from 0 to 65535',
      'listen.extra: unknown field',
      'baseUrl: must use https: (or http: for a loopback host), got ftp:',
      'journal: needs exactly one of "file", "postgres" or "mysql"',
      'loop.pollIntervalMs: must be an integer from 10,000 to 86,400,000',
      "loop.claimMode: must be 'exactlyOnce' (the default) or 'fast'",
      'loop.give: unknown field',
      'give.webhook.url: must be an http or https URL without credentials in it',
      'give.webhook.timeoutMs: must be an integer from 1 to 600000',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).toMatch(/^the config has 10 problems:/);
  });

  it('refuses secrets in the config, naming the field and where to put it, never the value', () => {
    const text = problems({
      apiKey: 'sk-live-SECRET-1',
      token: 'SECRET-2-bridge-token',
      journal: { postgres: { url: 'postgres://u:SECRET-3@db/game' } },
      give: { rcon: { password: 'SECRET-4', commands: { '12': ['give {player} diamond {quantity}'] } } },
    });
    expect(text).not.toMatch(/SECRET-\d/);
    expect(text).toContain('apiKey: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE');
    expect(text).toContain('token: secrets are never read from the config file (nor the command line); set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE');
    expect(text).toContain('journal.postgres.url: a database URL is never written in the config file; name an environment variable with "urlEnv" or a file with "urlFile"');
    expect(text).toContain('give.rcon.password: secrets are never read from the config file (nor the command line); name an environment variable with "passwordEnv" or a file with "passwordFile"');
    expect(text).toContain('give.rcon: needs exactly one of "passwordEnv"');
  });

  it('a file that is not JSON is refused without quoting it (a secret could sit there)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    await writeFile(join(dir, 'bridge.json'), '{"apiKey": "SECRET-5" oops}');
    await expect(readBridgeConfig(join(dir, 'bridge.json'))).rejects.toThrow(/^--config: .*bridge\.json is not valid JSON: line 1, column 23: expected ',' or '}' after property value$/);
    await expect(readBridgeConfig(join(dir, 'bridge.json'))).rejects.not.toThrow(/SECRET/);
  });

  it.skipIf(process.platform === 'win32')('a config that is not a regular file (a FIFO would hang the start), or too large, is refused at once; a byte order mark is not a mistake', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    const fifo = join(dir, 'bridge.json');
    execFileSync('mkfifo', [fifo]);
    await expect(readBridgeConfig(fifo)).rejects.toThrow(`--config: cannot read ${fifo} (not a regular file)`);
    await expect(readBridgeConfig(dir)).rejects.toThrow(`--config: cannot read ${dir} (not a regular file)`);
    const big = join(dir, 'big.json');
    await writeFile(big, `{"give":{"webhook":{"url":"http://127.0.0.1:9/x"}},"x":"${'a'.repeat(1024 * 1024)}"}`);
    await expect(readBridgeConfig(big)).rejects.toThrow(/^--config: cannot read .*big\.json \(\d+ bytes; a config is at most 1048576\)$/);
    const bom = join(dir, 'bom.json');
    await writeFile(bom, `\uFEFF${JSON.stringify({ give: WEBHOOK })}`);
    expect((await readBridgeConfig(bom)).give.webhook).toEqual({ url: 'http://127.0.0.1:9000/teamgames', timeoutMs: 10_000 });
  });

  it.each([
    ['a missing comma', '{\n  "listen": { "port": 8787 }\n  "give": {}\n}', "line 3, column 3: expected ',' or '}' after property value"],
    ['a trailing comma', '{\n  "give": {},\n}', 'line 3, column 1: expected double-quoted property name'],
    ['a word JSON does not know (V8 says no position, and quotes the text)', '{\n  "token": "SECRET-6",\n  "log": { "level": tru }\n}', 'line 3, column 24: unexpected character'],
    ['a file cut short', '{\n  "give": {', 'line 2, column 12: expected property name or \'}\''],
    ['an empty file', '', 'line 1, column 1: the text ends too early'],
  ])('a JSON syntax error names its line and column, never the text: %s', async (_, text, where) => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    const file = join(dir, 'bridge.json');
    await writeFile(file, text);
    const error = (await readBridgeConfig(file).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(`--config: ${file} is not valid JSON: ${where}`);
  });

  it('checks the RCON section: ids, templates and their placeholders, the players source', () => {
    const text = problems({
      give: {
        rcon: {
          passwordEnv: 'RCON_PASSWORD',
          port: 0,
          commands: { '12': [], 'a b': ['say hi'], '7': ['give {player} {nope}', 'say\nop {player}'] },
          voteCommands: { '1': ['give {player} emerald {quantity}'] },
          players: { source: 'guess', intervalMs: 10 },
        },
      },
    });
    expect(text).toContain('give.rcon.port: must be an integer from 1 to 65535');
    expect(text).toContain('give.rcon.commands.12: must list at least one command');
    expect(text).toContain('give.rcon.commands.a b: must be a product or reward id');
    expect(text).toContain('give.rcon.commands.7.0: has an unknown placeholder {nope} (known: {player}, {quantity}, {productId}, {productName}, {deliveryId})');
    expect(text).toContain('give.rcon.commands.7.1: must not contain control characters (a newline would send a second command)');
    expect(text).toContain('give.rcon.voteCommands.1.0: has an unknown placeholder {quantity} (known: {player}, {amount}, {rewardId}, {rewardName}, {deliveryId})');
    expect(text).toContain('give.rcon.players.source: must be "game"');
    expect(text).toContain('give.rcon.players.intervalMs: must be an integer from 1000 to 3600000');
  });

  it("accepts the guide's tellraw template (JSON braces written twice), and refuses a brace left alone as the sink would", () => {
    const tellraw = 'tellraw {player} {{"text":"Thanks for buying {productName}!","color":"gold"}}';
    const config = checkBridgeConfig({ give: { rcon: { passwordEnv: 'RCON_PASSWORD', commands: { '*': [tellraw] } } } }, '/srv/game');
    expect(config.give.rcon?.commands).toEqual({ '*': [tellraw] });
    const text = problems({ give: { rcon: { passwordEnv: 'RCON_PASSWORD', commands: { '*': ['give {player} diamond {quantity', 'tellraw {player} {"text":"hi"}'] } } } });
    expect(text).toContain('give.rcon.commands.*.0: has a brace that is not part of a placeholder (write a literal brace twice: {{ or }})');
    expect(text).toContain('give.rcon.commands.*.1: has an unknown placeholder {"text":"hi"}');
  });

  it('names every mistake in one run, also the rules across fields of an object where a field has the wrong type', () => {
    const text = problems({
      journal: { file: 5, postgres: { urlEnv: 'DB', urlFile: 'db.url', table: 7 } },
      give: { webhook: { url: 'x', timeoutMs: 'slow' }, rcon: { port: 'x', passwordEnv: 'A', passwordFile: 'b', commands: { '*': ['give {player} {nope}'] } } },
    });
    for (const line of [
      'journal.file: must be a file path (a string)',
      'journal.postgres.table: must be a table name',
      'journal.postgres: needs exactly one of "urlEnv"',
      'journal: needs exactly one of "file", "postgres" or "mysql"',
      'give.webhook.url: must be an http or https URL',
      'give.webhook.timeoutMs: must be an integer from 1 to 600000',
      'give.rcon.port: must be an integer from 1 to 65535',
      'give.rcon: needs exactly one of "passwordEnv"',
      'give.rcon.commands.*.0: has an unknown placeholder {nope}',
      'give: needs exactly one of "webhook" or "rcon"',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).toMatch(/^the config has 10 problems:/);
  });

  it('a plain-http webhook on another host is refused (the token would cross the network in clear) unless allowPlainHttp says the network is yours', () => {
    for (const url of ['http://game.example:9000/teamgames', 'http://10.0.0.5/tg', 'http://[fd00::1]/tg']) {
      expect(problems({ give: { webhook: { url } } })).toContain(`give.webhook.url: is plain http to another host (${new URL(url).hostname}): the bridge's token would cross the network in clear; use https, or set "allowPlainHttp": true when that network is yours alone`);
    }
    for (const url of ['http://127.0.0.1:9000/tg', 'http://127.1.2.3/tg', 'http://localhost:9000/tg', 'http://[::1]:9000/tg', 'https://game.example/tg']) {
      expect(checkBridgeConfig({ give: { webhook: { url } } }, '/srv/game').give.webhook).toEqual({ url, timeoutMs: 10_000 });
    }
    expect(checkBridgeConfig({ give: { webhook: { url: 'http://10.0.0.5/tg', allowPlainHttp: true } } }, '/srv/game').give.webhook).toEqual({ url: 'http://10.0.0.5/tg', timeoutMs: 10_000, allowPlainHttp: true });
    expect(problems({ give: { webhook: { url: 'http://10.0.0.5/tg', allowPlainHttp: 'yes' } } })).toContain('give.webhook.allowPlainHttp: must be true or false');
  });

  it("the guide's RCON example passes the check, its products and reward are the demo Survival store's, and its tellraw renders as JSON text", async () => {
    const guide = await readFile(new URL('../../docs/bridge.md', import.meta.url), 'utf8');
    const section = guide.slice(guide.indexOf('## RCON: no code in the game'));
    const example = /^```json\n([\s\S]*?)^```$/m.exec(section)?.[1] as string;
    const rcon = checkBridgeConfig(JSON.parse(`{${example}}`), '/srv/game').give.rcon!;
    const store = exampleSeed.servers.find((s) => s.name === 'Demo Survival')!;
    for (const id of Object.keys(rcon.commands).filter((k) => k !== '*')) expect((store.products ?? []).map((p) => String(p.productId))).toContain(id);
    for (const id of Object.keys(rcon.voteCommands)) expect((store.rewards ?? []).map((r) => String(r.id))).toContain(id);
    expect(render(rcon.commands['minecraft:diamond']!, { player: 'Steve', quantity: '64', productId: 'minecraft:diamond', productName: '64 Diamonds', deliveryId: 'invoice:1' })).toEqual({ commands: ['give Steve minecraft:diamond 64'] });
    const vip = render(rcon.commands['kit_vip']!, { player: 'Steve', quantity: '1', productId: 'kit_vip', productName: 'VIP kit', deliveryId: 'invoice:2' });
    expect(vip).toEqual({ commands: ['give Steve iron_chestplate 1', 'tellraw Steve {"text":"Thanks for buying VIP kit!","color":"gold"}'] });
    expect(JSON.parse(((vip as { commands: string[] }).commands[1] as string).slice('tellraw Steve '.length))).toEqual({ text: 'Thanks for buying VIP kit!', color: 'gold' });
  });

  it('an RCON section as the plan shows it, its password file resolved beside the config', () => {
    const config = checkBridgeConfig(
      { give: { rcon: { passwordFile: 'rcon.secret', commands: { '12': ['give {player} diamond {quantity}'], '*': ['say {player} bought {productName}'] }, players: { source: 'list' } } }, journal: { mysql: { urlEnv: 'DATABASE_URL', table: 'tg' } } },
      '/srv/game',
    );
    expect(config.give.rcon).toEqual({
      host: '127.0.0.1',
      port: 25575,
      passwordFile: '/srv/game/rcon.secret',
      timeoutMs: 5000,
      commands: { '12': ['give {player} diamond {quantity}'], '*': ['say {player} bought {productName}'] },
      voteCommands: {},
      players: { source: 'list', intervalMs: 10_000 },
      game: 'minecraft',
    });
    expect(config.journal).toEqual({ kind: 'mysql', urlEnv: 'DATABASE_URL', table: 'tg' });
  });

  it('RCON reply settings: a game preset, patterns for the game and per product, the online check; each mistake named', () => {
    const config = checkBridgeConfig(
      {
        give: {
          rcon: {
            passwordEnv: 'RCON_PASSWORD',
            game: 'ark',
            commands: { '*': ['GiveItemToPlayer {player} 1 {quantity} 0 0'] },
            replies: { done: ['^Done$'], informative: true },
            productReplies: { '12': { refused: ['^Nope'], absent: ['^Gone'] } },
            checkOnline: false,
          },
        },
      },
      '/srv/game',
    );
    expect(config.give.rcon).toMatchObject({ game: 'ark', replies: { done: ['^Done$'], informative: true }, productReplies: { '12': { refused: ['^Nope'], absent: ['^Gone'] } }, checkOnline: false });
    let text = '';
    try {
      checkBridgeConfig({ give: { rcon: { passwordEnv: 'P', commands: { '*': ['x'] }, game: 'quake', replies: { done: ['(unclosed'], maybe: [] }, productReplies: { 'a b': {}, '7': { informative: 'no' } }, checkOnline: 1 } } }, '/srv');
    } catch (error) {
      text = (error as Error).message;
    }
    expect(text).toContain('give.rcon.game: must be one of minecraft, source, ark, custom');
    expect(text).toMatch(/give\.rcon\.replies\.done\.0: is not a valid regular expression/);
    expect(text).toContain('give.rcon.replies.maybe: unknown field');
    expect(text).toContain('give.rcon.productReplies.a b: must be a product id');
    expect(text).toContain('give.rcon.productReplies.7.informative: must be true or false');
    expect(text).toContain('give.rcon.checkOnline: must be true or false');
  });
});

describe('the secrets', () => {
  // Built when a test asks, not while the suite is collected: StrykerJS counts code run at
  // collection as static and then misjudges its mutants (#46).
  const config = () => checkBridgeConfig({ give: WEBHOOK, journal: { postgres: { urlEnv: 'DATABASE_URL' } } }, '/srv/game');

  it('names every missing or bad secret at once, never a value', async () => {
    const error = (await readSecrets(config(), { TEAMGAMES_BRIDGE_TOKEN: 'short-SECRET' }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain('TEAMGAMES_API_KEY is not set');
    expect(error.message).toContain('TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 12');
    expect(error.message).toContain('journal.postgres.urlEnv: the environment variable DATABASE_URL is not set');
    expect(error.message).not.toContain('SECRET');
  });

  it('reads the key, the token (or its file) and the database URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-secrets-'));
    await writeFile(join(dir, 'token'), `${'t'.repeat(40)}\n`, { mode: 0o600 });
    const secrets = await readSecrets(config(), { TEAMGAMES_API_KEY: 'key-1', TEAMGAMES_BRIDGE_TOKEN_FILE: join(dir, 'token'), DATABASE_URL: 'postgres://u:p@db/game' });
    expect(secrets).toEqual({ apiKey: 'key-1', token: 't'.repeat(40), databaseUrl: 'postgres://u:p@db/game' });
  });

  it.skipIf(process.platform === 'win32')('a token file other users may read is refused (another local user would call the API as the game); its group may read it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-secrets-'));
    const path = join(dir, 'token');
    await writeFile(path, `${'t'.repeat(40)}\n`);
    await chmod(path, 0o644);
    const error = await readSecrets(config(), { TEAMGAMES_API_KEY: 'key-1', TEAMGAMES_BRIDGE_TOKEN_FILE: path, DATABASE_URL: 'postgres://db/game' }).catch((e: Error) => e);
    expect((error as Error).message).toBe(`TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read ${path} (other users may read or change it, mode 0644: chmod o-rwx ${path})`);
    expect((error as Error).message).not.toContain('tttt');
    await chmod(path, 0o640);
    expect((await readSecrets(config(), { TEAMGAMES_API_KEY: 'key-1', TEAMGAMES_BRIDGE_TOKEN_FILE: path, DATABASE_URL: 'postgres://db/game' })).token).toBe('t'.repeat(40));
  });

  const other = secondUser();
  it.skipIf(process.platform === 'win32')('a token file its group may change (0660) is refused like 0644: the group could plant its own token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-secrets-'));
    const path = join(dir, 'token');
    await writeFile(path, `${'t'.repeat(40)}\n`);
    await chmod(path, 0o660);
    const error = await readSecrets(config(), { TEAMGAMES_API_KEY: 'key-1', TEAMGAMES_BRIDGE_TOKEN_FILE: path, DATABASE_URL: 'postgres://db/game' }).catch((e: Error) => e);
    expect((error as Error).message).toBe(`TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read ${path} (its group may change it, mode 0660: chmod g-w ${path})`);
  });

  it.skipIf(other === undefined || process.platform === 'win32')(needsRoot('a secret file owned by another user (0600 or 0640) is refused: that user may change it', other), async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-secrets-'));
    const token = join(dir, 'token');
    const key = join(dir, 'key');
    await writeFile(token, `${'t'.repeat(40)}\n`, { mode: 0o600 });
    await writeFile(key, 'key-1\n', { mode: 0o640 });
    await chown(token, other!.uid, other!.gid);
    await chown(key, other!.uid, other!.gid);
    const me = process.geteuid!();
    const error = await readSecrets(config(), { TEAMGAMES_API_KEY_FILE: key, TEAMGAMES_BRIDGE_TOKEN_FILE: token, DATABASE_URL: 'postgres://db/game' }).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `2 secrets are missing or bad:\n  TEAMGAMES_API_KEY_FILE: cannot read ${key} (owned by user ${other!.uid}, who may change it, not by this process's user (${me}) or root: chown ${me} ${key})\n  TEAMGAMES_BRIDGE_TOKEN_FILE: cannot read ${token} (owned by user ${other!.uid}, who may change it, not by this process's user (${me}) or root: chown ${me} ${token})`,
    );
    // Root's own file, readable by the bridge's group, is the systemd recipe: accepted.
    await chown(token, 0, other!.gid);
    await chown(key, 0, other!.gid);
    expect(await readSecrets(config(), { TEAMGAMES_API_KEY_FILE: key, TEAMGAMES_BRIDGE_TOKEN_FILE: token, DATABASE_URL: 'postgres://db/game' })).toMatchObject({ apiKey: 'key-1', token: 't'.repeat(40) });
  });
});
