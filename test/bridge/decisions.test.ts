/**
 * Decisions of the bridge that no other suite pinned (issue #46 point 1): each test fails
 * when its rule is deleted or moved by one. The 503 once the bridge stops accepting, the
 * 100,000-name bound of the online list, the token's 32-character minimum, and the loop's
 * `staffAfterAttempts` bounds that the bridge's config reaches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient, type DeliveryLoop } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import type { BridgeConfig } from '../../src/bridge/config.js';
import type { BridgeLogger } from '../../src/bridge/log.js';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { readSecrets } from '../../src/bridge/secrets.js';
import { MIN_TOKEN_LENGTH } from '../../src/host/secrets.js';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/http/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

const TOKEN = 'decisions-token-0123456789abcdef0123456789';
const silent: BridgeLogger = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };
const open: Array<{ server: BridgeServer; loop: DeliveryLoop }> = [];
afterEach(async () => {
  for (const { server, loop } of open.splice(0)) {
    await server.close(0);
    await loop.stop();
  }
});

async function startApi(): Promise<{ server: BridgeServer; loop: DeliveryLoop; call: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }> }> {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const journal = new MemoryJournal();
  const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal });
  const loop = client.startDeliveryLoop({ give: () => undefined, claimMode: 'fast' });
  const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics: createMetrics(() => loop.stats()), log: silent, journal, token: TOKEN, redact: (t) => t, host: '127.0.0.1', port: 0 });
  open.push({ server, loop });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: await response.json() };
  };
  return { server, loop, call };
}

describe('the HTTP API', () => {
  it('answers 503 STOPPING to every request once it stops accepting, the token still checked first', async () => {
    const api = await startApi();
    expect((await api.call('GET', '/v1/health')).status).toBe(200);
    api.server.stopAccepting();
    for (const [method, path, body] of [['GET', '/v1/health'], ['POST', '/v1/join', { player: 'Steve' }], ['POST', '/v1/claim', { player: 'Steve' }]] as const) {
      const r = await api.call(method, path, body);
      expect(r.status).toBe(503);
      expect(r.json.error).toMatchObject({ code: 'STOPPING' });
    }
    expect(api.loop.stats().online).toBe(0);
    const stranger = await fetch(`${api.server.url}/v1/health`, { headers: { authorization: 'Bearer wrong' } });
    expect(stranger.status).toBe(401);
  });

  it('takes an online list of 100,000 names and refuses 100,001, naming the field', async () => {
    const api = await startApi();
    const names = (n: number) => Array.from({ length: n }, (_, i) => i.toString(36));
    const refused = await api.call('PUT', '/v1/online', { players: names(100_001) });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toEqual({ code: 'INVALID_FIELD', message: 'players must hold at most 100000 names', field: 'players' });
    expect(api.loop.stats().online).toBe(0);
    const taken = await api.call('PUT', '/v1/online', { players: names(100_000) });
    expect(taken.status).toBe(200);
    expect(taken.json.joined).toHaveLength(100_000);
  }, 60_000);
});

describe('the bridge token', () => {
  const config = { journal: { kind: 'file' }, give: {} } as unknown as BridgeConfig;
  const token = (length: number) => 'x'.repeat(length);

  it(`is refused one character short of ${MIN_TOKEN_LENGTH}, saying the length and never the value`, async () => {
    expect(MIN_TOKEN_LENGTH).toBe(32);
    const error = await readSecrets(config, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: token(31) }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('TEAMGAMES_BRIDGE_TOKEN must be at least 32 characters, got 31 (openssl rand -hex 32 makes one)');
  });

  it('is taken at 32 characters', async () => {
    await expect(readSecrets(config, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: token(32) })).resolves.toMatchObject({ token: token(32) });
  });
});

describe("the loop's staffAfterAttempts", () => {
  const loopWith = (staffAfterAttempts: number) => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    const journal = new MemoryJournal();
  const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal });
    return () => client.startDeliveryLoop({ give: () => undefined, staffAfterAttempts });
  };

  it.each([0, 1_001, 1.5])('refuses %s, naming the option and its range', (value) => {
    const start = loopWith(value);
    expect(start).toThrow(InvalidInputError);
    expect(start).toThrow(/invalid options\.staffAfterAttempts: must be an integer from 1 to 1,000/);
  });

  it.each([1, 1_000])('takes %s', async (value) => {
    const loop = loopWith(value)();
    expect(loop.stats().online).toBe(0);
    await loop.stop();
  });
});
