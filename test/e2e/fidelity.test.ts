/**
 * The SDK against the mock's switches and failure codes (issue 16): checkout failures keep
 * the service's `code`, an incomplete integration is BASKET_REJECTED, item rows with a
 * `message` are still items, and a refused key never holds the local claim guard.
 */
import { describe, expect, it } from 'vitest';
import { AuthenticationError, type CheckoutResult, type StorefrontClient } from 'teamgames-sdk';
import { ITEM_MESSAGE, KEY, KEY_INCOMPLETE, KEY_ITEM_MESSAGE, KEY_LIMITS, KEY_UNCONFIGURED, switchesSeed } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

const cart = (id: number, quantity = 1) => ({ username: 'Player1', items: [{ id, quantity }] });

describe.each(transports)('the SDK against the mock\'s switches, over $name', (transport) => {
  const { mock, client } = useMockSession(transport, switchesSeed);

  it('1/3. every checkout failure keeps the code the mock sends', async () => {
    const outcomes = async (sdk: StorefrontClient, calls: Array<Parameters<StorefrontClient['checkout']>[0]>) =>
      Promise.all(calls.map(async (input) => {
        const result: CheckoutResult = await sdk.checkout(input);
        return [result.outcome, result.code];
      }));
    expect(
      await outcomes(client(), [
        cart(99),
        { ...cart(1), coupon: 'NOPE' },
        { ...cart(1), coupon: 'OLD' },
        cart(11),
        cart(10, 2),
        { username: 'Player1', items: [1, 2, 3, 12].map((id) => ({ id, quantity: 1 })) },
      ]),
    ).toEqual([
      ['INVALID_STOCK', 'INVALID_STOCK'],
      ['COUPON_REJECTED', 'COUPON_INVALID'],
      ['COUPON_REJECTED', 'COUPON_EXPIRED'],
      ['GATEWAY_ERROR', 'BELOW_MINIMUM_CHARGE'],
      ['BASKET_REJECTED', 'MAXIMUM_TOTAL_EXCEEDED'],
      ['BASKET_REJECTED', 'TOO_MANY_ITEMS'],
    ]);
    expect(await outcomes(client({ apiKey: KEY_UNCONFIGURED }), [cart(1)])).toEqual([['GATEWAY_ERROR', 'GATEWAY_NOT_CONFIGURED']]);
    expect(mock.state().checkouts).toEqual([]);
  });

  it('5. an incomplete integration is BASKET_REJECTED with its code and message', async () => {
    const result = await client({ apiKey: KEY_INCOMPLETE }).checkout(cart(1));
    expect(result).toEqual({
      outcome: 'BASKET_REJECTED',
      statusCode: '400',
      code: 'INTEGRATION_INCOMPLETE',
      message: 'The payment integration of this store is incomplete.',
    });
  });

  it('6. a cart the SDK allows but whose units to grant pass a Java int is BASKET_REJECTED (QUANTITY_LIMIT)', async () => {
    const result = await client({ apiKey: KEY_LIMITS }).checkout(cart(2, 1_000_000));
    expect(result).toMatchObject({ outcome: 'BASKET_REJECTED', code: 'QUANTITY_LIMIT' });
  });

  describe('4. item rows that carry a message are items, never a message row', () => {
    const methods: Array<[string, (sdk: StorefrontClient) => Promise<unknown>]> = [
      ['claim', (sdk) => sdk.claim('Player1')],
      ['claimLegacy', (sdk) => sdk.claimLegacy('Player1')],
      ['claimStoreTransactions', (sdk) => sdk.claimStoreTransactions('Player1')],
    ];

    it.each(methods)('%s: one item whose message is the no-items text is SUCCESS with the message kept', async (_, call) => {
      mock.addPurchase(KEY_ITEM_MESSAGE, { playerName: 'Player1', id: 1, quantity: 2 });
      const result = await call(client({ apiKey: KEY_ITEM_MESSAGE }));
      expect(result).toMatchObject({
        code: 'SUCCESS',
        claims: [{ player_name: 'Player1', product_id_string: '42', quantity_to_grant: 2, quantity_purchased: 2, message: ITEM_MESSAGE }],
      });
      expect(mock.purchases(KEY_ITEM_MESSAGE, 'Player1').map((r) => r.deliverystatus)).toEqual(['Delivered']);
    });
  });

  describe('2. a refused key leaves no local window: the next claim asks the service again', () => {
    const methods: Array<[string, (sdk: StorefrontClient) => Promise<unknown>]> = [
      ['claim (v4 SERVER_NOT_FOUND)', (sdk) => sdk.claim('Player1')],
      ['previewClaim (v4 SERVER_NOT_FOUND)', (sdk) => sdk.previewClaim('Player1')],
      ['claimLegacy (the v3 key text)', (sdk) => sdk.claimLegacy('Player1')],
      ['claimStoreTransactions (the v3 key text)', (sdk) => sdk.claimStoreTransactions('Player1')],
    ];

    it.each(methods)('%s', async (_, call) => {
      const wrong = client({ apiKey: 'wrong-key' });
      await expect(call(wrong)).rejects.toBeInstanceOf(AuthenticationError);
      await expect(call(wrong)).rejects.toBeInstanceOf(AuthenticationError);
      // A valid claim right after still opens the window, as before.
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = client();
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'SUCCESS' });
      expect(await sdk.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
    });
  });
});
