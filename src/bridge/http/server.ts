/**
 * The bridge's HTTP API for the game (node:http, loopback by default): every request
 * carries the bridge's bearer token (compared in constant time); bodies are JSON, small;
 * a bad request gets a 4xx with a JSON error naming the field, and nothing is lost. The
 * routes are data (routes.ts, one row each); this one function does the HTTP work.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidInputError } from '../../errors.js';
import { redactValue, type Redact } from '../../host/redact.js';
import type { DeliveryLoop } from '../../index.js';
import type { DeliveryJournal } from '../../journals/contract.js';
import type { BridgeLogger } from '../log.js';
import type { BridgeMetrics } from '../metrics.js';
import type { Roster } from '../roster.js';
import { ApiError, ROUTES, checkedBody, type Answer, type Context, type Route } from './routes.js';

/** A route's path as a pattern: `<name>` is the player's name, its first group. */
const PATTERNS = new Map(ROUTES.map((route) => [route, new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('<name>', '([^/]+)')}$`)]));

function match(method: string, pathname: string): { route: Route; param: string | undefined } | ApiError {
  let allowed: string[] = [];
  for (const route of ROUTES) {
    const found = (PATTERNS.get(route) as RegExp).exec(pathname);
    if (found === null) continue;
    if (route.method === method) return { route, param: found[1] };
    allowed = [...allowed, route.method];
  }
  if (allowed.length === 0) return new ApiError(404, 'NOT_FOUND', `no route ${pathname} (see the guide's "A bridge for any game server")`);
  return Object.assign(new ApiError(405, 'METHOD_NOT_ALLOWED', `${pathname} takes ${allowed.join(', ')}`), { allow: allowed.join(', ') });
}

async function readBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const type = ((req.headers['content-type'] ?? '').split(';')[0] as string).trim().toLowerCase();
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
    // A server's request always has its URL and method.
    const pathname = new URL(req.url as string, 'http://bridge').pathname;
    const found = match(req.method as string, pathname);
    if (found instanceof ApiError) throw found;
    const { route, param } = found;
    if (stopping) throw Object.assign(new ApiError(503, 'STOPPING', 'the bridge is stopping; try again once it is back'), { route: route.name });
    try {
      const body = route.body === undefined ? undefined : checkedBody(route, await readBody(req, route.body.limit));
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
        // JSON leaves `field` out when the error names none.
        send(res, { status: api.status, json: { error: { code: api.code, message: api.message, field: api.field } } }, headers);
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
