/**
 * The staff page wired into a running bridge: what the bridge gives (through its webhook)
 * shows in the page's last gives, and the store's answers in its health, as the game's
 * HTTP API drives the loop.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import { startBridge, type RunningBridge } from '../../../src/bridge/bridge.js';
import { runBridgeCommand } from '../../../src/bridge/command.js';
import { stream } from '../../support/cli.js';
import { KEY, storeSeed } from '../../support/fixtures.js';

const TOKEN = 'staff-bridge-token-0123456789abcdef012345';
const mock = createMockService({ seed: storeSeed });
const running: Array<RunningBridge | Server> = [];

// The loop spaces one player's calls by the service's 10 s on its timers: faked, flowing
// with real time (for the sockets) and moved ahead by the test.
beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'], shouldAdvanceTime: true }));
afterEach(async () => {
  vi.useRealTimers();
  for (const r of running.splice(0).reverse()) {
    if ('stop' in r) await r.stop();
    else {
      r.closeAllConnections();
      await new Promise((ok) => r.close(ok));
    }
  }
  mock.reset();
});

async function line(name: string, role: string, password: string): Promise<string> {
  let out = '';
  const io = { stdout: stream((t) => (out += t)), stderr: stream(() => undefined), interactive: false, confirm: async () => false };
  expect(await runBridgeCommand(['staff-hash', name, role], io, {}, { stdin: Readable.from([password]) })).toBe(0);
  return out;
}

describe('a bridge with a staff page', () => {
  it("shows what the bridge gave in the page's last gives, and the store up on its health page", { timeout: 30_000 }, async () => {
    const game = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((ok) => game.listen(0, '127.0.0.1', ok));
    running.push(game);
    const dir = await mkdtemp(join(tmpdir(), 'staff-bridge-'));
    await writeFile(join(dir, 'staff-accounts'), await line('alice', 'read', 'alice-password-long'), { mode: 0o600 });
    await writeFile(
      join(dir, 'bridge.json'),
      JSON.stringify({
        listen: { port: 0 },
        journal: { file: 'journal.jsonl' },
        loop: { claimMode: 'fast' },
        give: { webhook: { url: `http://127.0.0.1:${(game.address() as AddressInfo).port}/give` } },
        log: { level: 'silent' },
        staff: { listen: { port: 0 }, accountsFile: 'staff-accounts' },
      }),
    );
    // One fetch for the client and the webhook: the store is the mock, the game is the server above.
    const realFetch = globalThis.fetch;
    const both: typeof fetch = (input, init) => (String(input instanceof Request ? input.url : input).endsWith('/give') ? realFetch(input, init) : mock.fetch(input, init));
    const bridge = await startBridge(join(dir, 'bridge.json'), { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: both });
    running.push(bridge);

    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 3 });
    const api = (method: string, path: string, body: unknown) => fetch(`${bridge.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await api('PUT', '/v1/online', { players: ['Steve'] })).status).toBe(200);
    let claimed: Response | undefined;
    const claim = api('POST', '/v1/claim', { player: 'Steve' }).then((r) => (claimed = r));
    for (let waited = 0; claimed === undefined && waited < 60_000; waited += 1_000) {
      mock.clock.advance(1_000);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    await claim;
    expect(claimed?.status).toBe(200);

    const login = await fetch(`${bridge.staffUrl}/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=alice&password=alice-password-long' });
    const cookie = (login.headers.get('set-cookie') as string).split(';')[0] as string;
    const home = await (await fetch(`${bridge.staffUrl}/?q=stev`, { headers: { cookie } })).text();
    expect(home).toMatch(/<li><a href="\/player\?name=Steve">Steve<\/a><\/li>/);
    const player = await (await fetch(`${bridge.staffUrl}/player?name=Steve`, { headers: { cookie } })).text();
    expect(player).toMatch(/× 3<div class="id">[^<]+<\/div><\/td><td><span class="ok">given<\/span>/);
    expect(player).toContain('<span class="ok">online</span>');
    const health = await (await fetch(`${bridge.staffUrl}/health`, { headers: { cookie } })).text();
    expect(health).toMatch(/<th>Store<\/th><td><span class="ok">up<\/span>/);
    expect(health).toMatch(/<th>Game \(webhook http:\/\/127\.0\.0\.1:\d+\/give\)<\/th><td><span class="ok">up<\/span>/);
  });
});
