/**
 * Failures are typed errors (SPEC §4): every error class, which operations may be
 * retried, and what a claim sent without an answer means.
 */
import { HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  ClaimOutcomeUnknownError,
  HttpError,
  NetworkError,
  RequestRejectedError,
  ResponseValidationError,
  StorefrontClient,
  StorefrontError,
  TimeoutError,
  isStorefrontError,
  type StorefrontClientOptions,
  type StorefrontErrorCode,
} from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';
import { answerJson, cutBody, hang, resetConnection, useLoopbackServers } from '../support/http-server.js';
import { catalogBody, useMsw, v4, v4Claim } from '../support/msw.js';
import {
  ALL_OPS,
  DELIVERING_OPS,
  NON_DELIVERING_OPS,
  WRITE_OPS,
  getCatalogOp,
  checkoutOp,
  claimOp,
  label,
  previewOp,
  type OperationCase,
} from '../support/operations.js';
import { rejectionOf, settle, useFakeBackoff } from '../support/time.js';

const { json, text, respond, sequence } = useMsw({ loopbackPassthrough: true });
const servers = useLoopbackServers();
const fakeBackoff = useFakeBackoff();

const client = (options: Partial<StorefrontClientOptions> = {}) => new StorefrontClient({ apiKey: KEY, catalogCacheTtlMs: 0, rateLimit: false, ...options });

const each = (ops: readonly OperationCase[]) => ops.map((op) => [label(op), op] as const);

const HTML = '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>';

/** What every SDK error shares: the base class, the brand, a stable code, the operation first in the message. */
function expectStorefrontError(error: unknown, op: OperationCase, code: StorefrontErrorCode, status?: number) {
  expect(error).toBeInstanceOf(StorefrontError);
  expect(isStorefrontError(error)).toBe(true);
  expect(isStorefrontError(error, code)).toBe(true);
  const e = error as StorefrontError;
  expect(e.code).toBe(code);
  expect(e.operation).toBe(op.operation);
  expect(e.endpoint).toBe(op.endpoint);
  expect(e.status).toBe(status);
  expect(e.message.startsWith(`${op.operation}: `)).toBe(true);
  expect(e.name).toBe(e.constructor.name);
}

describe('HTTP statuses', () => {
  it.each(each(ALL_OPS))('%s: 401 → AuthenticationError', async (_, op) => {
    const calls = text('Unauthorized', { status: 401 });
    const error = await failureOf(op.call(client()));

    expectInstance(error, AuthenticationError);
    expectStorefrontError(error, op, 'AUTHENTICATION_FAILED', 401);
    expect((error as Error).message).toContain('raw key');
    expect(calls).toHaveLength(1);
  });

  it('checkout: 404 → RequestRejectedError (the payload could not be parsed)', async () => {
    json({ message: 'Not Found' }, { status: 404 });
    const error = await failureOf(checkoutOp.call(client()));

    expectInstance(error, RequestRejectedError);
    expectStorefrontError(error, checkoutOp, 'REQUEST_REJECTED', 404);
  });

  it.each(each(ALL_OPS.filter((op) => op !== checkoutOp)))('%s: 404 is a plain HttpError', async (_, op) => {
    text('Not Found', { status: 404 });
    const error = expectInstance(await failureOf(op.call(client({ retry: 0 }))), HttpError);
    expectStorefrontError(error, op, 'HTTP_ERROR', 404);
  });

  it.each(each(NON_DELIVERING_OPS))('%s: a 5xx → HttpError with its status', async (_, op) => {
    text('Service Unavailable', { status: 503 });
    const error = expectInstance(await failureOf(op.call(client({ retry: 0 }))), HttpError);
    expectStorefrontError(error, op, 'HTTP_ERROR', 503);
    expect(error.bodyExcerpt).toBe('Service Unavailable');
  });

  // 500 too: a proxy's 500 says no more than its 502 about what the service did.
  it.each(each(DELIVERING_OPS).flatMap(([name, op]) => [500, 502, 503, 504].map((status) => [name, op, status] as const)))(
    "%s: a %i → ClaimOutcomeUnknownError reason 'http' (the service may have acted)",
    async (_, op, status) => {
      text(HTML, { status });
      const error = expectInstance(await failureOf(op.call(client())), ClaimOutcomeUnknownError);
      expectStorefrontError(error, op, 'CLAIM_OUTCOME_UNKNOWN', status);
      expect(error).toMatchObject({ reason: 'http', playerName: 'Player123' });
      expect(error.message).toMatch(/preview/i);
    },
  );

  it.each(each(DELIVERING_OPS))('%s: a 4xx other than 401 is an HttpError, not an unknown outcome', async (_, op) => {
    text('I am a teapot', { status: 418 });
    const error = expectInstance(await failureOf(op.call(client())), HttpError);
    expectStorefrontError(error, op, 'HTTP_ERROR', 418);
  });
});

