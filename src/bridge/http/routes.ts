/**
 * The bridge's HTTP API as data: one row per route (method, path, the metrics' name, the
 * body's limit, what it does), the table `teamgames bridge --help` lists and the server
 * (server.ts) runs.
 *
 * @module
 * @internal
 */
import { playerNameProblem } from '../../common/player-name.js';
import { resolveWindow } from '../../delivery/staff.js';
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

export interface Route {
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

export const ROUTES: readonly Route[] = [
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

