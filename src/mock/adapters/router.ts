import { z } from 'zod';
import * as admin from '../operations/admin.js';
import { getCatalog } from '../operations/catalog.js';
import { checkout } from '../operations/checkout.js';
import { claim, claimLegacy, claimStoreTransactions } from '../operations/claims.js';
import type { MockClock } from '../service/clock.js';
import { MockAdminError } from '../service/errors.js';
import { FaultInjector, faultPage, parseFaultRule, type FiredFault, type MockOperationName } from './faults.js';
import { cancelPayment, completePayment, payPage } from '../operations/payment.js';
import { describeIssues } from '../service/issues.js';
import { resetState, type MockState } from '../service/state.js';
import { claimVoteReward } from '../operations/votes.js';
import type { WireRequest, WireResponse } from '../service/wire.js';

/** One row per service operation: where it lives and which operation module answers it. */
export interface WireOperation {
  /** The operation's name: the client method that calls it (the SDK's endpoint key, the fault rules' `operation`). */
  name: MockOperationName;
  /** Exact path (all operations are POST). */
  path: string;
  /** Answers one request from the state (and changes it). */
  respond: (state: MockState, request: WireRequest) => WireResponse;
}

/**
 * The six operations as data; the transport around them is one function. The mock keeps
 * this table apart from the SDK's (`src/endpoints.ts`), under the same names, so that it
 * stays an independent check of the wire format.
 */
export const OPERATIONS: readonly WireOperation[] = [
  { name: 'getCatalog', path: '/api/v2/client/global/products', respond: getCatalog },
  { name: 'checkout', path: '/api/v2/client/global/checkout/complete', respond: checkout },
  { name: 'claim', path: '/api/v4/store/transaction/update', respond: claim },
  { name: 'claimLegacy', path: '/api/v3/store/transaction/update', respond: claimLegacy },
  { name: 'claimStoreTransactions', path: '/v3/store/transaction/claim', respond: claimStoreTransactions },
  { name: 'claimVoteReward', path: '/v3/vote/reward/claim', respond: claimVoteReward },
];

/**
 * What the fault injector's dropped connection answers: not a response at all. `listen()`
 * destroys the socket for it, `mock.fetch` rejects like a reset connection, and the msw
 * handlers answer `HttpResponse.error()`.
 */
export const DROPPED: unique symbol = Symbol('teamgames-mock: connection dropped');

/** An answer of the mock: a Fetch `Response`, or {@link DROPPED}. */
export type MockAnswer = Response | typeof DROPPED;

/** Answers one request of one operation; the unit a fault-injection layer wraps. */
export type OperationResolver = (request: Request) => Promise<MockAnswer>;

/** One route of the mock: a method, an exact path (`:name` matches one segment) and its answer. */
export interface MockRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** The path as written, e.g. `/__mock/pay/:transactionId`. */
  path: string;
  /**
   * The route's answer to `request`, or `undefined` (before reading anything of it) when
   * the method or the whole pathname does not match.
   */
  answer: (request: Request) => Promise<MockAnswer> | undefined;
}

/** Answers a request from the routes, or `undefined` when no route matches it. */
export type MockRouter = (request: Request) => Promise<MockAnswer | undefined>;

/** The answer to a request no route matches: JSON 404 naming the route asked for. */
export function notFound(request: Request): Response {
  const route = `${request.method} ${new URL(request.url).pathname}`;
  return Response.json({ error: 'Not found', route }, { status: 404 });
}

/**
 * The router over {@link createRoutes}: method and exact pathname, nothing transport-specific.
 * The HTTP server, `mock.fetch` and the msw handlers all answer through it.
 */
export function createRouter(routes: readonly MockRoute[]): MockRouter {
  return async (request) => {
    for (const candidate of routes) {
      const answer = candidate.answer(request);
      if (answer !== undefined) return answer;
    }
    return undefined;
  };
}

/**
 * The routes of the mock: the six operations, the pay page and the `/__mock/…` admin
 * routes, all reading and changing `state`, answering Fetch `Response`s (no msw: the HTTP
 * server and `mock.fetch` work without it).
 */
export function createRoutes(state: MockState, faults?: FaultInjector): MockRoute[] {
  return [
    ...OPERATIONS.map((operation) => {
      const resolve = operationResolver(operation, state, faults);
      return route('POST', operation.path, ({ request }) => resolve(request));
    }),
    route('GET', '/__mock/pay/:transactionId', ({ params }) =>
      Promise.resolve(toResponse(payPage(state, params.transactionId ?? ''))),
    ),
    ...adminRoutes(state, faults),
    ...(faults === undefined ? [] : faultRoutes(faults)),
  ];
}

