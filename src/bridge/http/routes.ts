/**
 * The bridge's HTTP API as data: one row per route (method, path, the metrics' name, the
 * body's limit and zod schema, what it does), the table `teamgames bridge --help` lists
 * and the server (server.ts) runs. A body that fails its schema is a 400 naming the field.
 *
 * @module
 * @internal
 */
import { z } from 'zod';
import { playerNameProblem } from '../../common/player-name.js';
import { resolveWindow } from '../../delivery/staff/index.js';
import { InvalidInputError, isStorefrontError } from '../../errors.js';
import type { DeliveryLoop } from '../../index.js';
import type { DeliveryJournal } from '../../journals/contract.js';
import type { BridgeLogger } from '../log.js';
import type { BridgeMetrics } from '../metrics.js';
import { plainError } from '../plain-error.js';
import type { Roster } from '../roster.js';

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
export type Answer = { status: number; json: unknown } | { status: number; text: string; contentType: string };

export interface Context {
  loop: DeliveryLoop;
  roster: Roster;
  metrics: BridgeMetrics;
  journal: DeliveryJournal;
  log: BridgeLogger;
  openWindows: (() => Promise<number>) | undefined;
}

/** A route of the API: its method, its path, the metrics' label, its body's schema, what it does. */
export interface Route<Body = unknown> {
  method: 'GET' | 'POST' | 'PUT';
  /** The path as `--help` shows it; `<name>` stands for a player's URL-encoded name. */
  path: string;
  /** The metrics' label. */
  name: string;
  /** What `--help` says after the path, when the body does not say it all. */
  note?: string;
  /** The body, when the route takes one: its limit in bytes and the schema it must pass. */
  body?: { limit: number; schema: z.ZodType<Body> };
  /** `param`: the player's name from the path (URL-decoded), for a path with `<name>`. */
  handle(ctx: Context, body: Body, param: string | undefined): Promise<Answer> | Answer;
}

const SMALL = 16 * 1024;
// The whole list of players: 10,000 names fit.
const LIST = 1024 * 1024;
const MAX_PLAYERS = 100_000;

/** A player's exact name, held to the SDK's rule. */
const playerName = z.string({ error: "must be a string (the player's exact name)" }).superRefine((name, ctx) => {
  const problem = playerNameProblem(name);
  if (problem !== undefined) ctx.addIssue(problem);
});

const playerBody = z.object({ player: playerName });

const ok = (json: unknown = { ok: true }): Answer => ({ status: 200, json });

/** The body's field an issue is about, as the API names it (`players[3]`). */
function fieldOf(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

/**
 * `raw` as `schema` reads it.
 * @throws ApiError 400 `INVALID_FIELD` naming the field (an unknown field first, where the schema is strict).
 */
function parsed<T>(schema: z.ZodType<T>, raw: unknown): T {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const { issues } = result.error;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown !== undefined) {
    const key = unknown.keys[0] as string;
    const known = schema instanceof z.ZodObject ? Object.keys(schema.shape).join(', ') : '';
    throw new ApiError(400, 'INVALID_FIELD', `unknown field ${JSON.stringify(key)} (${known})`, key);
  }
  const issue = issues[0] as z.core.$ZodIssue;
  const field = fieldOf(issue.path);
  throw new ApiError(400, 'INVALID_FIELD', `${field} ${issue.message}`, field);
}

/**
 * The body (a JSON object) as its route's schema reads it; `undefined` for a route without one.
 * @throws ApiError 400 `INVALID_FIELD` naming the field.
 */
export function checkedBody(route: Route, raw: unknown): unknown {
  return route.body === undefined ? undefined : parsed(route.body.schema, raw);
}

/** What `--help` shows of a body: its fields, an array's as `[…]`, an optional one with `?`. */
function shownBody(schema: z.ZodType): string {
  if (!(schema instanceof z.ZodObject)) return '{…}';
  const fields = Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, field]) => `${JSON.stringify(key)}${field instanceof z.ZodArray ? ':[…]' : ''}${field instanceof z.ZodOptional ? '?' : ''}`);
  return `{${fields.join(',')}}`;
}

/** The routes as `teamgames bridge --help` lists them: one line each, `METHOD path {"field",…} note`. */
export function routeList(routes: readonly Route[] = ROUTES): string {
  return routes.map((r) => [r.method, r.path, ...(r.body === undefined ? [] : [shownBody(r.body.schema)]), ...(r.note === undefined ? [] : [r.note])].join(' ')).join('\n');
}

/** A row of the table, its body typed by its schema. */
function route<Body>(row: Route<Body>): Route {
  return row as unknown as Route;
}

const resolveBody = z.strictObject({ player: playerName.optional(), windowId: z.unknown().optional(), by: z.unknown(), note: z.unknown() });

/**
 * Staff close a window while the bridge runs (`teamgames journal resolve --bridge`):
 * `resolveWindow` on the bridge's own journal, so the one-winner rule and the audit trail
 * are the journal's, as from the CLI. A window resolved first answers 409 with the first
 * resolution (who, when, the note).
 */
