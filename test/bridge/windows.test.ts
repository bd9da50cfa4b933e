/**
 * Windows are windows everywhere, for a webhook game too (#44 point 2): a claim whose answer
 * was lost (fast mode) is a window the bridge logs at `error`, counts in
 * `teamgames_bridge_unverified_total`, and shows in `/v1/health`'s `openWindows` and the
 * `teamgames_bridge_open_windows` gauge, now and after a restart (logged at `error` at
 * start).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient } from '../../src/index.js';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { startBridgeServer } from '../../src/bridge/http/index.js';
import { KEY, fetchInStep, inProcessStore } from '../support/reliability.js';

const TOKEN = 'windows-bridge-token-0123456789abcdef012345';
const GAME = 'http://127.0.0.1:9/teamgames';
const { mock } = inProcessStore();
const running: RunningBridge[] = [];
beforeEach(() => {
  storeAnswers = 0;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'], shouldAdvanceTime: true });
  store = fetchInStep(mock);
});
afterEach(async () => {
  vi.useRealTimers();
  for (const bridge of running.splice(0).reverse()) await bridge.stop();
  mock.reset();
});

/** The store's answers so far (a dropped connection is none). */
let storeAnswers = 0;
/** The mock, its clock in step with the fake one (made once fake timers are on). */
let store: typeof globalThis.fetch;
/** The store's calls go to the mock; the game's webhook answers 200 to every item. */
const fetcher: typeof globalThis.fetch = async (input, init) => {
  if (String(input instanceof Request ? input.url : input).startsWith(GAME)) return new Response('{"ok":true}');
  const answer = await store(input, init);
  storeAnswers += 1;
  return answer;
};

async function bridgeIn(dir: string, lines: Array<Record<string, unknown>>): Promise<RunningBridge> {
  const config = join(dir, 'bridge.json');
  await writeFile(config, JSON.stringify({ listen: { port: 0 }, journal: { file: 'journal.jsonl' }, loop: { claimMode: 'fast' }, give: { webhook: { url: GAME } }, log: { level: 'info' } }));
  const bridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: fetcher, logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  running.push(bridge);
  return bridge;
}

/** Waits until `done` holds, a real turn of the event loop per check (the fake clocks move only with real time). */
async function until(done: () => boolean): Promise<void> {
  for (let turns = 0; !done(); turns += 1) {
    if (turns > 100_000) throw new Error('until: gave up after 100,000 turns of the event loop');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function get(bridge: RunningBridge, path: string): Promise<string> {
  return (await fetch(`${bridge.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
}

describe('a webhook bridge', () => {
  it('a lost claim answer: an error log, unverified 1, openWindows 1 in /v1/health and the gauge, also after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-windows-'));
    const lines: Array<Record<string, unknown>> = [];
    const first = await bridgeIn(dir, lines);
    await fetch(`${first.url}/v1/online`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"players":["Steve"]}' });
    // The game's claim must be one call (fast mode) that loses its answer. The loop previews a
    // player as they join, and on a loaded machine that preview could reach the store before
    // the game's claim: it took the fault (the claim went through), or it listed the purchase,
    // and the claim became the second call of a preview and a claim, whose lost answer the
    // next preview settles without a window. So the purchase is paid and the fault set once
    // the join's preview was answered, and the claim is sent then.
    await until(() => storeAnswers === 1);
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    let answered: unknown;
    const claimed = fetch(`${first.url}/v1/claim`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"player":"Steve"}' }).then(async (r) => (answered = await r.json()));
    // The mock's clock follows the fake one (fetchInStep).
    for (let waited = 0; answered === undefined && waited < 60_000; waited += 1_000) await vi.advanceTimersByTimeAsync(1_000);
    await claimed;
    expect(mock.faults.list()[0]?.fired).toBe(1);
    expect(lines.filter((l) => l['level'] === 'error').map((l) => l['msg']), JSON.stringify(lines)).toContain('unverified window: items may have been claimed without being given; staff must check (teamgames journal windows)');
    expect(JSON.parse(await get(first, '/v1/health'))).toMatchObject({ unverified: 1, openWindows: 1 });
    const metrics = await get(first, '/metrics');
    expect(metrics).toMatch(/^teamgames_bridge_unverified_total 1$/m);
    expect(metrics).toMatch(/^teamgames_bridge_open_windows 1$/m);
    await first.stop();

    const after: Array<Record<string, unknown>> = [];
    const second = await bridgeIn(dir, after);
    expect(after.find((l) => l['level'] === 'error')).toMatchObject({ openWindows: 1, windows: [expect.objectContaining({ player: 'Steve', cause: expect.any(String) })] });
    expect(JSON.parse(await get(second, '/v1/health'))).toMatchObject({ unverified: 0, openWindows: 1 });
  });
});

describe('a journal that cannot be read for the count of open windows', () => {
  it('/v1/health says openWindows null (still 200), the gauge -1', async () => {
    const journal = new MemoryJournal();
    const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, journal });
    const loop = client.startDeliveryLoop({ give: () => undefined });
    const openWindows = () => Promise.reject(new Error('EIO: the journal cannot be read'));
    const metrics = createMetrics(() => loop.stats(), openWindows);
    const silent = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };
    const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics, log: silent, journal, token: TOKEN, redact: (t) => t, host: '127.0.0.1', port: 0, openWindows });
    try {
      const health = await fetch(`${server.url}/v1/health`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true, openWindows: null });
      expect(await metrics.text()).toMatch(/^teamgames_bridge_open_windows -1$/m);
    } finally {
      await server.close(0);
      await loop.stop();
    }
  });
});
