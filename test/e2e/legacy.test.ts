import { describe, expect, it } from 'vitest';
import { InvalidInputError, type ClaimResult, type StorefrontClient } from 'teamgames-sdk';
import { KEY, TEXT } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

type LegacyMethod = 'claimLegacy' | 'claimStoreTransactions';

// Both v3 endpoints answer bare arrays: purchase rows, or one message-only row. The SDK
// normalizes both into the v4 ClaimResult; a message row is never a claim.
describe.each(transports)('v3 claims through the SDK, over $name', (transport) => {
  const { mock, client } = useMockSession(transport);

  describe.each<[string, LegacyMethod]>([
    ['the v3 update (claimLegacy)', 'claimLegacy'],
    ['the v3 store claim (claimStoreTransactions)', 'claimStoreTransactions'],
  ])('%s', (_, method) => {
    const call = (sdk: StorefrontClient, player: string): Promise<ClaimResult> => sdk[method](player);

    it('normalizes items into v4 Transactions with every field filled, and delivers them', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 12, quantity: 2 });
      mock.addPurchase(KEY, { playerName: 'Player1', id: 2 });
      const result = await call(client(), 'Player1');
      expect(result).toEqual({
        code: 'SUCCESS',
        status: 'SUCCESS',
        message: TEXT.success,
        claims: [
          {
            player_name: 'Player1',
            product_id: 0,
            product_id_string: 'minecraft:diamond',
            product_name: 'Diamonds',
            product_price: 5,
            quantity_to_grant: 128,
            quantity_purchased: 2,
            product_amount: 128,
            amount_purchased: 2,
          },
          {
            player_name: 'Player1',
            product_id: 7,
            product_id_string: '7',
            product_name: 'Dragon sword',
            product_price: 15,
            quantity_to_grant: 2,
            quantity_purchased: 1,
            product_amount: 2,
            amount_purchased: 1,
          },
        ],
      });
      expect(mock.purchases(KEY, 'Player1').map((r) => r.deliverystatus)).toEqual(['Delivered', 'Delivered']);
    });

    it('turns the "no items" message row into NO_ITEMS, also once everything is delivered', async () => {
      const sdk = client();
      expect(await call(sdk, 'Player1')).toEqual({ code: 'NO_ITEMS', status: 'ERROR', message: TEXT.noItems, claims: [] });
      mock.addPurchase(KEY, { playerName: 'Player2', id: 1 });
      expect((await call(sdk, 'Player2')).code).toBe('SUCCESS');
      mock.clock.advance(10_000);
      expect(await call(sdk, 'Player2')).toEqual({ code: 'NO_ITEMS', status: 'ERROR', message: TEXT.noItems, claims: [] });
    });

    it('turns the rate-limit message row into RATE_LIMIT from the server', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      const sdk = client({ rateLimit: false });
      expect((await sdk.previewClaim('Player1')).code).toBe('PREVIEW');
      expect(await call(sdk, 'Player1')).toEqual({
        code: 'RATE_LIMIT',
        status: 'ERROR',
        message: TEXT.rateLimit,
        claims: [],
        retryAfterMs: 10_000,
        source: 'server',
      });
      expect(mock.purchases(KEY, 'Player1').map((r) => r.deliverystatus)).toEqual(['Undelivered']);
    });

    it('carries names with spaces, symbols and accents intact (JSON and form bodies)', async () => {
      const name = 'Zézima & co+1 = 100%';
      mock.addPurchase(KEY, { playerName: name, id: 1 });
      const result = await call(client(), name);
      expect(result.code).toBe('SUCCESS');
      expect(result.claims.map((t) => t.player_name)).toEqual([name]);
      expect(mock.purchases(KEY, name).map((r) => r.deliverystatus)).toEqual(['Delivered']);
    });

    it('refuses a name the service answers with the invalid-player row, before sending (the row is read in test/client/outcomes)', async () => {
      await expect(call(client(), 'a'.repeat(65))).rejects.toBeInstanceOf(InvalidInputError);
    });

    it('turns the product-not-found message row into PRODUCT_NOT_FOUND and delivers nothing', async () => {
      mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
      mock.removeProduct(KEY, 1);
      expect(await call(client(), 'Player1')).toEqual({ code: 'PRODUCT_NOT_FOUND', status: 'ERROR', message: TEXT.productNotFound, claims: [] });
      expect(mock.purchases(KEY, 'Player1').map((r) => r.deliverystatus)).toEqual(['Undelivered']);
    });
  });
});