describe('bodies that break the protocol', () => {
  it.each(each(NON_DELIVERING_OPS))('%s: an HTML page on 200 → ResponseValidationError with a body excerpt', async (_, op) => {
    text(HTML, { status: 200, headers: { 'content-type': 'text/html' } });
    const error = expectInstance(await failureOf(op.call(client())), ResponseValidationError);

    expectStorefrontError(error, op, 'RESPONSE_VALIDATION_FAILED', 200);
    expect(error.message).toContain('not JSON');
    expect(error.bodyExcerpt).toBe('<!DOCTYPE html> <html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>');
    expect(error.issues).toEqual([]);
  });

  it.each(each(DELIVERING_OPS))("%s: an HTML page on 200 → ClaimOutcomeUnknownError reason 'invalid-response'", async (_, op) => {
    text(HTML, { status: 200 });
    const error = expectInstance(await failureOf(op.call(client())), ClaimOutcomeUnknownError);

    expectStorefrontError(error, op, 'CLAIM_OUTCOME_UNKNOWN', 200);
    expect(error.reason).toBe('invalid-response');
    expect(error.bodyExcerpt).toMatch(/^<!DOCTYPE html>/);
  });

  it('the body excerpt is short', async () => {
    text(`<html>${'x'.repeat(5_000)}</html>`);
    const error = expectInstance(await failureOf(getCatalogOp.call(client())), ResponseValidationError);
    expect(error.bodyExcerpt?.length).toBeLessThanOrEqual(201);
    expect(error.bodyExcerpt?.endsWith('…')).toBe(true);
  });

  it('a catalog that does not match the schema lists the issues with their paths', async () => {
    json({ message: 'SUCCESS', products: [{ id: 1, productId: 'a', name: 'A', price: 'ten' }, { id: 2, name: 'B', price: 1 }] });
    const error = expectInstance(await failureOf(getCatalogOp.call(client())), ResponseValidationError);

    expectStorefrontError(error, getCatalogOp, 'RESPONSE_VALIDATION_FAILED', 200);
    expect(error.issues.map((issue) => issue.path)).toEqual([
      ['products', 0, 'price'],
      ['products', 1, 'productId'],
    ]);
    expect(error.issues.every((issue) => typeof issue.message === 'string' && issue.message.length > 0)).toBe(true);
  });

  it('a checkout answer of the wrong shape → ResponseValidationError', async () => {
    json({ status: 5, isFree: 'no' });
    const error = expectInstance(await failureOf(checkoutOp.call(client())), ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual([['status'], ['isFree']]);
  });

  it("a v4 claim with a broken transaction → ClaimOutcomeUnknownError 'invalid-response' with the issues", async () => {
    const { product_name: _, ...broken } = v4Claim;
    json(v4('SUCCESS', [broken]));
    const error = expectInstance(await failureOf(claimOp.call(client())), ClaimOutcomeUnknownError);
    expect(error.reason).toBe('invalid-response');
    expect(error.issues.map((issue) => issue.path)).toEqual([['data', 'claims', 0, 'product_name']]);
  });

  it('a preview with a broken transaction → ResponseValidationError (nothing was delivered)', async () => {
    json(v4('PREVIEW', [{ player_name: 'Player123' }]));
    const error = expectInstance(await failureOf(previewOp.call(client())), ResponseValidationError);
    expect(error.issues.length).toBeGreaterThan(0);
  });

  it('a v4 envelope without code → ResponseValidationError for a preview', async () => {
    json({ status: 'SUCCESS', data: { claims: [] } });
    const error = expectInstance(await failureOf(previewOp.call(client())), ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual([['code']]);
  });
});

// 250 ms, not less: on a loaded CI machine a shorter deadline can expire before the
// request has even reached the loopback server.
describe('timeouts (a server that never answers, timeoutMs 250)', () => {
  it.each(each(NON_DELIVERING_OPS))('%s → TimeoutError', async (_, op) => {
    const server = await servers.start(hang);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url, timeoutMs: 250, retry: 0 }))), TimeoutError);

    expectStorefrontError(error, op, 'TIMEOUT', undefined);
    expect(error.timeoutMs).toBe(250);
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
  });

  it.each(each(DELIVERING_OPS))("%s → ClaimOutcomeUnknownError reason 'timeout', sent once", async (_, op) => {
    const server = await servers.start(hang);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url, timeoutMs: 250, retry: 5 }))), ClaimOutcomeUnknownError);

    expectStorefrontError(error, op, 'CLAIM_OUTCOME_UNKNOWN', undefined);
    expect(error.reason).toBe('timeout');
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
  });
});

