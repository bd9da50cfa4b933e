import { http, HttpResponse, type HttpHandler } from 'msw';
import { z } from 'zod';
import * as admin from './admin.js';
import { catalog } from './catalog.js';
import { checkout } from './checkout.js';
import { claimV3, claimV4, storeClaim } from './claims.js';
import type { MockClock } from './clock.js';
import { MockAdminError } from './errors.js';
import { FaultInjector, faultPage, parseFaultRule, type MockOperationName } from './faults.js';
import { cancelPayment, completePayment, payPage } from './payment.js';
import { describeIssues } from './issues.js';
import { resetState, type MockState } from './state.js';
import { voteClaim } from './votes.js';
import type { WireRequest, WireResponse } from './wire.js';

/** One row per service operation: where it lives and which operation module answers it. */
export interface WireOperation {
  /** The operation's name: the SDK's endpoint key and the fault rules' `operation` alike. */
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
  { name: 'catalog', path: '/api/v2/client/global/products', respond: catalog },
  { name: 'checkout', path: '/api/v2/client/global/checkout/complete', respond: checkout },
  { name: 'claimV4', path: '/api/v4/store/transaction/update', respond: claimV4 },
  { name: 'claimV3', path: '/api/v3/store/transaction/update', respond: claimV3 },
  { name: 'storeClaim', path: '/v3/store/transaction/claim', respond: storeClaim },
  { name: 'voteClaim', path: '/v3/vote/reward/claim', respond: voteClaim },
];

/** Answers one request of one operation; the unit a fault-injection layer wraps. */
export type OperationResolver = (request: Request) => Promise<Response>;

/**
 * The msw handlers of the mock: the six operations, the pay page and the `/__mock/…` admin
 * routes, all reading and changing `state`.
 *
 * msw in Node has no `location`, so patterns start with `*`; each handler then insists on
 * its exact path, because `*` would also match `/api/v3/vote/…` for the vote route. A
 * handler that declines does so before reading the body, so the body is read only once.
 */
export function createHandlers(state: MockState, faults?: FaultInjector): HttpHandler[] {
  return [
    ...OPERATIONS.map((operation) => {
      const resolve = operationResolver(operation, state, faults);
      return route('post', operation.path, ({ request }) => resolve(request));
    }),
    route('get', '/__mock/pay/:transactionId', ({ params }) =>
      Promise.resolve(toResponse(payPage(state, params.transactionId ?? ''))),
    ),
    ...adminHandlers(state, faults),
    ...(faults === undefined ? [] : faultHandlers(faults)),
  ];
}

/**
 * The resolver of one operation: request → {@link WireRequest} → operation → response,
 * with the fault the injector picks for this call (a delay, a 5xx with an HTML body, a
 * dropped connection before or after the state change, a malformed body).
 *
 * A dropped connection is `HttpResponse.error()`: msw turns it into a network error in
 * process, and `server.ts` destroys the socket for it over HTTP.
 */
