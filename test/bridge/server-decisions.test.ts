/**
 * The HTTP API's decisions, in process (issue #46 point 1): the token, the body's type and
 * limits (declared and streamed), the JSON object rule, each route's refusals and answers,
 * the 503 while stopping, how a failure becomes a status (and which are logged), and what
 * the metrics are told. The loop is a stand-in that records what it is asked, so each
 * answer is exactly the one the route builds; the windows route runs on a real journal.
 *
 * The API (and the SDK it uses) is loaded afresh before each test: the route table, the
 * bodies' schemas and limits and the paths' patterns are module-level decisions, and a
 * module loaded once before any test would hide a change to them (StrykerJS's mutants of
 * module-level code, issue #46). Everything of the SDK a test uses comes from that fresh
 * load, so its classes are the ones the API checks errors against.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type * as Sdk from 'teamgames-sdk';
import type { DeliveryLoop, DeliveryLoopStats } from 'teamgames-sdk';
import type { BridgeLogger } from '../../src/bridge/log.js';
import type { BridgeMetrics } from '../../src/bridge/metrics.js';
import type * as RosterModule from '../../src/bridge/roster.js';
import type * as Http from '../../src/bridge/http/index.js';
import type * as Routes from '../../src/bridge/http/routes.js';
import type { BridgeServer } from '../../src/bridge/http/index.js';
import { journalWindow } from '../support/journal.js';

let InvalidInputError: typeof Sdk.InvalidInputError;
let JournalError: typeof Sdk.JournalError;
let MemoryJournal: typeof Sdk.MemoryJournal;
let Roster: typeof RosterModule.Roster;
let ApiError: typeof Http.ApiError;
let closeGracefully: typeof Http.closeGracefully;
let listenOn: typeof Http.listenOn;
let startBridgeServer: typeof Http.startBridgeServer;
let routeList: typeof Http.routeList;
let checkedBody: typeof Routes.checkedBody;

beforeEach(async () => {
  vi.resetModules();
  ({ InvalidInputError, JournalError, MemoryJournal } = await import('teamgames-sdk'));
  ({ Roster } = await import('../../src/bridge/roster.js'));
  ({ ApiError, closeGracefully, listenOn, startBridgeServer, routeList } = await import('../../src/bridge/http/index.js'));
  ({ checkedBody } = await import('../../src/bridge/http/routes.js'));
});

const TOKEN = 'server-decisions-token-0123456789abcdef';
const SMALL = 16 * 1024;
const LIST = 1024 * 1024;

const STATS: DeliveryLoopStats = { online: 2, calls: 9, previews: 5, claims: 4, granted: 3, pending: 1, unverified: 0, errors: 7, lastError: undefined, intervalMs: 30_000, maxCallsInOneSecond: 2, paused: false, blocked: 1, backingOff: 2, hints: 0 };

interface Fake {
  loop: DeliveryLoop;
  calls: unknown[][];
  stats: DeliveryLoopStats;
  /** What the next claim/claimVote/status/expect does (a value to resolve, or a function to run). */
  next: { claim?: () => unknown; status?: () => unknown; expect?: () => unknown };
}

function fakeLoop(): Fake {
  const fake: Fake = { calls: [], stats: { ...STATS }, next: {}, loop: undefined as unknown as DeliveryLoop };
  const report = { code: 'SUCCESS', message: 'You got it', granted: [{}, {}], pending: 1, extra: 'not answered' };
  fake.loop = {
    join: (p: string) => void fake.calls.push(['join', p]),
    leave: (p: string) => void fake.calls.push(['leave', p]),
    claim: async (p: string) => (fake.calls.push(['claim', p]), (fake.next.claim ?? (() => report))()),
    claimVote: async (p: string, input: unknown) => (fake.calls.push(['claimVote', p, input]), (fake.next.claim ?? (() => report))()),
    stats: () => fake.stats,
    status: async (p: string) => (fake.calls.push(['status', p]), (fake.next.status ?? (() => ({ playerName: p })))()),
    expect: (p: string, hint: unknown) => (fake.calls.push(['expect', p, hint]), (fake.next.expect ?? (() => 'held'))()),
    stop: async () => undefined,
  } as unknown as DeliveryLoop;
  return fake;
}

interface Api {
  server: BridgeServer;
  fake: Fake;
  journal: Sdk.MemoryJournal;
  requests: Array<[string, number]>;
  logged: Array<[string, string, Record<string, unknown> | undefined]>;
  call(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string | number>; chunks?: string[] }): Promise<{ status: number; json: any; text: string; headers: Record<string, string | string[] | undefined> }>;
}

const open: BridgeServer[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close(0);
});

