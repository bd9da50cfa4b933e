import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClaimOutcomeUnknownError, StorefrontClient, encodeApiKey } from '../../src/index.js';
import { createMockService, type MockServerHandle } from '../../src/mock/index.js';
import { BASE_URL, KEY, T0, seed } from '../support/reliability.js';

const mock = createMockService({ seed, now: T0 });
const KEY_BASE64 = encodeApiKey(KEY);

function claim(base: string, fetchFn: typeof fetch = fetch) {
  return fetchFn(`${base}/api/v4/store/transaction/update`, {
    method: 'POST',
    headers: { authorization: KEY_BASE64, 'content-type': 'application/json' },
    body: JSON.stringify({ playerName: 'Ann' }),
  });
}

afterEach(() => mock.reset());

describe('mock.faults in process', () => {
  const direct = mock.fetch;

  it('answers a 5xx HTML page before the state change by default', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1 });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 502, times: 1 });
    const res = await claim(BASE_URL, direct);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toMatch(/<h1>502 Error<\/h1>/);
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Undelivered');
    // Retired after one call.
    expect((await claim(BASE_URL, direct)).status).toBe(200);
    expect(mock.faults.list()[0]).toMatchObject({ fired: 1, remaining: 0 });
  });

  it('drops the connection before or after the state change', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropBefore', times: 1 });
    await expect(claim(BASE_URL, direct)).rejects.toThrow(TypeError);
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Undelivered');

    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    await expect(claim(BASE_URL, direct)).rejects.toThrow(TypeError);
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Delivered');
  });

  it('cuts the body of a malformed answer; the SDK reports the claim outcome as unknown', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1 });
    mock.faults.add({ operation: 'claim', kind: 'malformed', times: 1 });
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: direct });
    await expect(client.claim('Ann')).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Delivered');
  });

  it('fires probability rules from a seeded generator: the same seed, the same calls', async () => {
    const pattern = async () => {
      mock.reset();
      mock.faults.seed(7);
      mock.faults.add({ operation: 'getCatalog', kind: 'status', probability: 0.5 });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await direct(`${BASE_URL}/api/v2/client/global/products`, { method: 'POST', headers: { authorization: KEY_BASE64, 'content-type': 'application/json' }, body: '{}' });
        statuses.push(res.status);
      }
      return statuses;
    };
    const first = await pattern();
    expect(first).toEqual(await pattern());
    expect(first.filter((s) => s === 503).length).toBeGreaterThan(5);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
  });

  it('matches only the named operations and lets `skip` calls through first', async () => {
    mock.faults.add({ operation: ['claimLegacy'], kind: 'status', times: 1 });
    expect((await claim(BASE_URL, direct)).status).toBe(200);
    mock.faults.clear();
    mock.faults.add({ kind: 'status', status: 500, skip: 1, times: 1 });
    mock.clock.advance(10_000);
    expect((await claim(BASE_URL, direct)).status).toBe(200);
    expect((await claim(BASE_URL, direct)).status).toBe(500);
  });

  it('refuses invalid rules with a RangeError naming the problem; reset() clears the rules', () => {
    expect(() => mock.faults.add({ kind: 'explode' } as never)).toThrow(RangeError);
    expect(() => mock.faults.add({ kind: 'status' })).toThrow(/exactly one of "times"/);
    expect(() => mock.faults.add({ kind: 'status', times: 1, status: 200 })).toThrow(RangeError);
    mock.faults.add({ kind: 'delay', delayMs: 1, times: 3 });
    mock.reset();
    expect(mock.faults.list()).toEqual([]);
  });
});

describe('faults over HTTP', () => {
  let server: MockServerHandle;
  beforeAll(async () => {
    server = await mock.listen({ port: 0 });
  });
  afterAll(() => server.close());

  it('are set with POST /__mock/faults, listed with GET, cleared with DELETE or /clear', async () => {
    const post = (path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    expect((await post('/__mock/faults', { operation: 'claim', kind: 'status', status: 503, times: 1 })).status).toBe(200);
    expect((await post('/__mock/faults', { seed: 3, rules: [{ kind: 'delay', delayMs: 1, probability: 0.1 }] })).status).toBe(200);
    expect((await post('/__mock/faults', { kind: 'nope', times: 1 })).status).toBe(400);
    const listed = (await (await fetch(`${server.url}/__mock/faults`)).json()) as unknown[];
    expect(listed).toHaveLength(2);
    expect((await fetch(`${server.url}/__mock/faults`, { method: 'DELETE' })).status).toBe(200);
    expect(mock.faults.list()).toEqual([]);
    await post('/__mock/faults', { kind: 'status', times: 1 });
    await post('/__mock/faults/clear');
    expect(mock.faults.list()).toEqual([]);
    await post('/__mock/faults', { kind: 'status', times: 1 });
    await post('/__mock/reset');
    expect(mock.faults.list()).toEqual([]);
  });

  it('destroys the socket for a dropped connection: the client sees the claim outcome as unknown', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: server.url });
    const error = await client.claim('Ann').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimOutcomeUnknownError);
    expect((error as ClaimOutcomeUnknownError).reason).toBe('network');
    expect(mock.purchases(KEY, 'Ann')[0]?.deliverystatus).toBe('Delivered');
  });
});
