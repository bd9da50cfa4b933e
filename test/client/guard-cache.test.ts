/**
 * The local claim guard (one claim per player per 10 s, SPEC §4) and the per-client
 * catalog cache, both on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { StorefrontClient, type ClaimResult, type Product, type StorefrontClientOptions } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';
import { catalogBody, product, useMsw, v4, voteRow } from '../support/msw.js';
import { manualClock } from '../support/time.js';

const { json, respond } = useMsw();

function setup(options: Partial<StorefrontClientOptions> = {}) {
  const clock = manualClock();
  const client = new StorefrontClient({ apiKey: KEY, now: clock.now, ...options });
  return { clock, client };
}

const LOCAL_RATE_LIMIT = { code: 'RATE_LIMIT', status: 'ERROR', claims: [], source: 'local' };

describe('claim guard', () => {
  it('a second claim for the same player within 10 s resolves RATE_LIMIT locally, without a request', async () => {
    const calls = json(v4('NO_ITEMS'));
    const { clock, client } = setup();

    await client.claim('Player123');
    clock.advance(3_500);
    const second = await client.claim('Player123');

    expect(second).toMatchObject({ ...LOCAL_RATE_LIMIT, retryAfterMs: 6_500 });
    expect(second.message).toMatch(/wait/i);
    expect(calls).toHaveLength(1);
  });

  it('retryAfterMs is the time left in the window', async () => {
    json(v4('NO_ITEMS'));
    const { clock, client } = setup();
    await client.claim('Player123');

    const left: number[] = [];
    for (const step of [0, 1, 8_998, 1_000.25]) {
      clock.advance(step);
      const result = await client.claim('Player123');
      if (result.code === 'RATE_LIMIT') left.push(result.retryAfterMs);
    }
    // 0.75 ms left: rounded up to a whole millisecond.
    expect(left).toEqual([10_000, 9_999, 1_001, 1]);
  });

  it('exactly 10,000 ms later a request goes out', async () => {
    const calls = json(v4('NO_ITEMS'));
    const { clock, client } = setup();

    await client.claim('Player123');
    clock.advance(9_999);
    expect((await client.claim('Player123')).code).toBe('RATE_LIMIT');
    clock.advance(1);
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');
    expect(calls).toHaveLength(2);
  });

  it('a refused local call does not extend the window', async () => {
    const calls = json(v4('NO_ITEMS'));
    const { clock, client } = setup();

    await client.claim('Player123');
    clock.advance(9_000);
    await client.claim('Player123');
    clock.advance(1_000);
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');
    expect(calls).toHaveLength(2);
  });

  it('different players, and the same name in another letter case, are independent', async () => {
    const calls = json(v4('NO_ITEMS'));
    const { client } = setup();

    const results = [await client.claim('Player123'), await client.claim('Zezima'), await client.claim('player123'), await client.claim('PLAYER123')];

    expect(results.map((r) => r.code)).toEqual(['NO_ITEMS', 'NO_ITEMS', 'NO_ITEMS', 'NO_ITEMS']);
    expect(calls.map((c) => (JSON.parse(c.body) as { playerName: string }).playerName)).toEqual(['Player123', 'Zezima', 'player123', 'PLAYER123']);
  });

  const guarded: Array<[string, (client: StorefrontClient) => Promise<ClaimResult>]> = [
    ['claim', (client) => client.claim('Player123')],
    ['previewClaim', (client) => client.previewClaim('Player123')],
    ['claimLegacy', (client) => client.claimLegacy('Player123')],
    ['claimStoreTransactions', (client) => client.claimStoreTransactions('Player123')],
  ];

  describe.each(guarded)('after %s', (_, first) => {
    it.each(guarded)('%s is refused locally', async (__, second) => {
      const calls = respond((request) => Response.json(request.url.pathname.startsWith('/api/v4') ? v4('NO_ITEMS') : []));
      const { clock, client } = setup();

      await first(client);
      clock.advance(1_000);
      expect(await second(client)).toMatchObject({ ...LOCAL_RATE_LIMIT, retryAfterMs: 9_000 });
      expect(calls).toHaveLength(1);
    });
  });

  it('votes are not guarded, and do not take a claim slot', async () => {
    const calls = respond((request) => Response.json(request.url.pathname.startsWith('/v3/vote') ? [voteRow] : v4('NO_ITEMS')));
    const { client } = setup();
    const vote = () => client.claimVoteReward({ player: 'Player123', reward: '1', amount: 1 });

    await vote();
    await vote();
    expect((await client.claim('Player123')).code).toBe('NO_ITEMS');
    await vote();
    expect(calls).toHaveLength(4);
  });

  it('5 concurrent claims for one player: exactly one request', async () => {
    const calls = json(v4('NO_ITEMS'));
    const { client } = setup();

    const results = await Promise.all([
      client.claim('Player123'),
      client.claim('Player123'),
      client.previewClaim('Player123'),
      client.claimLegacy('Player123'),
      client.claimStoreTransactions('Player123'),
    ]);

    expect(calls).toHaveLength(1);
    expect(results.map((r) => r.code)).toEqual(['NO_ITEMS', 'RATE_LIMIT', 'RATE_LIMIT', 'RATE_LIMIT', 'RATE_LIMIT']);
    expect(results.slice(1).every((r) => r.code === 'RATE_LIMIT' && r.source === 'local' && r.retryAfterMs === 10_000)).toBe(true);
  });

  it('the slot stays taken when the request was sent, even if it failed', async () => {
    const calls = respond(() => new Response('down', { status: 503 }));
    const { client } = setup();

    await client.claim('Player123').catch(() => undefined);
    expect((await client.claim('Player123')).code).toBe('RATE_LIMIT');
    expect(calls).toHaveLength(1);
  });

  it('the guard belongs to the client: another client is not refused', async () => {
    const calls = json(v4('NO_ITEMS'));
    const clock = manualClock();
    const one = new StorefrontClient({ apiKey: KEY, now: clock.now });
    const two = new StorefrontClient({ apiKey: KEY, now: clock.now });

    await one.claim('Player123');
    expect((await two.claim('Player123')).code).toBe('NO_ITEMS');
    expect(calls).toHaveLength(2);
  });

  it('rateLimit: false sends every claim', async () => {
    const calls = json(v4('RATE_LIMIT'));
    const { client } = setup({ rateLimit: false });

    const first = await client.claim('Player123');
    const second = await client.claim('Player123');
    expect(calls).toHaveLength(2);
    expect([first, second]).toMatchObject([
      { code: 'RATE_LIMIT', source: 'server', retryAfterMs: 10_000 },
      { code: 'RATE_LIMIT', source: 'server', retryAfterMs: 10_000 },
    ]);
  });
});

describe('catalog cache', () => {
  it('a second call within the TTL makes no request and resolves the same catalog', async () => {
    const calls = json(catalogBody);
    const { clock, client } = setup();

    const first = await client.getCatalog();
    clock.advance(59_999);
    const second = await client.getCatalog();

    expect(second).toBe(first);
    expect(second).toEqual(catalogBody);
    expect(calls).toHaveLength(1);
  });

  it('expires after the TTL (60 s by default) on the injected clock', async () => {
    const calls = json(catalogBody);
    const { clock, client } = setup();

    await client.getCatalog();
    clock.advance(60_000);
    await client.getCatalog();
    expect(calls).toHaveLength(2);
  });

  it('honours a custom TTL', async () => {
    const calls = json(catalogBody);
    const { clock, client } = setup({ catalogCacheTtlMs: 5_000 });

    await client.getCatalog();
    clock.advance(4_999);
    await client.getCatalog();
    expect(calls).toHaveLength(1);
    clock.advance(1);
    await client.getCatalog();
    expect(calls).toHaveLength(2);
  });

  it('keeps one entry per category', async () => {
    const calls = respond((request) => {
      const { categoryId } = JSON.parse(request.body) as { categoryId?: number };
      return Response.json({ message: 'SUCCESS', products: [{ ...product, id: categoryId ?? 0 }] });
    });
    const { client } = setup();

    const all = await client.getCatalog();
    const three = await client.getCatalog({ categoryId: 3 });
    const four = await client.getCatalog({ categoryId: 4 });
    expect([all, three, four].map((c) => c.products[0]?.id)).toEqual([0, 3, 4]);
    expect(calls).toHaveLength(3);

    expect((await client.getCatalog({ categoryId: 3 })).products[0]?.id).toBe(3);
    expect((await client.getCatalog()).products[0]?.id).toBe(0);
    expect(calls).toHaveLength(3);
  });

  it('catalogCacheTtlMs: 0 disables it', async () => {
    const calls = json(catalogBody);
    const { client } = setup({ catalogCacheTtlMs: 0 });

    await client.getCatalog();
    await client.getCatalog();
    expect(calls).toHaveLength(2);
  });

  it('clearCatalogCache forgets every entry', async () => {
    const calls = json(catalogBody);
    const { client } = setup();

    await client.getCatalog();
    await client.getCatalog({ categoryId: 3 });
    client.clearCatalogCache();
    await client.getCatalog();
    await client.getCatalog({ categoryId: 3 });
    expect(calls).toHaveLength(4);
  });

  it('the cached catalog is frozen, all the way down', async () => {
    json(catalogBody);
    const { client } = setup();
    const catalog = await client.getCatalog();

    expect(Object.isFrozen(catalog)).toBe(true);
    expect(Object.isFrozen(catalog.products)).toBe(true);
    expect(Object.isFrozen(catalog.products[0])).toBe(true);
    expect(Object.isFrozen(catalog.products[0]?.sales[0])).toBe(true);
    // The types say it (readonly, see types.test-d.ts); the runtime holds to it too.
    expect(() => (catalog.products as Product[]).push({ ...(catalog.products[0] as Product) })).toThrow(TypeError);
    expect(() => {
      (catalog.products[0] as { price: number }).price = 0;
    }).toThrow(TypeError);
    expect((await client.getCatalog()).products[0]?.price).toBe(10);
  });

  it('separate clients do not share a cache', async () => {
    const calls = json(catalogBody);
    const clock = manualClock();
    const one = new StorefrontClient({ apiKey: KEY, now: clock.now });
    const two = new StorefrontClient({ apiKey: KEY, now: clock.now });

    await one.getCatalog();
    await two.getCatalog();
    expect(calls).toHaveLength(2);
  });

  it('failures are not cached', async () => {
    let n = 0;
    const calls = respond(() => (n++ === 0 ? new Response('nope', { status: 401 }) : Response.json(catalogBody)));
    const { client } = setup();

    await client.getCatalog().catch(() => undefined);
    expect(await client.getCatalog()).toEqual(catalogBody);
    expect(calls).toHaveLength(2);
  });
});

describe('regressions (bugs found by this suite, now fixed)', () => {
  // Regression (was a bug, now fixed): src/client.ts #guarded (used by claim/claimLegacy/claimStoreTransactions) answers
  // the local RATE_LIMIT before looking at the signal, so a claim with an already-aborted
  // signal resolves RATE_LIMIT instead of rejecting with signal.reason (SPEC §4: "An
  // aborted signal rejects at once"). Outside the window it does reject (transport.ts
  // checks signal.aborted). Fix: in #guarded (or before it), `signal?.throwIfAborted()`.
  it('a pre-aborted claim rejects with signal.reason even inside the window', async () => {
    json(v4('NO_ITEMS'));
    const { client } = setup();
    await client.claim('Player123');

    const reason = new Error('the player left');
    await expect(client.claim('Player123', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