/**
 * The resolver of one operation: request → {@link WireRequest} → operation → response,
 * with the fault the injector picks for this call (a delay, a 5xx with an HTML body, a
 * dropped connection before or after the state change, a malformed body).
 *
 * A dropped connection is {@link DROPPED}: `server.ts` destroys the socket for it, and the
 * in-process transports turn it into a network error.
 */
export function operationResolver(operation: WireOperation, state: MockState, faults?: FaultInjector): OperationResolver {
  const answer = answerWithFault(operation, state);
  return async (request) => {
    const late = faults?.pick(operation.name);
    if (late?.kind !== 'landLate') {
      const response = await answer(request, late);
      faults?.answered(operation.name);
      return response;
    }
    // Read now (the request is gone once the connection drops), carried out later.
    const wire = await toWireRequest(request);
    faults?.answered(operation.name);
    faults?.hold(operation.name, late.landAfter, () => operation.respond(state, wire));
    return DROPPED;
  };
}

/** One request answered under the fault picked for it (none, or any kind but `landLate`). */
function answerWithFault(operation: WireOperation, state: MockState): (request: Request, fault: FiredFault | undefined) => Promise<MockAnswer> {
  return async (request, fault) => {
    if (fault === undefined) return toResponse(operation.respond(state, await toWireRequest(request)));
    if (fault.kind === 'delay') {
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      return toResponse(operation.respond(state, await toWireRequest(request)));
    }
    if (fault.kind === 'dropBefore') return DROPPED;
    if (fault.phase === 'before' && fault.kind === 'status') return html(faultPage(fault.status), fault.status);
    const answer = fault.kind === 'malformed' && fault.phase === 'before' ? undefined : operation.respond(state, await toWireRequest(request));
    if (fault.kind === 'dropAfter') return DROPPED;
    if (fault.kind === 'status') return html(faultPage(fault.status), fault.status);
    // Cut in the middle of the JSON text, as a proxy that closed the stream early would.
    const text = JSON.stringify(answer?.body ?? { status: 'SUCCESS', code: 'SUCCESS', data: { claims: [] } });
    return new Response(text.slice(0, Math.max(1, Math.floor(text.length / 2))), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
}

async function toWireRequest(request: Request): Promise<WireRequest> {
  return {
    header: (name) => request.headers.get(name),
    body: await request.text(),
    origin: new URL(request.url).origin,
  };
}

function toResponse(answer: WireResponse): Response {
  return answer.kind === 'html' ? html(String(answer.body), answer.status) : json(answer.body, answer.status);
}

function json(body: unknown, status = 200): Response {
  return Response.json(body, { status });
}

function html(body: string, status: number): Response {
  return new Response(body, { status, headers: { 'content-type': 'text/html' } });
}

/** What a route's answer sees: the request and the path's parameters (decoded). */
export interface RouteInfo {
  request: Request;
  params: Record<string, string | undefined>;
}

function route(method: MockRoute['method'], path: string, answer: (info: RouteInfo) => Promise<MockAnswer>): MockRoute {
  // Exact: `:name` is one segment, a named group.
  const pattern = new RegExp(`^${path.replace(/:([^/]+)/g, '(?<$1>[^/]+)')}$`);
  return {
    method,
    path,
    answer: (request) => {
      const match = request.method === method ? pattern.exec(new URL(request.url).pathname) : null;
      if (match === null) return undefined;
      const params: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(match.groups ?? {})) params[name] = safeDecode(value);
      return answer({ request, params });
    },
  };
}

/** Path parameters arrive percent-encoded; a malformed escape is kept as written. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

// ------------------------------------------------------------------ fault routes

/**
 * `POST /__mock/faults` adds one rule (the body is a rule) or several
 * (`{"rules": [...], "seed"?: n}`); `GET` lists them; `DELETE /__mock/faults` and
 * `POST /__mock/faults/clear` remove them all.
 */
function faultRoutes(faults: FaultInjector): MockRoute[] {
  const clear = () => {
    faults.clear();
    return { ok: true };
  };
  return [
    adminRoute('GET', '/__mock/faults', () => faults.list()),
    adminRoute('POST', '/__mock/faults', async ({ request }) => {
      const body = await adminBody(request, z.record(z.string(), z.unknown()));
      if ('rules' in body || 'seed' in body) {
        const batch = adminBodies.faults.safeParse(body);
        if (!batch.success) throw new AdminBodyError(describeIssues('body', batch.error.issues).join('; '));
        if (batch.data.seed !== undefined) faults.seed(batch.data.seed);
        const rules = (batch.data.rules ?? []).map(parseFaultRule);
        return rules.map((rule) => faults.add(rule));
      }
      return faults.add(parseFaultRule(body));
    }),
    adminRoute('POST', '/__mock/faults/clear', clear),
    route('DELETE', '/__mock/faults', () => Promise.resolve(json(clear()))),
  ];
}

// ------------------------------------------------------------------ admin routes

const apiKey = z.string();
const catalogId = z.number().int().min(1);

const adminBodies = {
  advance: z.strictObject({ ms: z.number().min(0) }),
  set: z.strictObject({ time: z.union([z.string(), z.number()]) }),
  purchase: z.strictObject({
    apiKey,
    playerName: z.string(),
    id: catalogId,
    quantity: z.number().int().min(1).optional(),
  }),
  vote: z.strictObject({ apiKey, playerName: z.string(), points: z.number().int().min(1) }),
  update: z.strictObject({ apiKey, id: catalogId, patch: z.record(z.string(), z.unknown()) }),
  remove: z.strictObject({ apiKey, id: catalogId }),
  faults: z.strictObject({ rules: z.array(z.unknown()).optional(), seed: z.number().int().optional() }),
};

class AdminBodyError extends Error {}

/** Reads an admin JSON body strictly; an empty body reads as `{}`. */
async function adminBody<T>(request: Request, schema: z.ZodType<T>): Promise<T> {
  const text = await request.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw new AdminBodyError('the body is not valid JSON');
    }
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AdminBodyError(describeIssues('body', result.error.issues).join('; '));
  }
  return result.data;
}

