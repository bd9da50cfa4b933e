/**
 * `teamgames bridge` stopping (SIGTERM and SIGINT call `stop()`) while a player's `/claim`
 * waits in the loop: the player gets the loop's `STOPPED` answer, with a text to show,
 * never a reset connection (the listener used to close its connections before the loop
 * had answered them).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridge, type RunningBridge } from '../../src/bridge/bridge.js';
import { KEY, inProcessStore } from '../support/reliability.js';
import { answerJson, useLoopbackServers } from '../support/http-server.js';

const TOKEN = 'stop-bridge-token-0123456789abcdef0123456789';
const { mock } = inProcessStore();
const servers = useLoopbackServers();
const running: RunningBridge[] = [];
afterEach(async () => {
  for (const bridge of running.splice(0)) await bridge.stop();
  mock.reset();
});

async function call(bridge: RunningBridge, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${bridge.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** When the loop checks Steve next, in ms from now (undefined while a run is in flight). */
async function nextCheckIn(bridge: RunningBridge): Promise<number | undefined> {
  const { json } = await call(bridge, 'GET', '/v1/players/Steve/status');
  return json.running === false && typeof json.nextCheckAt === 'string' ? Date.parse(json.nextCheckAt) - Date.now() : undefined;
}

describe('teamgames bridge stopping', () => {
  it("a /claim waiting for the service's window when the bridge stops is answered STOPPED, with the player's text", async () => {
    const game = await servers.start(answerJson({ ok: true }));
    const dir = await mkdtemp(join(tmpdir(), 'bridge-stop-'));
    const config = join(dir, 'bridge.json');
    await writeFile(
      config,
      JSON.stringify({
        listen: { port: 0 },
        journal: { file: 'journal.jsonl' },
        loop: { claimMode: 'fast', pollIntervalMs: 600_000 },
        give: { webhook: { url: `${game.url}/teamgames` } },
        log: { level: 'silent' },
      }),
    );
    const bridge = await startBridge(config, { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN }, fetch: mock.fetch, logDestination: { write: () => undefined } });
    running.push(bridge);
    expect((await call(bridge, 'POST', '/v1/join', { player: 'Steve' })).status).toBe(200);
    // The join's preview done: the next routine check is the poll interval away.
    await expect.poll(() => nextCheckIn(bridge), { timeout: 5_000 }).toBeGreaterThan(60_000);
    const claim = call(bridge, 'POST', '/v1/claim', { player: 'Steve' });
    // The /claim waits for the service's 10 s window after the preview: planned well before the poll.
    await expect.poll(() => nextCheckIn(bridge), { timeout: 5_000 }).toBeLessThan(60_000);
    const stopping = bridge.stop();
    const answer = await claim;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ code: 'STOPPED', granted: 0, message: expect.any(String) });
    expect((answer.json.message as string).length).toBeGreaterThan(0);
    await stopping;
  });
});
