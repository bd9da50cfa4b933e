/**
 * The bridge's assembly decisions, in process (issue #46 point 1): which store it talks to
 * (the config's baseUrl, else TEAMGAMES_BASE_URL trimmed, else the default), what it says
 * at start about what the journal holds (pending items, open windows: at most 20 listed),
 * how each give is counted and logged (given, not given), which client events become log
 * lines, what an RCON list poll hands the roster (valid names only), stop (once, in order),
 * and that a start that fails closes what it opened.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BASE_URL, FileJournal } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { runBridgeCommand } from '../../src/bridge/command.js';
import { stream } from '../support/cli.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { journalLine, journalWindow } from '../support/journal.js';
import { TestRconServer } from '../support/rcon-server.js';

const TOKEN = 'bridge-decisions-token-0123456789abcdef0123';
const GAME = 'http://127.0.0.1:9/game';
const running: RunningBridge[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const bridge of running.splice(0).reverse()) await bridge.stop();
  for (const close of closers.splice(0).reverse()) await close();
});

type Line = Record<string, any> & { level: string; msg: string };

interface Setup {
  dir: string;
  lines: Line[];
  storeCalls: string[];
  gameCalls: unknown[];
  mock: ReturnType<typeof createMockService>;
  /** What the game's webhook answers. */
  game: { status: number };
}

async function setup(): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'bridge-decisions-'));
  return { dir, lines: [], storeCalls: [], gameCalls: [], mock: createMockService({ seed: storeSeed, now: T0 }), game: { status: 200 } };
}

async function start(s: Setup, config: Record<string, unknown>, env: Record<string, string> = {}): Promise<RunningBridge> {
  const path = join(s.dir, 'bridge.json');
  await writeFile(path, JSON.stringify({ listen: { port: 0 }, journal: { file: 'journal.jsonl' }, loop: { claimMode: 'fast' }, give: { webhook: { url: GAME } }, ...config }));
  const fetcher: typeof globalThis.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.startsWith(GAME)) {
      s.gameCalls.push(JSON.parse(String(init?.body)));
      return new Response('{}', { status: s.game.status });
    }
    s.storeCalls.push(url);
    return s.mock.fetch(input, init);
  };
  const bridge = await startBridge(path, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, ...env }, fetch: fetcher, logDestination: { write: (line: string) => void s.lines.push(JSON.parse(line) as Line) } });
  running.push(bridge);
  return bridge;
}

