import { describe, expect, it } from 'vitest';
import { AuthenticationError, ClaimOutcomeUnknownError, InvalidInputError, encodeApiKey, type StorefrontClient, type Transaction } from 'teamgames-sdk';
import { KEY, TEXT, TWO_WHIPS } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

const deliveryOf = (rows: ReadonlyArray<{ deliverystatus: string }>) => rows.map((r) => r.deliverystatus);

describe.each(transports)('claims through the SDK, over $name', (transport) => {
  const { mock, client } = useMockSession(transport);

  /** Two paid rows for a player: an integer merchant id and a word one. */
  function buyWhipAndRank(player: string): void {
    mock.addPurchase(KEY, { playerName: player, id: 1, quantity: 2 });
    mock.addPurchase(KEY, { playerName: player, id: 3 });
  }

  const WHIP_AND_RANK: Transaction[] = [
    TWO_WHIPS, // merchant id "42": an integer, sent as an int
    {
      player_name: 'Player1',
      product_id: 0, // merchant id "rank_donator": not an integer
      product_id_string: 'rank_donator',
      product_name: 'Donator rank',
      product_price: 25,
      quantity_to_grant: 1,
      quantity_purchased: 1,
      product_amount: 1,
      amount_purchased: 1,
    },
  ];

  it('preview lists the claims and leaves the state unchanged', async () => {
    buyWhipAndRank('Player1');
    const before = mock.purchases(KEY, 'Player1');
    const preview = await client().previewClaim('Player1', { includeRawTransactions: true });
    expect(preview).toMatchObject({ code: 'PREVIEW', status: 'PREVIEW', message: 'You have 2 purchases waiting to be claimed.' });
    expect(preview.claims).toEqual(WHIP_AND_RANK);
    expect(preview.rawTransactions).toEqual(before);
    expect(mock.purchases(KEY, 'Player1')).toEqual(before);
    expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Undelivered', 'Undelivered']);
  });

  it('SUCCESS delivers every row at once, with both quantity pairs and product_id per the SPEC rule', async () => {
    buyWhipAndRank('Player1');
    const result = await client().claim('Player1');
    expect(result).toEqual({ code: 'SUCCESS', status: 'SUCCESS', message: TEXT.success, claims: WHIP_AND_RANK });
    const rows = mock.purchases(KEY, 'Player1');
    expect(deliveryOf(rows)).toEqual(['Delivered', 'Delivered']);
    expect(rows.every((r) => r.delivered === '2026-01-01T00:00:00.000Z')).toBe(true);
  });

  it('includeRawTransactions returns the raw rows, as delivered', async () => {
    buyWhipAndRank('Player1');
    const result = await client().claim('Player1', { includeRawTransactions: true });
    expect(result.code).toBe('SUCCESS');
    expect(result.rawTransactions).toEqual(mock.purchases(KEY, 'Player1'));
    expect(result.rawTransactions?.map((r) => [r['productid'], r['givequantity'], r['deliverystatus']])).toEqual([
      ['42', 2, 'Delivered'],
      ['rank_donator', 1, 'Delivered'],
    ]);
  });

  it('ALREADY_CLAIMED once everything was delivered; NO_ITEMS for a player who never bought', async () => {
    buyWhipAndRank('Player1');
    const sdk = client();
    expect((await sdk.claim('Player1')).code).toBe('SUCCESS');
    mock.clock.advance(10_000);
    expect(await sdk.claim('Player1')).toEqual({ code: 'ALREADY_CLAIMED', status: 'ERROR', message: TEXT.alreadyClaimed, claims: [] });
    expect(await sdk.claim('Nobody')).toEqual({ code: 'NO_ITEMS', status: 'ERROR', message: TEXT.noItems, claims: [] });
  });

  it('PRODUCT_NOT_FOUND when a purchased product was removed: nothing is delivered', async () => {
    buyWhipAndRank('Player1');
    mock.removeProduct(KEY, 3);
    const result = await client().claim('Player1');
    expect(result).toEqual({ code: 'PRODUCT_NOT_FOUND', status: 'ERROR', message: TEXT.productNotFound, claims: [] });
    expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Undelivered', 'Undelivered']);
  });

  it.each([
    ['65 characters', 'a'.repeat(65)],
    ['a control character', 'Player\u00071'],
    ['U+202E', 'Player\u202e1'],
  ])('a name with %s, which the service answers INVALID_PLAYER, is refused before sending', async (_, name) => {
    await expect(client().claim(name)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(client().claim(name)).rejects.toThrow(/^claim: invalid playerName: must /);
  });

  it.each([
    ['64 characters', 'a'.repeat(64)],
    ['spaces', 'Iron Man 42'],
    ['underscores', '__zezima__'],
    ['a 17-digit Steam id', '76561198000000001'],
  ])('accepts a name with %s and delivers to it', async (_, name) => {
    mock.addPurchase(KEY, { playerName: name, id: 1 });
    const result = await client().claim(name);
    expect(result.code).toBe('SUCCESS');
    expect(result.claims.map((t) => t.player_name)).toEqual([name]);
    expect(deliveryOf(mock.purchases(KEY, name))).toEqual(['Delivered']);
  });

  it('matches player names with their letter case', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 1 });
    const sdk = client();
    expect((await sdk.claim('player123')).code).toBe('NO_ITEMS');
    expect(deliveryOf(mock.purchases(KEY, 'Player123'))).toEqual(['Undelivered']);
    // The local guard keys on the exact name too, so this is not rate-limited.
    expect((await sdk.claim('Player123')).code).toBe('SUCCESS');
  });

  describe.each([
    ['a wrong key', 'wrong-key'],
    ['a pre-encoded key (Base64 of the raw key)', encodeApiKey(KEY)],
  ])('SERVER_NOT_FOUND for %s', (_, apiKey) => {
    const calls: Array<[string, (sdk: StorefrontClient) => Promise<unknown>]> = [
      ['claim', (sdk) => sdk.claim('Player1')],
      ['claimLegacy', (sdk) => sdk.claimLegacy('Player1')],
      ['claimStoreTransactions', (sdk) => sdk.claimStoreTransactions('Player1')],
      ['getCatalog', (sdk) => sdk.getCatalog()],
      ['checkout', (sdk) => sdk.checkout({ username: 'Player1', items: [{ id: 1, quantity: 1 }] })],
      ['claimVoteReward', (sdk) => sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' })],
    ];

    it.each(calls)('%s rejects with AuthenticationError and delivers nothing', async (operation, call) => {
      buyWhipAndRank('Player1');
      mock.recordVote(KEY, 'Player1', 3);
      const error = await call(client({ apiKey })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error).toMatchObject({ code: 'AUTHENTICATION_FAILED', operation });
      expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Undelivered', 'Undelivered']);
      expect(mock.state().servers[0]?.votes[0]?.vote_points).toBe(3);
      expect(mock.state().checkouts).toEqual([]);
      // The key never appears in what the error shows.
      expect(`${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`).not.toContain(apiKey);
    });
  });

  // Regression: a value fetch cannot put in a header used to surface as
  // ClaimOutcomeUnknownError although nothing was sent (fetch refused it mid-claim); the
  // constructor now refuses it, so no claim can be sent with it.
  it.each([
    ['an apiKey', { apiKey: 'contract\u2013key' }],
    ['a userAgent', { userAgent: 'My bot \u2013 v1' }],
  ])('%s that cannot travel in a header is refused by the constructor', (_, options) => {
    expect(() => client(options)).toThrow(InvalidInputError);
    expect(() => client(options)).toThrow(/must fit in an HTTP header/);
  });

  describe('the service rate limit (local guard off)', () => {
    const unguarded = () => client({ rateLimit: false });

    it('refuses at 9,999 ms and accepts at 10,000 ms after the last accepted call', async () => {
      const sdk = unguarded();
      expect((await sdk.claim('Player1')).code).toBe('NO_ITEMS');
      mock.clock.advance(9_999);
      expect(await sdk.claim('Player1')).toEqual({
        code: 'RATE_LIMIT',
        status: 'ERROR',
        message: TEXT.rateLimitV4,
        claims: [],
        retryAfterMs: 10_000,
        source: 'server',
      });
      mock.clock.advance(1);
      expect((await sdk.claim('Player1')).code).toBe('NO_ITEMS');
    });

    it('a refused call does not extend the window', async () => {
      const sdk = unguarded();
      await sdk.claim('Player1');
      mock.clock.advance(5_000);
      expect((await sdk.claim('Player1')).code).toBe('RATE_LIMIT');
      mock.clock.advance(5_000);
      expect((await sdk.claim('Player1')).code).toBe('NO_ITEMS');
    });

    it('v3 and v4 share the window', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = unguarded();
      expect((await sdk.claim('Player1')).code).toBe('SUCCESS');
      expect(await sdk.claimLegacy('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'server', retryAfterMs: 10_000, claims: [] });
      expect(await sdk.claimStoreTransactions('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'server', claims: [] });
      mock.clock.advance(10_000);
      expect((await sdk.claimLegacy('Player1')).code).toBe('NO_ITEMS');
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'server' });
    });

    it('a preview counts, and nothing changes while limited', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = unguarded();
      expect((await sdk.previewClaim('Player1')).code).toBe('PREVIEW');
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'server' });
      expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Undelivered']);
      mock.clock.advance(10_000);
      expect((await sdk.claim('Player1')).code).toBe('SUCCESS');
      expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Delivered']);
    });
  });

  describe('the local guard (default)', () => {
    it('answers RATE_LIMIT locally, without reaching the mock, and opens on the shared clock', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sent: string[] = [];
      const sdk = client({ onEvent: (event) => event.type === 'request' && sent.push(event.operation) });

      expect((await sdk.previewClaim('Player1')).code).toBe('PREVIEW');
      mock.clock.advance(4_000);
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 6_000, claims: [] });
      expect(await sdk.claimLegacy('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 6_000 });
      expect(await sdk.claimStoreTransactions('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
      expect(sent).toEqual(['claim']);
      expect(deliveryOf(mock.purchases(KEY, 'Player1'))).toEqual(['Undelivered']);
      // The mock's rate window was started by the preview alone.
      expect(mock.state().servers[0]?.lastAcceptedClaims).toEqual([{ playerName: 'Player1', at: '2026-01-01T00:00:00.000Z' }]);

      mock.clock.advance(6_000);
      expect((await sdk.claim('Player1')).code).toBe('SUCCESS');
      expect(sent).toEqual(['claim', 'claim']);
    });

    it('opens exactly when the service does: 9,999 ms refused locally, 10,000 ms accepted by the mock', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = client();
      expect((await sdk.claim('Player1')).code).toBe('SUCCESS');
      mock.addPurchase(KEY, { playerName: 'Player1', id: 3 });
      mock.clock.advance(9_999);
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 1 });
      mock.clock.advance(1);
      const second = await sdk.claim('Player1');
      expect(second.code).toBe('SUCCESS');
      expect(second.claims.map((t) => t.product_id_string)).toEqual(['rank_donator']);
    });

    it('two concurrent claims for one player on one client: only one goes out', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = client();
      const results = await Promise.all([sdk.claim('Player1'), sdk.claim('Player1')]);
      expect(results.map((r) => (r.code === 'RATE_LIMIT' ? `${r.code}:${r.source}` : r.code))).toEqual(['SUCCESS', 'RATE_LIMIT:local']);
      expect(mock.state().servers[0]?.lastAcceptedClaims).toHaveLength(1);
    });
  });
});
