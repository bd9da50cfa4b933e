import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClaimOutcomeUnknownError, StorefrontClient } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

// `mock.fetch`: the mock in process with no network and no msw. The shared suites
// (test/e2e, test/mock/contract) run over it as one of their transports; these are the
// parts only an in-process fetch has: unknown routes, dropped connections, aborts.
describe('mock.fetch', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers an unknown route with the HTTP server\'s JSON 404, whatever the origin', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    const res = await mock.fetch('https://anything.example/api/v9/nope', { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not found', route: 'POST /api/v9/nope' });
  });

  it('drops the connection like a reset socket: the SDK reports a lost claim answer, and the mock did deliver', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const direct = mock.fetch('http://127.0.0.1:9/api/v4/store/transaction/update', { method: 'POST' });
    await expect(direct).rejects.toThrow(expect.objectContaining({ name: 'TypeError', message: 'fetch failed', cause: expect.objectContaining({ code: 'ECONNRESET' }) }));

    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now });
    await expect(client.claim('Player1')).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(mock.purchases(KEY, 'Player1').map((row) => row.deliverystatus)).toEqual(['Delivered']);
  });

  it('rejects with the signal\'s reason when aborted, while the mock finishes what it received', async () => {
    vi.useFakeTimers();
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.faults.add({ operation: 'getCatalog', kind: 'delay', delayMs: 5_000, times: 1 });
    const controller = new AbortController();
    const answer = mock.fetch('http://127.0.0.1:9/api/v2/client/global/products', { method: 'POST', body: '{}', signal: controller.signal });
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);

    const aborted = new AbortController();
    aborted.abort(reason);
    await expect(mock.fetch('http://127.0.0.1:9/x', { signal: aborted.signal })).rejects.toBe(reason);
    await vi.runAllTimersAsync();
  });
});
