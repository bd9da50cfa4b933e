/**
 * Nothing per call is left on a long-lived signal (issue #21, point 13). A bridge passes
 * its shutdown signal to every call for months. ky joins a signal it is given to its own
 * per-call controller with `AbortSignal.any`, which on Node 20 records every joined signal
 * on the long-lived one: one more per request, for good. The transport never gives ky the
 * caller's signal: it joins it by hand to each attempt's fetch and removes its listener
 * when the attempt is over. The heap figure is `npm run heap`.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorefrontClient, type StorefrontClientOptions } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { linkSignals, untilAborted } from '../../src/internal/signals.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function setup(options: Partial<StorefrontClientOptions> = {}, fetch?: typeof globalThis.fetch) {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: fetch ?? mock.fetch, now: mock.clock.now, catalogCacheTtlMs: 0, ...options });
  return { mock, client };
}

/** Every call the SDK makes, each with the long-lived signal. */
async function everyOperation(client: StorefrontClient, mock: ReturnType<typeof createMockService>, signal: AbortSignal): Promise<void> {
  await client.getCatalog({ signal });
  await client.claim('Player123', { signal });
  mock.clock.advance(10_000);
  await client.previewClaim('Player123', { signal });
  mock.clock.advance(10_000);
  await client.claimLegacy('Player123', { signal });
  mock.clock.advance(10_000);
  await client.claimStoreTransactions('Player123', { signal });
  await client.checkout({ username: 'Player123', items: [{ id: 1, quantity: 1 }] }, { signal });
  await client.claimVoteReward({ player: 'Player123', reward: '1', amount: 'all' }, { signal });
}

describe('a long-lived signal passed to every call', () => {
  it('is never joined through AbortSignal.any (Node 20 keeps a record per call on it)', async () => {
    const { client, mock } = setup();
    const lifetime = new AbortController();
    const any = vi.spyOn(AbortSignal, 'any');
    await everyOperation(client, mock, lifetime.signal);
    const joined = any.mock.calls.filter(([signals]) => [...signals].includes(lifetime.signal));
    expect(joined).toHaveLength(0);
  });

  it('carries no listener after the calls: answered, failed after retries, timed out', async () => {
    const lifetime = new AbortController();
    const { signal } = lifetime;
    const { client, mock } = setup();
    await everyOperation(client, mock, signal);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    // A read that fails on every attempt (retries with backoff), then a claim that times out.
    let failing = 0;
    const down = setup({ retry: 2 }, async () => {
      failing += 1;
      return new Response('down', { status: 503 });
    }).client;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const read = down.getCatalog({ signal }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await read).toMatchObject({ name: 'HttpError' });
    expect(failing).toBe(3);

    const hanging = setup({ timeoutMs: 1_000 }, (_input, init) => new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)))).client;
    const claim = hanging.claim('Player123', { signal }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await claim).toMatchObject({ name: 'ClaimOutcomeUnknownError' });

    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    expect(signal.aborted).toBe(false);
  });

  it('still aborts a call at once, during an attempt and during the backoff between attempts, and leaves no timer behind', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let attempts = 0;
    const { client } = setup({ retry: 2 }, async () => {
      attempts += 1;
      return new Response('down', { status: 503 });
    });
    const lifetime = new AbortController();
    const read = client.getCatalog({ signal: lifetime.signal }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(100); // the first attempt failed; ky waits 300 ms before the next
    expect(attempts).toBe(1);
    const reason = new Error('shutting down');
    lifetime.abort(reason);
    await vi.advanceTimersByTimeAsync(0);
    expect(await read).toBe(reason);
    // ky's wait is over: it asks whether to try again, and the aborted signal says no. Nothing
    // of the call is left (without stopWhenAborted, ky went on scheduling its retries).
    await vi.advanceTimersByTimeAsync(300);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toBe(1); // no attempt after the abort
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the attempt in flight', async () => {
    let resolveStarted = (): void => undefined;
    const started = new Promise<void>((resolve) => (resolveStarted = resolve));
    const { client } = setup({}, (_input, init) => {
      resolveStarted();
      return new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)));
    });
    const lifetime = new AbortController();
    const claim = client.claim('Player123', { signal: lifetime.signal }).catch((error: unknown) => error);
    await started;
    const reason = new Error('shutting down');
    lifetime.abort(reason);
    // Sent, then aborted: the service may have applied it.
    expect(await claim).toMatchObject({ name: 'ClaimOutcomeUnknownError' });
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });
});

describe('linkSignals and untilAborted', () => {
  it('linkSignals aborts with the first source\'s reason and leaves no listener once disposed', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals(a.signal, b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    b.abort('b');
    expect(linked.signal.reason).toBe('b');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    const other = linkSignals(a.signal, b.signal);
    expect(other.signal.aborted).toBe(true);
    const fresh = new AbortController();
    const disposed = linkSignals(fresh.signal);
    disposed.dispose();
    expect(getEventListeners(fresh.signal, 'abort')).toHaveLength(0);
  });

  it('untilAborted removes its listener when the work settles, and rejects with the reason on abort', async () => {
    const lifetime = new AbortController();
    expect(await untilAborted(Promise.resolve(1), lifetime.signal)).toBe(1);
    await expect(untilAborted(Promise.reject(new Error('x')), lifetime.signal)).rejects.toThrow('x');
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    const never = new Promise<number>(() => undefined);
    const waiting = untilAborted(never, lifetime.signal);
    lifetime.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});
