/**
 * The mock as faithful as the evidence allows (issue 16), over plain fetch as a plugin in
 * any language sees it: a `code` on every checkout failure (3), the item-row message switch
 * (4), an incomplete integration (5), bounded quantities and Java-int integers (6), the
 * INVALID_STOCK rows in the Java SDK's names too (7), a form-only store claim (8).
 */
import { describe, expect, it } from 'vitest';
import { encodeApiKey } from 'teamgames-sdk';
import {
  ITEM_MESSAGE,
  JAVA_INT_MAX,
  KEY,
  KEY_INCOMPLETE,
  KEY_ITEM_MESSAGE,
  KEY_LIMITS,
  KEY_UNCONFIGURED,
  TEXT,
  switchesSeed,
} from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

/** Every integer anywhere in a JSON value. */
function integersIn(value: unknown): number[] {
  if (typeof value === 'number') return Number.isInteger(value) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(integersIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(integersIn);
  return [];
}

const auth = (key: string) => ({ authorization: encodeApiKey(key) });

describe.each(transports)('the mock over $name, as the evidence has it', (transport) => {
  const session = useMockSession(transport, switchesSeed);
  const { mock, api } = session;

  describe('3. every checkout failure carries a code', () => {
    it.each<[string, () => Promise<{ status: number; body: any }>, number, string]>([
      ['an unknown key (HTTP 401)', () => api.checkout('Player1', [{ id: 1, quantity: 1 }], {}, auth('wrong')), 401, 'GAME_SERVER_NOT_FOUND'],
      ['an unparseable payload (HTTP 404)', () => api.checkout('Player1', '[{"id":1}'), 404, 'INVALID_PAYLOAD'],
      ['INVALID_STOCK', () => api.checkout('Player1', [{ id: 99, quantity: 1 }]), 200, 'INVALID_STOCK'],
      ['an unknown coupon', () => api.checkout('Player1', [{ id: 1, quantity: 1 }], { coupon: 'NOPE' }), 200, 'COUPON_INVALID'],
      ['an expired coupon', () => api.checkout('Player1', [{ id: 1, quantity: 1 }], { coupon: 'OLD' }), 200, 'COUPON_EXPIRED'],
      ['a gateway not configured', () => api.checkout('P', [{ id: 1, quantity: 1 }], {}, auth(KEY_UNCONFIGURED)), 200, 'GATEWAY_NOT_CONFIGURED'],
      ['a total below the minimum charge', () => api.checkout('P', [{ id: 11, quantity: 1 }]), 200, 'BELOW_MINIMUM_CHARGE'],
      ['a total above the maximum', () => api.checkout('P', [{ id: 10, quantity: 2 }]), 200, 'MAXIMUM_TOTAL_EXCEEDED'],
      ['more lines than the maximum', () => api.checkout('P', [1, 2, 3, 12].map((id) => ({ id, quantity: 1 }))), 200, 'TOO_MANY_ITEMS'],
      ['an incomplete integration', () => api.checkout('P', [{ id: 1, quantity: 1 }], {}, auth(KEY_INCOMPLETE)), 200, 'INTEGRATION_INCOMPLETE'],
    ])('%s', async (_, call, status, code) => {
      const answer = await call();
      expect(answer.status).toBe(status);
      expect(answer.body.code).toBe(code);
    });

    it('a success carries none', async () => {
      const { body } = await api.checkout('Player1', [{ id: 1, quantity: 1 }]);
      expect(body.status).toBe('SUCCESS');
      expect(body.code).toBeUndefined();
    });
  });

  describe('4. item rows carry a message only when the seed says so', () => {
    it('by default no claim row has a message (v4, v3 update, store claim)', async () => {
      for (const player of ['P1', 'P2', 'P3']) mock.addPurchase(KEY, { playerName: player, id: 1 });
      const rows = [(await api.claim('P1')).data.claims, await api.claimLegacy('P2'), await api.claimStoreTransactions('P3')].flat();
      expect(rows).toHaveLength(3);
      expect(rows.every((row: object) => !('message' in row))).toBe(true);
    });

    it('with `transactionMessage`, every item row of every claim carries it next to the item fields', async () => {
      for (const player of ['P1', 'P2', 'P3']) mock.addPurchase(KEY_ITEM_MESSAGE, { playerName: player, id: 1 });
      const v4 = await api.claim('P1', { includeRawTransactions: true }, auth(KEY_ITEM_MESSAGE));
      expect(v4.data.claims).toEqual([
        expect.objectContaining({ message: ITEM_MESSAGE, player_name: 'P1', product_id: 42, quantity_to_grant: 1 }),
      ]);
      // The raw rows are the database columns: no message there.
      expect(v4.data.rawTransactions[0].message).toBeUndefined();
      expect(await api.claimLegacy('P2', { 'x-api-key': KEY_ITEM_MESSAGE })).toEqual([
        expect.objectContaining({ message: ITEM_MESSAGE, player_name: 'P2', product_amount: 1, amount_purchased: 1 }),
      ]);
      expect(await api.claimStoreTransactions('P3', { 'X-API-Key': KEY_ITEM_MESSAGE })).toEqual([
        expect.objectContaining({ message: ITEM_MESSAGE, player_name: 'P3', product_id: 42 }),
      ]);
      // Outcomes other than items are still message-only rows.
      expect(await api.claimLegacy('Nobody', { 'x-api-key': KEY_ITEM_MESSAGE })).toEqual([{ message: TEXT.noItems }]);
      expect(mock.state().servers.find((s) => s.apiKey === KEY_ITEM_MESSAGE)?.transactionMessage).toBe(ITEM_MESSAGE);
    });
  });

  describe('5. an incomplete integration answers statusCode "400"', () => {
    it('refuses every paid checkout, creating nothing; a free one still goes through', async () => {
      const { body } = await api.checkout('P', [{ id: 1, quantity: 1 }], {}, auth(KEY_INCOMPLETE));
      expect(body).toEqual({ statusCode: '400', code: 'INTEGRATION_INCOMPLETE', message: 'The payment integration of this store is incomplete.' });
      expect(mock.state().checkouts).toEqual([]);
      const free = await api.checkout('P', [{ id: 2, quantity: 1 }], {}, auth(KEY_INCOMPLETE));
      expect(free.body).toMatchObject({ status: 'SUCCESS', isFree: true });
    });
  });

  describe('6. quantities are bounded and every integer fits a Java int', () => {
    it('refuses a line over 1,000,000 units with 404, and accepts 1,000,000', async () => {
      const over = await api.checkout('Player1', [{ id: 1, quantity: 1_000_001 }]);
      expect(over.status).toBe(404);
      expect(over.body).toMatchObject({ code: 'INVALID_PAYLOAD', message: expect.stringMatching(/at most 1000000 units/) });
      const huge = await api.checkout('Player1', [{ id: 1, quantity: Number.MAX_SAFE_INTEGER }]);
      expect(huge.status).toBe(404);
      const most = await api.checkout('Player1', [{ id: 5, quantity: 1_000_000 }]);
      expect(most.body).toMatchObject({ status: 'SUCCESS', isFree: true });
      expect(mock.state().checkouts).toHaveLength(1);
    });

    it('refuses with 404 one product asked for more than 1,000,000 units over several lines', async () => {
      const { status, body } = await api.checkout('Player1', [{ id: 5, quantity: 600_000 }, { id: 5, quantity: 400_001 }]);
      expect(status).toBe(404);
      expect(body.message).toMatch(/product 5 is asked for 1000001 units/);
    });

    it('refuses with statusCode "400" a line whose units to grant would not fit a Java int', async () => {
      const { body } = await api.checkout('P', [{ id: 2, quantity: 1_000_000 }], {}, auth(KEY_LIMITS));
      expect(body).toMatchObject({ statusCode: '400', code: 'QUANTITY_LIMIT' });
      expect(mock.state().checkouts).toEqual([]);
      expect(() => mock.addPurchase(KEY_LIMITS, { playerName: 'P', id: 2, quantity: 1_000_000 })).toThrow(expect.objectContaining({ status: 400 }));
      expect(() => mock.addPurchase(KEY, { playerName: 'P', id: 1, quantity: 1_000_001 })).toThrow(expect.objectContaining({ status: 400 }));
    });

    it('a purchase at the limits claims with every integer within a Java int (product_id 0 for a larger merchant id)', async () => {
      const checkout = await api.checkout('Player1', [{ id: JAVA_INT_MAX, quantity: 1_000_000 }], {}, auth(KEY_LIMITS));
      expect(checkout.body.status).toBe('SUCCESS');
      await session.fetch(checkout.body.redirect);
      mock.addPurchase(KEY_LIMITS, { playerName: 'Player2', id: JAVA_INT_MAX, quantity: 1_000_000 });
      const v4 = await api.claim('Player1', {}, auth(KEY_LIMITS));
      expect(v4.data.claims[0]).toMatchObject({ product_id: 0, product_id_string: '99999999999', quantity_to_grant: 2_147_000_000, quantity_purchased: 1_000_000 });
      const v3 = await api.claimLegacy('Player2', { 'x-api-key': KEY_LIMITS });
      expect(v3[0]).toMatchObject({ product_id: 0, product_amount: 2_147_000_000 });
      const catalog = await api.getCatalog({}, auth(KEY_LIMITS));
      const stock = await api.checkout('P', [{ id: JAVA_INT_MAX, quantity: 1 }, { id: 99, quantity: 1 }], {}, auth(KEY_LIMITS));
      for (const body of [checkout.body, v4, v3, catalog.body, stock.body]) {
        expect(integersIn(body).every((n) => n >= -2_147_483_648 && n <= JAVA_INT_MAX), JSON.stringify(body)).toBe(true);
      }
    });

    it('`all` gives at most a Java int of units; vote counts stay within one too', async () => {
      mock.recordVote(KEY_LIMITS, 'Voter', 3_000);
      const { body } = await api.claimVoteReward({ player: 'Voter', reward: '1', amount: 'all' }, { 'X-API-Key': KEY_LIMITS });
      expect(body[0]).toMatchObject({ give_amount: 2_147_000_000, vote_points: 853 });
      expect((await api.claimVoteReward({ player: 'Voter', reward: '1', amount: '2148' }, { 'X-API-Key': KEY_LIMITS })).body[0].message).toMatch(/^Insufficient Points|^Invalid amount/);
      mock.recordVote(KEY, 'Rich', JAVA_INT_MAX - 1);
      expect(() => mock.recordVote(KEY, 'Rich', 2)).toThrow(expect.objectContaining({ status: 400 }));
    });
  });

  describe('7. INVALID_STOCK rows carry the mock\'s fields and the official Java SDK\'s names', () => {
    it('productsAffected as ProductSnapshot, cartItems as CartValidationItem', async () => {
      mock.updateProduct(KEY, 4, { stock: 0 });
      const { body } = await api.checkout('Player1', [{ id: 2, quantity: 1 }, { id: 4, quantity: 1 }, { id: 99, quantity: 2 }]);
      expect(body.status).toBe('INVALID_STOCK');
      expect(body.productsAffected).toEqual([
        {
          id: 4,
          reason: 'OUT_OF_STOCK',
          requested: 1,
          productId: 'claws',
          name: 'Dragon claws',
          price: 3,
          stock: 0,
          hasStock: false,
          unlimitedStock: false,
          disabled: false,
          saleType: null,
          discountAmount: 0,
          discountPercentage: 0,
        },
        { id: 99, reason: 'NOT_FOUND', requested: 2, hasStock: false, unlimitedStock: false },
      ]);
      const java = { cart: 0, gameServer: 1, owner: 0, payWhatYouWantPrice: 0 };
      expect(body.cartItems).toEqual([
        { id: 2, quantity: 1, valid: true, product: 2, ...java },
        { id: 4, quantity: 1, valid: false, reason: 'OUT_OF_STOCK', product: 4, ...java },
        { id: 99, quantity: 2, valid: false, reason: 'NOT_FOUND', product: 99, ...java },
      ]);
    });

    it('a product on sale names its best active sale; gameServer is the server\'s place in the seed', async () => {
      mock.updateProduct(KEY, 2, { stock: 0 });
      const { body } = await api.checkout('Player1', [{ id: 2, quantity: 1 }]);
      // The sword: 10 % off (18.00) and 5.00 off (15.00) are active; the second is the best.
      expect(body.productsAffected[0]).toMatchObject({ productId: 7, price: 20, saleType: 'amount', discountAmount: 5, discountPercentage: 0 });
      const other = await api.checkout('Player1', [{ id: 99, quantity: 1 }], {}, auth(KEY_INCOMPLETE));
      expect(other.body.cartItems[0]).toMatchObject({ product: 99, gameServer: 4 });
    });
  });

  describe('8. the store claim takes a form body only', () => {
    it('answers a JSON body with 415 and changes nothing; the v3 update keeps accepting JSON', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const json = await api.claimStoreTransactionsJson('Player1');
      expect(json.status).toBe(415);
      expect(json.body).toEqual({ error: 'Unsupported Media Type', message: expect.stringMatching(/application\/x-www-form-urlencoded/) });
      expect(mock.purchases(KEY, 'Player1')[0]?.deliverystatus).toBe('Undelivered');
      expect(mock.state().servers[0]?.lastAcceptedClaims).toEqual([]);
      expect(await api.claimLegacy('Player1')).toHaveLength(1);
    });
  });
});
