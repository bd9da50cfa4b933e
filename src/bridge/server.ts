/**
 * The bridge's HTTP API for the game (node:http, loopback by default): every request
 * carries the bridge's bearer token (compared in constant time); bodies are JSON, small;
 * a bad request gets a 4xx with a JSON error naming the field, and nothing is lost. The
 * routes are data (one row each); one function does the HTTP work.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redact } from '../cli/shared.js';
import { redactValue } from '../cli/shared.js';
import { playerNameProblem } from '../common/player-name.js';
import type { DeliveryLoop } from '../index.js';
import { InvalidInputError, isStorefrontError } from '../errors.js';
import { resolveWindow } from '../delivery/staff/index.js';
import type { DeliveryJournal } from '../journals/contract.js';
import { plainError, type BridgeLogger } from './log.js';
import type { BridgeMetrics } from './metrics.js';
import type { Roster } from './roster.js';

/** A JSON error answer, with its status. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** What a route answers: a status and a JSON value (or Prometheus text). */
type Answer = { status: number; json: unknown } | { status: number; text: string; contentType: string };

interface Context {
  loop: DeliveryLoop;
  roster: Roster;
  metrics: BridgeMetrics;
  journal: DeliveryJournal;
  log: BridgeLogger;
  openWindows: (() => Promise<number>) | undefined;
}

interface Route {
  method: 'GET' | 'POST' | 'PUT';
  /** The path, or a pattern whose first group is the player's name. */
  path: string | RegExp;
  /** The metrics' label. */
  name: string;
  /** The body's limit in bytes, when the route takes a body. */
  bodyLimit?: number;
  handle(ctx: Context, body: Record<string, unknown>, param: string | undefined): Promise<Answer> | Answer;
}

const SMALL = 16 * 1024;
// The whole list of players: 10,000 names fit.
const LIST = 1024 * 1024;
const MAX_PLAYERS = 100_000;

function player(value: unknown, field = 'player'): string {
  if (typeof value !== 'string') throw new ApiError(400, 'INVALID_FIELD', `${field} must be a string (the player's exact name)`, field);
  const problem = playerNameProblem(value);
  if (problem !== undefined) throw new ApiError(400, 'INVALID_FIELD', `${field} ${problem}`, field);
  return value;
}

function playerList(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ApiError(400, 'INVALID_FIELD', 'players must be an array of names (every player online now)', 'players');
  if (value.length > MAX_PLAYERS) throw new ApiError(400, 'INVALID_FIELD', `players must hold at most ${MAX_PLAYERS} names`, 'players');
  const names: string[] = [];
  for (let i = 0; i < value.length; i++) names.push(player(value[i], `players[${i}]`));
  return names;
}

const ok = (json: unknown = { ok: true }): Answer => ({ status: 200, json });

const RESOLVE_FIELDS = ['player', 'windowId', 'by', 'note'];

/**
 * Staff close a window while the bridge runs (`teamgames journal resolve --bridge`):
 * `resolveWindow` on the bridge's own journal, so the one-winner rule and the audit trail
 * are the journal's, as from the CLI. A window resolved first answers 409 with the first
 * resolution (who, when, the note).
 */
async function resolveRoute(c: Context, b: Record<string, unknown>): Promise<Answer> {
  const unknown = Object.keys(b).find((k) => !RESOLVE_FIELDS.includes(k));
  if (unknown !== undefined) throw new ApiError(400, 'INVALID_FIELD', `unknown field ${JSON.stringify(unknown)} (player, windowId, by, note)`, unknown);
  const input = {
    ...(b.player === undefined ? {} : { playerName: player(b.player) }),
    ...(b.windowId === undefined ? {} : { windowId: b.windowId }),
    by: b.by,
    note: b.note,
  } as Parameters<typeof resolveWindow>[1];
  try {
    const window = await resolveWindow(c.journal, input);
    c.log.info('window resolved by staff through the HTTP API', { window: window.deliveryId, player: window.playerName, by: window.resolution?.by });
    return ok({ window });
  } catch (error) {
    if (isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')) {
      return { status: 409, json: { error: { code: error.code, message: error.message, windowId: error.windowId, playerName: error.playerName, resolution: error.resolution } } };
    }
    if (error instanceof InvalidInputError) {
      const field = error.argument.replace(/^input\./, '').replace(/^playerName$/, 'player');
      throw new ApiError(400, 'INVALID_FIELD', `${field} ${error.rule}`, field);
    }
    throw error;
  }
}

/** Errors a status view holds, as plain fields. */
function plainErrors(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const [k, v] of Object.entries(out)) out[k] = plainError(v);
  return out;
}

