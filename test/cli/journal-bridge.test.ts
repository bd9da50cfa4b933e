/**
 * A window resolved while the bridge runs (issue #43 point 3): the bridge's HTTP API
 * (`POST /v1/windows/resolve`, its token) resolves in the bridge's own journal with
 * `resolveWindow`, and `teamgames journal resolve --bridge <url>` goes there, alone or
 * with `--file` when the bridge holds the file. The bridge here is its HTTP API over a
 * real delivery loop (the mock's fetch and clock) and a FileJournal this process holds;
 * the command runs in process, its token read from a file as the bridge reads it.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttp } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, StorefrontClient, inspectJournal, type DeliveredItem, type DeliveryLoop } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/http/index.js';
import type { BridgeLogger } from '../../src/bridge/log.js';
import { EXIT } from '../../src/cli/program.js';
import { runCli } from '../support/cli.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { journalWindow } from '../support/journal.js';
import { closeSilentServers, silentServer } from '../support/silent-server.js';

const TOKEN = 'staff-bridge-token-0123456789abcdef0123';
const now = () => Date.UTC(2026, 0, 2);
const dirs: string[] = [];
const open: Array<{ server: BridgeServer; loop: DeliveryLoop; journal: FileJournal }> = [];

afterEach(async () => {
  await closeSilentServers();
  for (const { server, loop, journal } of open.splice(0)) {
    await server.close(0);
    await loop.stop();
    await journal.close();
  }
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

interface Running {
  url: string;
  path: string;
  tokenFile: string;
  given: DeliveredItem[];
  loop: DeliveryLoop;
  logged: Array<{ message: string; fields: unknown }>;
}

/** A bridge holding a file journal with two open windows (Ann's w1, Bea's w2), its token in a file (mode 0600). */
async function runningBridge(windows = [journalWindow('window:w1', 'Ann'), journalWindow('window:w2', 'Bea')]): Promise<Running> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-bridge-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, `${JSON.stringify({ op: 'put', entries: windows })}\n`, { mode: 0o600 });
  const tokenFile = join(dir, 'bridge-token');
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const journal = new FileJournal(path);
  const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal });
  const given: DeliveredItem[] = [];
  const loop = client.startDeliveryLoop({ give: (item) => void given.push(item), giveVoteReward: () => undefined, claimMode: 'fast' });
  const logged: Running['logged'] = [];
  const log: BridgeLogger = { debug() {}, info: (message, fields) => void logged.push({ message, fields }), warn() {}, error() {}, flush() {} };
  const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics: createMetrics(() => loop.stats()), log, journal, token: TOKEN, redact: (t) => t, host: '127.0.0.1', port: 0 });
  open.push({ server, loop, journal });
  // The bridge holds the file from its first journal call on.
  await journal.pending();
  return { url: server.url, path, tokenFile, given, loop, logged };
}

