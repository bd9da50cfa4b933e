/**
 * `teamgames bridge` with `give.rcon`, assembled as the command assembles it (config file,
 * secrets from the environment, file journal, the HTTP API) over the in-process mock and
 * the test RCON server: a player typing `/claim` gets the purchase by its command, once;
 * a command lost mid-way leaves a window for staff (the next bridge on the same journal
 * shows it in the player's status) and is never sent again.
 */
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { FileJournal, inspectJournal } from '../../src/index.js';
import { KEY, fetchInStep, inProcessStore } from '../support/reliability.js';
import { TestRconServer } from '../support/rcon-server.js';

const TOKEN = 'rcon-bridge-token-0123456789abcdef01234567';
const { mock } = inProcessStore();
const running: Array<{ stop(): Promise<void> } | { close(): Promise<void> }> = [];
// The loop spaces one player's calls by the service's 10 s on its timers: faked, flowing
// with real time (for the sockets' own timers) and moved ahead by the tests.
beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'], shouldAdvanceTime: true }));
afterEach(async () => {
  vi.useRealTimers();
  for (const r of running.splice(0).reverse()) await ('stop' in r ? r.stop() : r.close());
  mock.reset();
});

async function bridgeOn(server: TestRconServer, dir: string, logLines?: Array<Record<string, unknown>>, password: { passwordEnv: string } | { passwordFile: string } = { passwordEnv: 'RCON_PASSWORD' }): Promise<RunningBridge> {
  const config = join(dir, 'bridge.json');
  await writeFile(
    config,
    JSON.stringify({
      listen: { port: 0 },
      journal: { file: 'journal.jsonl' },
      loop: { claimMode: 'fast' },
      give: { rcon: { host: '127.0.0.1', port: server.port, ...password, timeoutMs: 600_000, commands: { '42': ['give {player} whip {quantity}'] } } },
      log: { level: logLines === undefined ? 'silent' : 'info' },
    }),
  );
  const env = { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, RCON_PASSWORD: server.password };
  const logDestination = logLines === undefined ? {} : { logDestination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) } };
  const bridge = await startBridge(config, { env, fetch: fetchInStep(mock), ...logDestination });
  running.push(bridge);
  return bridge;
}