function adminRoute(method: 'GET' | 'POST', path: string, run: (info: RouteInfo) => unknown): MockRoute {
  return route(method, path, async (info) => {
    try {
      return json(await run(info));
    } catch (error) {
      if (error instanceof MockAdminError) {
        return json({ error: error.message }, error.status);
      }
      if (error instanceof AdminBodyError || error instanceof RangeError) {
        return json({ error: error.message }, 400);
      }
      throw error;
    }
  });
}

function clockReading(clock: MockClock): { now: number; time: string } {
  const now = clock.now();
  return { now, time: new Date(now).toISOString() };
}

function adminRoutes(state: MockState, faults: FaultInjector | undefined): MockRoute[] {
  const { clock } = state;
  return [
    adminRoute('POST', '/__mock/reset', () => {
      faults?.reset();
      resetState(state);
      return { ok: true, ...clockReading(clock) };
    }),
    adminRoute('GET', '/__mock/state', () => admin.snapshot(state)),
    adminRoute('POST', '/__mock/clock/advance', async ({ request }) => {
      clock.advance((await adminBody(request, adminBodies.advance)).ms);
      return clockReading(clock);
    }),
    adminRoute('POST', '/__mock/clock/set', async ({ request }) => {
      clock.set((await adminBody(request, adminBodies.set)).time);
      return clockReading(clock);
    }),
    adminRoute('POST', '/__mock/payments/:transactionId/complete', ({ params }) =>
      completePayment(state, params.transactionId ?? ''),
    ),
    adminRoute('POST', '/__mock/payments/:transactionId/cancel', ({ params }) =>
      cancelPayment(state, params.transactionId ?? ''),
    ),
    adminRoute('GET', '/__mock/purchases', ({ request }) => {
      const query = new URL(request.url).searchParams;
      return admin.purchases(state, query.get('apiKey') ?? '', query.get('playerName') ?? undefined);
    }),
    adminRoute('POST', '/__mock/purchases', async ({ request }) => {
      const { apiKey: key, ...input } = await adminBody(request, adminBodies.purchase);
      return admin.addPurchase(state, key, input);
    }),
    adminRoute('POST', '/__mock/votes', async ({ request }) => {
      const { apiKey: key, playerName, points } = await adminBody(request, adminBodies.vote);
      return admin.recordVote(state, key, playerName, points);
    }),
    adminRoute('POST', '/__mock/products/update', async ({ request }) => {
      const { apiKey: key, id, patch } = await adminBody(request, adminBodies.update);
      return admin.updateProduct(state, key, id, patch);
    }),
    adminRoute('POST', '/__mock/rewards/update', async ({ request }) => {
      const { apiKey: key, id, patch } = await adminBody(request, adminBodies.update);
      return admin.updateReward(state, key, id, patch);
    }),
    adminRoute('POST', '/__mock/products/remove', async ({ request }) => {
      const { apiKey: key, id } = await adminBody(request, adminBodies.remove);
      admin.removeProduct(state, key, id);
      return { ok: true };
    }),
  ];
}