async function post(url: string, body: unknown, token = TOKEN): Promise<{ status: number; json: any }> {
  const response = await fetch(`${url}/v1/windows/resolve`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

describe('the bridge HTTP API: POST /v1/windows/resolve', () => {
  it('resolves in the bridge journal (audit trail: who, when, the note); the second gets 409 with the first resolution; bad fields name themselves', async () => {
    const bridge = await runningBridge();
    const first = await post(bridge.url, { player: 'Ann', by: 'mod:alice', note: 'granted by hand' });
    expect(first.status).toBe(200);
    expect(first.json.window).toMatchObject({ deliveryId: 'window:w1', playerName: 'Ann', state: 'resolved', resolution: { by: 'mod:alice', note: 'granted by hand', at: expect.any(Number) } });
    expect(bridge.logged).toContainEqual({ message: 'window resolved by staff through the HTTP API', fields: { window: 'window:w1', player: 'Ann', by: 'mod:alice' } });

    const second = await post(bridge.url, { windowId: 'window:w1', by: 'mod:bob', note: 'nothing missing' });
    expect(second).toEqual({
      status: 409,
      json: { error: { code: 'WINDOW_ALREADY_RESOLVED', message: expect.stringContaining('already resolved'), windowId: 'window:w1', playerName: 'Ann', resolution: first.json.window.resolution } },
    });

    for (const [body, field] of [
      [{ player: 'Bea', by: 'mod', note: 'x', extra: 1 }, 'extra'],
      // An unknown field is named first, even beside a bad known one (a typo is the likelier mistake).
      [{ player: 42, by: 'mod', note: 'x', colour: 'red' }, 'colour'],
      [{ player: 'Bea', by: '', note: 'x' }, 'by'],
      [{ player: 'Bea', by: 'mod', note: 'x\u001b[2J' }, 'note'],
      [{ by: 'mod', note: 'x' }, 'player'],
      [{ windowId: 'window:nope', by: 'mod', note: 'x' }, 'windowId'],
      [{ player: 42, by: 'mod', note: 'x' }, 'player'],
    ] as const) {
      const refused = await post(bridge.url, body);
      expect(refused.status).toBe(400);
      expect(refused.json.error).toMatchObject({ code: 'INVALID_FIELD', field });
    }
    expect((await post(bridge.url, { player: 'Bea', by: 'mod', note: 'x' }, 'wrong-token')).status).toBe(401);
    // Bea's window is still open: nothing refused was written.
    expect((await inspectJournal(open[0]!.journal)).openWindows.map((w) => w.deliveryId)).toEqual(['window:w2']);
  });
});

describe('teamgames journal resolve --bridge: while the bridge runs and holds the file', () => {
  it('--file with --bridge: the held file is resolved through the bridge (exit 0), then exit 7 naming who came first; deliveries go on', async () => {
    const bridge = await runningBridge();
    const env = { TEAMGAMES_BRIDGE_TOKEN_FILE: bridge.tokenFile };
    const done = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod:alice', '--note', 'granted by hand', '--file', bridge.path, '--bridge', bridge.url], now, env);
    expect(done).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(done.stdout).toMatch(/^Resolved window:w1 of Ann \(.*\) by mod:alice: granted by hand\n$/);

    const again = await runCli(['journal', 'resolve', '--window', 'window:w1', '--by', 'mod:bob', '--note', 'nothing', '--file', bridge.path, '--bridge', bridge.url], now, env);
    expect(again.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(again.stderr).toMatch(/^teamgames journal: window:w1 of Ann was already resolved by mod:alice at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: granted by hand\. Nothing was written: the first resolution stands\n$/);

    // --bridge alone, --json: the same call, the window as the bridge recorded it.
    const json = await runCli(['journal', 'resolve', 'Bea', '--by', 'mod:carol', '--note', 'checked', '--json', '--bridge', `${bridge.url}/`], now, env);
    expect(json.code).toBe(EXIT.OK);
    expect(JSON.parse(json.stdout)).toMatchObject({ deliveryId: 'window:w2', state: 'resolved', resolution: { by: 'mod:carol', note: 'checked' } });

    // The bridge never stopped: it still holds the file and delivers.
    const seen = await runCli(['journal', 'windows', '--all', '--json', '--file', bridge.path], now);
    expect((JSON.parse(seen.stdout) as { windows: Array<{ deliveryId: string; state: string }> }).windows.map((w) => [w.deliveryId, w.state])).toEqual([
      ['window:w1', 'resolved'],
      ['window:w2', 'resolved'],
    ]);
    const status = await runCli(['journal', 'status', '--json', '--file', bridge.path], now);
    expect(JSON.parse(status.stdout)).toMatchObject({ journal: { lock: { state: 'held', pid: process.pid, running: true } } });
    expect(bridge.loop.stats().paused).toBe(false);
  });

  it('the token is read as the bridge reads it: a token file others may read is refused; none given, or a wrong one, says what to do; nothing written', async () => {
    const bridge = await runningBridge();
    const args = ['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--bridge', bridge.url];
    const none = await runCli(args, now);
    expect(none).toMatchObject({ code: EXIT.USAGE, stderr: expect.stringMatching(/^teamgames journal: TEAMGAMES_BRIDGE_TOKEN is not set/) });
    const wrong = await runCli(args, now, { TEAMGAMES_BRIDGE_TOKEN: 'x'.repeat(40) });
    expect(wrong).toMatchObject({ code: EXIT.FAILURE, stderr: expect.stringContaining(`the bridge at ${bridge.url} refused the token`) });
    await writeFile(bridge.tokenFile, `${TOKEN}\n`, { mode: 0o644 });
    await chmod(bridge.tokenFile, 0o644);
    const shared = await runCli(args, now, { TEAMGAMES_BRIDGE_TOKEN_FILE: bridge.tokenFile });
    expect(shared).toMatchObject({ code: EXIT.USAGE, stderr: expect.stringContaining('other users may read or change it, mode 0644') });
    expect(none.stdout + wrong.stdout + shared.stdout + none.stderr + wrong.stderr + shared.stderr).not.toContain(TOKEN);
    expect((await inspectJournal(open[0]!.journal)).openWindows).toHaveLength(2);
  });

  it('a bridge that is not there: exit 4 saying nothing was sent; --file alone on a held file points to --bridge; --bridge with a database or another command is a usage error', async () => {
    const bridge = await runningBridge();
    const env = { TEAMGAMES_BRIDGE_TOKEN: TOKEN };
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const gone = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--bridge', `http://127.0.0.1:${port}`], now, env);
    expect(gone).toMatchObject({ code: EXIT.NETWORK, stdout: '' });
    expect(gone.stderr).toBe(`teamgames journal: could not reach the bridge at http://127.0.0.1:${port} (ECONNREFUSED). Nothing was sent: is the bridge running, and is this its listen address? When it is stopped, resolve with --file alone\n`);

    const held = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--file', bridge.path], now);
    expect(held.code).toBe(EXIT.FAILURE);
    expect(held.stderr).toContain('Resolve through the bridge while it runs: add --bridge http://127.0.0.1:<port>');

    expect((await runCli(['journal', 'windows', '--file', bridge.path, '--bridge', bridge.url], now, env)).stderr).toBe('teamgames journal: --bridge does not apply to this command (see teamgames journal --help)\n');
    expect((await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--postgres-env', 'DB', '--bridge', bridge.url], now, env)).code).toBe(EXIT.USAGE);
    expect((await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--bridge', 'ftp://127.0.0.1/'], now, env)).code).toBe(EXIT.USAGE);
    expect((await inspectJournal(open[0]!.journal)).openWindows).toHaveLength(2);
  });
});

describe('teamgames journal resolve --bridge: tried as a hostile day would', () => {
  it('eight staff at once through the API: one 200, seven 409 naming the first; the journal holds that one', async () => {
    const bridge = await runningBridge();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(bridge.url, { windowId: 'window:w1', by: `mod:${i}`, note: `note ${i}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const first = answers.find((a) => a.status === 200)!.json.window.resolution;
    for (const a of answers.filter((x) => x.status === 409)) expect(a.json.error.resolution).toEqual(first);
    expect((await inspectJournal(open[0]!.journal)).resolvedWindows).toEqual([expect.objectContaining({ deliveryId: 'window:w1', resolution: first })]);
  });

  it('a bridge address that accepts and never answers: exit 4 within --timeout, saying the resolve may or may not be written', async () => {
    const port = await silentServer();
    const started = performance.now();
    const r = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--timeout', '300', '--bridge', `http://127.0.0.1:${port}`], now, { TEAMGAMES_BRIDGE_TOKEN: TOKEN });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(r).toEqual({
      code: EXIT.NETWORK,
      stdout: '',
      stderr: `teamgames journal: could not reach the bridge at http://127.0.0.1:${port} (no answer within 300 ms (--timeout)). The resolve may or may not have been written: teamgames journal windows --all tells\n`,
    });
  });

  it('an answer that is not a resolved window, or a 409 whose texts hold escapes: nothing false printed, nothing a terminal obeys', async () => {
    let reply: { status: number; body: unknown } = { status: 200, body: { window: { deliveryId: 'window:w1', state: 'unverified' } } };
    const fake = createHttp((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body)));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
    try {
      const env = { TEAMGAMES_BRIDGE_TOKEN: TOKEN };
      const args = ['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--bridge', url];
      const wrong = await runCli(args, now, env);
      expect(wrong.code).toBe(EXIT.FAILURE);
      expect(wrong.stderr).toMatch(/answered 200 without the resolved window/);
      reply = { status: 409, body: { error: { code: 'WINDOW_ALREADY_RESOLVED', windowId: 'window:w1', playerName: 'Ann\u001b[2J', resolution: { by: 'mod\u202e', at: 0, note: 'x\u001b]0;owned\u0007' } } } };
      const hostile = await runCli(args, now, env);
      expect(hostile.code).toBe(EXIT.ALREADY_RESOLVED);
      expect(hostile.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
      expect(hostile.stderr).toContain('Ann\\u001b[2J');
      reply = { status: 302, body: {} };
      expect((await runCli(args, now, env)).code).toBe(EXIT.FAILURE);
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});

describe('teamgames journal resolve --file with --bridge: the bridge named is not the one holding the file', () => {
  it("another game server's bridge, whose journal holds another window of the same player: refused there by the file's window id, nothing resolved in the wrong journal (exit 1)", async () => {
    const mine = await runningBridge();
    const other = await runningBridge([journalWindow('window:w9', 'Ann')]);
    const r = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--file', mine.path, '--bridge', other.url], now, { TEAMGAMES_BRIDGE_TOKEN: TOKEN });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`the bridge at ${other.url} did not resolve the window (HTTP 400): windowId must name a window`);
    expect((await inspectJournal(open[1]!.journal)).openWindows.map((w) => w.deliveryId)).toEqual(['window:w9']);
    expect((await inspectJournal(open[0]!.journal)).openWindows.map((w) => w.deliveryId)).toEqual(['window:w1', 'window:w2']);
  });
});
