/**
 * The local claim guard gives its slot back when the service refused the call before
 * considering the player (a refused key, INVALID_PLAYER): the service opened no window
 * then, so a RATE_LIMIT from the guard would be a window nobody opened. Every other
 * answer keeps the window, as the service's does.
 */
import { HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, ClaimOutcomeUnknownError, StorefrontClient, type ClaimResult } from '../../src/index.js';
import { KEY, TEXT } from '../support/fixtures.js';
import { legacyRow, useMsw, v4 } from '../support/msw.js';
import { manualClock } from '../support/time.js';

const { respond } = useMsw();

function setup() {
  const clock = manualClock();
  return { clock, client: new StorefrontClient({ apiKey: KEY, now: clock.now, retry: 0 }) };
}

type Call = (client: StorefrontClient) => Promise<ClaimResult>;
const claim: Call = (client) => client.claim('Player123');
const preview: Call = (client) => client.previewClaim('Player123');
const claimLegacy: Call = (client) => client.claimLegacy('Player123');
const claimStoreTransactions: Call = (client) => client.claimStoreTransactions('Player123');

/** Answers the first request with `first`, every later one with an empty success. */
function firstThen(first: () => Response) {
  return respond((request, index) => {
    if (index === 0) return first();
    return request.url.pathname.startsWith('/api/v4') ? HttpResponse.json(v4('NO_ITEMS')) : HttpResponse.json([]);
  });
}

describe('the guard gives the slot back when the service never considered the player', () => {
  it.each<[string, Call, () => Response]>([
    ['v4 SERVER_NOT_FOUND', claim, () => HttpResponse.json(v4('SERVER_NOT_FOUND'))],
    ['v4 SERVER_NOT_FOUND on a preview', preview, () => HttpResponse.json(v4('SERVER_NOT_FOUND'))],
    ['HTTP 401 on v4', claim, () => new HttpResponse('Unauthorized', { status: 401 })],
    ['the v3 key text', claimLegacy, () => HttpResponse.json([{ message: TEXT.serverNotFound }])],
    ['the v3 key text on the store claim', claimStoreTransactions, () => HttpResponse.json([{ message: TEXT.serverNotFound }])],
    ['HTTP 401 on the store claim', claimStoreTransactions, () => new HttpResponse('Unauthorized', { status: 401 })],
  ])('after %s (AuthenticationError), the next claim is sent at once', async (_, call, first) => {
    const calls = firstThen(first);
    const { clock, client } = setup();
    await expect(call(client)).rejects.toBeInstanceOf(AuthenticationError);
    clock.advance(1_000);
    const next = await call(client);
    expect(next.code).toBe('NO_ITEMS');
    expect(calls).toHaveLength(2);
    // The window the second call opened holds as usual.
    expect(await claim(client)).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 10_000 });
    expect(calls).toHaveLength(2);
  });

  it.each<[string, Call, () => Response]>([
    ['v4 INVALID_PLAYER', claim, () => HttpResponse.json(v4('INVALID_PLAYER'))],
    ['the v3 invalid-player row', claimLegacy, () => HttpResponse.json([{ message: TEXT.invalidPlayer }])],
  ])('after %s, the next claim is sent at once', async (_, call, first) => {
    const calls = firstThen(first);
    const { client } = setup();
    expect((await call(client)).code).toBe('INVALID_PLAYER');
    expect((await call(client)).code).toBe('NO_ITEMS');
    expect(calls).toHaveLength(2);
  });

  it('gives back only its own slot: an earlier window is restored, not erased', async () => {
    const calls = respond((_, index) => HttpResponse.json(index === 1 ? v4('SERVER_NOT_FOUND') : v4('NO_ITEMS')));
    const { clock, client } = setup();
    await claim(client); // opens a window at T0
    clock.advance(10_000);
    await expect(claim(client)).rejects.toBeInstanceOf(AuthenticationError); // T0 + 10 s, given back
    clock.advance(1_000);
    expect((await claim(client)).code).toBe('NO_ITEMS'); // T0 + 11 s: the T0 window has ended
    expect(calls).toHaveLength(3);
  });
});

describe('every other answer keeps the window', () => {
  it.each<[string, Call, () => Response]>([
    ['NO_ITEMS', claim, () => HttpResponse.json(v4('NO_ITEMS'))],
    ['ALREADY_CLAIMED', claim, () => HttpResponse.json(v4('ALREADY_CLAIMED'))],
    ['PRODUCT_NOT_FOUND', claim, () => HttpResponse.json(v4('PRODUCT_NOT_FOUND'))],
    ['a server RATE_LIMIT', claim, () => HttpResponse.json(v4('RATE_LIMIT'))],
    ['an UNKNOWN code', claim, () => HttpResponse.json(v4('MAINTENANCE'))],
    ['a v3 purchase', claimLegacy, () => HttpResponse.json([legacyRow])],
  ])('%s', async (_, call, first) => {
    const calls = firstThen(first);
    const { clock, client } = setup();
    await call(client);
    clock.advance(1_000);
    expect(await call(client)).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 9_000 });
    expect(calls).toHaveLength(1);
  });

  it('a sent claim whose outcome is unknown (HTTP 502) keeps it: the service may have acted', async () => {
    const calls = firstThen(() => new HttpResponse('<html>bad gateway</html>', { status: 502 }));
    const { client } = setup();
    await expect(claim(client)).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(await claim(client)).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
    expect(calls).toHaveLength(1);
  });
});
