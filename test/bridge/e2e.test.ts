/**
 * `teamgames bridge` end to end, as an owner runs it: the bridge as a child process (the
 * real `teamgames` bin under tsx), the mock over HTTP, and a webhook game, a node:http
 * server that dedupes on `deliveryId` as the guide shows. A purchase reaches the game
 * exactly once without any /claim; /v1/claim answers the player's text; SIGTERM exits 0
 * and a restart resumes what the journal holds; no log line holds the key or the token.
 *
 * Time is the test's, for the mock and the bridge alike: the loop waits out the service's
 * 10 s window on its own clock (a preview, then the claim one window later; a /claim right
 * after a delivery), so the bridge runs with test/support/child-clock.ts (its clocks and
 * long timers jump when the test says) and the test lets time pass, one window at a step,
 * only while it waits for something: the mock's clock first, then the bridge's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMockService, type MockService } from 'teamgames-sdk/mock';
import { KEY, KEY_BASE64, TEXT, storeSeed } from '../support/fixtures.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'e2e-bridge-token-0123456789abcdef0123456789';

interface Game {
  url: string;
  /** Items given, one per deliveryId. */
  given: Map<string, Record<string, unknown>>;
  /** Every POST that reached the game, repeats included. */
  posts: number;
  failing: boolean;
  server: Server;
}

async function startGame(): Promise<Game> {
  const game = { given: new Map(), posts: 0, failing: false } as unknown as Game;
  game.server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      game.posts++;
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
      if (game.failing) return void res.writeHead(500).end('down');
      const item = JSON.parse(body) as Record<string, unknown>;
      // The guide's dedupe: a deliveryId already given is answered 2xx, not given again.
      if (!game.given.has(item.deliveryId as string)) game.given.set(item.deliveryId as string, item);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => game.server.listen(0, '127.0.0.1', ok));
  game.url = `http://127.0.0.1:${(game.server.address() as AddressInfo).port}/teamgames`;
  return game;
}

interface Bridge {
  child: ChildProcess;
  api: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

async function startBridge(config: string): Promise<Bridge> {
  // One process (node with tsx's loader), so SIGTERM reaches the bridge itself, not a relay.
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/support/child-clock.ts', 'src/cli/index.ts', 'bridge', '--config', config], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const api = await vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the bridge exited ${child.exitCode}: ${err}`);
      const banner = out.split('\n').find((line) => line.includes('"api":'));
      if (banner === undefined) throw new Error('no banner yet');
      return (JSON.parse(banner) as { api: string }).api;
    },
    { timeout: 20_000, interval: 100 },
  );
  return { child, api, stdout: () => out, exited };
}

/** The service's window, the step in which the test lets time pass. */
const STEP_MS = 10_000;

/** Lets `ms` pass for the mock and the bridge: the mock's clock first, so the bridge never runs ahead of the service. */
async function passTime(mock: MockService, bridge: Bridge, ms: number): Promise<void> {
  mock.clock.advance(ms);
  const advanced = new Promise((ok) => bridge.child.once('message', ok));
  bridge.child.send({ advance: ms });
  await advanced;
}

/** Waits until `check` passes, letting one window pass after each try that fails (as vi.waitFor does with fake timers). */
function until<T>(mock: MockService, bridge: Bridge, check: () => T): Promise<T> {
  return vi.waitFor(
    async () => {
      try {
        return check();
      } catch (error) {
        await passTime(mock, bridge, STEP_MS);
        throw error;
      }
    },
    { timeout: 10_000, interval: 100 },
  );
}

/** What `promise` resolves to, time passing until it does. */
async function settled<T>(mock: MockService, bridge: Bridge, promise: Promise<T>): Promise<T> {
  let done = false;
  void promise.finally(() => (done = true)).catch(() => undefined);
  await until(mock, bridge, () => expect(done).toBe(true));
  return promise;
}

