/**
 * What StorefrontClient's methods decide themselves (src/client.ts), each pinned so that
 * changing it fails a test (issue #46): the body each method sends, which calls count as
 * delivering (a lost answer is then an outcome unknown, and names the player), an abort
 * that wins over the catalog cache, and a client without a cache. Through the client with
 * a `fetch` of the test's own.
 */
import { describe, expect, it } from 'vitest';
import { ClaimOutcomeUnknownError, HttpError, MemoryJournal, StorefrontClient, type StorefrontClientOptions } from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';
import { catalogBody, v4 } from '../support/msw.js';

/** A client whose every request is answered by `answer`, the bodies sent recorded. */
function recording(answer: (url: string) => Response, options: Partial<StorefrontClientOptions> = {}) {
  const bodies: Array<[string, unknown]> = [];
  const fetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const path = new URL(String(url)).pathname;
    bodies.push([path, init?.body]);
    return answer(path);
  };
  return { client: new StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch, ...options }), bodies };
}

const down = () => new Response('down', { status: 500 });

describe('the body each method sends', () => {
  it('getCatalog: {} for the whole catalog, { categoryId } for one category', async () => {
    const { client, bodies } = recording(() => Response.json(catalogBody));
    await client.getCatalog();
    await client.getCatalog({ categoryId: 7 });
    expect(bodies).toEqual([
      ['/api/v2/client/global/products', '{}'],
      ['/api/v2/client/global/products', '{"categoryId":7}'],
    ]);
  });

  it('the claims: v4 with its flags, v3 with the player only, the store claim as a form', async () => {
    const { client, bodies } = recording((path) => (path.startsWith('/api/v4') ? Response.json(v4('NO_ITEMS')) : Response.json([])));
    await client.claim('Ann');
    await client.previewClaim('Bea', { includeRawTransactions: true });
    await client.claimLegacy('Cy');
    await client.claimStoreTransactions('Di');
    expect(bodies).toEqual([
      ['/api/v4/store/transaction/update', '{"playerName":"Ann","preview":false,"includeRawTransactions":false}'],
      ['/api/v4/store/transaction/update', '{"playerName":"Bea","preview":true,"includeRawTransactions":true}'],
      ['/api/v3/store/transaction/update', '{"playerName":"Cy"}'],
      ['/v3/store/transaction/claim', 'playerName=Di'],
    ]);
  });
});

describe('the endpoint table', () => {
  it('each method: its path, content type and credential header', async () => {
    const seen: Array<[string, string, string]> = [];
    const fetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const path = new URL(String(url)).pathname;
      const headers = init?.headers as Record<string, string>;
      const credential = Object.keys(headers).filter((name) => name === 'authorization' || name === 'x-api-key');
      seen.push([path, headers['content-type'] ?? '', credential.join()]);
      return new Response('down', { status: 500 });
    };
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch });
    await failureOf(client.getCatalog());
    await failureOf(client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] }));
    await failureOf(client.claim('Ann'));
    await failureOf(client.claimLegacy('Ann'));
    await failureOf(client.claimStoreTransactions('Ann'));
    await failureOf(client.claimVoteReward({ player: 'Ann', reward: 1, amount: 1 }));
    expect(seen).toEqual([
      ['/api/v2/client/global/products', 'application/json', 'authorization'],
      ['/api/v2/client/global/checkout/complete', 'application/json', 'authorization'],
      ['/api/v4/store/transaction/update', 'application/json', 'authorization'],
      ['/api/v3/store/transaction/update', 'application/json', 'x-api-key'],
      ['/v3/store/transaction/claim', 'application/x-www-form-urlencoded', 'x-api-key'],
      ['/v3/vote/reward/claim', 'application/x-www-form-urlencoded; charset=UTF-8', 'x-api-key'],
    ]);
  });

  it('only the checkout names a 404 a rejected payload', async () => {
    const notFound = () => new Response('no', { status: 404 });
    expect((await failureOf(recording(notFound).client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] })) as Error).name).toBe('RequestRejectedError');
    expect((await failureOf(recording(notFound).client.claimLegacy('Ann')) as Error).name).toBe('HttpError');
    expect((await failureOf(recording(notFound).client.getCatalog()) as Error).name).toBe('HttpError');
  });
});

describe('which calls deliver: a lost answer is an outcome unknown that names the player', () => {
  it.each<[string, (client: StorefrontClient) => Promise<unknown>, string]>([
    ['claim', (c) => c.claim('Ann'), 'Ann'],
    ['claimLegacy', (c) => c.claimLegacy('Ann'), 'Ann'],
    ['claimStoreTransactions', (c) => c.claimStoreTransactions('Ann'), 'Ann'],
    ['claimVoteReward', (c) => c.claimVoteReward({ player: 'Vic', reward: 1, amount: 'all' }), 'Vic'],
  ])('%s', async (_, call, player) => {
    const error = expectInstance(await failureOf(call(recording(down).client)), ClaimOutcomeUnknownError);
    expect(error.playerName).toBe(player);
  });

  it.each<[string, (client: StorefrontClient) => Promise<unknown>]>([
    ['previewClaim', (c) => c.previewClaim('Ann')],
    ['claim with preview: true', (c) => c.claim('Ann', { preview: true })],
    ['checkout', (c) => c.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] })],
    ['getCatalog', (c) => c.getCatalog()],
  ])('%s does not: a plain HttpError', async (_, call) => {
    expectInstance(await failureOf(call(recording(down).client)), HttpError);
  });
});

describe('the catalog cache', () => {
  it('an aborted signal rejects with its reason even when the catalog is cached', async () => {
    const { client, bodies } = recording(() => Response.json(catalogBody));
    await client.getCatalog();
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(client.getCatalog({ signal: controller.signal })).rejects.toBe(controller.signal.reason);
    expect(bodies).toHaveLength(1);
  });

  it('clearCatalogCache on a client without a cache does nothing', async () => {
    const { client, bodies } = recording(() => Response.json(catalogBody), { catalogCacheTtlMs: 0 });
    expect(() => client.clearCatalogCache()).not.toThrow();
    await client.getCatalog();
    await client.getCatalog();
    expect(bodies).toHaveLength(2);
  });
});

describe('the delivery methods hand over to their engines', () => {
  it('resumeDeliveries, resumeVoteRewards and startDeliveryLoop answer with their reports and loop', async () => {
    const { client } = recording(() => Response.json(v4('NO_ITEMS')), { journal: new MemoryJournal() });
    expect(await client.resumeDeliveries(() => undefined)).toMatchObject({ granted: [], failed: [] });
    expect(await client.resumeVoteRewards(() => undefined)).toBeTypeOf('object');
    const loop = client.startDeliveryLoop({ give: () => undefined });
    expect(loop.stop).toBeTypeOf('function');
    await loop.stop();
  });

  it("an unknown checkout option names the checkout", async () => {
    const { client } = recording(() => Response.json({}));
    const error = await failureOf(client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] }, { bogus: 1 } as never));
    expect((error as Error).message.startsWith('checkout: invalid options.bogus')).toBe(true);
  });
});