export function operationResolver(operation: WireOperation, state: MockState, faults?: FaultInjector): OperationResolver {
  return async (request) => {
    const fault = faults?.pick(operation.name);
    if (fault === undefined) return toResponse(operation.respond(state, await toWireRequest(request)));
    if (fault.kind === 'delay') {
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      return toResponse(operation.respond(state, await toWireRequest(request)));
    }
    if (fault.kind === 'dropBefore') return HttpResponse.error();
    if (fault.phase === 'before' && fault.kind === 'status') return HttpResponse.html(faultPage(fault.status), { status: fault.status });
    const answer = fault.kind === 'malformed' && fault.phase === 'before' ? undefined : operation.respond(state, await toWireRequest(request));
    if (fault.kind === 'dropAfter') return HttpResponse.error();
    if (fault.kind === 'status') return HttpResponse.html(faultPage(fault.status), { status: fault.status });
    // Cut in the middle of the JSON text, as a proxy that closed the stream early would.
    const text = JSON.stringify(answer?.body ?? { status: 'SUCCESS', code: 'SUCCESS', data: { claims: [] } });
    return new HttpResponse(text.slice(0, Math.max(1, Math.floor(text.length / 2))), {
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
  return answer.kind === 'html'
    ? HttpResponse.html(String(answer.body), { status: answer.status })
    : HttpResponse.json(answer.body as never, { status: answer.status });
}

type RouteInfo = { request: Request; params: Record<string, string | undefined> };

function route(method: 'get' | 'post' | 'delete', path: string, resolve: (info: RouteInfo) => Promise<Response>): HttpHandler {
  const exact = new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}$`);
  return http[method]('*' + path, ({ request, params }) => {
    if (!exact.test(new URL(request.url).pathname)) {
      return undefined;
    }
    const single: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(params)) {
      single[name] = Array.isArray(value) ? value[0] : value;
    }
    return resolve({ request, params: single });
  });
}

// ------------------------------------------------------------------ fault routes

/**
 * `POST /__mock/faults` adds one rule (the body is a rule) or several
 * (`{"rules": [...], "seed"?: n}`); `GET` lists them; `DELETE /__mock/faults` and
 * `POST /__mock/faults/clear` remove them all.
 */
function faultHandlers(faults: FaultInjector): HttpHandler[] {
  const clear = () => {
    faults.clear();
    return { ok: true };
  };
  return [
    adminRoute('get', '/__mock/faults', () => faults.list()),
    adminRoute('post', '/__mock/faults', async ({ request }) => {
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
    adminRoute('post', '/__mock/faults/clear', clear),
    route('delete', '/__mock/faults', () => Promise.resolve(HttpResponse.json(clear()))),
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

function adminRoute(
  method: 'get' | 'post',
  path: string,
  run: (info: RouteInfo) => unknown,
): HttpHandler {
  return route(method, path, async (info) => {
    try {
      return HttpResponse.json((await run(info)) as never);
    } catch (error) {
      if (error instanceof MockAdminError) {
        return HttpResponse.json({ error: error.message }, { status: error.status });
      }
      if (error instanceof AdminBodyError || error instanceof RangeError) {
        return HttpResponse.json({ error: error.message }, { status: 400 });
      }
      throw error;
    }
  });
}

function clockReading(clock: MockClock): { now: number; time: string } {
  const now = clock.now();
  return { now, time: new Date(now).toISOString() };
}

function adminHandlers(state: MockState, faults: FaultInjector | undefined): HttpHandler[] {
  const { clock } = state;
  return [
    adminRoute('post', '/__mock/reset', () => {
      faults?.reset();
      resetState(state);
      return { ok: true, ...clockReading(clock) };
    }),
    adminRoute('get', '/__mock/state', () => admin.snapshot(state)),
    adminRoute('post', '/__mock/clock/advance', async ({ request }) => {
      clock.advance((await adminBody(request, adminBodies.advance)).ms);
      return clockReading(clock);
    }),
    adminRoute('post', '/__mock/clock/set', async ({ request }) => {
      clock.set((await adminBody(request, adminBodies.set)).time);
      return clockReading(clock);
    }),
    adminRoute('post', '/__mock/payments/:transactionId/complete', ({ params }) =>
      completePayment(state, params.transactionId ?? ''),
    ),
    adminRoute('post', '/__mock/payments/:transactionId/cancel', ({ params }) =>
      cancelPayment(state, params.transactionId ?? ''),
    ),
    adminRoute('get', '/__mock/purchases', ({ request }) => {
      const query = new URL(request.url).searchParams;
      return admin.purchases(state, query.get('apiKey') ?? '', query.get('playerName') ?? undefined);
    }),
    adminRoute('post', '/__mock/purchases', async ({ request }) => {
      const { apiKey: key, ...input } = await adminBody(request, adminBodies.purchase);
      return admin.addPurchase(state, key, input);
    }),
    adminRoute('post', '/__mock/votes', async ({ request }) => {
      const { apiKey: key, playerName, points } = await adminBody(request, adminBodies.vote);
      return admin.recordVote(state, key, playerName, points);
    }),
    adminRoute('post', '/__mock/products/update', async ({ request }) => {
      const { apiKey: key, id, patch } = await adminBody(request, adminBodies.update);
      return admin.updateProduct(state, key, id, patch);
    }),
    adminRoute('post', '/__mock/products/remove', async ({ request }) => {
      const { apiKey: key, id } = await adminBody(request, adminBodies.remove);
      admin.removeProduct(state, key, id);
      return { ok: true };
    }),
  ];
}
