/**
 * The bridge's HTTP API, in process: a real delivery loop on the mock (its fetch and its
 * clock) and a memory journal, the API on a loopback port. Every route, the token, and
 * every kind of bad request with the field it names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryLoop } from 'teamgames-sdk';
import { createMockService, type MockService } from 'teamgames-sdk/mock';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/http/index.js';
import type { BridgeLogger } from '../../src/bridge/log.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { journalLine, journalWindow } from '../support/journal.js';

const TOKEN = 'bridge-token-0123456789abcdef0123456789';
const silent: BridgeLogger = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };

interface Api {
  url: string;
  loop: DeliveryLoop;
  mock: MockService;
  given: DeliveredItem[];
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; text: string; headers: Headers }>;
}

const open: Array<{ server: BridgeServer; loop: DeliveryLoop }> = [];
afterEach(async () => {
  for (const { server, loop } of open.splice(0)) {
    await server.close(0);
    await loop.stop();
  }
});

async function startApi(apiKey = KEY, journal = new MemoryJournal()): Promise<Api> {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const client = new StorefrontClient({ apiKey, fetch: mock.fetch, now: mock.clock.now, journal });
  const given: DeliveredItem[] = [];
  const loop = client.startDeliveryLoop({ give: (item) => void given.push(item), giveVoteReward: () => undefined, claimMode: 'fast' });
  const metrics = createMetrics(() => loop.stats());
  const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics, log: silent, journal, token: TOKEN, redact: (t) => t, host: '127.0.0.1', port: 0 });
  open.push({ server, loop });
  return {
    url: server.url,
    loop,
    mock,
    given,
    async call(method, path, body, headers = {}) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, json, text, headers: response.headers };
    },
  };
}

describe('the HTTP API: the token', () => {
  it('answers 401 without a token, with a wrong one, and with the token in another scheme', async () => {
    const api = await startApi();
    for (const authorization of ['', `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN]) {
      const answer = await api.call('POST', '/v1/join', { player: 'Steve' }, { authorization });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.json).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.stringContaining('bearer token') } });
    }
    // Unknown routes too: nothing is told to a caller without the token.
    expect((await api.call('GET', '/nope', undefined, { authorization: '' })).status).toBe(401);
    expect(api.loop.stats().online).toBe(0);
  });
});

describe('the HTTP API: each route', () => {
  it('join, leave and the whole list keep the loop online set', async () => {
    const api = await startApi();
    expect((await api.call('POST', '/v1/join', { player: 'Steve' })).json).toEqual({ ok: true });
    expect((await api.call('POST', '/v1/join', { player: 'Alex' })).json).toEqual({ ok: true });
    expect(api.loop.stats().online).toBe(2);
    expect((await api.call('PUT', '/v1/online', { players: ['Alex', 'Notch'] })).json).toEqual({ ok: true, joined: ['Notch'], left: ['Steve'] });
    expect((await api.call('POST', '/v1/leave', { player: 'Notch' })).json).toEqual({ ok: true });
    expect(api.loop.stats().online).toBe(1);
    // The list after a leave: only who is still online leaves; a name listed twice joins once.
    expect((await api.call('PUT', '/v1/online', { players: [] })).json).toEqual({ ok: true, joined: [], left: ['Alex'] });
    expect((await api.call('PUT', '/v1/online', { players: ['Steve', 'Steve'] })).json).toEqual({ ok: true, joined: ['Steve'], left: [] });
    expect((await api.call('PUT', '/v1/online', { players: ['Steve'] })).json).toEqual({ ok: true, joined: [], left: [] });
    expect(api.loop.stats().online).toBe(1);
  });

  it('claim answers the report with its player text (an offline player: OFFLINE at once; online: the end-to-end suite)', async () => {
    const api = await startApi();
    const offline = await api.call('POST', '/v1/claim', { player: 'Alex' });
    expect(offline.status).toBe(200);
    expect(offline.json).toEqual({ code: 'OFFLINE', message: expect.any(String), granted: 0, pending: 0 });
    expect(offline.json.message).not.toBe('');
  });

  it('vote answers the report; a bad amount or reward names its field', async () => {
    const api = await startApi();
    await api.call('POST', '/v1/join', { player: 'Steve' });
    const none = await api.call('POST', '/v1/vote', { player: 'Steve', reward: '1', amount: 1 });
    expect(none.status).toBe(200);
    expect(none.json).toMatchObject({ code: 'NOT_VOTED', message: expect.any(String) });
    api.mock.recordVote(KEY, 'Steve', 3);
    const vote = await api.call('POST', '/v1/vote', { player: 'Steve', reward: '1', amount: 1 });
    expect(vote.status).toBe(200);
    expect(vote.json).toMatchObject({ code: 'SUCCESS', message: expect.stringMatching(/^You have claimed 1 x /) });
    expect((await api.call('POST', '/v1/vote', { player: 'Steve', reward: '1', amount: 0 })).json.error).toMatchObject({ code: 'INVALID_FIELD', field: 'amount' });
    expect((await api.call('POST', '/v1/vote', { player: 'Steve', reward: {}, amount: 'all' })).json.error).toMatchObject({ code: 'INVALID_FIELD', field: 'reward' });
  });

  it("status is the loop's view of one player (a name with a space, URL-encoded)", async () => {
    const api = await startApi();
    await api.call('POST', '/v1/join', { player: 'Big Steve' });
    const status = await api.call('GET', '/v1/players/Big%20Steve/status');
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ playerName: 'Big Steve', online: true, pending: [], openWindows: [] });
  });

  it('status writes its times as ISO 8601 strings (nextCheckAt, a line\'s recordedAt and last failure, a window\'s from and to); the store\'s item as it is', async () => {
    const journal = new MemoryJournal();
    const line = { ...journalLine('invoice:1', 'Steve'), recordedAt: T0, lastError: { message: 'the game refused', at: T0 + 1_000, attempts: 2 } };
    await journal.append([line, journalWindow('claim:w', 'Steve', { from: T0, to: T0 + 10_000 })]);
    const api = await startApi(KEY, journal);
    const iso = (ms: number) => new Date(ms).toISOString();
    const steve = (await api.call('GET', '/v1/players/Steve/status')).json;
    expect(steve.pending).toEqual([expect.objectContaining({ deliveryId: 'invoice:1', recordedAt: iso(T0), lastError: { message: 'the game refused', at: iso(T0 + 1_000), attempts: 2 }, item: line.item })]);
    expect(steve.openWindows).toEqual([expect.objectContaining({ from: iso(T0), to: iso(T0 + 10_000), recordedAt: iso(1_767_225_611_000) })]);
    await api.call('POST', '/v1/join', { player: 'Alex' });
    await expect.poll(async () => (await api.call('GET', '/v1/players/Alex/status')).json.nextCheckAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('health says ok with the counts; metrics are Prometheus text with the names', async () => {
    const api = await startApi();
    await api.call('POST', '/v1/join', { player: 'Steve' });
    const health = await api.call('GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ ok: true, paused: false, online: 1 });
    const metrics = await api.call('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const name of ['teamgames_bridge_calls_total', 'teamgames_bridge_previews_total', 'teamgames_bridge_claims_total', 'teamgames_bridge_granted_total', 'teamgames_bridge_pending', 'teamgames_bridge_unverified_total', 'teamgames_bridge_errors_total', 'teamgames_bridge_paused', 'teamgames_bridge_interval_seconds', 'teamgames_bridge_online_players 1', 'teamgames_bridge_blocked_players', 'teamgames_bridge_backing_off_items']) {
      expect(metrics.text).toContain(name);
    }
    expect(metrics.text).toMatch(/teamgames_bridge_http_requests_total\{route="join",status="200"\} 1/);
    // Every sample line parses: name, optional labels, a number.
    for (const line of metrics.text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$/);
  });
});

describe('the HTTP API: health when the service refuses the key', () => {
  it('answers 503 with ok: false while the loop is paused', async () => {
    const api = await startApi('not-a-key-of-this-store');
    await api.call('POST', '/v1/join', { player: 'Steve' });
    await expect.poll(() => api.loop.stats().paused).toBe(true);
    const health = await api.call('GET', '/v1/health');
    expect(health).toMatchObject({ status: 503, json: { ok: false, paused: true, online: 1 } });
    expect((await api.call('GET', '/metrics')).text).toMatch(/^teamgames_bridge_paused 1$/m);
  });
});

describe('the HTTP API: bad requests', () => {
  it('400 names the field: a missing player, a wrong type, a control character, a bad list entry', async () => {
    const api = await startApi();
    expect(await api.call('POST', '/v1/join', {})).toMatchObject({ status: 400, json: { error: { code: 'INVALID_FIELD', field: 'player' } } });
    expect(await api.call('POST', '/v1/join', { player: 42 })).toMatchObject({ status: 400, json: { error: { field: 'player' } } });
    expect(await api.call('POST', '/v1/claim', { player: 'Ste\u001bve' })).toMatchObject({ status: 400, json: { error: { field: 'player', message: 'player must not contain control or bidi-override characters' } } });
    expect(await api.call('POST', '/v1/join', { player: 'x'.repeat(100_000) })).toMatchObject({ status: 413 });
    expect(await api.call('PUT', '/v1/online', { players: ['Alex', ''] })).toMatchObject({ status: 400, json: { error: { field: 'players[1]', message: 'players[1] must not be blank' } } });
    expect(await api.call('PUT', '/v1/online', { players: 'Alex' })).toMatchObject({ status: 400, json: { error: { field: 'players' } } });
    expect(await api.call('POST', '/v1/join', '{"player":')).toMatchObject({ status: 400, json: { error: { code: 'INVALID_JSON' } } });
    expect(await api.call('POST', '/v1/join', '[]')).toMatchObject({ status: 400, json: { error: { code: 'INVALID_JSON' } } });
    // Nothing half-done: the online set is as it was.
    expect(api.loop.stats().online).toBe(0);
  });

  it('404 for an unknown route, 405 with Allow for a wrong method, 415 for a body that is not JSON, 413 for a large one', async () => {
    const api = await startApi();
    expect(await api.call('GET', '/v1/nope')).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    const wrong = await api.call('GET', '/v1/join');
    expect(wrong).toMatchObject({ status: 405, json: { error: { code: 'METHOD_NOT_ALLOWED' } } });
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await api.call('POST', '/v1/join', 'player=Steve', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({ status: 415, json: { error: { code: 'UNSUPPORTED_MEDIA_TYPE' } } });
    expect(await api.call('POST', '/v1/join', { player: 'Steve', pad: 'x'.repeat(17 * 1024) })).toMatchObject({ status: 413, json: { error: { code: 'TOO_LARGE' } } });
    // The whole list may be long: 10,000 players fit.
    const players = Array.from({ length: 10_000 }, (_, i) => `Player_${i}`);
    expect((await api.call('PUT', '/v1/online', { players })).json.joined).toHaveLength(10_000);
  });
});