describe('connection reset after the request arrived', () => {
  it.each(each(DELIVERING_OPS))("%s → ClaimOutcomeUnknownError reason 'network', sent once", async (_, op) => {
    const server = await servers.start(resetConnection);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url }))), ClaimOutcomeUnknownError);

    expectStorefrontError(error, op, 'CLAIM_OUTCOME_UNKNOWN', undefined);
    expect(error.reason).toBe('network');
    expect(server.requests).toHaveLength(1);
  });

  it.each(each(DELIVERING_OPS))("%s, the body cut off after the headers → ClaimOutcomeUnknownError reason 'network', sent once", async (_, op) => {
    const server = await servers.start(cutBody);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url }))), ClaimOutcomeUnknownError);

    expect(error.reason).toBe('network');
    expect(server.requests).toHaveLength(1);
  });

  it.each(each([checkoutOp, previewOp]))('%s → NetworkError, sent once', async (_, op) => {
    const server = await servers.start(resetConnection);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url }))), NetworkError);

    expectStorefrontError(error, op, 'NETWORK_ERROR', undefined);
    expect(error.reason).toMatch(/\S/);
    expect(server.requests).toHaveLength(1);
  });
});

describe('connection refused (nothing sent)', () => {
  it.each(each(ALL_OPS))('%s → NetworkError, even for a claim', async (_, op) => {
    const baseUrl = await servers.closedPort();
    const error = expectInstance(await failureOf(op.call(client({ baseUrl, retry: 0 }))), NetworkError);

    expectStorefrontError(error, op, 'NETWORK_ERROR', undefined);
    expect(error.reason).toBe('ECONNREFUSED');
  });

  it('releases the local claim guard: a second claim right after is sent, not locally rate-limited', async () => {
    const baseUrl = await servers.closedPort();
    const guarded = new StorefrontClient({ apiKey: KEY, baseUrl, now: () => 1_000 });

    expectInstance(await failureOf(guarded.claim('Player123')), NetworkError);
    expectInstance(await failureOf(guarded.claim('Player123')), NetworkError);
    expectInstance(await failureOf(guarded.claimLegacy('Player123')), NetworkError);
  });
});

describe('aborts', () => {
  it.each(each(ALL_OPS))('%s: a signal aborted beforehand rejects with signal.reason and sends nothing', async (_, op) => {
    const calls = json(catalogBody);
    const reason = new Error('the player left');
    const error = await failureOf(op.call(client(), AbortSignal.abort(reason)));

    expect(error).toBe(reason);
    expect(calls).toHaveLength(0);
  });

  it('a pre-aborted claim does not take the guard slot', async () => {
    const calls = json(v4('NO_ITEMS'));
    const guarded = new StorefrontClient({ apiKey: KEY, now: () => 1_000 });
    await failureOf(guarded.claim('Player123', { signal: AbortSignal.abort() }));

    expect(await guarded.claim('Player123')).toMatchObject({ code: 'NO_ITEMS' });
    expect(calls).toHaveLength(1);
  });

  /** A server that aborts the caller's signal once the request has fully arrived. */
  async function abortingServer(controller: AbortController) {
    return servers.start(() => controller.abort(new Error('shutting down')));
  }

  it.each(each(DELIVERING_OPS))("%s: aborted after sending → ClaimOutcomeUnknownError reason 'aborted'", async (_, op) => {
    const controller = new AbortController();
    const server = await abortingServer(controller);
    const error = expectInstance(await failureOf(op.call(client({ baseUrl: server.url }), controller.signal)), ClaimOutcomeUnknownError);

    expectStorefrontError(error, op, 'CLAIM_OUTCOME_UNKNOWN', undefined);
    expect(error.reason).toBe('aborted');
    expect(server.requests).toHaveLength(1);
  });

  it.each(each(NON_DELIVERING_OPS))('%s: aborted during the request → rejects with signal.reason', async (_, op) => {
    const controller = new AbortController();
    const server = await abortingServer(controller);
    const error = await failureOf(op.call(client({ baseUrl: server.url }), controller.signal));

    expect(error).toBe(controller.signal.reason);
    expect(server.requests).toHaveLength(1);
  });
});