async function startApi(extra: { openWindows?: () => Promise<number>; redact?: (t: string) => string; metricsText?: string } = {}): Promise<Api> {
  const fake = fakeLoop();
  const journal = new MemoryJournal();
  const requests: Array<[string, number]> = [];
  const logged: Api['logged'] = [];
  const record = (level: string) => (message: string, fields?: Record<string, unknown>) => void logged.push([level, message, fields]);
  const log: BridgeLogger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error'), flush() {} };
  const metrics: BridgeMetrics = { request: (route, status) => void requests.push([route, status]), text: async () => extra.metricsText ?? 'teamgames_x 1\n', contentType: 'text/plain; version=0.0.4' } as BridgeMetrics;
  const server = await startBridgeServer({
    loop: fake.loop,
    roster: new Roster(fake.loop),
    metrics,
    log,
    journal,
    token: TOKEN,
    redact: extra.redact ?? ((t) => t),
    ...(extra.openWindows === undefined ? {} : { openWindows: extra.openWindows }),
    host: '127.0.0.1',
    port: 0,
  });
  open.push(server);
  const call: Api['call'] = (method, path, options = {}) =>
    new Promise((resolve, reject) => {
      const { body, chunks } = options;
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string | number> = {
        authorization: `Bearer ${TOKEN}`,
        connection: 'keep-alive',
        ...(text === undefined && chunks === undefined ? {} : { 'content-type': 'application/json' }),
        ...(text === undefined ? {} : { 'content-length': Buffer.byteLength(text) }),
        ...options.headers,
      };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      const req = request(`${server.url}${path}`, { method, headers, agent: false }, (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (out += c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(out);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text: out, headers: res.headers });
        });
      });
      req.on('error', reject);
      if (chunks !== undefined) for (const c of chunks) req.write(c);
      req.end(text);
    });
  return { server, fake, journal, requests, logged, call };
}

