/**
 * The wire contract (SPEC §2): for each of the six operations, the method, the exact
 * path, the credential header (and the absence of the others), the content type and the
 * exact body, as a server receives them.
 */
import { HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { StorefrontClient, VERSION, encodeApiKey } from '../../src/index.js';
import { KEY, KEY_BASE64 } from '../support/fixtures.js';
import { answerJson, useLoopbackServers } from '../support/http-server.js';
import { BASE, catalogBody, legacyRow, useMsw, v4, v4Claim, voteRow, type Recorded } from '../support/msw.js';

const { json, respond } = useMsw({ loopbackPassthrough: true });
const servers = useLoopbackServers();

const client = () => new StorefrontClient({ apiKey: KEY, rateLimit: false, catalogCacheTtlMs: 0 });
const SDK_AGENT = `teamgames-sdk/${VERSION} node/${process.versions.node}`;

/** The only request of the test. */
function only(calls: Recorded[]): Recorded {
  expect(calls).toHaveLength(1);
  return calls[0] as Recorded;
}

/** v2 and v4: `Authorization: <base64 of the raw key>`, no `Bearer`, no `x-api-key`. */
function expectBase64Authorization(headers: Headers) {
  expect(headers.get('authorization')).toBe(KEY_BASE64);
  expect(headers.get('authorization')).not.toMatch(/bearer/i);
  expect(headers.has('x-api-key')).toBe(false);
  expect([...headers.keys()].sort()).toEqual(['accept', 'authorization', 'content-type', 'user-agent']);
}

/** v3 and vote: the raw key in `X-API-Key`, no `Authorization`. */
function expectRawApiKey(headers: Headers) {
  expect(headers.get('x-api-key')).toBe(KEY);
  expect(headers.has('authorization')).toBe(false);
  expect([...headers.keys()].sort()).toEqual(['accept', 'content-type', 'user-agent', 'x-api-key']);
}

describe('getCatalog', () => {
  it('POSTs {} to /api/v2/client/global/products with the Base64 key in Authorization', async () => {
    const calls = json(catalogBody);
    await client().getCatalog();

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/api/v2/client/global/products`);
    expectBase64Authorization(call.headers);
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(call.body).toBe('{}');
  });

  it('sends categoryId in the body', async () => {
    const calls = json(catalogBody);
    await client().getCatalog({ categoryId: 3 });

    const call = only(calls);
    expect(call.url.pathname).toBe('/api/v2/client/global/products');
    expect(call.body).toBe('{"categoryId":3}');
  });
});

describe('checkout', () => {
  const paymentRequired = { status: 'SUCCESS', statusCode: '200', isFree: false, redirect: 'https://pay.example/t/1', transactionId: 't-1' };

  it('POSTs username and cartItems (a JSON string) to /api/v2/client/global/checkout/complete', async () => {
    const calls = json(paymentRequired);
    await client().checkout({ username: 'Player123', items: [{ id: 123, quantity: 2 }] });

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/api/v2/client/global/checkout/complete`);
    expectBase64Authorization(call.headers);
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(call.body).toBe('{"username":"Player123","cartItems":"[{\\"id\\":123,\\"quantity\\":2}]"}');
    const body = JSON.parse(call.body) as { cartItems: unknown };
    expect(typeof body.cartItems).toBe('string');
    expect(JSON.parse(body.cartItems as string)).toEqual([{ id: 123, quantity: 2 }]);
  });

  it('sends only id and quantity of each item, whatever else the objects carry', async () => {
    const calls = json(paymentRequired);
    const items = [
      { id: 1, quantity: 3, name: 'Dragon scimitar', price: 10 },
      { id: 2, quantity: 1, productId: 'whip', sales: [] },
    ];
    await client().checkout({ username: 'Player123', items });

    const body = JSON.parse(only(calls).body) as { cartItems: string };
    expect(body.cartItems).toBe('[{"id":1,"quantity":3},{"id":2,"quantity":1}]');
  });

  it('sends the coupon when there is one', async () => {
    const calls = json(paymentRequired);
    await client().checkout({ username: 'Player123', items: [{ id: 123, quantity: 2 }], coupon: 'SPRING' });

    expect(JSON.parse(only(calls).body)).toEqual({ username: 'Player123', cartItems: '[{"id":123,"quantity":2}]', coupon: 'SPRING' });
  });
});