describe('retries', () => {
  it.each(each(WRITE_OPS))('%s is sent exactly once on 500 and 503', async (_, op) => {
    for (const status of [500, 503]) {
      const calls = text('down', { status, headers: { 'retry-after': '0' } });
      await failureOf(op.call(client({ retry: 10 })));
      expect(calls).toHaveLength(1);
    }
  });

  it.each(each(WRITE_OPS))('%s is sent exactly once on a network error', async (_, op) => {
    const calls = respond(() => HttpResponse.error());
    const error = await failureOf(op.call(client({ retry: 10 })));

    expect(error).toBeInstanceOf(op.delivers ? ClaimOutcomeUnknownError : NetworkError);
    expect(calls).toHaveLength(1);
  });

  it('the catalog is retried on 503, honouring Retry-After', async () => {
    const calls = sequence(
      () => new HttpResponse('busy', { status: 503, headers: { 'retry-after': '0' } }),
      () => HttpResponse.json(catalogBody),
    );
    expect(await getCatalogOp.call(client())).toEqual(catalogBody);
    expect(calls).toHaveLength(2);
  });

  it('the catalog is retried on 500 with backoff, up to `retry` times', async () => {
    fakeBackoff();
    const calls = text('boom', { status: 500 });
    const error = rejectionOf(await settle(getCatalogOp.call(client({ retry: 2 }))));

    expectInstance(error, HttpError);
    expect((error as HttpError).status).toBe(500);
    expect(calls).toHaveLength(3);
  });

  it('the catalog recovers when a retry succeeds', async () => {
    fakeBackoff();
    const calls = sequence(
      () => new HttpResponse('boom', { status: 500 }),
      () => new HttpResponse('boom', { status: 502 }),
      () => HttpResponse.json(catalogBody),
    );
    const result = await settle(getCatalogOp.call(client()));
    expect(result).toEqual({ status: 'fulfilled', value: catalogBody });
    expect(calls).toHaveLength(3);
  });

  it('the catalog is retried on a connection reset', async () => {
    fakeBackoff();
    const server = await servers.start(resetConnection);
    const error = rejectionOf(await settle(getCatalogOp.call(client({ baseUrl: server.url, retry: 2 }))));

    expectInstance(error, NetworkError);
    expect(server.requests).toHaveLength(3);
  });

  it('the catalog is retried when its body is cut off after the headers', async () => {
    fakeBackoff();
    const answer = answerJson(catalogBody);
    const server = await servers.start((request, res, req) => (server.requests.length === 1 ? cutBody : answer)(request, res, req));

    expect(await settle(getCatalogOp.call(client({ baseUrl: server.url })))).toEqual({ status: 'fulfilled', value: catalogBody });
    expect(server.requests).toHaveLength(2);
  });

  it('retry: 0 disables the catalog retries', async () => {
    const calls = text('busy', { status: 503, headers: { 'retry-after': '0' } });
    expectInstance(await failureOf(getCatalogOp.call(client({ retry: 0 }))), HttpError);
    expect(calls).toHaveLength(1);
  });

  it('the catalog is not retried on 401 or on a 404', async () => {
    for (const status of [401, 404]) {
      const calls = text('no', { status });
      await failureOf(getCatalogOp.call(client()));
      expect(calls).toHaveLength(1);
    }
  });
});