const call = (bridge: RunningBridge, method: string, path: string, body?: unknown) =>
  fetch(`${bridge.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

const banner = (s: Setup) => s.lines.find((l) => l.msg.startsWith('teamgames bridge '));

describe('the store it talks to', () => {
  it("the config's baseUrl first", async () => {
    const s = await setup();
    await start(s, { baseUrl: 'http://127.0.0.1:7/config' }, { TEAMGAMES_BASE_URL: 'http://127.0.0.1:7/env' });
    expect(banner(s)).toMatchObject({ store: 'http://127.0.0.1:7/config' });
    expect(banner(s)?.msg).toMatch(/, store http:\/\/127\.0\.0\.1:7\/config$/);
  });

  it('else TEAMGAMES_BASE_URL, trimmed; else the default', async () => {
    const env = await setup();
    await start(env, {}, { TEAMGAMES_BASE_URL: ' http://127.0.0.1:7/env ' });
    expect(banner(env)).toMatchObject({ store: 'http://127.0.0.1:7/env' });
    const blank = await setup();
    await start(blank, {}, { TEAMGAMES_BASE_URL: '  ' });
    expect(banner(blank)).toMatchObject({ store: DEFAULT_BASE_URL });
  });

  it('the banner says the API, the sink (origin and path, no query) and the journal, at info', async () => {
    const s = await setup();
    const bridge = await start(s, { give: { webhook: { url: `${GAME}?secret=1` } } });
    expect(banner(s)).toMatchObject({ level: 'info', api: bridge.url, sink: `webhook ${GAME}`, journal: `file ${join(s.dir, 'journal.jsonl')}` });
    expect(s.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });
});

describe('what the journal holds at start', () => {
  it('a loopback listener is not warned about: localhost, any 127.x.y.z', async () => {
    for (const host of ['localhost', '127.10.10.10']) {
      const s = await setup();
      await start(s, { listen: { host, port: 0 } });
      expect(s.lines.filter((l) => l.level === 'warn')).toEqual([]);
    }
  });

  it('nothing: no line about it', async () => {
    const s = await setup();
    await start(s, {});
    expect(s.lines.map((l) => l.msg)).toEqual([banner(s)?.msg]);
  });

  it('pending items: one info line with the counts; open windows: an error listing at most 20, times in ISO', async () => {
    const s = await setup();
    const journal = new FileJournal(join(s.dir, 'journal.jsonl'));
    const windows = Array.from({ length: 21 }, (_, i) => journalWindow(`window:${i}`, `P${i}`, { from: T0, to: T0 + 10_000 }));
    await journal.append([journalLine('invoice:1', 'Steve'), ...windows]);
    await journal.close();
    await start(s, {});
    expect(s.lines.find((l) => l.msg.startsWith('the journal holds items'))).toMatchObject({ level: 'info', msg: 'the journal holds items for players not in the game yet; each is given when its player joins', pending: 1, openWindows: 21 });
    const error = s.lines.find((l) => l.level === 'error');
    expect(error).toMatchObject({ msg: 'the journal holds unverified windows staff have not resolved: items that may not have reached their players (teamgames journal windows)', openWindows: 21 });
    expect(error?.windows).toHaveLength(20);
    expect(error?.windows[0]).toEqual({ player: 'P0', from: new Date(T0).toISOString(), to: new Date(T0 + 10_000).toISOString(), cause: 'lostClaim' });
    expect(s.gameCalls).toEqual([]);
  });

  it('windows only: the error, and no pending line', async () => {
    const s = await setup();
    const journal = new FileJournal(join(s.dir, 'journal.jsonl'));
    await journal.append([journalWindow('window:1', 'Steve')]);
    await journal.close();
    await start(s, {});
    expect(s.lines.filter((l) => l.msg.startsWith('the journal holds'))).toEqual([expect.objectContaining({ level: 'error', openWindows: 1 })]);
  });
});

describe('the count of open windows', () => {
  it('is read from the journal at most every 5 s (monotonic clock): a resolve shows after that', async () => {
    const s = await setup();
    const journal = new FileJournal(join(s.dir, 'journal.jsonl'));
    await journal.append([journalWindow('window:1', 'Steve')]);
    await journal.close();
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      const bridge = await start(s, {});
      const open = async () => (await (await call(bridge, 'GET', '/v1/health')).json()).openWindows;
      expect(await open()).toBe(1);
      expect((await call(bridge, 'POST', '/v1/windows/resolve', { windowId: 'window:1', by: 'ann', note: 'given by hand' })).status).toBe(200);
      expect(await open()).toBe(1);
      vi.advanceTimersByTime(4_999);
      expect(await open()).toBe(1);
      vi.advanceTimersByTime(1);
      expect(await open()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('gives, counted and logged', () => {
  /** A line a crash left in the journal, given once Steve joins. */
  async function purchase(s: Setup, config: Record<string, unknown> = {}): Promise<RunningBridge> {
    const journal = new FileJournal(join(s.dir, 'journal.jsonl'));
    await journal.append([journalLine('invoice:1', 'Steve')]);
    await journal.close();
    const bridge = await start(s, config);
    await call(bridge, 'POST', '/v1/join', { player: 'Steve' });
    await expect.poll(() => s.gameCalls.length).toBeGreaterThan(0);
    await expect.poll(() => s.lines.filter((l) => l.msg.startsWith('item ')).length).toBeGreaterThan(0);
    return bridge;
  }
  const metric = async (bridge: RunningBridge, outcome: string) => new RegExp(`teamgames_bridge_gives_total\\{kind="purchase",outcome="${outcome}"\\} (\\d+)`).exec(await (await call(bridge, 'GET', '/metrics')).text())?.[1];

  it('a give the game takes: "item given" at info, counted given', async () => {
    const s = await setup();
    const bridge = await purchase(s);
    expect(s.gameCalls).toHaveLength(1);
    expect(s.lines).toContainEqual(expect.objectContaining({ level: 'info', msg: 'item given', player: 'Steve', deliveryId: 'invoice:1' }));
    await expect.poll(() => s.lines.filter((l) => l.msg === 'delivery')).toEqual([expect.objectContaining({ level: 'info', player: 'Steve', granted: 1, failed: 0 })]);
    expect(await metric(bridge, 'given')).toBe('1');
    expect(await metric(bridge, 'failed')).toBeUndefined();
  });

  it('a give the game refuses: a warning that it stays pending, counted failed, never given; marked for staff after staffAfterAttempts', async () => {
    const s = await setup();
    s.game.status = 500;
    const bridge = await purchase(s, { loop: { claimMode: 'fast', staffAfterAttempts: 1 } });
    await expect.poll(() => s.lines.filter((l) => l.level === 'error').length).toBeGreaterThan(0);
    expect(s.lines.find((l) => l.level === 'error')).toMatchObject({ msg: 'an item keeps failing to be given; marked for staff (teamgames journal pending)', player: 'Steve', deliveryId: 'invoice:1', attempts: 1, error: { message: expect.stringContaining('HTTP 500') } });
    const warning = s.lines.find((l) => l.msg === 'item not given; it stays pending and is tried again');
    expect(warning).toMatchObject({ level: 'warn', player: 'Steve', error: { message: expect.stringContaining('HTTP 500') } });
    expect(warning?.deliveryId).toBe('invoice:1');
    expect(s.lines.map((l) => l.msg)).not.toContain('item given');
    expect(await metric(bridge, 'failed')).toBe('1');
    expect(await metric(bridge, 'given')).toBeUndefined();
  });
});

describe('vote rewards, counted and logged', () => {
  const voteMetric = async (bridge: RunningBridge, outcome: string) => new RegExp(`teamgames_bridge_gives_total\\{kind="vote",outcome="${outcome}"\\} (\\d+)`).exec(await (await call(bridge, 'GET', '/metrics')).text())?.[1];

  it('a reward the game takes: "vote reward given", counted as a vote', async () => {
    const s = await setup();
    const bridge = await start(s, {});
    await call(bridge, 'POST', '/v1/join', { player: 'Steve' });
    s.mock.recordVote(KEY, 'Steve', 3);
    const answer = await (await call(bridge, 'POST', '/v1/vote', { player: 'Steve', reward: '1', amount: 1 })).json();
    expect(answer).toMatchObject({ code: 'SUCCESS' });
    expect(s.lines).toContainEqual(expect.objectContaining({ level: 'info', msg: 'vote reward given', player: 'Steve' }));
    expect(await voteMetric(bridge, 'given')).toBe('1');
  });

  it('a reward the game refuses: "vote reward not given; it stays pending", counted failed', async () => {
    const s = await setup();
    s.game.status = 500;
    const bridge = await start(s, {});
    await call(bridge, 'POST', '/v1/join', { player: 'Steve' });
    s.mock.recordVote(KEY, 'Steve', 3);
    await call(bridge, 'POST', '/v1/vote', { player: 'Steve', reward: '1', amount: 1 });
    expect(s.lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'vote reward not given; it stays pending', player: 'Steve' }));
    expect(await voteMetric(bridge, 'failed')).toBe('1');
  });
});

describe('the RCON list poll', () => {
  it('hands the roster only valid names', async () => {
    const game = await TestRconServer.start();
    closers.push(() => game.close());
    game.listReply = 'There are 2 of a max of 20 players online: Steve, ';
    const s = await setup();
    await writeFile(join(s.dir, 'pw'), 'secret\n', { mode: 0o600 });
    const bridge = await start(s, { log: { level: 'debug' }, give: { rcon: { port: game.port, passwordFile: 'pw', commands: { '*': ['say {player}'] }, players: { source: 'list', intervalMs: 1000 } } } });
    await expect.poll(async () => (await (await call(bridge, 'GET', '/v1/health')).json()).online, { timeout: 5_000 }).toBe(1);
    expect(s.lines).toContainEqual(expect.objectContaining({ level: 'debug', msg: 'online players reconciled', joined: 1, left: 0 }));
    expect(banner(s)).toMatchObject({ sink: `rcon 127.0.0.1:${game.port}` });
  });
});

describe('the staff page', () => {
  /** One staff account, alice, in `dir/staff-accounts`, as `teamgames bridge staff-hash` writes it. */
  async function staffAccounts(dir: string): Promise<void> {
    let account = '';
    const io = { stdout: stream((t) => (account += t)), stderr: stream(() => undefined), interactive: false, confirm: async () => false };
    expect(await runBridgeCommand(['staff-hash', 'alice', 'read'], io, {}, { stdin: Readable.from(['alice-password-long']) })).toBe(0);
    await writeFile(join(dir, 'staff-accounts'), account, { mode: 0o600 });
  }

  it('is said at start, with its address and that a loopback one is reached by a tunnel; it closes at stop', async () => {
    const s = await setup();
    await staffAccounts(s.dir);
    const bridge = await start(s, { staff: { listen: { host: '127.0.0.1', port: 0 }, accountsFile: 'staff-accounts' } });
    expect(bridge.staffUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.lines.filter((l) => l.msg.startsWith('staff page'))).toEqual([expect.objectContaining({ level: 'info', msg: `staff page on ${bridge.staffUrl} (loopback: reach it by an SSH tunnel or a TLS reverse proxy)`, staffPage: bridge.staffUrl })]);
    running.splice(running.indexOf(bridge), 1);
    await bridge.stop();
    await expect(fetch(`${bridge.staffUrl}/login`)).rejects.toThrow();
  });

  it('off loopback, is said at start with the advice to put it behind TLS', async () => {
    const s = await setup();
    await staffAccounts(s.dir);
    // Every interface, as a LAN staff page would; the test reaches it on loopback only.
    const bridge = await start(s, { staff: { listen: { host: '0.0.0.0', port: 0 }, accountsFile: 'staff-accounts' } });
    expect(s.lines.filter((l) => l.msg.startsWith('staff page'))).toEqual([expect.objectContaining({ level: 'info', msg: `staff page on ${bridge.staffUrl}, not loopback: put it behind TLS`, staffPage: bridge.staffUrl })]);
  });

  it('not configured: no staff page, no line about it, and the running bridge has no staffUrl at all (not one set to undefined)', async () => {
    const s = await setup();
    const bridge = await start(s, {});
    expect(bridge).not.toHaveProperty('staffUrl');
    expect(s.lines.filter((l) => l.msg.startsWith('staff page'))).toEqual([]);
  });
});

describe('stop', () => {
  it('is done once (a second call is the same stop), the API refusing from its start, "stopped" last', async () => {
    const s = await setup();
    const bridge = await start(s, {});
    running.splice(running.indexOf(bridge), 1);
    const first = bridge.stop();
    expect(bridge.stop()).toBe(first);
    await first;
    expect(s.lines.at(-1)).toMatchObject({ level: 'info', msg: 'stopped' });
    expect(s.lines.filter((l) => l.msg === 'stopped')).toHaveLength(1);
    await expect(call(bridge, 'GET', '/v1/health')).rejects.toThrow();
  });
});

describe('a start that fails', () => {
  it('closes what it opened: the journal is free for the next bridge', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => blocker.close(() => resolve())));
    const port = (blocker.address() as { port: number }).port;
    const s = await setup();
    await expect(start(s, { listen: { host: '127.0.0.1', port } })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    const again = await start(s, {});
    expect(again.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a bad config is named with the missing secrets', async () => {
    const s = await setup();
    await writeFile(join(s.dir, 'bridge.json'), JSON.stringify({ give: {} }));
    const error = await startBridge(join(s.dir, 'bridge.json'), { env: {} }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^the config has 1 problem:\n {2}give: needs exactly one of "webhook" or "rcon"\nand 2 secrets are missing or bad:/);
  });
});