function call(bridge: Bridge, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${bridge.api}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

function expectNoSecret(text: string): void {
  for (const secret of [KEY, KEY_BASE64, TOKEN, Buffer.from(TOKEN).toString('base64')]) expect(text).not.toContain(secret);
}

describe('teamgames bridge with a webhook game, end to end', () => {
  let mock: MockService;
  let closeMock: () => Promise<void>;
  let game: Game;
  let config: string;
  const logs: string[] = [];

  beforeAll(async () => {
    // The mock on real time, moved on by the test as the bridge's clock is (passTime).
    mock = createMockService({ seed: storeSeed });
    const listening = await mock.listen({ port: 0 });
    closeMock = listening.close;
    game = await startGame();
    const dir = await mkdtemp(join(tmpdir(), 'bridge-e2e-'));
    config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: listening.url, journal: { file: 'journal.jsonl' }, loop: { pollIntervalMs: 10_000 }, give: { webhook: { url: game.url, timeoutMs: 2_000 } }, log: { level: 'debug' } }));
  });

  afterAll(async () => {
    await new Promise((ok) => game.server.close(ok));
    await closeMock();
  });

  it('a purchase reaches the game exactly once without any /claim; /v1/claim answers the player text; SIGTERM exits 0', { timeout: 60_000 }, async () => {
    const bridge = await startBridge(config);
    try {
      mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 2 });
      expect((await call(bridge, 'POST', '/v1/join', { player: 'Steve' })).status).toBe(200);
      // Previewed at once, claimed one window later.
      await until(mock, bridge, () => expect(game.given.size).toBe(1));
      const [item] = [...game.given.values()];
      expect(item).toMatchObject({ kind: 'purchase', player: 'Steve', productId: '42', productName: 'Abyssal whip', quantity: 2, deliveryId: expect.stringMatching(/^invoice:/) });
      expect(mock.purchases(KEY, 'Steve').every((row) => row.delivered)).toBe(true);

      // Answered once the service's window since the loop's last call has passed.
      const claim = await settled(mock, bridge, call(bridge, 'POST', '/v1/claim', { player: 'Steve' }));
      expect(claim.status).toBe(200);
      const report = (await claim.json()) as { code: string; message: string; granted: number };
      // Everything bought was delivered: the service's text for the player, as the report
      // carries it (or its "wait a few seconds" when the claim comes inside the window).
      expect(report).toMatchObject({ code: expect.stringMatching(/^(ALREADY_CLAIMED|RATE_LIMIT)$/), granted: 0 });
      expect([TEXT.alreadyClaimed, TEXT.rateLimitV4]).toContain(report.message);
      expect(report.granted).toBe(0);
      expect(game.given.size).toBe(1);
    } finally {
      bridge.child.kill('SIGTERM');
      expect(await bridge.exited).toBe(0);
      logs.push(bridge.stdout());
    }
    expect(bridge.stdout()).toContain('"msg":"stopped"');
  });

  it('an item the game refused is pending; after SIGTERM a restart gives it once its player is back, given once', { timeout: 60_000 }, async () => {
    game.failing = true;
    const first = await startBridge(config);
    const posts = game.posts;
    try {
      mock.addPurchase(KEY, { playerName: 'Alex', id: 3 });
      await call(first, 'POST', '/v1/join', { player: 'Alex' });
      // Claimed and journaled, then refused by the game (HTTP 500): pending in the journal.
      await until(mock, first, () => expect(game.posts).toBeGreaterThan(posts));
      // The bridge's log line follows the game's answer through a pipe: waited for, not raced.
      await vi.waitFor(() => expect(first.stdout()).toContain("the game's webhook answered HTTP 500"), { timeout: 5_000, interval: 50 });
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      logs.push(first.stdout());
    }
    expect([...game.given.values()].some((i) => i.player === 'Alex')).toBe(false);

    game.failing = false;
    const second = await startBridge(config);
    try {
      // Nothing at start (Alex is not in the game): the journal's line waits for its player.
      expect(second.stdout()).toMatch(/"pending":1,"openWindows":0,"msg":"the journal holds items for players not in the game yet; each is given when its player joins"/);
      expect([...game.given.values()].filter((i) => i.player === 'Alex')).toHaveLength(0);
      await call(second, 'POST', '/v1/join', { player: 'Alex' });
      await until(mock, second, () => expect([...game.given.values()].filter((i) => i.player === 'Alex')).toHaveLength(1));
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      logs.push(second.stdout());
    }
    // Exactly once end to end: one item per purchase, none twice.
    expect(game.given.size).toBe(2);
  });

  it('no log line holds the key or the token, raw or Base64; every line is JSON', () => {
    expect(logs).toHaveLength(3);
    for (const text of logs) {
      expectNoSecret(text);
      for (const line of text.split('\n').filter((l) => l !== '')) expect(() => JSON.parse(line)).not.toThrow();
    }
  });
});