async function resolveRoute(c: Context, b: z.output<typeof resolveBody>): Promise<Answer> {
  const input = {
    ...(b.player === undefined ? {} : { playerName: b.player }),
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

const expectBody = z.strictObject({ player: playerName, transactionId: z.unknown().optional(), expiresInMs: z.unknown().optional() });

/**
 * A checkout hint from the web shop (#47): `loop.expect` with the shop's transactionId,
 * within the loop's bounds (one per player, 10,000 held, 30 % of the budget, at most an
 * hour), which also checks the values. 200 held; 429 when the loop holds as many hints as
 * it keeps; 409 when what it names had its hint in the last hour; 503 once stopping.
 */
function expectRoute(c: Context, b: z.output<typeof expectBody>): Answer {
  let outcome;
  try {
    outcome = c.loop.expect(b.player, { ...(b.transactionId === undefined ? {} : { transactionId: b.transactionId as string }), ...(b.expiresInMs === undefined ? {} : { expiresInMs: b.expiresInMs as number }) });
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const field = error.argument.replace(/^hint\./, '');
    throw new ApiError(400, 'INVALID_FIELD', `${field} ${error.rule}`, field);
  }
  if (outcome === 'full') throw new ApiError(429, 'HINTS_FULL', 'the delivery loop holds as many checkout hints as it keeps (10,000); the purchase is delivered by the routine polls');
  if (outcome === 'expired') throw new ApiError(409, 'HINT_EXPIRED', 'what this hint names had its hint in the last hour (delivered, or its hint expired): it is not claimed for again; the purchase is delivered by the routine polls');
  if (outcome === 'stopped') throw new ApiError(503, 'STOPPING', 'the bridge is stopping; the purchase is delivered after its restart');
  return ok({ ok: true, outcome });
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
    // Date's range (NaN and the infinities fail the bound too).
    out[k] = WIRE_FIELDS.has(k) ? v : TIME_FIELDS.has(k) && typeof v === 'number' && Math.abs(v) <= 8.64e15 ? new Date(v).toISOString() : isoTimes(v);
  }
  return out;
}

const REWARD = 'must be the reward id (a string or a positive integer)';
const AMOUNT = 'must be a positive integer or "all"';
const voteBody = z.object({
  player: playerName,
  // A schema's error covers its checks, the union's its options' types: each error is said once.
  reward: z.union([z.string({ error: REWARD }).regex(/\S/), z.int({ error: REWARD }).min(1)], { error: REWARD }),
  amount: z.union([z.literal('all'), z.int({ error: AMOUNT }).min(1)], { error: AMOUNT }),
});

const onlineBody = z.object({
  players: z.array(playerName, { error: 'must be an array of names (every player online now)' }).max(MAX_PLAYERS, { error: `must hold at most ${MAX_PLAYERS} names` }),
});

/** What `/v1/claim` and `/v1/vote` answer of a run's report: its code, the player's text, the counts. */
function reported(report: { code: string; message: string; granted: readonly unknown[]; pending: number }): Answer {
  return ok({ code: report.code, message: report.message, granted: report.granted.length, pending: report.pending });
}

/** The API, one row per route, in the order `--help` lists them. */
export const ROUTES: readonly Route[] = [
  route({ method: 'POST', path: '/v1/join', name: 'join', body: { limit: SMALL, schema: playerBody }, handle: (c, b) => (c.roster.join(b.player), ok()) }),
  route({ method: 'POST', path: '/v1/leave', name: 'leave', body: { limit: SMALL, schema: playerBody }, handle: (c, b) => (c.roster.leave(b.player), ok()) }),
  route({ method: 'PUT', path: '/v1/online', name: 'online', body: { limit: LIST, schema: onlineBody }, handle: (c, b) => ok({ ok: true, ...c.roster.replace(b.players) }) }),
  route({ method: 'POST', path: '/v1/claim', name: 'claim', body: { limit: SMALL, schema: playerBody }, handle: async (c, b) => reported(await c.loop.claim(b.player)) }),
  route({ method: 'POST', path: '/v1/vote', name: 'vote', body: { limit: SMALL, schema: voteBody }, handle: async (c, b) => reported(await c.loop.claimVote(b.player, { reward: b.reward, amount: b.amount })) }),
  route({
    method: 'GET',
    path: '/v1/players/<name>/status',
    name: 'status',
    handle: async (c, _, param) => {
      let name: string;
      try {
        name = decodeURIComponent(param as string);
      } catch {
        throw new ApiError(400, 'INVALID_FIELD', 'the player in the path must be URL-encoded UTF-8', 'player');
      }
      const { player } = parsed(playerBody, { player: name });
      return ok(isoTimes(plainErrors((await c.loop.status(player)) as unknown as Record<string, unknown>)));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/health',
    name: 'health',
    handle: async (c) => {
      const s = c.loop.stats();
      // Windows staff have not resolved (in the journal, across restarts); null while the journal cannot be read.
      const openWindows = c.openWindows === undefined ? undefined : await c.openWindows().catch(() => null);
      // The shared journal's checkout hints, when they cannot be read: hinted players then wait for the routine polls.
      // JSON leaves out a field that is undefined (no counter, no error).
      const hints = { hints: s.hints, sharedHintsError: plainError(s.sharedHintsError) };
      const json = { ok: !s.paused, paused: s.paused, online: s.online, pending: s.pending, blocked: s.blocked, backingOff: s.backingOff, unverified: s.unverified, openWindows, errors: s.errors, intervalMs: s.intervalMs, ...hints };
      return { status: s.paused ? 503 : 200, json };
    },
  }),
  route({ method: 'POST', path: '/v1/expect', name: 'expect', note: "(a web shop's checkout hint)", body: { limit: SMALL, schema: expectBody }, handle: expectRoute }),
  route({ method: 'POST', path: '/v1/windows/resolve', name: 'resolve', body: { limit: SMALL, schema: resolveBody }, handle: resolveRoute }),
  route({ method: 'GET', path: '/metrics', name: 'metrics', note: '(Prometheus text)', handle: async (c) => ({ status: 200, text: await c.metrics.text(), contentType: c.metrics.contentType }) }),
];
