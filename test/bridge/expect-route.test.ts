/**
 * The bridge's checkout-hint route (`POST /v1/expect`, #47), in process: a real delivery
 * loop on the mock and a memory journal, the API on a loopback port. The hint reaches the
 * loop within its bounds, every bad field is named, and what a hostile caller can send
 * (no token, a flood, names that are not players, hints that never end) changes nothing
 * beyond those bounds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveryLoop } from 'teamgames-sdk';
import { createMockService, type MockService } from 'teamgames-sdk/mock';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.js';
import type { BridgeLogger } from '../../src/bridge/log.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { bridgeHint } from '../../examples/web-shop/server.js';

const TOKEN = 'bridge-token-0123456789abcdef0123456789';
const silent: BridgeLogger = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };

const open: Array<{ server: BridgeServer; loop: DeliveryLoop }> = [];
afterEach(async () => {
  for (const { server, loop } of open.splice(0)) {
    await server.close(0);
    await loop.stop();
  }
});

async function startApi(claimMode: 'exactlyOnce' | 'fast' = 'exactlyOnce'): Promise<{ url: string; loop: DeliveryLoop; mock: MockService; calls: () => number; post(body: unknown, authorization?: string): Promise<{ status: number; json: any }> }> {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  let calls = 0;
  const fetch: typeof globalThis.fetch = (input, init) => {
    calls += 1;
    return mock.fetch(input, init);
  };
  const journal = new MemoryJournal();
  const client = new StorefrontClient({ apiKey: KEY, fetch, now: mock.clock.now, journal });
  const loop = client.startDeliveryLoop({ give: () => undefined, claimMode });
  const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics: createMetrics(() => loop.stats()), log: silent, journal, token: TOKEN, redact: (t) => t, host: '127.0.0.1', port: 0 });
  open.push({ server, loop });
  return {
    url: server.url,
    loop,
    mock,
    calls: () => calls,
    async post(body, authorization = `Bearer ${TOKEN}`) {
      const response = await globalThis.fetch(`${server.url}/v1/expect`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      return { status: response.status, json: await response.json() };
    },
  };
}

describe('POST /v1/expect', () => {
  it('hands the checkout hint to the loop: 200 held', async () => {
    const api = await startApi();
    const answer = await api.post({ player: 'Steve', transactionId: '2b1c9a4e-1f0e-4a57-9f53-5a1d2c3b4e5f', expiresInMs: 900_000 });
    expect(answer).toEqual({ status: 200, json: { ok: true, outcome: 'held' } });
    expect(await api.post({ player: 'Alex' })).toEqual({ status: 200, json: { ok: true, outcome: 'held' } });
    expect(api.loop.stats().hints).toBe(2);
  });

  it('names every bad field (400), and does nothing for it', async () => {
    const api = await startApi();
    const bad: Array<[unknown, string]> = [
      [{ player: 'Steve', transactionId: 'a b' }, 'transactionId'],
      [{ player: 'Steve', transactionId: 42 }, 'transactionId'],
      [{ player: 'Steve', transactionId: 'x'.repeat(129) }, 'transactionId'],
      [{ player: 'Steve', expiresInMs: 9_999 }, 'expiresInMs'],
      [{ player: 'Steve', expiresInMs: 3_600_001 }, 'expiresInMs'],
      [{ player: 'Steve', expiresInMs: '600000' }, 'expiresInMs'],
      [{ player: 'Steve', cart: [] }, 'cart'],
      [{ player: '' }, 'player'],
      [{ player: 'bad\u0007name' }, 'player'],
      [{ player: 'x'.repeat(65) }, 'player'],
      [{}, 'player'],
    ];
    for (const [body, field] of bad) {
      const answer = await api.post(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.error).toMatchObject({ code: 'INVALID_FIELD', field });
    }
    expect(api.loop.stats().hints).toBe(0);
  });
});

describe("the web shop example's bridgeHint", () => {
  it('posts the hint with the token, and the loop holds it', async () => {
    const api = await startApi();
    await bridgeHint(api.url, TOKEN)('Steve', { transactionId: 'tx-web-1' });
    expect(api.loop.stats().hints).toBe(1);
  });
});

describe('POST /v1/expect tried as a hostile caller would', () => {
  it('without the token (another local user): 401, nothing held', async () => {
    const api = await startApi();
    for (const authorization of ['', `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`]) {
      expect((await api.post({ player: 'Steve' }, authorization)).status).toBe(401);
    }
    expect(api.loop.stats().hints).toBe(0);
  });

  it('a flood: at most 10,000 hints held; then 429 HINTS_FULL, and no call to the store for any of them', async () => {
    const api = await startApi();
    for (let i = 0; i < 10_000; i++) api.loop.expect(`Flood${i}`);
    const answer = await api.post({ player: 'OneMore', transactionId: 'tx-1' });
    expect(answer.status).toBe(429);
    expect(answer.json.error.code).toBe('HINTS_FULL');
    expect(api.loop.stats().hints).toBe(10_000);
    // Names that are not players (none joined): held, never a call for them.
    expect(api.calls()).toBe(0);
  });

  it('a hint for a transaction already delivered: 409 HINT_EXPIRED; once the loop stops: 503 STOPPING', async () => {
    // The fast claim mode: the hinted join's first run is one claim, with no window to wait out.
    const api = await startApi('fast');
    const shop = new StorefrontClient({ apiKey: KEY, fetch: api.mock.fetch, now: api.mock.clock.now });
    const checkout = await shop.checkout({ username: 'Steve', items: [{ id: 1, quantity: 1 }] });
    if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${checkout.outcome}`);
    expect((await api.post({ player: 'Steve', transactionId: checkout.transactionId })).status).toBe(200);
    api.mock.completePayment(checkout.transactionId);
    api.loop.join('Steve');
    // It delivers the transaction and ends the hint.
    await vi.waitFor(() => expect(api.loop.stats().granted).toBe(1));
    expect(api.loop.stats().hints).toBe(0);
    const again = await api.post({ player: 'Steve', transactionId: checkout.transactionId });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('HINT_EXPIRED');
    await api.loop.stop();
    const stopped = await api.post({ player: 'Alex' });
    expect(stopped.status).toBe(503);
    expect(stopped.json.error.code).toBe('STOPPING');
  });

  it('the same hint again and again: held while the first lives, extending nothing', async () => {
    const api = await startApi();
    for (let i = 0; i < 50; i++) expect((await api.post({ player: 'Steve', transactionId: 'tx-1', expiresInMs: 3_600_000 })).status).toBe(200);
    expect(api.loop.stats().hints).toBe(1);
    expect(api.calls()).toBe(0);
  });
});
