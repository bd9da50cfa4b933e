import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockService, type MockServerHandle } from '../../src/mock/index.js';
import { KEY, KEY_BASE64, T0, storeSeed } from '../support/fixtures.js';

describe('the HTTP mock under concurrent claims', () => {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  let server: MockServerHandle;
  beforeAll(async () => {
    server = await mock.listen({ port: 0 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('50 simultaneous v4 claims for one player deliver the purchase exactly once', async () => {
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1, quantity: 3 });
    const claim = () =>
      fetch(`${server.url}/api/v4/store/transaction/update`, {
        method: 'POST',
        headers: { authorization: KEY_BASE64, 'content-type': 'application/json' },
        body: JSON.stringify({ playerName: 'Player1' }),
      }).then(async (res) => (await res.json()) as { code: string; data: { claims: unknown[] } });

    const results = await Promise.all(Array.from({ length: 50 }, claim));
    const delivered = results.filter((r) => r.data.claims.length > 0);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.code).toBe('SUCCESS');
    expect(results.filter((r) => r.code === 'RATE_LIMIT')).toHaveLength(49);
    expect(mock.purchases(KEY, 'Player1').map((r) => r.deliverystatus)).toEqual(['Delivered']);
  });

  it('answers an unknown route with a JSON 404 naming it', async () => {
    const res = await fetch(`${server.url}/api/v9/nothing?x=1`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not found', route: 'POST /api/v9/nothing' });
    const get = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect(get.status).toBe(404);
  });

  it('close() ends keep-alive connections and can be called twice', async () => {
    const other = await mock.listen({ port: 0 });
    await fetch(`${other.url}/__mock/state`);
    await other.close();
    await other.close();
    await expect(fetch(`${other.url}/__mock/state`)).rejects.toThrow();
  });
});