async function call(bridge: RunningBridge, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${bridge.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/**
 * (The RCON reply timeout is long: the faked timers jump a second at a time, and a drop is
 * seen when the connection closes.)
 *
 * The player joins (the loop previews the purchase at once) and types /claim, answered by
 * that run's claim one service window later: the loop's timers (and with them the mock's
 * clock) move ahead until it answers.
 */
async function joinAndClaim(bridge: RunningBridge, player: string, quantity: number): Promise<Record<string, unknown>> {
  mock.addPurchase(KEY, { playerName: player, id: 1, quantity });
  expect((await call(bridge, 'PUT', '/v1/online', { players: [player] })).status).toBe(200);
  let answer: { status: number; json: Record<string, unknown> } | undefined;
  const claimed = call(bridge, 'POST', '/v1/claim', { player }).then((a) => (answer = a));
  // The mock's clock follows the fake one (fetchInStep).
  for (let waited = 0; answer === undefined && waited < 60_000; waited += 1_000) await vi.advanceTimersByTimeAsync(1_000);
  await claimed;
  expect(answer?.status).toBe(200);
  return answer!.json;
}

describe('teamgames bridge over RCON', () => {
  it('a purchase reaches the game by its command once, and nothing is left in the journal', async () => {
    const server = await TestRconServer.start();
    running.push(server);
    server.online = ['Steve'];
    const dir = await mkdtemp(join(tmpdir(), 'rcon-bridge-'));
    const bridge = await bridgeOn(server, dir);
    const claimed = await joinAndClaim(bridge, 'Steve', 2);
    expect(claimed).toMatchObject({ code: 'SUCCESS', granted: 1 });
    // Online checked on the connection the command then went on.
    expect(server.commands).toEqual(['list', 'give Steve whip 2']);
    await bridge.stop();
    const journal = new FileJournal(join(dir, 'journal.jsonl'));
    expect((await inspectJournal(journal)).pending).toEqual([]);
    await journal.close();
  });

  it('a command lost mid-way: a window naming it for staff, never sent again, also by the next bridge', async () => {
    const server = await TestRconServer.start();
    running.push(server);
    server.online = ['Alex'];
    server.answer = (command) => (command === 'list' ? server.listReply : { drop: true });
    const dir = await mkdtemp(join(tmpdir(), 'rcon-bridge-'));
    const first = await bridgeOn(server, dir);
    await joinAndClaim(first, 'Alex', 1);
    expect(server.commands).toEqual(['list', 'give Alex whip 1']);
    expect(mock.purchases(KEY, 'Alex').map((p) => p.deliverystatus)).toEqual(['Delivered']);
    await first.stop();
    server.answer = (command) => server.minecraft(command);
    const second = await bridgeOn(server, dir);
    expect((await call(second, 'PUT', '/v1/online', { players: ['Alex'] })).status).toBe(200);
    const status = await call(second, 'GET', '/v1/players/Alex/status');
    expect(status.json['openWindows']).toEqual([expect.objectContaining({ cause: 'unknownCommand', command: 'give Alex whip 1' })]);
    await second.stop();
    expect(server.commands).toEqual(['list', 'give Alex whip 1']);
  });

  it('a window is a window everywhere: never "given" in the report, the logs or the counts; /v1/health, the metrics and the logs show it, also after a restart', async () => {
    const server = await TestRconServer.start();
    running.push(server);
    server.online = ['Alex'];
    server.answer = (command) => (command === 'list' ? server.listReply : { drop: true });
    const dir = await mkdtemp(join(tmpdir(), 'rcon-bridge-'));
    const lines: Array<Record<string, unknown>> = [];
    const first = await bridgeOn(server, dir, lines);
    const claimed = await joinAndClaim(first, 'Alex', 1);
    expect(claimed).toMatchObject({ code: 'PARTIAL', granted: 0, pending: 0, message: expect.stringContaining('staff can check it') });
    const messages = lines.map((l) => l['msg']);
    expect(messages).not.toContain('item given');
    expect(lines.filter((l) => l['msg'] === 'delivery').map((l) => [l['code'], l['granted']])).not.toContainEqual(['SUCCESS', 1]);
    const errors = lines.filter((l) => l['level'] === 'error').map((l) => l['msg']);
    expect(errors).toEqual(
      expect.arrayContaining([
        'RCON command outcome unknown; a window for staff, never sent again',
        'item NOT confirmed given: its outcome is unknown, a window for staff (teamgames journal windows); never given again',
        'unverified window: items may have been claimed without being given; staff must check (teamgames journal windows)',
      ]),
    );
    const health = await call(first, 'GET', '/v1/health');
    expect(health.json).toMatchObject({ unverified: 1, openWindows: 1 });
    const metrics = await (await fetch(`${first.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(metrics).toMatch(/^teamgames_bridge_unverified_total 1$/m);
    expect(metrics).toMatch(/^teamgames_bridge_open_windows 1$/m);
    expect(metrics).toMatch(/^teamgames_bridge_gives_total\{kind="purchase",outcome="unverified"\} 1$/m);
    expect(metrics).not.toMatch(/outcome="given"/);
    expect(metrics).toMatch(/^teamgames_bridge_granted_total 0$/m);
    await first.stop();

    // After a restart: an error at start naming the window, and /v1/health and the gauge still count it.
    const after: Array<Record<string, unknown>> = [];
    const second = await bridgeOn(server, dir, after);
    const atStart = after.find((l) => l['level'] === 'error');
    expect(atStart).toMatchObject({ msg: 'the journal holds unverified windows staff have not resolved: items that may not have reached their players (teamgames journal windows)', openWindows: 1, windows: [expect.objectContaining({ player: 'Alex', cause: 'unknownCommand', command: 'give Alex whip 1' })] });
    expect((await call(second, 'GET', '/v1/health')).json).toMatchObject({ openWindows: 1 });
    const again = await (await fetch(`${second.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(again).toMatch(/^teamgames_bridge_open_windows 1$/m);
    await second.stop();
  });

  it('the RCON password from its file is read again at each login by the secrets\' rules: a rotated file is used once the game restarts and redacted from the answers; a file its group may change is refused, saying why', async () => {
    const server = await TestRconServer.start();
    running.push(server);
    server.online = ['Steve', 'Alex'];
    const dir = await mkdtemp(join(tmpdir(), 'rcon-bridge-'));
    const file = join(dir, 'rcon-password');
    await writeFile(file, `${server.password}\n`, { mode: 0o600 });
    const lines: Array<Record<string, unknown>> = [];
    const bridge = await bridgeOn(server, dir, lines, { passwordFile: 'rcon-password' });
    expect(await joinAndClaim(bridge, 'Steve', 1)).toMatchObject({ code: 'SUCCESS', granted: 1 });

    // The game's password changes, its file with it, and the game restarts.
    const rotated = 'Rotated-rcon-pass-42';
    server.password = rotated;
    await writeFile(file, `${rotated}\n`);
    server.dropAll();
    expect(await joinAndClaim(bridge, 'Alex', 1)).toMatchObject({ code: 'SUCCESS', granted: 1 });
    expect(server.logins).toEqual({ ok: 2, failed: 0 });
    expect(server.commands).toEqual(['list', 'give Steve whip 1', 'list', 'give Alex whip 1']);
    // Known to the redaction from the login on: an answer that would quote it does not.
    const status = await fetch(`${bridge.url}/v1/players/${rotated}/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await status.text();
    expect(text).not.toContain(rotated);
    expect(JSON.parse(text)).toMatchObject({ playerName: '<redacted>' });

    // A file its group may change could hold a password planted by them: refused at the next login.
    await chmod(file, 0o620);
    server.dropAll();
    expect(await joinAndClaim(bridge, 'Steve', 1)).toMatchObject({ granted: 0, pending: 1 });
    expect(server.logins).toEqual({ ok: 2, failed: 0 });
    expect(JSON.stringify(lines)).toContain(`give.rcon.passwordFile: cannot read ${file} (its group may change it, mode 0620: chmod g-w ${file})`);
    expect(JSON.stringify(lines)).not.toContain(rotated);
  });
});