describe('the token', () => {
  it('is checked before the route: 401 with WWW-Authenticate, counted as "unauthorized", for a wrong token, none, and any route', async () => {
    const api = await startApi();
    for (const [path, authorization] of [['/v1/health', `Bearer ${TOKEN}x`], ['/v1/health', ''], ['/nowhere', 'Bearer nope'], ['/v1/health', `bearer ${TOKEN}`]] as const) {
      const r = await api.call('GET', path, { headers: { authorization } });
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Bearer');
      expect(r.json).toEqual({ error: { code: 'UNAUTHORIZED', message: 'missing or wrong bearer token (Authorization: Bearer <TEAMGAMES_BRIDGE_TOKEN>)' } });
    }
    expect(api.requests).toEqual([['unauthorized', 401], ['unauthorized', 401], ['unauthorized', 401], ['unauthorized', 401]]);
    expect(api.fake.calls).toEqual([]);
  });

  it('answers a good token with the JSON type and no-store, through the redaction', async () => {
    const api = await startApi({ redact: (t) => t.replaceAll('You got it', '<redacted>') });
    const r = await api.call('POST', '/v1/claim', { body: { player: 'Steve' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.json).toEqual({ code: 'SUCCESS', message: '<redacted>', granted: 2, pending: 1 });
    expect(api.requests).toEqual([['claim', 200]]);
  });
});

describe('routes', () => {
  it('404 names the path; 405 says the methods the path takes in Allow; the status pattern matches one path segment only', async () => {
    const api = await startApi();
    const missing = await api.call('GET', '/v1/nope?x=1');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toEqual({ code: 'NOT_FOUND', message: 'no route /v1/nope (see the guide\'s "A bridge for any game server")' });
    expect(missing.headers.allow).toBeUndefined();
    expect(missing.headers['www-authenticate']).toBeUndefined();
    expect((await api.call('GET', '/v1/players/a/b/status')).status).toBe(404);
    expect((await api.call('GET', '/v1/players//status')).status).toBe(404);
    expect((await api.call('GET', '/x/v1/health')).status).toBe(404);
    const wrong = await api.call('POST', '/v1/online', { body: { players: [] } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('PUT');
    expect(wrong.json.error).toEqual({ code: 'METHOD_NOT_ALLOWED', message: '/v1/online takes PUT' });
    expect((await api.call('DELETE', '/v1/health')).headers.allow).toBe('GET');
    expect(api.requests).toEqual([['unknown', 404], ['unknown', 404], ['unknown', 404], ['unknown', 404], ['unknown', 405], ['unknown', 405]]);
  });

  it('join and leave hand the checked name to the loop; the whole list answers who joined and left', async () => {
    const api = await startApi();
    expect((await api.call('POST', '/v1/join', { body: { player: 'Big Steve' } })).json).toEqual({ ok: true });
    expect((await api.call('POST', '/v1/leave', { body: { player: 'Big Steve' } })).json).toEqual({ ok: true });
    expect((await api.call('PUT', '/v1/online', { body: { players: ['Alex'] } })).json).toEqual({ ok: true, joined: ['Alex'], left: [] });
    expect(api.fake.calls).toEqual([['join', 'Big Steve'], ['leave', 'Big Steve'], ['join', 'Alex']]);
    expect(api.requests).toEqual([['join', 200], ['leave', 200], ['online', 200]]);
  });

  it('a player that is not a string, or breaks the name rule, is a 400 naming the field with the rule', async () => {
    const api = await startApi();
    expect((await api.call('POST', '/v1/join', { body: { player: 7 } })).json.error).toEqual({ code: 'INVALID_FIELD', message: "player must be a string (the player's exact name)", field: 'player' });
    expect((await api.call('POST', '/v1/leave', { body: { player: ' ' } })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'player must not be blank', field: 'player' });
    expect((await api.call('PUT', '/v1/online', { body: { players: ['Alex', 3] } })).json.error).toEqual({ code: 'INVALID_FIELD', message: "players[1] must be a string (the player's exact name)", field: 'players[1]' });
    expect((await api.call('PUT', '/v1/online', { body: { players: {} } })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'players must be an array of names (every player online now)', field: 'players' });
    expect(api.fake.calls).toEqual([]);
  });

  it('the online list takes exactly 100,000 names and refuses 100,001', async () => {
    const api = await startApi();
    const names = (n: number) => Array.from({ length: n }, (_, i) => i.toString(36));
    expect((await api.call('PUT', '/v1/online', { body: { players: names(100_001) } })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'players must hold at most 100000 names', field: 'players' });
    expect(api.fake.calls).toEqual([]);
    expect((await api.call('PUT', '/v1/online', { body: { players: names(100_000) } })).status).toBe(200);
    expect(api.fake.calls).toHaveLength(100_000);
  });

  it('vote takes a reward id (a non-blank string or a positive safe integer) and an amount (a positive safe integer or "all")', async () => {
    const api = await startApi();
    const vote = (reward: unknown, amount: unknown) => api.call('POST', '/v1/vote', { body: { player: 'Steve', reward, amount } });
    for (const [reward, amount] of [['7', 1], [1, 'all'], [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]] as const) {
      expect((await vote(reward, amount)).json).toEqual({ code: 'SUCCESS', message: 'You got it', granted: 2, pending: 1 });
    }
    expect(api.fake.calls).toEqual([['claimVote', 'Steve', { reward: '7', amount: 1 }], ['claimVote', 'Steve', { reward: 1, amount: 'all' }], ['claimVote', 'Steve', { reward: Number.MAX_SAFE_INTEGER, amount: Number.MAX_SAFE_INTEGER }]]);
    const rewardRule = { code: 'INVALID_FIELD', message: 'reward must be the reward id (a string or a positive integer)', field: 'reward' };
    for (const reward of [' ', '', 0, -1, 1.5, 2 ** 53, null, undefined, true]) expect((await vote(reward, 1)).json.error).toEqual(rewardRule);
    const amountRule = { code: 'INVALID_FIELD', message: 'amount must be a positive integer or "all"', field: 'amount' };
    for (const amount of [0, -1, 1.5, 2 ** 53, '1', 'ALL', null, undefined]) expect((await vote('7', amount)).json.error).toEqual(amountRule);
    expect((await vote('7', 1)).status).toBe(200);
    expect(api.fake.calls).toHaveLength(4);
  });

  it('status decodes the name in the path, refuses one that is not URL-encoded UTF-8 or breaks the rule', async () => {
    const api = await startApi();
    expect((await api.call('GET', '/v1/players/Big%20Steve/status')).json).toEqual({ playerName: 'Big Steve' });
    expect((await api.call('GET', '/v1/players/%E0%A4%A/status')).json.error).toEqual({ code: 'INVALID_FIELD', message: 'the player in the path must be URL-encoded UTF-8', field: 'player' });
    expect((await api.call('GET', '/v1/players/%20/status')).json.error).toEqual({ code: 'INVALID_FIELD', message: 'player must not be blank', field: 'player' });
    expect(api.fake.calls).toEqual([['status', 'Big Steve']]);
    expect(api.requests).toEqual([['status', 200], ['status', 400], ['status', 400]]);
  });

  it("status writes only the time fields' finite numbers in Date's range as ISO text, errors as name, code and message, and the store's objects as they are", async () => {
    const api = await startApi();
    const at = 1_767_225_600_000;
    api.fake.next.status = () => ({
      nextCheckAt: at,
      since: 8.64e15,
      sending: -8.64e15,
      retryAt: 8.64e15 + 1,
      at: Number.POSITIVE_INFINITY,
      from: 'soon',
      to: null,
      count: at,
      lastError: Object.assign(new Error('the game refused'), { code: 'GAME_DOWN', stack: 'secret stack' }),
      other: new TypeError('bad'),
      pending: [{ recordedAt: at, item: { recordedAt: at, at }, reward: { to: at }, lastError: { at, attempts: 2 } }],
      backoff: { retryAt: at, from: at, to: at },
    });
    const r = await api.call('GET', '/v1/players/Steve/status');
    expect(r.json).toEqual({
      nextCheckAt: '2026-01-01T00:00:00.000Z',
      since: new Date(8.64e15).toISOString(),
      sending: new Date(-8.64e15).toISOString(),
      retryAt: 8.64e15 + 1,
      at: null,
      from: 'soon',
      to: null,
      count: at,
      lastError: { name: 'Error', message: 'the game refused', code: 'GAME_DOWN' },
      other: { name: 'TypeError', message: 'bad' },
      pending: [{ recordedAt: '2026-01-01T00:00:00.000Z', item: { recordedAt: at, at }, reward: { to: at }, lastError: { at: '2026-01-01T00:00:00.000Z', attempts: 2 } }],
      backoff: { retryAt: '2026-01-01T00:00:00.000Z', from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('health: 200 and ok while running, 503 and not ok while paused; openWindows counted, null when the count fails, absent without a counter', async () => {
    const counted = await startApi({ openWindows: async () => 3 });
    const health = await counted.call('GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ ok: true, paused: false, online: 2, pending: 1, blocked: 1, backingOff: 2, unverified: 0, openWindows: 3, errors: 7, intervalMs: 30_000, hints: 0 });
    // The shared journal's hints that cannot be read: their error as name, code and message (nothing that could hold a header), the loop still ok.
    counted.fake.stats.sharedHintsError = Object.assign(new JournalError('PostgresJournal: could not read the checkout hints: connection refused'), { headers: { authorization: 'Bearer x' } });
    expect((await counted.call('GET', '/v1/health')).json).toMatchObject({ ok: true, sharedHintsError: { name: 'JournalError', message: 'PostgresJournal: could not read the checkout hints: connection refused' } });
    expect(JSON.stringify((await counted.call('GET', '/v1/health')).json)).not.toContain('Bearer');
    delete counted.fake.stats.sharedHintsError;
    counted.fake.stats.paused = true;
    const paused = await counted.call('GET', '/v1/health');
    expect(paused.status).toBe(503);
    expect(paused.json).toMatchObject({ ok: false, paused: true });
    expect(counted.requests).toEqual([['health', 200], ['health', 200], ['health', 200], ['health', 503]]);
    const failing = await startApi({ openWindows: async () => Promise.reject(new Error('journal down')) });
    expect((await failing.call('GET', '/v1/health')).json.openWindows).toBeNull();
    const none = await startApi();
    expect(Object.keys((await none.call('GET', '/v1/health')).json)).not.toContain('openWindows');
  });

  it('metrics answer the registry text with its own content type', async () => {
    const api = await startApi({ metricsText: 'teamgames_bridge_up 1\n' });
    const r = await api.call('GET', '/metrics');
    expect(r).toMatchObject({ status: 200, text: 'teamgames_bridge_up 1\n' });
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4');
    expect(r.headers['cache-control']).toBeUndefined();
  });

  it('expect hands the loop the player and only the hint fields the body gives: 200 with the outcome', async () => {
    const api = await startApi();
    const hint = (body: Record<string, unknown>) => api.call('POST', '/v1/expect', { body: { player: 'Steve', ...body } });
    expect((await hint({})).json).toEqual({ ok: true, outcome: 'held' });
    expect((await hint({ transactionId: 't-1' })).status).toBe(200);
    expect((await hint({ expiresInMs: 60_000 })).status).toBe(200);
    expect((await hint({ transactionId: 't-2', expiresInMs: 90_000 })).status).toBe(200);
    // Strictly: a field the body left out is not handed on as `undefined`.
    expect(api.fake.calls).toStrictEqual([
      ['expect', 'Steve', {}],
      ['expect', 'Steve', { transactionId: 't-1' }],
      ['expect', 'Steve', { expiresInMs: 60_000 }],
      ['expect', 'Steve', { transactionId: 't-2', expiresInMs: 90_000 }],
    ]);
    expect(api.requests).toEqual([['expect', 200], ['expect', 200], ['expect', 200], ['expect', 200]]);
  });

  it("expect: the loop's refusal of a hint field is a 400 naming it; full, expired and stopped say why (429, 409, 503); anything else thrown is a 500", async () => {
    const api = await startApi();
    const hint = async (next: () => unknown) => {
      api.fake.next.expect = next;
      const r = await api.call('POST', '/v1/expect', { body: { player: 'Steve', expiresInMs: 1 } });
      return { status: r.status, error: r.json.error };
    };
    const refuse = (argument: string) => () => {
      throw new InvalidInputError(argument, 'must be at least 10000');
    };
    expect(await hint(refuse('hint.expiresInMs'))).toEqual({ status: 400, error: { code: 'INVALID_FIELD', message: 'expiresInMs must be at least 10000', field: 'expiresInMs' } });
    // Only a leading `hint.` is the loop's own prefix.
    expect(await hint(refuse('shop.hint.expiresInMs'))).toEqual({ status: 400, error: { code: 'INVALID_FIELD', message: 'shop.hint.expiresInMs must be at least 10000', field: 'shop.hint.expiresInMs' } });
    expect(await hint(() => 'full')).toEqual({ status: 429, error: { code: 'HINTS_FULL', message: 'the delivery loop holds as many checkout hints as it keeps (10,000); the purchase is delivered by the routine polls' } });
    expect(await hint(() => 'expired')).toEqual({
      status: 409,
      error: { code: 'HINT_EXPIRED', message: 'what this hint names had its hint in the last hour (delivered, or its hint expired): it is not claimed for again; the purchase is delivered by the routine polls' },
    });
    expect(await hint(() => 'stopped')).toEqual({ status: 503, error: { code: 'STOPPING', message: 'the bridge is stopping; the purchase is delivered after its restart' } });
    expect(await hint(() => {
      throw new Error('the hints are gone');
    })).toEqual({ status: 500, error: { code: 'INTERNAL', message: 'the hints are gone' } });
    expect(api.requests).toEqual([['expect', 400], ['expect', 400], ['expect', 429], ['expect', 409], ['expect', 503], ['expect', 500]]);
  });
});

describe('the route table', () => {
  const handle = () => ({ status: 200, json: null });

  it('--help lists every route in order: its method, its path, its body as its schema says, its note', () => {
    expect(routeList()).toBe(
      [
        'POST /v1/join {"player"}',
        'POST /v1/leave {"player"}',
        'PUT /v1/online {"players":[…]}',
        'POST /v1/claim {"player"}',
        'POST /v1/vote {"player","reward","amount"}',
        'GET /v1/players/<name>/status',
        'GET /v1/health',
        'POST /v1/expect {"player","transactionId"?,"expiresInMs"?} (a web shop\'s checkout hint)',
        'POST /v1/windows/resolve {"player"?,"windowId"?,"by","note"}',
        'GET /metrics (Prometheus text)',
      ].join('\n'),
    );
  });

  it('shows a body that is not an object as {…}', () => {
    expect(routeList([{ method: 'PUT', path: '/x', name: 'x', note: '(a list)', body: { limit: 1, schema: z.array(z.string()) }, handle }, { method: 'GET', path: '/y', name: 'y', handle }])).toBe('PUT /x {…} (a list)\nGET /y');
  });

  it("names a nested field by its path; an unknown field of a body that is not an object lists no fields; a route without a body reads none", () => {
    const row = (schema: z.ZodType) => ({ method: 'POST' as const, path: '/x', name: 'x', body: { limit: 1, schema }, handle });
    const thrown = (read: () => unknown): unknown => {
      try {
        return read();
      } catch (error) {
        return error;
      }
    };
    const nested = thrown(() => checkedBody(row(z.object({ cart: z.array(z.object({ sku: z.string() })) })), { cart: [{ sku: 'a' }, { sku: 7 }] }));
    expect(nested).toBeInstanceOf(ApiError);
    expect(nested).toMatchObject({ status: 400, code: 'INVALID_FIELD', field: 'cart[1].sku' });
    expect((nested as Error).message).toMatch(/^cart\[1\]\.sku /);
    expect(thrown(() => checkedBody(row(z.array(z.strictObject({ sku: z.string() }))), [{ sku: 'a', color: 'red' }]))).toMatchObject({ status: 400, code: 'INVALID_FIELD', message: 'unknown field "color" ()', field: 'color' });
    expect(checkedBody({ method: 'GET', path: '/y', name: 'y', handle }, { anything: 1 })).toBeUndefined();
  });
});

describe('the body', () => {
  it('must be declared JSON: the media type without its parameters, in any case; otherwise 415', async () => {
    const api = await startApi();
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', ' application/json ;x=1']) {
      expect((await api.call('POST', '/v1/join', { body: { player: 'Steve' }, headers: { 'content-type': type } })).status).toBe(200);
    }
    for (const type of ['text/plain', 'application/json5', '']) {
      const r = await api.call('POST', '/v1/join', { body: { player: 'Steve' }, headers: { 'content-type': type } });
      expect(r.status).toBe(415);
      expect(r.json.error).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'the body must be JSON (Content-Type: application/json)' });
    }
    expect(api.fake.calls).toHaveLength(3);
  });

  it('must be a JSON object: invalid JSON, null, a list or a number is a 400', async () => {
    const api = await startApi();
    expect((await api.call('POST', '/v1/join', { body: '{"player":' })).json.error).toEqual({ code: 'INVALID_JSON', message: 'the body is not valid JSON' });
    expect((await api.call('POST', '/v1/join', { body: '' })).json.error).toEqual({ code: 'INVALID_JSON', message: 'the body is not valid JSON' });
    for (const body of ['null', '[]', '7', '"x"']) {
      expect((await api.call('POST', '/v1/join', { body })).json.error).toEqual({ code: 'INVALID_JSON', message: 'the body must be a JSON object' });
    }
    expect(api.fake.calls).toEqual([]);
  });

  const padded = (bytes: number) => {
    const shell = JSON.stringify({ player: 'Steve', pad: '' });
    return JSON.stringify({ player: 'Steve', pad: 'x'.repeat(bytes - shell.length) });
  };

  it('is taken up to 16 KiB on a small route, declared or streamed, and refused one byte over with 413 (the connection then closed)', async () => {
    const api = await startApi();
    expect(padded(SMALL)).toHaveLength(SMALL);
    expect((await api.call('POST', '/v1/join', { body: padded(SMALL) })).status).toBe(200);
    const declared = await api.call('POST', '/v1/join', { body: padded(SMALL + 1) });
    expect(declared.status).toBe(413);
    expect(declared.json.error).toEqual({ code: 'TOO_LARGE', message: `the body must be at most ${SMALL} bytes` });
    expect(declared.headers.connection).toBe('close');
    const over = padded(SMALL + 1);
    const streamed = await api.call('POST', '/v1/join', { chunks: [over.slice(0, 10_000), over.slice(10_000)] });
    expect(streamed.status).toBe(413);
    expect(streamed.json.error).toEqual({ code: 'TOO_LARGE', message: `the body must be at most ${SMALL} bytes` });
    const exact = padded(SMALL);
    expect((await api.call('POST', '/v1/join', { chunks: [exact.slice(0, 10_000), exact.slice(10_000)] })).status).toBe(200);
    expect(api.fake.calls).toEqual([['join', 'Steve'], ['join', 'Steve']]);
  });

  it('refuses a declared length over the limit before any of the body arrives', async () => {
    const api = await startApi();
    // The body is never sent: only the declared length can answer this request.
    const r = await api.call('POST', '/v1/join', { headers: { 'content-type': 'application/json', 'content-length': SMALL + 1 } });
    expect(r.status).toBe(413);
    expect(r.json.error).toEqual({ code: 'TOO_LARGE', message: `the body must be at most ${SMALL} bytes` });
    expect(r.headers.connection).toBe('close');
    expect(api.fake.calls).toEqual([]);
  });

  it('a complete body answered with an error keeps the connection', async () => {
    const api = await startApi();
    const r = await api.call('POST', '/v1/join', { body: { player: 3 } });
    expect(r.status).toBe(400);
    expect(r.headers.connection).not.toBe('close');
  });

  it('is taken up to 1 MiB on the online list', async () => {
    const api = await startApi();
    const list = (bytes: number) => {
      const shell = JSON.stringify({ players: [''] });
      return JSON.stringify({ players: ['x'.repeat(Math.min(64, bytes - shell.length))], pad: 'y'.repeat(Math.max(0, bytes - shell.length - 64 - 9)) });
    };
    expect(list(LIST)).toHaveLength(LIST);
    const taken = await api.call('PUT', '/v1/online', { body: list(LIST) });
    expect(taken.status).toBe(200);
    expect((await api.call('PUT', '/v1/online', { body: list(LIST + 1) })).json.error).toEqual({ code: 'TOO_LARGE', message: `the body must be at most ${LIST} bytes` });
  });

  it('is not read on a route without one', async () => {
    const api = await startApi();
    const r = await api.call('GET', '/v1/health', { body: 'not json at all', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(200);
  });
});

describe('failures', () => {
  it("a loop's InvalidInputError is a 400 naming the argument as a field; anything else is a 500, logged with its route", async () => {
    const api = await startApi();
    api.fake.next.claim = () => {
      throw new InvalidInputError('playerName', 'must not be given from inside give', 'claim');
    };
    expect((await api.call('POST', '/v1/claim', { body: { player: 'Steve' } })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'must not be given from inside give', field: 'player' });
    api.fake.next.claim = () => {
      throw new InvalidInputError('input.reward', 'must be a reward of this store', 'claimVoteReward');
    };
    expect((await api.call('POST', '/v1/vote', { body: { player: 'Steve', reward: '1', amount: 1 } })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'must be a reward of this store', field: 'reward' });
    expect(api.logged).toEqual([]);
    api.fake.next.claim = () => {
      throw new Error('the journal is gone');
    };
    const failed = await api.call('POST', '/v1/claim', { body: { player: 'Steve' } });
    expect(failed.status).toBe(500);
    expect(failed.json).toEqual({ error: { code: 'INTERNAL', message: 'the journal is gone' } });
    api.fake.next.claim = () => Promise.reject('a bare string');
    expect((await api.call('POST', '/v1/claim', { body: { player: 'Steve' } })).json).toEqual({ error: { code: 'INTERNAL', message: 'a bare string' } });
    expect(api.logged.map(([level, message, fields]) => [level, message, fields?.route])).toEqual([
      ['error', 'HTTP API request failed', 'claim'],
      ['error', 'HTTP API request failed', 'claim'],
    ]);
    expect(api.requests).toEqual([['claim', 400], ['vote', 400], ['claim', 500], ['claim', 500]]);
  });

  it("names the field of a loop's InvalidInputError by its argument: a leading input. dropped, nothing else renamed", async () => {
    const api = await startApi();
    const fields: string[] = [];
    for (const argument of ['input.amount', 'options.input.reward', 'playerNames']) {
      api.fake.next.claim = () => {
        throw new InvalidInputError(argument, 'is refused');
      };
      fields.push((await api.call('POST', '/v1/claim', { body: { player: 'Steve' } })).json.error.field);
    }
    expect(fields).toEqual(['amount', 'options.input.reward', 'playerNames']);
  });

  it('ApiError is named and keeps its status, code and field', () => {
    const error = new ApiError(418, 'TEAPOT', 'no coffee', 'cup');
    expect(error).toMatchObject({ name: 'ApiError', status: 418, code: 'TEAPOT', message: 'no coffee', field: 'cup' });
  });
});

describe('staff resolve a window through the API', () => {
  it('resolves, then answers 409 with the first resolution; unknown fields and bad ones are named', async () => {
    const api = await startApi();
    await api.journal.append([journalWindow('window:w1', 'Steve')]);
    const resolve = (body: unknown) => api.call('POST', '/v1/windows/resolve', { body });
    expect((await resolve({ player: 'Steve', by: 'ann', note: 'given by hand', color: 'red' })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'unknown field "color" (player, windowId, by, note)', field: 'color' });
    expect((await resolve({ player: 9, by: 'ann', note: 'x' })).json.error).toMatchObject({ field: 'player' });
    expect((await resolve({ by: 'ann', note: 'x' })).json.error).toEqual({ code: 'INVALID_FIELD', message: 'player is needed when input.windowId is not given (which window to resolve?)', field: 'player' });
    const noNote = await resolve({ windowId: 'window:w1', by: 'ann' });
    expect(noNote.status).toBe(400);
    expect(noNote.json.error).toMatchObject({ code: 'INVALID_FIELD', field: 'note' });
    expect(noNote.json.error.message).toMatch(/^note /);
    const first = await resolve({ player: 'Steve', by: 'ann', note: 'given by hand' });
    expect(first.status).toBe(200);
    expect(first.json.window).toMatchObject({ deliveryId: 'window:w1', playerName: 'Steve', resolution: { by: 'ann', note: 'given by hand' } });
    expect(api.logged).toEqual([['info', 'window resolved by staff through the HTTP API', { window: 'window:w1', player: 'Steve', by: 'ann' }]]);
    const second = await resolve({ windowId: 'window:w1', by: 'bob', note: 'me too' });
    expect(second.status).toBe(409);
    expect(second.json.error).toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', windowId: 'window:w1', playerName: 'Steve', resolution: { by: 'ann', note: 'given by hand' } });
    expect(second.json.error.message).toContain('already resolved by "ann"');
    expect(api.requests).toEqual([['resolve', 400], ['resolve', 400], ['resolve', 400], ['resolve', 400], ['resolve', 200], ['resolve', 409]]);
  });

  it("a journal's own InvalidInputError is a 400 naming its argument: a leading input. dropped, playerName alone called player", async () => {
    const api = await startApi();
    const fields: string[] = [];
    for (const argument of ['input.playerName', 'input.note', 'row.input.note', 'input.playerNames', 'input.oldplayerName']) {
      api.journal.resolveWindow = async () => {
        throw new InvalidInputError(argument, 'is refused by this journal');
      };
      const r = await api.call('POST', '/v1/windows/resolve', { body: { windowId: 'window:w1', by: 'ann', note: 'x' } });
      expect(r.status).toBe(400);
      expect(r.json.error.message).toBe(`${r.json.error.field} is refused by this journal`);
      fields.push(r.json.error.field);
    }
    expect(fields).toEqual(['player', 'note', 'row.input.note', 'playerNames', 'oldplayerName']);
  });

  it('a journal that fails is a 500', async () => {
    const api = await startApi();
    api.journal.resolveWindow = async () => Promise.reject(new Error('disk gone'));
    const r = await api.call('POST', '/v1/windows/resolve', { body: { windowId: 'window:w1', by: 'ann', note: 'x' } });
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({ code: 'INTERNAL', message: 'resolveWindow: the journal could not record the resolution (disk gone)' });
  });
});

describe('stopping', () => {
  it('stopAccepting: every route with the token answers 503 STOPPING, counted under its route; without the token still 401', async () => {
    const api = await startApi();
    api.server.stopAccepting();
    for (const [method, path, body] of [['GET', '/v1/health'], ['POST', '/v1/join', { player: 'Steve' }], ['GET', '/metrics']] as const) {
      const r = await api.call(method, path, body === undefined ? {} : { body });
      expect(r.status).toBe(503);
      expect(r.json.error).toEqual({ code: 'STOPPING', message: 'the bridge is stopping; try again once it is back' });
    }
    expect((await api.call('GET', '/v1/health', { headers: { authorization: '' } })).status).toBe(401);
    expect((await api.call('GET', '/v1/none')).status).toBe(404);
    expect(api.requests).toEqual([['health', 503], ['join', 503], ['metrics', 503], ['unauthorized', 401], ['unknown', 404]]);
    expect(api.fake.calls).toEqual([]);
  });

  it('close: a request that arrives after it on a connection still busy is answered 503 STOPPING', async () => {
    const api = await startApi();
    let release!: () => void;
    api.fake.next.claim = () => new Promise((resolve) => (release = () => resolve({ code: 'SUCCESS', message: 'ok', granted: [], pending: 0 })));
    const socket = connect(Number(new URL(api.server.url).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    const body = JSON.stringify({ player: 'Steve' });
    socket.write(`POST /v1/claim HTTP/1.1\r\nhost: bridge\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    await expect.poll(() => api.fake.calls.length).toBe(1);
    const closed = api.server.close(5_000);
    open.splice(0);
    socket.write(`GET /v1/health HTTP/1.1\r\nhost: bridge\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`);
    release();
    await expect.poll(() => (received.match(/HTTP\/1\.1 /g) ?? []).length).toBe(2);
    socket.destroy();
    await ended;
    await closed;
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/).map((answer) => answer.split('\r\n')[0]);
    expect([first, second]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 503 Service Unavailable']);
    expect(received).toContain('{"error":{"code":"STOPPING","message":"the bridge is stopping; try again once it is back"}}');
    expect(api.requests).toEqual([['claim', 200], ['health', 503]]);
  });

  it('close closes a connection still busy once the grace is over', async () => {
    const api = await startApi();
    let release!: () => void;
    api.fake.next.claim = () => new Promise<never>((resolve) => (release = () => resolve(undefined as never)));
    const busy = api.call('POST', '/v1/claim', { body: { player: 'Steve' } }).catch((error: unknown) => error);
    await expect.poll(() => api.fake.calls.length).toBe(1);
    const closed = api.server.close(10);
    open.splice(0);
    await closed;
    const outcome = await busy;
    release();
    expect(outcome).toMatchObject({ code: 'ECONNRESET' });
  });
});

describe('the listener', () => {
  it('says an IPv6 address in brackets, keeps idle connections 5 s, and rejects with the listen error', async () => {
    const { createServer } = await import('node:http');
    const server = createServer();
    const url = await listenOn(server, '::1', 0).catch(() => undefined);
    // branch: a machine without an IPv6 loopback cannot listen on ::1 (the IPv4 case below runs everywhere)
    if (url !== undefined) {
      expect(url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      await closeGracefully(server, 0);
    }
    const v4 = createServer();
    const url4 = await listenOn(v4, '127.0.0.1', 0);
    expect(url4).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(v4.keepAliveTimeout).toBe(5_000);
    const taken = createServer();
    await expect(listenOn(taken, '127.0.0.1', Number(new URL(url4).port))).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(v4.listenerCount('error')).toBe(0);
    await closeGracefully(v4, 0);
  });
});