describe('claim (v4)', () => {
  it('POSTs playerName, preview false and includeRawTransactions false to /api/v4/store/transaction/update', async () => {
    const calls = json(v4('SUCCESS', [v4Claim]));
    await client().claim('Player123');

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/api/v4/store/transaction/update`);
    expectBase64Authorization(call.headers);
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(call.body).toBe('{"playerName":"Player123","preview":false,"includeRawTransactions":false}');
  });

  it('sends preview and includeRawTransactions when asked', async () => {
    const calls = json(v4('PREVIEW', [v4Claim], { rawTransactions: [] }));
    await client().claim('Player123', { preview: true, includeRawTransactions: true });

    expect(only(calls).body).toBe('{"playerName":"Player123","preview":true,"includeRawTransactions":true}');
  });

  it('previewClaim is claim with preview: true', async () => {
    const calls = json(v4('PREVIEW', [v4Claim]));
    await client().previewClaim('Player123');

    const call = only(calls);
    expect(call.url.pathname).toBe('/api/v4/store/transaction/update');
    expect(call.body).toBe('{"playerName":"Player123","preview":true,"includeRawTransactions":false}');
  });
});

describe('claimLegacy (v3 update)', () => {
  it('POSTs {"playerName"} as JSON to /api/v3/store/transaction/update with the raw key in x-api-key', async () => {
    const calls = json([legacyRow]);
    await client().claimLegacy('Player123');

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/api/v3/store/transaction/update`);
    expectRawApiKey(call.headers);
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(call.body).toBe('{"playerName":"Player123"}');
  });
});

