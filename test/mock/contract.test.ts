import { describe, expect, it } from 'vitest';
import { encodeApiKey } from 'teamgames-sdk';
import { KEY, KEY_BASE64, KEY_UNCONFIGURED, LISTED_AT_T0, T0, TEXT, TWO_SCROLLS, storeSeed } from '../support/fixtures.js';
import { ids, transports, useMockSession } from '../support/mock-session.js';

// The mock's wire contract, with plain fetch (no SDK): what a plugin in any language sees.
describe.each(transports)('mock contract over $name', (transport) => {
  const session = useMockSession(transport);
  const { mock, api } = session;

  /** Checkout + pay at the redirect: the player's rows become claimable. */
  async function buy(username: string, items: Array<{ id: number; quantity: number }>): Promise<string> {
    const { body } = await api.checkout(username, items);
    expect(body.status).toBe('SUCCESS');
    const page = await session.fetch(body.redirect);
    expect(page.status).toBe(200);
    return body.transactionId;
  }

  describe('getCatalog', () => {
    it('lists enabled products inside their window, with only the sales active now', async () => {
      const { status, body } = await api.getCatalog();
      expect(status).toBe(200);
      expect(body.message).toBe('SUCCESS');
      expect(ids(body)).toEqual(LISTED_AT_T0);
      // The sword's February sale has not started and its 90 % sale has ended.
      const sword = body.products.find((p: { id: number }) => p.id === 2);
      expect(sword).toMatchObject({ productId: 7, price: 20, priceOriginal: 20, priceWithSale: 15, quantity: 2, disabled: false });
      expect(sword.sales).toEqual([
        { saleType: 'percentage', discountPercentage: 10, discountAmount: 0 },
        { saleType: 'amount', discountPercentage: 0, discountAmount: 5 },
      ]);
      // The diamonds' sale starts on 2026-01-05.
      const diamonds = body.products.find((p: { id: number }) => p.id === 12);
      expect(diamonds).toMatchObject({ productId: 'minecraft:diamond', priceWithSale: 5, quantity: 64, description: '', image: '', sales: [] });
    });

    it('never prices below 0', async () => {
      const { body } = await api.getCatalog();
      expect(body.products.find((p: { id: number }) => p.id === 9).priceWithSale).toBe(0);
    });

    it('follows the clock: windows open and close, future sales start', async () => {
      const at = async (time: string) => {
        mock.clock.set(time);
        return (await api.getCatalog()).body;
      };
      const priceWithSale = (body: any, id: number): number => body.products.find((p: { id: number }) => p.id === id).priceWithSale;
      expect(priceWithSale(await at('2026-01-05T00:00:00Z'), 12)).toBe(4);
      expect(ids(await at('2026-01-10T00:00:00Z'))).toContain(7);
      const february = await at('2026-02-01T00:00:00Z');
      expect(ids(february)).not.toContain(7);
      expect(priceWithSale(february, 2)).toBe(1);
    });

    it('narrows to a category; an unknown or empty category gives an empty list', async () => {
      expect(ids((await api.getCatalog({ categoryId: 2 })).body)).toEqual([3, 10]);
      expect((await api.getCatalog({ categoryId: 3 })).body.products).toEqual([]);
      expect((await api.getCatalog({ categoryId: 99 })).body).toEqual({ message: 'SUCCESS', products: [] });
    });

    it('answers GAME_SERVER_NOT_FOUND at HTTP 200 for a wrong, raw or pre-encoded key', async () => {
      for (const authorization of [encodeApiKey('nope'), KEY, encodeApiKey(KEY_BASE64), `Bearer ${KEY_BASE64}`, `${KEY_BASE64.slice(0, 4)} ${KEY_BASE64.slice(4)}`]) {
        const { status, body } = await api.post('/api/v2/client/global/products', { authorization, 'content-type': 'application/json' }, '{}')
          .then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
        expect(status).toBe(200);
        expect(body).toMatchObject({ products: [], message: 'GAME_SERVER_NOT_FOUND' });
        expect(typeof body.extendedMessage).toBe('string');
      }
    });

    it('refuses a body with unknown fields or a non-JSON content type', async () => {
      expect((await api.getCatalog({ category: 1 })).status).toBe(400);
      const res = await api.post('/api/v2/client/global/products', { authorization: KEY_BASE64, 'content-type': 'text/plain' }, '{}');
      expect(res.status).toBe(415);
    });

    it('accepts an empty body as "everything"', async () => {
      const res = await api.post('/api/v2/client/global/products', { authorization: KEY_BASE64 });
      expect(((await res.json()) as any).products).toHaveLength(LISTED_AT_T0.length);
    });
  });

  describe('checkout', () => {
    it('answers 401 for a wrong key before looking at the body', async () => {
      const { status } = await api.checkout('', 'not json', {}, { authorization: encodeApiKey('wrong') });
      expect(status).toBe(401);
      expect((await api.checkout('Player1', [{ id: 1, quantity: 1 }], {}, { authorization: KEY })).status).toBe(401);
    });

    it.each([
      ['blank username', '  ', [{ id: 1, quantity: 1 }], {}],
      ['cartItems not JSON', 'P', '[{id:1}', {}],
      ['cartItems empty', 'P', [], {}],
      ['cartItems not an array', 'P', { id: 1, quantity: 1 }, {}],
      ['id 0', 'P', [{ id: 0, quantity: 1 }], {}],
      ['quantity 1.5', 'P', [{ id: 1, quantity: 1.5 }], {}],
      ['extra item field', 'P', [{ id: 1, quantity: 1, price: 0 }], {}],
      ['unknown body field', 'P', [{ id: 1, quantity: 1 }], { discount: 5 }],
    ])('answers 404 for an unparseable payload: %s', async (_, username, items, extra) => {
      const { status, body } = await api.checkout(username as string, items, extra);
      expect(status).toBe(404);
      expect(body.message).toMatch(/could not be parsed/);
    });

    it('answers 404 for a body that is not JSON at all', async () => {
      const res = await api.post('/api/v2/client/global/checkout/complete', { authorization: KEY_BASE64, 'content-type': 'application/json' }, 'username=x');
      expect(res.status).toBe(404);
    });

    it('answers INVALID_STOCK for unknown, disabled, out-of-window and out-of-stock products (before the coupon)', async () => {
      const items = [
        { id: 1, quantity: 1 },
        { id: 99, quantity: 1 },
        { id: 6, quantity: 1 },
        { id: 7, quantity: 1 },
        { id: 4, quantity: 2 },
        { id: 4, quantity: 1 },
      ];
      const { status, body } = await api.checkout('Player1', items, { coupon: 'NOPE' });
      expect(status).toBe(200);
      expect(body.status).toBe('INVALID_STOCK');
      expect(body.productsAffected.map((p: { id: number; reason: string }) => [p.id, p.reason])).toEqual([
        [99, 'NOT_FOUND'],
        [6, 'DISABLED'],
        [7, 'NOT_AVAILABLE'],
        [4, 'OUT_OF_STOCK'],
      ]);
      expect(body.cartItems).toHaveLength(6);
      expect(body.cartItems[0]).toMatchObject({ id: 1, quantity: 1, valid: true });
      expect(body.cartItems[0].reason).toBeUndefined();
      expect(body.cartItems[1]).toMatchObject({ id: 99, valid: false, reason: 'NOT_FOUND' });
      expect(mock.purchases(KEY)).toEqual([]);
    });

    it('rejects an unknown or expired coupon with `error`', async () => {
      const unknown = await api.checkout('Player1', [{ id: 1, quantity: 1 }], { coupon: 'NOPE' });
      expect(unknown.body.error).toMatch(/not valid/);
      const expired = await api.checkout('Player1', [{ id: 1, quantity: 1 }], { coupon: 'OLD' });
      expect(expired.body.error).toMatch(/expired/);
      expect(mock.state().checkouts).toEqual([]);
    });

    it('applies the best sale per line, then the coupon percent, then its amount, to cents', async () => {
      // 2 × 15.00 (sword: the better of 10 % and 5.00 off) + 0.50 (trinket) = 30.50; SPRING 10% → 27.45
      const spring = await api.checkout('Player1', [{ id: 2, quantity: 2 }, { id: 11, quantity: 1 }], { coupon: 'spring' });
      expect(spring.body).toMatchObject({ status: 'SUCCESS', statusCode: '200', isFree: false, total: 27.45 });
      const five = await api.checkout('Player1', [{ id: 1, quantity: 1 }], { coupon: 'FIVE' });
      expect(five.body.total).toBe(5);
    });

    it('makes a zero total free: rows created Paid, stock taken, nothing to pay', async () => {
      const { body } = await api.checkout('Player1', [{ id: 5, quantity: 1 }, { id: 4, quantity: 1 }], { coupon: 'ALLFREE' });
      expect(body).toMatchObject({ status: 'SUCCESS', statusCode: '200', isFree: true });
      expect(typeof body.transactionId).toBe('string');
      expect(body.redirect).toBeUndefined();
      expect(mock.purchases(KEY).map((r) => [r.paymentstatus, r.paymenttype])).toEqual([
        ['Paid', 'Free'],
        ['Paid', 'Free'],
      ]);
      expect(mock.state().servers[0]?.products.find((p) => p.id === 4)?.stock).toBe(1);
    });

    it('answers status ERROR when the gateway is not configured or the total is below the minimum charge', async () => {
      const unconfigured = await api.checkout('P', [{ id: 1, quantity: 1 }], {}, { authorization: encodeApiKey(KEY_UNCONFIGURED) });
      expect(unconfigured.body).toMatchObject({ status: 'ERROR' });
      expect(unconfigured.body.message).toMatch(/not configured/);
      const below = await api.checkout('P', [{ id: 11, quantity: 1 }]);
      expect(below.body.status).toBe('ERROR');
      expect(below.body.message).toMatch(/minimum charge of 1\.00/);
    });

    it('answers statusCode "400" above the maximum total or with more lines than the maximum', async () => {
      const total = await api.checkout('P', [{ id: 10, quantity: 3 }]);
      expect(total.body).toMatchObject({ statusCode: '400' });
      expect(total.body.status).toBeUndefined();
      const lines = await api.checkout('P', [1, 2, 3, 1].map((id) => ({ id, quantity: 1 })));
      expect(lines.body).toMatchObject({ statusCode: '400' });
    });

    it('succeeds with a redirect to the pay page on the request origin; rows Pending, stock reserved', async () => {
      const { body } = await api.checkout('Player1', [{ id: 4, quantity: 2 }]);
      expect(body.redirect).toBe(`${session.baseUrl}/__mock/pay/${body.transactionId}`);
      expect(body.transactionId).toMatch(/^[0-9a-f-]{36}$/);
      const [row] = mock.purchases(KEY);
      expect(row).toMatchObject({
        transactionid: body.transactionId,
        username: 'Player1',
        catalogid: 4,
        productid: 'claws',
        quantity: 2,
        givequantity: 2,
        paymentstatus: 'Pending',
        deliverystatus: 'Undelivered',
        paymenttype: 'Gateway',
        delivered: null,
        created: '2026-01-01T00:00:00.000Z',
      });
      expect((await api.checkout('Player2', [{ id: 4, quantity: 1 }])).body.status).toBe('INVALID_STOCK');
      expect((await api.getCatalog()).body.products.find((p: { id: number }) => p.id === 4).stock).toBe(0);
    });

    it('releases the stock and removes the rows when a pending checkout is cancelled', async () => {
      const { body } = await api.checkout('Player1', [{ id: 4, quantity: 2 }]);
      const cancelled = await api.admin('POST', `/__mock/payments/${body.transactionId}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.json().status).toBe('cancelled');
      expect(mock.purchases(KEY)).toEqual([]);
      expect((await api.checkout('Player2', [{ id: 4, quantity: 2 }])).body.status).toBe('SUCCESS');
      const page = await session.fetch(`${session.baseUrl}/__mock/pay/${body.transactionId}`);
      expect(page.status).toBe(409);
    });
  });

  describe('payment', () => {
    it('the pay page completes the payment and answers HTML', async () => {
      const { body } = await api.checkout('Player1', [{ id: 1, quantity: 1 }]);
      const page = await session.fetch(body.redirect);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      expect(await page.text()).toMatch(/Payment complete/);
      expect(mock.purchases(KEY)[0]?.paymentstatus).toBe('Paid');
      expect(mock.state().checkouts[0]).toMatchObject({ status: 'paid', total: 10 });
      expect((await session.fetch(body.redirect)).status).toBe(200);
      expect((await session.fetch(`${session.baseUrl}/__mock/pay/unknown`)).status).toBe(404);
    });

    it('the admin route completes it too, and a paid checkout cannot be cancelled', async () => {
      const { body } = await api.checkout('Player1', [{ id: 1, quantity: 1 }]);
      const done = await api.admin('POST', `/__mock/payments/${body.transactionId}/complete`);
      expect(done.json()).toMatchObject({ status: 'paid', transactionId: body.transactionId });
      expect((await api.admin('POST', `/__mock/payments/${body.transactionId}/cancel`)).status).toBe(409);
      expect((await api.admin('POST', '/__mock/payments/nope/complete')).status).toBe(404);
    });
  });

  describe('claim (v4)', () => {
    it('PREVIEW lists the claims and changes nothing', async () => {
      await buy('Player1', [{ id: 12, quantity: 3 }, { id: 1, quantity: 1 }]);
      const before = mock.purchases(KEY);
      const preview = await api.claim('Player1', { preview: true, includeRawTransactions: true });
      expect(preview).toMatchObject({ status: 'PREVIEW', code: 'PREVIEW' });
      expect(preview.data.claims).toHaveLength(2);
      expect(preview.data.rawTransactions).toEqual(before);
      expect(mock.purchases(KEY)).toEqual(before);
    });

    it('SUCCESS delivers every row at once, with both key pairs, then ALREADY_CLAIMED', async () => {
      await buy('Player1', [{ id: 12, quantity: 3 }, { id: 2, quantity: 1 }, { id: 1, quantity: 1 }]);
      const result = await api.claim('Player1');
      expect(result).toMatchObject({
        status: 'SUCCESS',
        code: 'SUCCESS',
        message: TEXT.success,
      });
      expect(result.data.rawTransactions).toBeUndefined();
      expect(result.data.claims).toEqual([
        {
          player_name: 'Player1',
          product_id: 0,
          product_id_string: 'minecraft:diamond',
          product_name: 'Diamonds',
          product_price: 5,
          quantity_to_grant: 192,
          quantity_purchased: 3,
          product_amount: 192,
          amount_purchased: 3,
        },
        {
          player_name: 'Player1',
          product_id: 7,
          product_id_string: '7',
          product_name: 'Dragon sword',
          product_price: 15, // after its best sale
          quantity_to_grant: 2,
          quantity_purchased: 1,
          product_amount: 2,
          amount_purchased: 1,
        },
        {
          player_name: 'Player1',
          product_id: 42,
          product_id_string: '42',
          product_name: 'Abyssal whip',
          product_price: 10,
          quantity_to_grant: 1,
          quantity_purchased: 1,
          product_amount: 1,
          amount_purchased: 1,
        },
      ]);
      expect(mock.purchases(KEY).every((r) => r.deliverystatus === 'Delivered' && r.delivered === '2026-01-01T00:00:00.000Z')).toBe(true);
      mock.clock.advance(10_000);
      expect(await api.claim('Player1')).toMatchObject({ status: 'ERROR', code: 'ALREADY_CLAIMED', data: { claims: [] } });
    });

    it('NO_ITEMS for a player who never bought, or whose checkout is not paid', async () => {
      expect(await api.claim('Nobody', { includeRawTransactions: true })).toEqual({
        status: 'ERROR',
        code: 'NO_ITEMS',
        message: TEXT.noItems,
        data: { claims: [], rawTransactions: [] },
      });
      await api.checkout('Unpaid', [{ id: 1, quantity: 1 }]);
      expect((await api.claim('Unpaid')).code).toBe('NO_ITEMS');
    });

    it('PRODUCT_NOT_FOUND delivers nothing when a row references a removed product', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      mock.addPurchase(KEY, { playerName: 'Player1', id: 2 });
      const removed = await api.admin('POST', '/__mock/products/remove', { apiKey: KEY, id: 2 });
      expect(removed.status).toBe(200);
      expect(await api.claim('Player1')).toMatchObject({ status: 'ERROR', code: 'PRODUCT_NOT_FOUND', data: { claims: [] } });
      expect(mock.purchases(KEY).every((r) => r.deliverystatus === 'Undelivered')).toBe(true);
    });

    it.each([
      ['blank', '   '],
      ['empty', ''],
      ['65 characters', 'a'.repeat(65)],
      ['a control character', 'Player\u00071'],
      ['a newline', 'Player\n1'],
      ['not a string', 42],
      ['missing', undefined],
    ])('INVALID_PLAYER for a name that is %s', async (_, name) => {
      expect(await api.claim(name)).toMatchObject({ status: 'ERROR', code: 'INVALID_PLAYER', message: TEXT.invalidPlayer });
    });

    it.each([
      ['64 characters', 'a'.repeat(64)],
      ['spaces', 'Iron Man 42'],
      ['underscores', '__zezima__'],
      ['a 17-digit Steam id', '76561198000000001'],
    ])('accepts a name with %s', async (_, name) => {
      expect((await api.claim(name)).code).toBe('NO_ITEMS');
    });

    it('SERVER_NOT_FOUND for a wrong key, a pre-encoded key, a raw key and a Bearer key', async () => {
      for (const authorization of [encodeApiKey('wrong'), encodeApiKey(KEY_BASE64), KEY, `Bearer ${KEY}`]) {
        expect(await api.claim('Player1', {}, { authorization })).toEqual({
          status: 'ERROR',
          code: 'SERVER_NOT_FOUND',
          message: TEXT.serverNotFound,
          data: { claims: [] },
        });
      }
      const viaApiKey = await api.claim('Player1', {}, { 'x-api-key': KEY });
      expect(viaApiKey.code).toBe('SERVER_NOT_FOUND');
    });

    it('matches player names with their letter case', async () => {
      mock.addPurchase(KEY, { playerName: 'Player123', id: 1 });
      expect((await api.claim('player123')).code).toBe('NO_ITEMS');
      expect((await api.claim('Player123')).code).toBe('SUCCESS');
    });

    it('keeps game servers apart', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      expect((await api.claim('Player1', {}, { authorization: encodeApiKey(KEY_UNCONFIGURED) })).code).toBe('NO_ITEMS');
      expect((await api.claim('Player1')).code).toBe('SUCCESS');
    });

    it('refuses a body with unknown fields', async () => {
      const res = await api.post('/api/v4/store/transaction/update', { authorization: KEY_BASE64, 'content-type': 'application/json' }, '{"playerName":"P","player":"P"}');
      expect(res.status).toBe(400);
    });
  });

  describe('rate limit', () => {
    it('allows one accepted claim per 10 s counted from the last accepted one', async () => {
      expect((await api.claim('Player1')).code).toBe('NO_ITEMS');
      mock.clock.advance(9_999);
      expect(await api.claim('Player1')).toMatchObject({ status: 'ERROR', code: 'RATE_LIMIT', data: { claims: [] } });
      mock.clock.advance(1);
      expect((await api.claim('Player1')).code).toBe('NO_ITEMS');
    });

    it('a refused call does not extend the window', async () => {
      await api.claim('Player1');
      mock.clock.advance(5_000);
      expect((await api.claim('Player1')).code).toBe('RATE_LIMIT');
      mock.clock.advance(5_000);
      expect((await api.claim('Player1')).code).toBe('NO_ITEMS');
    });

    it('preview counts, nothing changes while limited, and other players are not affected', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      expect((await api.claim('Player1', { preview: true })).code).toBe('PREVIEW');
      expect((await api.claim('Player1')).code).toBe('RATE_LIMIT');
      expect(mock.purchases(KEY)[0]?.deliverystatus).toBe('Undelivered');
      expect((await api.claim('Player2')).code).toBe('NO_ITEMS');
      mock.clock.advance(10_000);
      expect((await api.claim('Player1')).code).toBe('SUCCESS');
    });

    it('v3 and v4 share the limit, case-sensitively per name', async () => {
      await api.claim('Player1');
      expect(await api.claimLegacy('Player1')).toEqual([{ message: TEXT.rateLimit }]);
      expect(await api.claimStoreTransactions('Player1')).toEqual([{ message: TEXT.rateLimit }]);
      expect(await api.claimLegacy('player1')).toEqual([{ message: TEXT.noItems }]);
      mock.clock.advance(10_000);
      await api.claimLegacyForm('Player1');
      expect((await api.claim('Player1')).code).toBe('RATE_LIMIT');
    });

    it('an invalid player or a wrong key does not start a window', async () => {
      await api.claim('Player1', {}, { authorization: encodeApiKey('wrong') });
      expect((await api.claim('Player1')).code).toBe('NO_ITEMS');
    });
  });

  describe('claimLegacy and claimStoreTransactions (v3)', () => {
    it('answers a bare array of legacy rows and delivers them (JSON body)', async () => {
      await buy('Player1', [{ id: 2, quantity: 2 }]);
      expect(await api.claimLegacy('Player1')).toEqual([
        {
          player_name: 'Player1',
          product_id: 7,
          product_id_string: '7',
          product_amount: 4,
          amount_purchased: 2,
          product_name: 'Dragon sword',
          product_price: 15,
        },
      ]);
      mock.clock.advance(10_000);
      // Already delivered reads as "no items" on v3.
      expect(await api.claimLegacy('Player1')).toEqual([{ message: TEXT.noItems }]);
    });

    it('accepts a form body on the v3 update', async () => {
      mock.addPurchase(KEY, { playerName: 'Iron Man', id: 1, quantity: 2 });
      const rows = await api.claimLegacyForm('Iron Man');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ player_name: 'Iron Man', product_amount: 2 });
    });

    it('store claim accepts X-API-Key and Bearer', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      mock.addPurchase(KEY, { playerName: 'Player2', id: 1 });
      expect(await api.claimStoreTransactions('Player1', { 'X-API-KEY': KEY })).toHaveLength(1);
      const viaBearer = await api.claimStoreTransactions('Player2', { Authorization: `Bearer ${KEY}` });
      expect(viaBearer[0]).toMatchObject({ player_name: 'Player2', product_id: 42 });
    });

    it('answers message rows for the other outcomes', async () => {
      expect(await api.claimLegacy('Player1', { 'x-api-key': 'wrong' })).toEqual([{ message: TEXT.serverNotFound }]);
      expect(await api.claimLegacy('Player1', { authorization: `Bearer ${KEY}` })).toEqual([{ message: TEXT.serverNotFound }]);
      expect(await api.claimLegacy('Player1', { authorization: KEY_BASE64 })).toEqual([{ message: TEXT.serverNotFound }]);
      expect(await api.claimStoreTransactions('  ')).toEqual([{ message: TEXT.invalidPlayer }]);
      const noName = await api.post('/api/v3/store/transaction/update', { 'x-api-key': KEY, 'content-type': 'application/json' }, '{}');
      expect(await noName.json()).toEqual([{ message: TEXT.invalidPlayer }]);
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      mock.removeProduct(KEY, 1);
      expect(await api.claimLegacy('Player1')).toEqual([{ message: TEXT.productNotFound }]);
    });

    it('refuses an unsupported content type', async () => {
      const res = await api.post('/api/v3/store/transaction/update', { 'x-api-key': KEY, 'content-type': 'text/plain' }, 'playerName=P');
      expect(res.status).toBe(415);
    });
  });

  describe('claimVoteReward', () => {
    it('answers "not voted" before anything else about the player', async () => {
      expect((await api.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' })).body).toEqual([{ message: TEXT.notVoted }]);
    });

    it('answers a message row for an unknown reward and a bad amount', async () => {
      mock.recordVote(KEY, 'Player1', 3);
      expect((await api.claimVoteReward({ player: 'Player1', reward: '9', amount: '1' })).body).toEqual([{ message: TEXT.rewardNotFound }]);
      expect((await api.claimVoteReward({ player: 'Player1', reward: 'x', amount: '1' })).body[0].message).toMatch(/reward could not be found/);
      for (const amount of ['0', '-1', '1.5', 'some']) {
        expect((await api.claimVoteReward({ player: 'Player1', reward: '1', amount })).body[0].message).toMatch(/^Invalid amount/);
      }
    });

    it('spends points for a numeric amount and returns one reward row', async () => {
      mock.recordVote(KEY, 'Player1', 2);
      const recorded = await api.admin('POST', '/__mock/votes', { apiKey: KEY, playerName: 'Player1', points: 10 });
      expect(recorded.json()).toEqual({ playerName: 'Player1', vote_points: 12, votes_month: 2, total_points: 12 });
      const { status, body } = await api.claimVoteReward({ player: 'Player1', reward: '2', amount: '2' });
      expect(status).toBe(200);
      expect(body).toEqual([TWO_SCROLLS]);
    });

    it('`all` buys as many units as the points pay for, then Insufficient Points', async () => {
      mock.recordVote(KEY, 'Player1', 3);
      const all = await api.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' });
      expect(all.body[0]).toMatchObject({ give_amount: 3, vote_points: 0, total_points: '3', reward_id: 1 });
      const again = await api.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' });
      expect(again.body).toHaveLength(1);
      expect(again.body[0].message).toMatch(/^Insufficient Points/);
      expect(Object.keys(again.body[0])).toEqual(['message']);
    });

    it('refuses more units than the points pay for and keeps the points', async () => {
      mock.recordVote(KEY, 'Player1', 4);
      expect((await api.claimVoteReward({ player: 'Player1', reward: '2', amount: '1' })).body[0].message).toMatch(/^Insufficient Points/);
      expect(mock.state().servers[0]?.votes).toEqual([{ playerName: 'Player1', vote_points: 4, votes_month: 1, total_points: 4 }]);
    });

    it('accepts Bearer, refuses a wrong key and a JSON body, names are case-sensitive', async () => {
      mock.recordVote(KEY, 'Player1', 1);
      expect((await api.claimVoteReward({ player: 'Player1', reward: '1', amount: '1' }, { authorization: `Bearer ${KEY}` })).body[0].give_amount).toBe(1);
      expect((await api.claimVoteReward({ player: 'Player1', reward: '1', amount: '1' }, { 'x-api-key': 'nope' })).body).toEqual([{ message: TEXT.serverNotFound }]);
      expect((await api.claimVoteReward({ player: 'player1', reward: '1', amount: '1' })).body).toEqual([{ message: TEXT.notVoted }]);
      const json = await api.post('/v3/vote/reward/claim', { 'x-api-key': KEY, 'content-type': 'application/json' }, '{"player":"Player1"}');
      expect(json.status).toBe(415);
      expect((await api.claimVoteReward({ player: 'Player1', reward: '1', amount: '1', extra: 'x' })).status).toBe(400);
    });
  });

  describe('admin routes and reset', () => {
    it('reset restores products, stock, checkouts, rows, votes, rate windows and the clock', async () => {
      await buy('Player1', [{ id: 4, quantity: 2 }]);
      mock.updateProduct(KEY, 1, { price: 99, disabled: true });
      mock.removeProduct(KEY, 2);
      mock.recordVote(KEY, 'Player1', 5);
      await api.claim('Player1');
      mock.clock.advance(60_000);
      const reset = await api.admin('POST', '/__mock/reset');
      expect(reset.json()).toMatchObject({ ok: true, now: T0 });
      const state = mock.state();
      expect(state.now).toBe(T0);
      expect(state.checkouts).toEqual([]);
      const server = state.servers[0];
      expect(server?.purchases).toEqual([]);
      expect(server?.votes).toEqual([]);
      expect(server?.lastAcceptedClaims).toEqual([]);
      expect(server?.products).toEqual(storeSeed.servers[0]?.products);
      expect((await api.claim('Player1')).code).toBe('NO_ITEMS');
    });

    it('drives the clock over JSON', async () => {
      expect((await api.admin('POST', '/__mock/clock/advance', { ms: 10_000 })).json()).toEqual({ now: T0 + 10_000, time: '2026-01-01T00:00:10.000Z' });
      expect((await api.admin('POST', '/__mock/clock/set', { time: '2026-06-01T12:00:00Z' })).json().now).toBe(Date.parse('2026-06-01T12:00:00Z'));
      expect((await api.admin('POST', '/__mock/clock/set', { time: T0 })).json().now).toBe(T0);
      expect((await api.admin('POST', '/__mock/clock/set', { time: 'not a date' })).status).toBe(400);
      expect((await api.admin('POST', '/__mock/clock/advance', { ms: -1 })).status).toBe(400);
    });

    it('adds and lists purchases over JSON', async () => {
      const added = await api.admin('POST', '/__mock/purchases', { apiKey: KEY, playerName: 'Player1', id: 2, quantity: 2 });
      expect(added.json()).toMatchObject({ username: 'Player1', givequantity: 4, paymentstatus: 'Paid', paymenttype: 'Manual', price: 20, pricewithdiscount: 15 });
      const listed = await api.admin('GET', `/__mock/purchases?apiKey=${KEY}&playerName=Player1`);
      expect(listed.json()).toHaveLength(1);
      expect((await api.admin('POST', '/__mock/purchases', { apiKey: KEY, playerName: 'P', id: 999 })).status).toBe(404);
      expect((await api.admin('POST', '/__mock/purchases', { apiKey: 'nope', playerName: 'P', id: 1 })).status).toBe(404);
      expect((await api.admin('POST', '/__mock/purchases', { apiKey: KEY, playerName: 'P', id: 1, extra: 1 })).status).toBe(400);
    });

    it('updates products over JSON; an invalid patch is refused', async () => {
      const updated = await api.admin('POST', '/__mock/products/update', { apiKey: KEY, id: 1, patch: { stock: 0 } });
      expect(updated.json()).toMatchObject({ id: 1, stock: 0 });
      expect((await api.checkout('P', [{ id: 1, quantity: 1 }])).body.status).toBe('INVALID_STOCK');
      expect((await api.admin('POST', '/__mock/products/update', { apiKey: KEY, id: 1, patch: { price: -1 } })).status).toBe(400);
      expect((await api.admin('POST', '/__mock/products/update', { apiKey: KEY, id: 1, patch: { id: 5 } })).status).toBe(400);
      expect((await api.admin('POST', '/__mock/products/update', { apiKey: KEY, id: 1, patch: { categoryIds: [42] } })).status).toBe(400);
    });

    it('reports the whole state', async () => {
      const state = await api.admin('GET', '/__mock/state');
      expect(state.status).toBe(200);
      expect(state.json()).toMatchObject({ now: T0, time: '2026-01-01T00:00:00.000Z', checkouts: [] });
      expect(state.json().servers.map((s: { name: string }) => s.name)).toEqual(['Test store', 'Store without a gateway']);
    });
  });
});