/** The fields of a status that are times (epoch ms in the SDK). */
const TIME_FIELDS = new Set(['nextCheckAt', 'since', 'recordedAt', 'retryAt', 'sending', 'at', 'from', 'to']);
/** Objects of the store's own wire format, kept as the store wrote them. */
const WIRE_FIELDS = new Set(['item', 'reward']);

/** A status with its times as ISO 8601 strings (UTC), as every other time in the API is written; the store's wire objects as they are. */
function isoTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(isoTimes);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = WIRE_FIELDS.has(k) ? v : TIME_FIELDS.has(k) && typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= 8.64e15 ? new Date(v).toISOString() : isoTimes(v);
  }
  return out;
}

const ROUTES: Route[] = [
  { method: 'POST', path: '/v1/join', name: 'join', bodyLimit: SMALL, handle: (c, b) => (c.roster.join(player(b.player)), ok()) },
  { method: 'POST', path: '/v1/leave', name: 'leave', bodyLimit: SMALL, handle: (c, b) => (c.roster.leave(player(b.player)), ok()) },
  { method: 'PUT', path: '/v1/online', name: 'online', bodyLimit: LIST, handle: (c, b) => ok({ ok: true, ...c.roster.replace(playerList(b.players)) }) },
  {
    method: 'POST',
    path: '/v1/claim',
    name: 'claim',
    bodyLimit: SMALL,
    handle: async (c, b) => {
      const report = await c.loop.claim(player(b.player));
      return ok({ code: report.code, message: report.message, granted: report.granted.length, pending: report.pending });
    },
  },
  {
    method: 'POST',
    path: '/v1/vote',
    name: 'vote',
    bodyLimit: SMALL,
    handle: async (c, b) => {
      const name = player(b.player);
      const reward = b.reward;
      if ((typeof reward !== 'string' || reward.trim() === '') && (typeof reward !== 'number' || !Number.isSafeInteger(reward) || reward < 1)) {
        throw new ApiError(400, 'INVALID_FIELD', 'reward must be the reward id (a string or a positive integer)', 'reward');
      }
      const amount = b.amount;
      if (amount !== 'all' && (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1)) {
        throw new ApiError(400, 'INVALID_FIELD', 'amount must be a positive integer or "all"', 'amount');
      }
      const report = await c.loop.claimVote(name, { reward, amount });
      return ok({ code: report.code, message: report.message, granted: report.granted.length, pending: report.pending });
    },
  },
  {
    method: 'GET',
    path: /^\/v1\/players\/([^/]+)\/status$/,
    name: 'status',
    handle: async (c, _, param) => {
      let name: string;
      try {
        name = decodeURIComponent(param as string);
      } catch {
        throw new ApiError(400, 'INVALID_FIELD', 'the player in the path must be URL-encoded UTF-8', 'player');
      }
      return ok(isoTimes(plainErrors((await c.loop.status(player(name))) as unknown as Record<string, unknown>)));
    },
  },
  {
    method: 'GET',
    path: '/v1/health',
    name: 'health',
    handle: async (c) => {
      const s = c.loop.stats();
      // Windows staff have not resolved (in the journal, across restarts); null while the journal cannot be read.
      const openWindows = c.openWindows === undefined ? undefined : await c.openWindows().catch(() => null);
      const json = { ok: !s.paused, paused: s.paused, online: s.online, pending: s.pending, blocked: s.blocked, backingOff: s.backingOff, unverified: s.unverified, ...(openWindows === undefined ? {} : { openWindows }), errors: s.errors, intervalMs: s.intervalMs };
      return { status: s.paused ? 503 : 200, json };
    },
  },
  { method: 'POST', path: '/v1/windows/resolve', name: 'resolve', bodyLimit: SMALL, handle: resolveRoute },
  { method: 'GET', path: '/metrics', name: 'metrics', handle: async (c) => ({ status: 200, text: await c.metrics.text(), contentType: c.metrics.contentType }) },
];

function match(method: string, pathname: string): { route: Route; param: string | undefined } | ApiError {
  let allowed: string[] = [];
  for (const route of ROUTES) {
    const found = typeof route.path === 'string' ? (route.path === pathname ? [pathname] : null) : route.path.exec(pathname);
    if (found === null) continue;
    if (route.method === method) return { route, param: found[1] };
    allowed = [...allowed, route.method];
  }
  if (allowed.length === 0) return new ApiError(404, 'NOT_FOUND', `no route ${pathname} (see the guide's "A bridge for any game server")`);
  return Object.assign(new ApiError(405, 'METHOD_NOT_ALLOWED', `${pathname} takes ${allowed.join(', ')}`), { allow: allowed.join(', ') });
}

