/**
 * The catalog cache's edges (src/internal/catalog-cache.ts), beyond test/client/guard-cache
 * (issue #46): an entry whose clock reads before it was stored is stale, not fresh for ever,
 * and a client without a cache hands over the catalog as read, not frozen.
 */
import { describe, expect, it } from 'vitest';
import { StorefrontClient } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';
import { catalogBody } from '../support/msw.js';

function setup(catalogCacheTtlMs?: number) {
  const clock = { t: 100_000 };
  let sent = 0;
  const fetch = async () => {
    sent += 1;
    return Response.json(catalogBody);
  };
  const client = new StorefrontClient({ apiKey: KEY, now: () => clock.t, fetch, ...(catalogCacheTtlMs === undefined ? {} : { catalogCacheTtlMs }) });
  return { clock, client, sent: () => sent };
}

describe('the catalog cache', () => {
  it('an entry read on a clock set back before it was stored is fetched again', async () => {
    const { clock, client, sent } = setup();
    await client.getCatalog();
    clock.t -= 1;
    await client.getCatalog();
    expect(sent()).toBe(2);
    // The new entry holds as usual.
    await client.getCatalog();
    expect(sent()).toBe(2);
  });

  it('without a cache, the catalog is handed over as read, not frozen', async () => {
    const { client, sent } = setup(0);
    const catalog = await client.getCatalog();
    expect(Object.isFrozen(catalog)).toBe(false);
    await client.getCatalog();
    expect(sent()).toBe(2);
  });

  it('with one, frozen (a caller cannot change what the next caller reads)', async () => {
    const { client } = setup();
    expect(Object.isFrozen(await client.getCatalog())).toBe(true);
  });
});
