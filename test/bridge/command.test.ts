/**
 * `teamgames bridge` run in process as the bin runs it: a config full of mistakes or a
 * missing secret is a usage error (exit 2) listing every problem without any value; a
 * journal that cannot be opened fails the start (exit 1); a stop ends with exit 0.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTeamgames } from '../../src/cli/program.js';
import { runBridgeCommand } from '../../src/bridge/command.js';
import type { RunningBridge } from '../../src/bridge/bridge.js';
import { ROUTES } from '../../src/bridge/http/index.js';
// `teamgames bridge` loads the bridge on first use; here it is loaded with the suite, so that
// StrykerJS counts the module-level constants (bridge.json's schema) as static (left out,
// ignoreStatic) rather than as covered only by whichever test started a bridge first.
import '../../src/bridge/bridge.js';
import { stream } from '../support/cli.js';

const TOKEN = 'command-token-0123456789abcdef0123456789';

async function run(argv: string[], env: Record<string, string>) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, env);
  return { code, ...out };
}

async function configFile(config: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bridge-command-'));
  const path = join(dir, 'bridge.json');
  await writeFile(path, JSON.stringify(config));
  return path;
}

describe('teamgames bridge, in process', () => {
  it("--help lists the HTTP API from the route table: every route, each on its line, and nothing else", async () => {
    const r = await run(['bridge', '--help'], {});
    expect(r.code).toBe(0);
    const section = (r.stdout.split('HTTP API (')[1] ?? '').split('\n\n')[0] as string;
    const lines = section.split('\n').slice(1);
    expect(lines).toHaveLength(ROUTES.length);
    ROUTES.forEach((route, i) => expect(lines[i]).toMatch(new RegExp(`^  ${route.method} ${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`)));
    // The bodies as their schemas say: fields, an array, an optional field.
    expect(lines).toContain('  PUT /v1/online {"players":[…]}');
    expect(lines).toContain('  POST /v1/vote {"player","reward","amount"}');
    expect(lines).toContain('  POST /v1/windows/resolve {"player"?,"windowId"?,"by","note"}');
  });

  it('a config full of mistakes: exit 2, every problem on its own line, no secret echoed', async () => {
    const path = await configFile({ listen: { port: -1 }, key: 'SECRET-key', give: { webhook: { url: 'http://u:SECRET-pw@127.0.0.1/x' } }, log: { level: 'chatty' } });
    const r = await run(['bridge', '--config', path], { TEAMGAMES_API_KEY: 'k', TEAMGAMES_BRIDGE_TOKEN: TOKEN });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('teamgames bridge: the config has 4 problems:\n');
    expect(r.stderr).toContain('\n  key: secrets are never read from the config file');
    expect(r.stderr).toContain('\n  listen.port: must be an integer from 0 to 65535');
    expect(r.stderr).toContain('\n  give.webhook.url: must be an http or https URL without credentials in it');
    expect(r.stderr).toContain('\n  log.level: must be one of');
    expect(r.stderr).not.toContain('SECRET');
  });

  it('a missing or short token: exit 2, its length said, never its value', async () => {
    const path = await configFile({ give: { webhook: { url: 'http://127.0.0.1:9/x' } } });
    const r = await run(['bridge', '--config', path], { TEAMGAMES_API_KEY: 'k', TEAMGAMES_BRIDGE_TOKEN: 'SECRET-short' });
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 12') });
    expect(r.stderr).not.toContain('SECRET');
  });

  it("the client's own rules are usage errors too, in the config's words (exit 2)", async () => {
    const path = await configFile({ give: { webhook: { url: 'http://127.0.0.1:9/x' } }, journal: { file: join(await mkdtemp(join(tmpdir(), 'bridge-command-')), 'j.jsonl') } });
    const r = await run(['bridge', '--config', path], { TEAMGAMES_API_KEY: 'command-test-key-5f2a9c', TEAMGAMES_BRIDGE_TOKEN: TOKEN, TEAMGAMES_BASE_URL: 'http://store.example' });
    expect(r).toMatchObject({ code: 2, stderr: expect.stringMatching(/^teamgames bridge: baseUrl \(or TEAMGAMES_BASE_URL\): plain http: is only allowed for loopback hosts/) });
  });

  it('a config with mistakes and missing secrets: all named in one run, the client\'s baseUrl rule among them', async () => {
    const path = await configFile({ baseUrl: 'http://store.example', listen: { port: -1 }, give: { webhook: { url: 'http://127.0.0.1:9/x' } } });
    const r = await run(['bridge', '--config', path], { TEAMGAMES_BRIDGE_TOKEN: 'SECRET-short' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        'teamgames bridge: the config has 2 problems:',
        '  listen.port: must be an integer from 0 to 65535',
        '  baseUrl: plain http: is only allowed for loopback hosts (localhost, 127.0.0.1, [::1]); use https: for store.example',
        'and 2 secrets are missing or bad:',
        '  TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)',
        '  TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 12 (openssl rand -hex 32 makes one)',
        '(see teamgames bridge --help)',
        '',
      ].join('\n'),
    );
  });

  it('a journal that cannot be opened fails the start (exit 1), saying why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-command-'));
    await mkdir(join(dir, 'journal.jsonl'));
    const path = await configFile({ listen: { port: 0 }, baseUrl: 'http://127.0.0.1:9', journal: { file: join(dir, 'journal.jsonl') }, give: { webhook: { url: 'http://127.0.0.1:9/x' } }, log: { level: 'silent' } });
    const r = await run(['bridge', '--config', path], { TEAMGAMES_API_KEY: 'k', TEAMGAMES_BRIDGE_TOKEN: TOKEN });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^teamgames bridge: .*journal\.jsonl/);
  });

  it('runs until asked to stop, then exits 0 with the HTTP API closed; one banner line; a warning off loopback', async () => {
    const path = await configFile({ listen: { host: '0.0.0.0', port: 0 }, baseUrl: 'http://127.0.0.1:9', journal: { file: 'journal.jsonl' }, give: { webhook: { url: 'http://127.0.0.1:9/x' } } });
    const lines: Array<{ level: string; msg: string }> = [];
    const logDestination = { write: (line: string) => void lines.push(JSON.parse(line) as { level: string; msg: string }) };
    let stop!: () => void;
    let started: RunningBridge | undefined;
    const io = { stdout: stream(() => {}), stderr: stream(() => {}), interactive: false, confirm: async () => false };
    const done = runBridgeCommand(['--config', path], io, { TEAMGAMES_API_KEY: 'command-test-key-5f2a9c', TEAMGAMES_BRIDGE_TOKEN: TOKEN }, { stopSignal: new Promise<void>((ok) => (stop = ok)), onStarted: (b) => (started = b), logDestination });
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined(); // a real start: more than poll's default second on a loaded machine
    const health = await fetch(`${started!.url}/v1/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(health.status).toBe(200);
    stop();
    expect(await done).toBe(0);
    await expect(fetch(`${started!.url}/v1/health`)).rejects.toThrow();
    const banners = lines.filter((l) => l.msg.startsWith('teamgames bridge '));
    expect(banners).toHaveLength(1);
    expect(banners[0]!.msg).toMatch(/^teamgames bridge \S+: HTTP API on http:\/\/0\.0\.0\.0:\d+, items to webhook http:\/\/127\.0\.0\.1:9\/x, journal file \/.*journal\.jsonl, store http:\/\/127\.0\.0\.1:9$/);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringContaining('not loopback') }));
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
  });
});
