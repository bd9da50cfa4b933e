/**
 * The bridge guide's "Trying it against the mock" (docs/bridge.md), run as written: its
 * stand-in game (the `node -e` line) as a child process, its token file and config made by
 * its own shell lines, the bridge its command line describes, and its `curl` calls (a
 * purchase, a join, `/claim`, then status, health and metrics) by bash. Only the ports
 * change (each test's own, for the guide's 4010, 9000 and 8787), and the mock and the
 * bridge run in process (the guide's `npx teamgames-mock` and `npx teamgames bridge`) on
 * fake timers, moved a second at a time while the calls wait for the store's window.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMockService } from '../../src/mock/index.js';
import { exampleSeed } from '../../src/mock/service/example-seed.js';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';

const GUIDE = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/bridge.md');
const opened: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of opened.splice(0).reverse()) await close();
});

/** The ```sh blocks of the guide's section, in order. */
async function blocks(): Promise<string[]> {
  const guide = await readFile(GUIDE, 'utf8');
  const start = guide.indexOf('## Trying it against the mock');
  const section = guide.slice(start, guide.indexOf('\n## ', start + 1) === -1 ? undefined : guide.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Runs `script` in bash in `cwd`; resolves its output once it exits 0. */
function bash(script: string, cwd: string): { child: ChildProcess; done: Promise<string> } {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const done = new Promise<string>((ok, fail) => child.once('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`bash exited ${code}:\n${script}\n${out}`)))));
  return { child, done };
}

// The walkthrough's tools; skipped where one is missing, saying which (failed instead on CI).
const tools = (
  [
    ['bash', '--version'],
    ['curl', '--version'],
    ['openssl', 'version'],
  ] as const
)
  .filter(([tool, flag]) => spawnSync(tool, [flag], { stdio: 'ignore' }).status !== 0)
  .map(([tool]) => tool);
const CI = process.env.CI === 'true' || process.env.CI === '1';
const run = tools.length === 0 || CI ? it : it.skip;
const missing = tools.length === 0 ? '' : ` (${CI ? 'CI=true may not skip it' : 'skipped'}: ${tools.join(', ')} not installed)`;

describe("the guide's try-it-with-curl walkthrough", () => {
  run(`a purchase, a join and /claim from the shell: SUCCESS, the item reaches the stand-in game with its merchant id, and status, health and metrics answer${missing}`, { timeout: 60_000 }, async () => {
    const [mockLine, gameLine, bridgeBlock, calls, looks] = await blocks();
    expect(mockLine).toBe('npx teamgames-mock --port 4010\n');
    const dir = await mkdtemp(join(tmpdir(), 'guide-try-'));
    const [gamePort, bridgePort] = [await freePort(), await freePort()];
    const ports = (text: string, mockUrl: string) => text.replaceAll('http://127.0.0.1:4010', mockUrl).replaceAll('9000', String(gamePort)).replaceAll('8787', String(bridgePort));

    // 1. The mock store, with the example stores `npx teamgames-mock` serves.
    const mock = createMockService({ seed: exampleSeed });
    const { url: mockUrl, close } = await mock.listen({ port: 0 });
    opened.push(close);

    // 2. The guide's stand-in game, as written (its port aside).
    const code = /^node -e "(.*)"\n$/.exec(gameLine as string)?.[1] as string;
    expect(code).toContain("listen(9000, '127.0.0.1')");
    const game = spawn(process.execPath, ['-e', ports(code, mockUrl)], { stdio: ['ignore', 'pipe', 'pipe'] });
    opened.push(() => void game.kill());
    let printed = '';
    game.stdout?.on('data', (c: Buffer) => (printed += c.toString('utf8')));
    await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${gamePort}/`, { method: 'POST', body: 'probe' })).status).toBe(204), { timeout: 10_000 });

    // 3. The token file and the config, by the guide's lines; the bridge its last line starts.
    const lines = (bridgeBlock as string).trimEnd().split('\n');
    const command = lines.pop();
    expect(command).toBe('TEAMGAMES_API_KEY=demo-key-7b1e04 TEAMGAMES_BRIDGE_TOKEN_FILE=bridge-token npx teamgames bridge --config bridge.json');
    // The bridge listens on this test's port (the guide's config keeps the default 8787).
    await bash(ports(lines.join('\n'), mockUrl).replace('{\n  "baseUrl"', `{\n  "listen": { "port": ${bridgePort} },\n  "baseUrl"`), dir).done;
    expect((await stat(join(dir, 'bridge-token'))).mode & 0o777).toBe(0o600);
    const realTimeout = globalThis.setTimeout;
    // The mock's clock follows Date; the loop and the client's guard time the window on these.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'], shouldAdvanceTime: true });
    const bridge: RunningBridge = await startBridge(join(dir, 'bridge.json'), { env: { TEAMGAMES_API_KEY: 'demo-key-7b1e04', TEAMGAMES_BRIDGE_TOKEN_FILE: join(dir, 'bridge-token') }, logDestination: { write: () => undefined } });
    opened.push(() => bridge.stop());

    // 4. The game's calls, by bash; the store's window passes meanwhile.
    const shell = async (script: string): Promise<string> => {
      const { child, done } = bash(ports(script, mockUrl), dir);
      opened.push(() => void child.kill());
      let exited = false;
      void done.then(
        () => (exited = true),
        () => (exited = true),
      );
      // Fake time runs 50 times faster than real time while bash works: a second per 20 ms.
      for (let i = 0; i < 3_000 && !exited; i++) {
        await new Promise((ok) => realTimeout(ok, 20));
        await vi.advanceTimersByTimeAsync(1_000);
      }
      return done;
    };
    const answered = (await shell(calls as string)).trim().split('\n');
    expect(JSON.parse(answered[0] as string)).toMatchObject({ username: 'Steve', productid: 'minecraft:diamond', deliverystatus: 'Undelivered' });
    expect(JSON.parse(answered[1] as string)).toEqual({ ok: true });
    expect(JSON.parse(answered[2] as string)).toEqual({ code: 'SUCCESS', message: expect.any(String), granted: 1, pending: 0 });
    await vi.waitFor(() => expect(printed).toContain('"productId":"minecraft:diamond"'), { timeout: 5_000 });
    expect(JSON.parse(printed.trim().split('\n').at(-1) as string)).toMatchObject({ kind: 'purchase', player: 'Steve', productId: 'minecraft:diamond', productName: '64 Diamonds', quantity: 64, deliveryId: 'invoice:1' });

    // Then what staff and monitoring see, the `bridge` function of the block before included.
    const seen = await shell(`${(calls as string).split('\n').find((l) => l.startsWith('TOKEN='))}\n${(calls as string).split('\n').find((l) => l.startsWith('bridge()'))}\n${looks}`);
    expect(seen).toContain('{"playerName":"Steve","online":true,');
    expect(seen).not.toMatch(/"nextCheckAt":\d/);
    expect(seen).toContain('{"ok":true,"paused":false,"online":1,"pending":0');
    expect(seen).toMatch(/^teamgames_bridge_granted_total 1$/m);
  });
});