describe('claimStoreTransactions (v3 store claim)', () => {
  it('POSTs a form body to /v3/store/transaction/claim (no /api prefix) with the raw key', async () => {
    const calls = json([legacyRow]);
    await client().claimStoreTransactions('Player 123 & co');

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/v3/store/transaction/claim`);
    expectRawApiKey(call.headers);
    expect(call.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect([...new URLSearchParams(call.body)]).toEqual([['playerName', 'Player 123 & co']]);
  });
});

describe('claimVoteReward', () => {
  it("POSTs player, reward and amount 'all' as a UTF-8 form to /v3/vote/reward/claim (no /api prefix)", async () => {
    const calls = json([voteRow]);
    await client().claimVoteReward({ player: 'Player123', reward: '1', amount: 'all' });

    const call = only(calls);
    expect(call.method).toBe('POST');
    expect(call.url.href).toBe(`${BASE}/v3/vote/reward/claim`);
    expectRawApiKey(call.headers);
    expect(call.headers.get('content-type')).toBe('application/x-www-form-urlencoded; charset=UTF-8');
    expect(call.body).toBe('player=Player123&reward=1&amount=all');
  });

  it('sends a numeric amount and a numeric reward id as text', async () => {
    const calls = json([voteRow]);
    await client().claimVoteReward({ player: 'Jöns Ünal', reward: 7, amount: 3 });

    expect([...new URLSearchParams(only(calls).body)]).toEqual([
      ['player', 'Jöns Ünal'],
      ['reward', '7'],
      ['amount', '3'],
    ]);
  });
});

describe('credentials', () => {
  it('Base64-encodes a non-ASCII key from its UTF-8 bytes (standard alphabet, padded)', async () => {
    const calls = json(catalogBody);
    await new StorefrontClient({ apiKey: 'clé-ñ-ü', catalogCacheTtlMs: 0 }).getCatalog();

    // What `echo -n 'clé-ñ-ü' | base64 -w0` prints; the Latin-1 bytes would give 'Y2zpLfEt/A=='.
    expect(only(calls).headers.get('authorization')).toBe('Y2zDqS3DsS3DvA==');
    expect(encodeApiKey('clé-ñ-ü')).toBe('Y2zDqS3DsS3DvA==');
    expect(encodeApiKey('clé-🔑-ключ')).toBe('Y2zDqS3wn5SRLdC60LvRjtGH');
    expect(encodeApiKey('SECRET-KEY-abc123')).toBe('U0VDUkVULUtFWS1hYmMxMjM=');
  });
});

describe('user agent', () => {
  it('sends teamgames-sdk/<version> node/<version>', async () => {
    const calls = json(catalogBody);
    await client().getCatalog();

    expect(only(calls).headers.get('user-agent')).toBe(SDK_AGENT);
    expect(SDK_AGENT).toMatch(/^teamgames-sdk\/\d+\.\d+\.\d+\S* node\/\d+\.\d+\.\d+$/);
  });

  it('puts a custom userAgent in front of its own', async () => {
    const calls = json([voteRow]);
    await new StorefrontClient({ apiKey: KEY, userAgent: 'MyVoteBot/2.1' }).claimVoteReward({ player: 'P', reward: '1', amount: 1 });

    expect(only(calls).headers.get('user-agent')).toBe(`MyVoteBot/2.1 ${SDK_AGENT}`);
  });
});

describe('base URL', () => {
  it('joins the paths to a base URL with a path and a trailing slash', async () => {
    const calls = json(v4('NO_ITEMS'));
    await new StorefrontClient({ apiKey: KEY, baseUrl: 'http://localhost:4010/sandbox/' }).claim('Player123');

    expect(only(calls).url.href).toBe('http://localhost:4010/sandbox/api/v4/store/transaction/update');
  });
});

describe('over a real socket', () => {
  it('the same headers and bodies arrive at a node:http server on 127.0.0.1', async () => {
    const free = { status: 'SUCCESS', statusCode: '200', isFree: true, transactionId: 't-1' };
    const server = await servers.start((request, res, req) => answerJson(request.path.startsWith('/v3/vote') ? [voteRow] : free)(request, res, req));
    const socketClient = new StorefrontClient({ apiKey: KEY, baseUrl: server.url });

    await socketClient.checkout({ username: 'Player123', items: [{ id: 123, quantity: 2 }] });
    await socketClient.claimVoteReward({ player: 'Player123', reward: '1', amount: 'all' });

    const [checkout, vote] = server.requests;
    expect(server.requests).toHaveLength(2);
    expect(checkout).toMatchObject({ method: 'POST', path: '/api/v2/client/global/checkout/complete', body: '{"username":"Player123","cartItems":"[{\\"id\\":123,\\"quantity\\":2}]"}' });
    expect(checkout?.headers).toMatchObject({ authorization: KEY_BASE64, 'content-type': 'application/json', 'user-agent': SDK_AGENT });
    expect(checkout?.headers['x-api-key']).toBeUndefined();

    expect(vote).toMatchObject({ method: 'POST', path: '/v3/vote/reward/claim', body: 'player=Player123&reward=1&amount=all' });
    expect(vote?.headers).toMatchObject({ 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', 'user-agent': SDK_AGENT });
    expect(vote?.headers.authorization).toBeUndefined();
  });
});

describe('fetch', () => {
  it('uses the fetch option instead of the global one', async () => {
    const calls = json(catalogBody);
    const seen: Request[] = [];
    const custom = vi.fn<typeof fetch>(async (input, init) => {
      seen.push(new Request(input, init));
      return HttpResponse.json(catalogBody);
    });
    await new StorefrontClient({ apiKey: KEY, fetch: custom }).getCatalog();

    expect(calls).toHaveLength(0);
    expect(custom).toHaveBeenCalledTimes(1);
    const request = seen[0] as Request;
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${BASE}/api/v2/client/global/products`);
    expect(request.headers.get('authorization')).toBe(KEY_BASE64);
  });

  it('looks up globalThis.fetch at each request, not when the client is built', async () => {
    const calls = respond(() => HttpResponse.json(catalogBody));
    const sdk = client();
    const original = globalThis.fetch;
    const replacement = vi.fn<typeof fetch>(async () => HttpResponse.json({ message: 'SUCCESS', products: [] }));
    globalThis.fetch = replacement;
    try {
      const catalog = await sdk.getCatalog();
      expect(catalog.products).toEqual([]);
    } finally {
      globalThis.fetch = original;
    }
    expect(replacement).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(0);

    // And back to the original (msw here) for the next request.
    await sdk.getCatalog();
    expect(calls).toHaveLength(1);
  });
});