async function readBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the body must be JSON (Content-Type: application/json)');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new ApiError(413, 'TOO_LARGE', `the body must be at most ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ApiError(413, 'TOO_LARGE', `the body must be at most ${limit} bytes`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiError(400, 'INVALID_JSON', 'the body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'INVALID_JSON', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Options of {@link startBridgeServer}. */
export interface BridgeServerOptions {
  loop: DeliveryLoop;
  roster: Roster;
  metrics: BridgeMetrics;
  log: BridgeLogger;
  /** The journal the loop delivers with: staff resolve its windows through the API. */
  journal: DeliveryJournal;
  /** The bearer token every request must carry. */
  token: string;
  /** Applied to every answer: no secret in a message the service or a driver wrote. */
  redact: Redact;
  /** Counts the journal's windows staff have not resolved (`/v1/health`'s `openWindows`). */
  openWindows?: () => Promise<number>;
  host: string;
  port: number;
}

/** The running HTTP API. */
export interface BridgeServer {
  /** `http://host:port`, the port as bound (a config's port 0 picks a free one). */
  url: string;
  /** From now on every request is answered 503 (the bridge is stopping). */
  stopAccepting(): void;
  /** Closes the listener and its connections (idle at once, busy within `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Starts the HTTP API on `host:port`. @throws the listen error (a port in use, an address not here). */
export async function startBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const expected = digest(`Bearer ${options.token}`);
  const ctx: Context = { loop: options.loop, roster: options.roster, metrics: options.metrics, journal: options.journal, log: options.log, openWindows: options.openWindows };
  let stopping = false;

  async function answer(req: IncomingMessage): Promise<Answer & { route: string; allow?: string }> {
    // Hashes of equal length: the comparison takes the same time whatever the token sent.
    if (!timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) throw Object.assign(new ApiError(401, 'UNAUTHORIZED', 'missing or wrong bearer token (Authorization: Bearer <TEAMGAMES_BRIDGE_TOKEN>)'), { route: 'unauthorized' });
    const pathname = new URL(req.url ?? '/', 'http://bridge').pathname;
    const found = match(req.method ?? 'GET', pathname);
    if (found instanceof ApiError) throw found;
    const { route, param } = found;
    if (stopping) throw Object.assign(new ApiError(503, 'STOPPING', 'the bridge is stopping; try again once it is back'), { route: route.name });
    try {
      const body = route.bodyLimit === undefined ? {} : await readBody(req, route.bodyLimit);
      return { ...(await route.handle(ctx, body, param)), route: route.name };
    } catch (error) {
      throw Object.assign(error instanceof Error ? error : new Error(String(error)), { route: route.name });
    }
  }

  function send(res: ServerResponse, result: Answer, headers: Record<string, string> = {}): void {
    if ('text' in result) {
      res.writeHead(result.status, { 'content-type': result.contentType, ...headers });
      res.end(result.text);
      return;
    }
    res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(JSON.stringify(redactValue(result.json, options.redact)));
  }

  const server = createServer((req, res) => {
    answer(req).then(
      (result) => {
        options.metrics.request(result.route, result.status);
        send(res, result);
      },
      (error: unknown) => {
        const route = (error as { route?: string }).route ?? 'unknown';
        const api =
          error instanceof ApiError
            ? error
            : error instanceof InvalidInputError
              ? new ApiError(400, 'INVALID_FIELD', error.rule, error.argument === 'playerName' ? 'player' : error.argument.replace(/^input\./, ''))
              : new ApiError(500, 'INTERNAL', error instanceof Error ? error.message : String(error));
        if (api.status >= 500) options.log.error('HTTP API request failed', { route, error });
        options.metrics.request(route, api.status);
        const headers: Record<string, string> = {};
        if (api.status === 401) headers['www-authenticate'] = 'Bearer';
        const allow = (error as { allow?: string }).allow;
        if (allow !== undefined) headers.allow = allow;
        // A body left unread (413, 401, 415): the connection is not reused.
        if (!req.complete) headers.connection = 'close';
        send(res, { status: api.status, json: { error: { code: api.code, message: api.message, ...(api.field === undefined ? {} : { field: api.field }) } } }, headers);
      },
    );
  });
  const url = await listenOn(server, options.host, options.port);
  return {
    url,
    stopAccepting: () => {
      stopping = true;
    },
    close: (graceMs = 2_000) => {
      stopping = true;
      return closeGracefully(server, graceMs);
    },
  };
}

/**
 * Listens on `host:port` (idle connections kept 5 s) and resolves to `http://host:port`, the
 * port as bound. Shared by the API and the staff page. @throws the listen error. @internal
 */
export async function listenOn(server: Server, host: string, port: number): Promise<string> {
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

/** Closes `server`: idle connections at once, busy ones within `graceMs`. @internal */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