describe('regressions (bugs found by this suite, now fixed)', () => {
  // Regression (was a bug, now fixed): src/internal/transport.ts, Transport.send: `timeoutMs` only covers the wait for
  // the response headers (ky's timeout); `await response.text()` has no deadline. A server
  // (or proxy) that sends the headers and then stalls the body leaves a claim pending
  // forever instead of rejecting with ClaimOutcomeUnknownError('timeout'). Fix: bound the
  // body read by the same per-attempt deadline (e.g. an AbortController passed as ky's
  // signal, aborted by a timer started before the request and cleared after text()), and
  // map that abort to the 'timeout' failure.
  it("a body that stalls after the headers → ClaimOutcomeUnknownError('timeout') within timeoutMs", { timeout: 2_000 }, async () => {
    const server = await servers.start((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":');
    });
    const error = expectInstance(await failureOf(claimOp.call(client({ baseUrl: server.url, timeoutMs: 50 }))), ClaimOutcomeUnknownError);
    expect(error.reason).toBe('timeout');
  });

  // Regression (was a bug, now fixed): src/internal/transport.ts, the per-request fetch wrapper sets `dispatched = true`
  // as soon as ky calls it, but ky calls it even when the signal is already aborted (it
  // awaits a microtask before fetching, so an abort in the same tick as the call lands
  // there); fetch then rejects without opening a connection. The claim is reported as
  // ClaimOutcomeUnknownError('aborted') ("the request was sent") with zero requests made,
  // and onNotSent is never called, so the guard keeps the slot: the next claim for the
  // player is locally RATE_LIMITed for 10 s. Fix: in the wrapper, if the request's signal
  // (`init?.signal ?? input.signal`) is already aborted, reject with its reason without
  // setting `dispatched`.
  it('aborted in the same tick as the call → signal.reason, nothing sent, guard slot released', async () => {
    const calls = json(v4('NO_ITEMS'));
    const guarded = new StorefrontClient({ apiKey: KEY, now: () => 1_000 });
    const controller = new AbortController();
    const reason = new Error('the player disconnected');

    const pending = guarded.claim('Player123', { signal: controller.signal });
    controller.abort(reason);

    expect(await failureOf(pending)).toBe(reason);
    expect(calls).toHaveLength(0);
    expect(await guarded.claim('Player123')).toMatchObject({ code: 'NO_ITEMS' });
  });
});

describe('the URL an error names', () => {
  // A base URL with a path (a gateway that serves the API under a prefix) is called
  // under it; the message names that URL, not the host with the prefix dropped.
  it('keeps the base URL\'s path prefix: an HTTP status', async () => {
    const requested: string[] = [];
    const fetch = async (input: RequestInfo | URL) => {
      requested.push(String(input instanceof Request ? input.url : input));
      return new Response('Bad Gateway', { status: 502 });
    };
    const error = expectInstance(await failureOf(getCatalogOp.call(client({ baseUrl: 'https://example.com/teamgames/', fetch, retry: 0 }))), HttpError);

    expect(requested).toEqual(['https://example.com/teamgames/api/v2/client/global/products']);
    expect(error.message).toBe('getCatalog: example.com/teamgames/api/v2/client/global/products answered HTTP 502');
    expect(error.host).toBe('example.com');
    expect(error.endpoint).toBe('/api/v2/client/global/products');
  });

  it('keeps it when the service cannot be reached, and for a claim sent without an answer', async () => {
    const closed = await servers.closedPort();
    const refused = expectInstance(await failureOf(getCatalogOp.call(client({ baseUrl: `${closed}/teamgames`, retry: 0 }))), NetworkError);
    expect(refused.message).toContain(`could not reach ${new URL(closed).host}/teamgames/api/v2/client/global/products (ECONNREFUSED)`);

    const server = await servers.start((_, res) => {
      res.writeHead(503);
      res.end('down');
    });
    const unknown = expectInstance(await failureOf(claimOp.call(client({ baseUrl: `${server.url}/a/b/` }))), ClaimOutcomeUnknownError);
    expect(server.requests[0]?.path).toBe('/a/b/api/v4/store/transaction/update');
    expect(unknown.message).toMatch(new RegExp(`^claim: ${new URL(server.url).host}/a/b/api/v4/store/transaction/update answered HTTP 503;`));
  });

  it('names no prefix when the base URL has none', async () => {
    const fetch = async () => new Response('Bad Gateway', { status: 502 });
    const error = expectInstance(await failureOf(getCatalogOp.call(client({ baseUrl: 'https://example.com', fetch, retry: 0 }))), HttpError);
    expect(error.message).toBe('getCatalog: example.com/api/v2/client/global/products answered HTTP 502');
  });
});
