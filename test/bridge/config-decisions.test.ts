/**
 * bridge.json's rules at their edges, in process (issue #46 point 1): every bound one inside
 * and one outside, which field names count as secrets (and where each is told to go), what
 * counts as a database URL, the defaults, the paths resolved beside the config, the count
 * of problems, and the file itself (its size bound, an unreadable one).
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Config from '../../src/bridge/config.js';
import type * as CommandLine from '../../src/common/command-line.js';

// Loaded afresh before each test: the schema, its bounds and patterns are module-level
// decisions, and a module loaded once before the tests would hide a change to them
// (StrykerJS's mutants of module-level code, issue #46). The error class with it, so that
// `toBeInstanceOf` compares with the same copy.
let checkBridgeConfig: typeof Config.checkBridgeConfig;
let readBridgeConfig: typeof Config.readBridgeConfig;
let UsageError: typeof CommandLine.UsageError;
beforeEach(async () => {
  vi.resetModules();
  ({ checkBridgeConfig, readBridgeConfig } = await import('../../src/bridge/config.js'));
  ({ UsageError } = await import('../../src/common/command-line.js'));
});

const URL_ = 'http://127.0.0.1:9000/teamgames';
const WEBHOOK = { webhook: { url: URL_ } };
const RCON = (extra: Record<string, unknown> = {}) => ({ rcon: { passwordEnv: 'RCON_PASSWORD', commands: { '*': ['say {player}'] }, ...extra } });

function problems(raw: unknown): string[] {
  let error: unknown;
  try {
    checkBridgeConfig(raw, '/srv/game');
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(UsageError);
  const [head, ...lines] = (error as Error).message.split('\n  ');
  expect(head).toBe(`the config has ${lines.length} problem${lines.length === 1 ? '' : 's'}:`);
  return lines;
}
const accepts = (raw: Record<string, unknown>) => checkBridgeConfig({ give: WEBHOOK, ...raw }, '/srv/game');

describe('the whole file', () => {
  it('must be a JSON object', () => {
    for (const raw of [null, [], 'text', 7]) expect(() => checkBridgeConfig(raw, '/srv')).toThrow(new UsageError('the config must be a JSON object'));
  });

  it('one problem is counted in the singular; an unknown field at the top is named alone', () => {
    expect(problems({ give: WEBHOOK, extra: 1 })).toEqual(['extra: unknown field']);
    expect(problems({ give: WEBHOOK, extra: 1, more: 2 })).toEqual(['extra: unknown field', 'more: unknown field']);
    // Named like a secret only whole (key, pwd…) or at its end for the long names (…token, …password): a monkey is no key.
    expect(problems({ give: { webhook: { url: URL_, monkey: 1, Apikey: 2 } } })).toEqual(['give.webhook.Apikey: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE', 'give.webhook.monkey: unknown field']);
    expect(problems({})).toEqual(['give: must be an object with "webhook" or "rcon"']);
  });
});

describe('bounds, one inside and one outside', () => {
  it('listen: a host that is not blank, a port from 0 to 65535', () => {
    expect(accepts({ listen: { port: 0 } }).listen).toEqual({ host: '127.0.0.1', port: 0 });
    expect(accepts({ listen: { host: '::1', port: 65_535 } }).listen).toEqual({ host: '::1', port: 65_535 });
    expect(problems({ give: WEBHOOK, listen: { host: '', port: -1 } })).toEqual(['listen.host: must not be blank', 'listen.port: must be an integer from 0 to 65535']);
    expect(problems({ give: WEBHOOK, listen: { host: 7, port: 65_536 } })).toEqual(['listen.host: must be a host name or address', 'listen.port: must be an integer from 0 to 65535']);
    expect(problems({ give: WEBHOOK, listen: { port: 1.5 } })).toEqual(['listen.port: must be an integer from 0 to 65535']);
    expect(problems({ give: WEBHOOK, listen: { port: '80' } })).toEqual(['listen.port: must be an integer from 0 to 65535']);
  });

  it('webhook: timeoutMs from 1 to 600000; an http(s) URL without credentials', () => {
    expect(accepts({ give: { webhook: { url: URL_, timeoutMs: 1 } } }).give.webhook?.timeoutMs).toBe(1);
    expect(accepts({ give: { webhook: { url: URL_, timeoutMs: 600_000 } } }).give.webhook?.timeoutMs).toBe(600_000);
    expect(problems({ give: { webhook: { url: URL_, timeoutMs: 0 } } })).toEqual(['give.webhook.timeoutMs: must be an integer from 1 to 600000']);
    expect(problems({ give: { webhook: { url: URL_, timeoutMs: 600_001 } } })).toEqual(['give.webhook.timeoutMs: must be an integer from 1 to 600000']);
    for (const url of ['http://user@127.0.0.1/x', 'http://:pw@127.0.0.1/x', 'ftp://127.0.0.1/x', 'file:///x', 'nothing', 7]) {
      expect(problems({ give: { webhook: { url } } })[0]).toMatch(/^give\.webhook\.url: must be an http or https URL/);
    }
    expect(accepts({ give: { webhook: { url: 'https://game.example/tg' } } }).give.webhook?.url).toBe('https://game.example/tg');
  });

  it('rcon: port 1 to 65535, timeoutMs 1 to 600000, intervalMs 1000 to 3600000, a host not blank', () => {
    const rcon = checkBridgeConfig({ give: RCON({ host: 'game', port: 1, timeoutMs: 1, players: { intervalMs: 1000 } }) }, '/srv').give.rcon;
    expect(rcon).toMatchObject({ host: 'game', port: 1, timeoutMs: 1, players: { source: 'game', intervalMs: 1000 } });
    expect(rcon?.players).not.toHaveProperty('listCommand');
    expect(checkBridgeConfig({ give: RCON({ players: { source: 'game' } }) }, '/srv').give.rcon?.players).toEqual({ source: 'game', intervalMs: 10_000 });
    expect(checkBridgeConfig({ give: RCON({ port: 65_535, timeoutMs: 600_000, players: { intervalMs: 3_600_000 } }) }, '/srv').give.rcon).toMatchObject({ port: 65_535, timeoutMs: 600_000, players: { intervalMs: 3_600_000 } });
    expect(problems({ give: RCON({ host: '', port: 65_536, timeoutMs: 600_001, players: { intervalMs: 3_600_001 } }) })).toEqual([
      'give.rcon.host: must not be blank',
      'give.rcon.port: must be an integer from 1 to 65535',
      'give.rcon.timeoutMs: must be an integer from 1 to 600000',
      'give.rcon.players.intervalMs: must be an integer from 1000 to 3600000',
    ]);
    expect(problems({ give: RCON({ host: 1, timeoutMs: 0, players: { intervalMs: 999, source: 'list', listCommand: '' } }) })).toEqual([
      'give.rcon.host: must be a host name or address',
      'give.rcon.timeoutMs: must be an integer from 1 to 600000',
      'give.rcon.players.listCommand: must not be empty',
      'give.rcon.players.listCommand: must be a non-empty string',
      'give.rcon.players.intervalMs: must be an integer from 1000 to 3600000',
    ]);
    // The player-list command is sent as written: it takes no placeholder, and says so.
    expect(problems({ give: RCON({ players: { source: 'list', listCommand: 'list {player}' } }) })).toEqual(['give.rcon.players.listCommand: has an unknown placeholder {player} (it takes none)']);
  });

  it('commands: ids of 1 to 64 characters without spaces or braces, or "*"; 1 to 20 commands of 1 to 1000 characters', () => {
    const ok = checkBridgeConfig({ give: RCON({ commands: { [`${'p'.repeat(64)}`]: Array.from({ length: 20 }, () => `say ${'x'.repeat(996)}`) } }) }, '/srv').give.rcon;
    expect(Object.keys(ok?.commands ?? {})).toEqual(['p'.repeat(64)]);
    expect(ok?.commands['p'.repeat(64)]).toHaveLength(20);
    expect(ok?.commands['p'.repeat(64)]?.[0]).toHaveLength(1000);
    const ids = problems({ give: RCON({ commands: { ['p'.repeat(65)]: ['say'], 'a{b': ['say'], 'a b': ['say'], '': ['say'] } }) });
    expect(ids).toEqual(['p'.repeat(65), 'a{b', 'a b', ''].map((id) => `give.rcon.commands.${id}: must be a product or reward id (1 to 64 characters, no spaces) or "*"`));
    expect(problems({ give: RCON({ commands: { '*': Array.from({ length: 21 }, () => 'say') } }) })).toEqual(['give.rcon.commands.*: must list at most 20 commands']);
    expect(problems({ give: RCON({ commands: { '*': [`say ${'x'.repeat(997)}`, ''] } }) })).toEqual(['give.rcon.commands.*.0: must be at most 1000 characters', 'give.rcon.commands.*.1: must not be empty', 'give.rcon.commands.*.1: must be a non-empty string']);
    expect(problems({ give: RCON({ commands: { '*': 'say' } }) })).toEqual(['give.rcon.commands.*: must be a list of commands']);
    expect(problems({ give: RCON({ commands: { '*': [7] } }) })).toEqual(['give.rcon.commands.*.0: must be a command (a string)']);
    expect(problems({ give: RCON({ commands: [] }) })).toEqual(['give.rcon.commands: must be an object: id → list of commands']);
  });

  it('reply patterns: at most 500 characters each, at most 100 per list', () => {
    const hundred = Array.from({ length: 100 }, () => 'x'.repeat(500));
    expect(checkBridgeConfig({ give: RCON({ replies: { done: hundred } }) }, '/srv').give.rcon?.replies?.done).toHaveLength(100);
    expect(problems({ give: RCON({ replies: { done: [...hundred, 'x'], absent: ['y'.repeat(501)], refused: 'x', unknown: [1] } }) })).toEqual([
      'give.rcon.replies.done: must list at most 100 patterns',
      'give.rcon.replies.absent.0: must be at most 500 characters',
      'give.rcon.replies.refused: must be a list of regular expressions',
      'give.rcon.replies.unknown.0: must be a regular expression (a string)',
    ]);
    expect(problems({ give: RCON({ replies: [] }) })[0]).toBe('give.rcon.replies: must be an object of reply patterns: done, absent, refused, unknown (lists), informative (true or false)');
    expect(problems({ give: RCON({ productReplies: [] }) })[0]).toBe('give.rcon.productReplies: must be an object: product id → reply patterns');
    expect(problems({ give: RCON({ productReplies: { ['p'.repeat(65)]: {} } }) })[0]).toBe(`give.rcon.productReplies.${'p'.repeat(65)}: must be a product id (1 to 64 characters, no spaces) or "*"`);
    expect(checkBridgeConfig({ give: RCON({ productReplies: { ['p'.repeat(64)]: {}, '*': {} } }) }, '/srv').give.rcon?.productReplies).toEqual({ ['p'.repeat(64)]: {}, '*': {} });
  });

  it('paths: not blank, at most 4096 characters, trimmed; environment variable names of letters, digits and _', () => {
    expect(accepts({ journal: { file: ` ${'f'.repeat(4096)} ` } }).journal).toEqual({ kind: 'file', path: `/srv/game/${'f'.repeat(4096)}` });
    expect(problems({ give: WEBHOOK, journal: { file: 'f'.repeat(4097) } })).toEqual(['journal.file: must be at most 4096 characters']);
    expect(problems({ give: WEBHOOK, journal: { file: '  ' } })).toEqual(['journal.file: must not be blank']);
    expect(accepts({ journal: { postgres: { urlEnv: '_DB_1' } } }).journal).toEqual({ kind: 'postgres', urlEnv: '_DB_1' });
    for (const name of ['1DB', 'DB-URL', 'DB URL', '', 'DB\n']) {
      expect(problems({ give: WEBHOOK, journal: { postgres: { urlEnv: name } } })).toEqual(['journal.postgres.urlEnv: must be the name of an environment variable (letters, digits, _)']);
    }
    expect(problems({ give: WEBHOOK, journal: { postgres: { urlEnv: 5 } } })).toEqual(['journal.postgres.urlEnv: must be the name of an environment variable']);
  });
});

describe('exactly one of', () => {
  it('the journal: file, postgres or mysql; its URL from a variable or a file, the file and table kept', () => {
    // toStrictEqual: a field the config did not set is absent, not undefined.
    expect(accepts({ journal: { mysql: { urlFile: 'db.url', table: 'tg' } } }).journal).toStrictEqual({ kind: 'mysql', urlFile: '/srv/game/db.url', table: 'tg' });
    expect(accepts({ journal: { postgres: { urlFile: '/etc/db.url' } } }).journal).toStrictEqual({ kind: 'postgres', urlFile: '/etc/db.url' });
    expect(accepts({ journal: { postgres: { urlEnv: 'DB' } } }).journal).toStrictEqual({ kind: 'postgres', urlEnv: 'DB' });
    expect(accepts({ journal: { file: 'j/x.jsonl' } }).journal).toStrictEqual({ kind: 'file', path: '/srv/game/j/x.jsonl' });
    expect(problems({ give: WEBHOOK, journal: {} })).toEqual(['journal: needs exactly one of "file", "postgres" or "mysql"']);
    expect(problems({ give: WEBHOOK, journal: { postgres: {}, mysql: { urlEnv: 'A' } } })).toEqual(['journal.postgres: needs exactly one of "urlEnv" (an environment variable holding the URL) or "urlFile" (a file holding it)', 'journal: needs exactly one of "file", "postgres" or "mysql"']);
  });

  it('a section that is null is named by its type, the rule across its fields not run', () => {
    expect(problems({ give: WEBHOOK, journal: { postgres: null } })).toEqual(['journal.postgres: Invalid input: expected object, received null']);
  });

  it('the sink: webhook or rcon; the RCON password from a variable or a file', () => {
    expect(problems({ give: {} })).toEqual(['give: needs exactly one of "webhook" or "rcon"']);
    expect(problems({ give: { ...WEBHOOK, ...RCON() } })).toEqual(['give: needs exactly one of "webhook" or "rcon"']);
    expect(problems({ give: { rcon: { commands: { '*': ['say'] } } } })).toEqual(['give.rcon: needs exactly one of "passwordEnv" (an environment variable holding the RCON password) or "passwordFile" (a file holding it)']);
    expect(checkBridgeConfig({ give: RCON() }, '/srv').give.rcon).toEqual({ host: '127.0.0.1', port: 25575, passwordEnv: 'RCON_PASSWORD', timeoutMs: 5000, commands: { '*': ['say {player}'] }, voteCommands: {}, players: { source: 'game', intervalMs: 10_000 }, game: 'minecraft' });
    expect(checkBridgeConfig({ give: { rcon: { passwordFile: '/run/pw', commands: { '*': ['say'] } } } }, '/srv').give.rcon?.passwordFile).toBe('/run/pw');
  });
});

describe('secrets in the config', () => {
  it('a field named like a secret is refused at any depth, told where to go; passwordEnv and passwordFile are not secrets', () => {
    expect(problems({ give: RCON(), apikey: 'a', api_key: 'b', KEY: 'c', myToken: 'd', passwd: 'e', pwd: 'f', Secret: 'g', clientSecret: 'h', dbPassword: 'i', deployApiKey: 'j' })).toEqual([
      'apikey: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE',
      'api_key: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE',
      'KEY: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE',
      'myToken: secrets are never read from the config file (nor the command line); set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE',
      'passwd: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'pwd: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'Secret: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'clientSecret: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'dbPassword: secrets are never read from the config file (nor the command line); keep it in an environment variable or a file',
      'deployApiKey: secrets are never read from the config file (nor the command line); set TEAMGAMES_API_KEY or TEAMGAMES_API_KEY_FILE',
    ]);
  });

  it('looks inside lists and past nulls: a database URL in a list is named at its index', () => {
    expect(problems({ give: WEBHOOK, log: { urls: ['postgres://db/g', 'x'] } })).toEqual(['log.urls.0: a database URL is never written in the config file; name an environment variable with "urlEnv" or a file with "urlFile"', 'log.urls: unknown field']);
    expect(problems({ give: WEBHOOK, baseUrl: null })).toEqual(['baseUrl: must be an http or https URL']);
  });

  it('names that only look close are not secrets (they are then unknown fields, or fine)', () => {
    expect(problems({ give: WEBHOOK, keys: 1, tokens: 2, passwordEnvs: 3, secretary: 4, keyboard: 5 })).toEqual(['keys: unknown field', 'tokens: unknown field', 'passwordEnvs: unknown field', 'secretary: unknown field', 'keyboard: unknown field']);
  });

  it('where a secret goes depends on where it sits: the journal names urlEnv/urlFile, the RCON section passwordEnv/passwordFile', () => {
    expect(problems({ give: WEBHOOK, journal: { postgres: { urlEnv: 'DB', password: 'x' } } })).toEqual(['journal.postgres.password: secrets are never read from the config file (nor the command line); name an environment variable with "urlEnv" or a file with "urlFile"']);
    expect(problems({ give: RCON({ token: 'x' }) })).toEqual(['give.rcon.token: secrets are never read from the config file (nor the command line); name an environment variable with "passwordEnv" or a file with "passwordFile"']);
    expect(problems({ give: { webhook: { url: URL_, token: 'x' } } })).toEqual(['give.webhook.token: secrets are never read from the config file (nor the command line); set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE']);
    // An "rcon" elsewhere than under give is not the RCON section.
    expect(problems({ give: WEBHOOK, listen: { rcon: { token: 'x' } } })).toEqual(['listen.rcon.token: secrets are never read from the config file (nor the command line); set TEAMGAMES_BRIDGE_TOKEN or TEAMGAMES_BRIDGE_TOKEN_FILE', 'listen.rcon: unknown field']);
  });

  it('a database URL in any string field is refused, whatever the engine name or case, leading blanks included; other URLs are not', () => {
    for (const url of ['postgres://u:p@db/g', 'postgresql://db/g', 'mysql://db/g', ' mariadb://db/g', 'POSTGRES://db/g']) {
      const lines = problems({ give: WEBHOOK, log: { note: url } });
      expect(lines).toEqual(['log.note: a database URL is never written in the config file; name an environment variable with "urlEnv" or a file with "urlFile"']);
      expect(lines.join('\n')).not.toContain('db/g');
    }
    expect(problems({ give: WEBHOOK, log: { note: 'see postgres://db' } })).toEqual(['log.note: unknown field']);
  });
});

describe('the rest', () => {
  it('the loop: each option checked by the SDK, each named; unknown ones refused', () => {
    expect(accepts({ loop: { pollIntervalMs: 10_000, maxCallsPerSecond: 1_000, claimMode: 'fast', staffAfterAttempts: 1, grantTimeoutMs: 1 } }).loop).toEqual({ pollIntervalMs: 10_000, maxCallsPerSecond: 1_000, claimMode: 'fast', staffAfterAttempts: 1, grantTimeoutMs: 1 });
    expect(problems({ give: WEBHOOK, loop: { maxCallsPerSecond: 0, staffAfterAttempts: 0, signal: 1 } })).toEqual([
      'loop.signal: unknown field',
      'loop.maxCallsPerSecond: must be an integer from 1 to 1,000, got 0',
      'loop.staffAfterAttempts: must be an integer from 1 to 1,000, got 0',
    ]);
  });

  it('baseUrl: the client\'s rule; log level: pino\'s names, info by default', () => {
    expect(accepts({ baseUrl: 'https://api.example' }).baseUrl).toBe('https://api.example');
    expect('baseUrl' in accepts({})).toBe(false);
    expect(problems({ give: WEBHOOK, baseUrl: 7 })).toEqual(['baseUrl: must be an http or https URL']);
    expect(accepts({ log: { level: 'silent' } }).log).toEqual({ level: 'silent' });
    expect(accepts({ log: {} }).log).toEqual({ level: 'info' });
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(accepts({ log: { level } }).log).toEqual({ level });
    expect(problems({ give: WEBHOOK, log: { level: 'INFO' } })).toEqual(['log.level: must be one of fatal, error, warn, info, debug, trace, silent']);
  });
});

describe('the file', () => {
  it('is read up to exactly 1 MiB; one it cannot open is named with its code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    const file = join(dir, 'bridge.json');
    const shell = JSON.stringify({ give: WEBHOOK });
    await writeFile(file, `${shell}${' '.repeat(1024 * 1024 - shell.length)}`);
    expect((await readBridgeConfig(file)).give.webhook?.url).toBe(URL_);
    await writeFile(file, `${shell}${' '.repeat(1024 * 1024 + 1 - shell.length)}`);
    await expect(readBridgeConfig(file)).rejects.toThrow(`--config: cannot read ${file} (1048577 bytes; a config is at most 1048576)`);
    await expect(readBridgeConfig(join(dir, 'none.json'))).rejects.toThrow(new UsageError(`--config: cannot read ${join(dir, 'none.json')} (ENOENT)`));
  });

  it.skipIf(!existsSync('/proc/self/fd'))('is closed after each read, a refused one included (no file descriptor left open)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    const good = join(dir, 'bridge.json');
    await writeFile(good, JSON.stringify({ give: WEBHOOK }));
    const big = join(dir, 'big.json');
    await writeFile(big, ' '.repeat(1024 * 1024 + 1));
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 5; i++) {
      await readBridgeConfig(good);
      await readBridgeConfig(big).catch(() => undefined);
    }
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });

  it('resolves relative paths against its own folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    await writeFile(join(dir, 'bridge.json'), JSON.stringify({ give: { rcon: { passwordFile: 'pw', commands: { '*': ['say'] } } }, journal: { file: 'j.jsonl' } }));
    const config = await readBridgeConfig(join(dir, 'bridge.json'));
    expect(config.journal).toEqual({ kind: 'file', path: join(dir, 'j.jsonl') });
    expect(config.give.rcon?.passwordFile).toBe(join(dir, 'pw'));
  });

  it('a JSON error on a later line is told by its line and column', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-config-'));
    const file = join(dir, 'bridge.json');
    await writeFile(file, '{\n  "give": {\n    "webhook": x\n  }\n}');
    await expect(readBridgeConfig(file)).rejects.toThrow(`--config: ${file} is not valid JSON: line 3, column 16: unexpected character`);
    await writeFile(file, '{"a": 1,\n"b": 2 "c"}');
    await expect(readBridgeConfig(file)).rejects.toThrow(`--config: ${file} is not valid JSON: line 2, column 8: expected ',' or '}' after property value`);
  });
});
