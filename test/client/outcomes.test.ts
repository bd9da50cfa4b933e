/**
 * Outcomes are values (SPEC §2.1): every checkout outcome, every claim code, the v3
 * message rows, vote rows, and the catalog as users receive them.
 */
import { describe, expect, it } from 'vitest';
import { AuthenticationError, ResponseValidationError, StorefrontClient, type ClaimResult } from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY, TEXT } from '../support/fixtures.js';
import { catalogBody, legacyRow, product, useMsw, v4, v4Claim, voteRow } from '../support/msw.js';

const { json } = useMsw();
const client = () => new StorefrontClient({ apiKey: KEY, rateLimit: false, catalogCacheTtlMs: 0 });
const cart = { username: 'Player123', items: [{ id: 12, quantity: 1 }] };

describe('checkout outcomes', () => {
  it('PAYMENT_REQUIRED: pay at redirect; every wire field kept', async () => {
    const wire = { status: 'SUCCESS', statusCode: '200', isFree: false, redirect: 'https://pay.example/t/1', transactionId: 't-1', extendedMessage: 'Proceed to payment' };
    json(wire);
    expect(await client().checkout(cart)).toEqual({ ...wire, outcome: 'PAYMENT_REQUIRED' });
  });

  it('FREE: nothing to pay', async () => {
    const wire = { status: 'SUCCESS', statusCode: '200', isFree: true, transactionId: 't-2' };
    json(wire);
    expect(await client().checkout(cart)).toEqual({ ...wire, outcome: 'FREE' });
  });

  it('INVALID_STOCK: productsAffected and the cartItems rows are kept as sent', async () => {
    const wire = {
      status: 'INVALID_STOCK',
      productsAffected: [{ id: 12, name: 'Dragon scimitar', stock: 0 }],
      cartItems: [{ id: 12, quantity: 1, valid: false }],
    };
    json(wire);
    expect(await client().checkout(cart)).toEqual({ ...wire, outcome: 'INVALID_STOCK' });
  });

  it('INVALID_STOCK without productsAffected gets an empty list', async () => {
    json({ status: 'INVALID_STOCK' });
    expect(await client().checkout(cart)).toEqual({ status: 'INVALID_STOCK', outcome: 'INVALID_STOCK', productsAffected: [] });
  });

  it('COUPON_REJECTED: error holds the text for the player', async () => {
    json({ error: 'This coupon has expired.' });
    expect(await client().checkout({ ...cart, coupon: 'OLD' })).toEqual({ outcome: 'COUPON_REJECTED', error: 'This coupon has expired.' });
  });

  it('BASKET_REJECTED: statusCode "400" (also when sent as a number)', async () => {
    json({ statusCode: '400', message: 'Maximum total exceeded' });
    expect(await client().checkout(cart)).toEqual({ statusCode: '400', message: 'Maximum total exceeded', outcome: 'BASKET_REJECTED' });

    json({ statusCode: 400 });
    expect(await client().checkout(cart)).toMatchObject({ outcome: 'BASKET_REJECTED', statusCode: '400' });
  });

  it('GATEWAY_ERROR: status ERROR with the message for the store owner', async () => {
    json({ status: 'ERROR', message: 'Total is below the minimum charge of 1.00' });
    expect(await client().checkout(cart)).toEqual({ status: 'ERROR', message: 'Total is below the minimum charge of 1.00', outcome: 'GATEWAY_ERROR' });
  });

  describe('check order when several indicators appear: error → statusCode "400" → status', () => {
    it('error wins over statusCode "400" and status', async () => {
      json({ error: 'Unknown coupon', statusCode: '400', status: 'SUCCESS', isFree: false, redirect: 'https://pay.example', transactionId: 't' });
      expect(await client().checkout(cart)).toMatchObject({ outcome: 'COUPON_REJECTED', error: 'Unknown coupon' });
    });

    it('statusCode "400" wins over status', async () => {
      json({ statusCode: '400', status: 'ERROR', message: 'Too many items' });
      expect(await client().checkout(cart)).toMatchObject({ outcome: 'BASKET_REJECTED', message: 'Too many items' });
    });

    it('statusCode "200" on a success does not hide the status', async () => {
      json({ statusCode: '200', status: 'INVALID_STOCK', productsAffected: [] });
      expect(await client().checkout(cart)).toMatchObject({ outcome: 'INVALID_STOCK' });
    });
  });

  it('a status it does not know is UNKNOWN with status, code and message kept, never a guessed outcome', async () => {
    const wire = { status: 'FAILED', code: 'PRODUCT_LIMIT', message: 'Too many of this product', extendedMessage: 'limit 5' };
    json(wire);
    expect(await client().checkout(cart)).toEqual({ ...wire, outcome: 'UNKNOWN' });
  });

  it('UNKNOWN without code or message has them empty (a numeric code as text)', async () => {
    json({ status: 'MAYBE' });
    expect(await client().checkout(cart)).toEqual({ status: 'MAYBE', outcome: 'UNKNOWN', code: '', message: '' });
    json({ status: 'FAILED', code: 42 });
    expect(await client().checkout(cart)).toEqual({ status: 'FAILED', outcome: 'UNKNOWN', code: '42', message: '' });
  });

  it('every failure keeps the wire code', async () => {
    json({ status: 'INVALID_STOCK', code: 'INVALID_STOCK', productsAffected: [] });
    expect(await client().checkout(cart)).toMatchObject({ outcome: 'INVALID_STOCK', code: 'INVALID_STOCK' });
    json({ error: 'Unknown coupon', code: 'COUPON_INVALID' });
    expect(await client().checkout(cart)).toEqual({ outcome: 'COUPON_REJECTED', error: 'Unknown coupon', code: 'COUPON_INVALID' });
    json({ statusCode: '400', code: 'INTEGRATION_INCOMPLETE', message: 'Finish the integration' });
    expect(await client().checkout(cart)).toEqual({ outcome: 'BASKET_REJECTED', statusCode: '400', code: 'INTEGRATION_INCOMPLETE', message: 'Finish the integration' });
    json({ status: 'ERROR', code: 'GATEWAY_NOT_CONFIGURED', message: 'No gateway' });
    expect(await client().checkout(cart)).toEqual({ outcome: 'GATEWAY_ERROR', status: 'ERROR', code: 'GATEWAY_NOT_CONFIGURED', message: 'No gateway' });
  });

  it('an answer with no status, error or statusCode "400" is a ResponseValidationError, never a guessed outcome', async () => {
    json({ message: 'hello' });
    const error = expectInstance(await failureOf(client().checkout(cart)), ResponseValidationError);
    expect(error.message).toMatch(/^checkout: /);
    expect(error.message).toContain('no status');
  });
});

describe('claim (v4) codes', () => {
  it('SUCCESS: the claims to grant, the message and status as sent', async () => {
    json(v4('SUCCESS', [v4Claim]));
    expect(await client().claim('Player123')).toEqual({ code: 'SUCCESS', status: 'SUCCESS', message: 'message for SUCCESS', claims: [v4Claim] });
  });

  it('PREVIEW: the claims that would be delivered', async () => {
    json(v4('PREVIEW', [v4Claim, { ...v4Claim, product_id: 7, product_id_string: '7' }]));
    const result = await client().previewClaim('Player123');
    expect(result.code).toBe('PREVIEW');
    expect(result.status).toBe('PREVIEW');
    expect(result.claims.map((t) => t.product_id)).toEqual([42, 7]);
  });

  it.each(['NO_ITEMS', 'ALREADY_CLAIMED', 'PRODUCT_NOT_FOUND', 'INVALID_PLAYER'] as const)('%s: the message, and no claims even if rows were sent', async (code) => {
    json(v4(code, [v4Claim]));
    expect(await client().claim('Player123')).toEqual({ code, status: 'ERROR', message: `message for ${code}`, claims: [] });
  });

  it("RATE_LIMIT: retryAfterMs 10000 and source 'server'", async () => {
    json(v4('RATE_LIMIT'));
    expect(await client().claim('Player123')).toEqual({
      code: 'RATE_LIMIT',
      status: 'ERROR',
      message: 'message for RATE_LIMIT',
      claims: [],
      retryAfterMs: 10_000,
      source: 'server',
    });
  });

  it('an unknown code is UNKNOWN with serverCode and no claims, never a delivery', async () => {
    json(v4('MAINTENANCE', [v4Claim]));
    const result = await client().claim('Player123');
    expect(result).toMatchObject({ code: 'UNKNOWN', serverCode: 'MAINTENANCE', status: 'ERROR', message: 'message for MAINTENANCE', claims: [] });
    expect(result.code === 'UNKNOWN' && result.data).toEqual({ claims: [v4Claim] });
  });

  it('an unknown code without data is UNKNOWN too', async () => {
    json({ status: 'ERROR', code: 'SOMETHING_NEW', message: 'New!' });
    expect(await client().claim('Player123')).toEqual({ code: 'UNKNOWN', serverCode: 'SOMETHING_NEW', status: 'ERROR', message: 'New!', claims: [] });
  });

  it('SERVER_NOT_FOUND is an AuthenticationError', async () => {
    json({ status: 'ERROR', code: 'SERVER_NOT_FOUND', message: 'The game server could not be found.' });
    const error = expectInstance(await failureOf(client().claim('Player123')), AuthenticationError);
    expect(error.code).toBe('AUTHENTICATION_FAILED');
    expect(error.message).toMatch(/^claim: .*SERVER_NOT_FOUND/);
  });

  it('rawTransactions only when the answer carries them, kept as given', async () => {
    const raw = [{ productid: '42', price: '4.99', pricewithdiscount: 3.99, quantity: 2, givequantity: '2', allowreclaim: 0, username: 'Player123', invoice: 'inv-1', paymenttype: 'paypal', paymentstatus: 'Paid', deliverystatus: 'Undelivered' }];
    json(v4('PREVIEW', [v4Claim], { rawTransactions: raw }));
    expect(await client().claim('Player123', { preview: true, includeRawTransactions: true })).toMatchObject({ code: 'PREVIEW', rawTransactions: raw });

    json(v4('PREVIEW', [v4Claim]));
    const without = await client().claim('Player123', { preview: true });
    expect('rawTransactions' in without).toBe(false);
  });

  it('v4 claims lacking the new keys are filled from product_amount and amount_purchased', async () => {
    const { quantity_to_grant: _g, quantity_purchased: _p, ...legacyOnly } = { ...v4Claim, product_amount: 6, amount_purchased: 3 };
    json(v4('SUCCESS', [legacyOnly]));
    const [claim] = (await client().claim('Player123')).claims;
    expect(claim).toMatchObject({ quantity_to_grant: 6, quantity_purchased: 3, product_amount: 6, amount_purchased: 3 });
  });

  it('v4 claims lacking the legacy keys get them from quantity_to_grant and quantity_purchased', async () => {
    const { product_amount: _a, amount_purchased: _b, ...newOnly } = { ...v4Claim, quantity_to_grant: 10, quantity_purchased: 5 };
    json(v4('SUCCESS', [newOnly]));
    const [claim] = (await client().claim('Player123')).claims;
    expect(claim).toMatchObject({ quantity_to_grant: 10, quantity_purchased: 5, product_amount: 10, amount_purchased: 5 });
  });
});

const legacyMethods = [
  ['claimLegacy', (name: string) => client().claimLegacy(name)],
  ['claimStoreTransactions', (name: string) => client().claimStoreTransactions(name)],
] as const;

describe.each(legacyMethods)('%s (v3) answers', (operation, call) => {
  it('an array of rows is SUCCESS with every v4 field filled', async () => {
    json([legacyRow]);
    expect(await call('Player123')).toEqual({
      code: 'SUCCESS',
      status: 'SUCCESS',
      message: TEXT.success,
      claims: [
        {
          ...legacyRow,
          product_id: 42,
          product_id_string: '42',
          quantity_to_grant: 5,
          quantity_purchased: 1,
          product_amount: 5,
          amount_purchased: 1,
        },
      ],
    });
  });

  it('product_id from a numeric string; product_id_string kept when sent', async () => {
    json([{ ...legacyRow, product_id: '77' }, { ...legacyRow, product_id: 9, product_id_string: 'nine' }]);
    const { claims } = await call('Player123');
    expect(claims.map((t) => [t.product_id, t.product_id_string])).toEqual([
      [77, '77'],
      [9, 'nine'],
    ]);
  });

  it('a merchant id that is not an integer ("minecraft:diamond") gives product_id 0', async () => {
    json([
      { ...legacyRow, product_id: 'minecraft:diamond' },
      { ...legacyRow, product_id: 0, product_id_string: 'minecraft:emerald' },
    ]);
    const { claims } = await call('Player123');
    expect(claims.map((t) => [t.product_id, t.product_id_string])).toEqual([
      [0, 'minecraft:diamond'],
      [0, 'minecraft:emerald'],
    ]);
  });

  const knownTexts: Array<[string, ClaimResult['code']]> = [
    [TEXT.noItems, 'NO_ITEMS'],
    [TEXT.rateLimit, 'RATE_LIMIT'],
    [TEXT.invalidPlayer, 'INVALID_PLAYER'],
    [TEXT.productNotFound, 'PRODUCT_NOT_FOUND'],
  ];

  describe.each([
    ['an array with one message row', (message: string) => [{ message }]],
    ['a bare {message} object', (message: string) => ({ message })],
  ])('as %s', (_, shape) => {
    it.each(knownTexts)('"%s" → %s, the text kept, no claims', async (message, code) => {
      json(shape(message));
      const result = await call('Player123');
      expect(result).toMatchObject({ code, status: 'ERROR', message, claims: [] });
      // branch: the RATE_LIMIT row of the table also says how long to wait
      if (result.code === 'RATE_LIMIT') expect(result).toMatchObject({ retryAfterMs: 10_000, source: 'server' });
    });

    it('"The game server could not be found…" is an AuthenticationError', async () => {
      json(shape(TEXT.serverNotFound));
      const error = expectInstance(await failureOf(call('Player123')), AuthenticationError);
      expect(error.message.startsWith(`${operation}: `)).toBe(true);
      expect(error.status).toBe(200);
    });

    it('an unknown text is UNKNOWN with the text kept and no claims', async () => {
      json(shape('The store is closed for maintenance.'));
      expect(await call('Player123')).toEqual({ code: 'UNKNOWN', status: 'ERROR', serverCode: '', message: 'The store is closed for maintenance.', claims: [] });
    });
  });

  it('texts are matched on their leading words, not the whole text', async () => {
    json([{ message: 'There are currently no items to claim!' }]);
    expect(await call('Player123')).toMatchObject({ code: 'NO_ITEMS' });
    json([{ message: 'Please wait a few seconds before trying again. (3s left)' }]);
    expect(await call('Player123')).toMatchObject({ code: 'RATE_LIMIT' });
  });

  it('an empty array is NO_ITEMS', async () => {
    json([]);
    expect(await call('Player123')).toEqual({ code: 'NO_ITEMS', status: 'ERROR', message: TEXT.noItems, claims: [] });
  });

  it('a message-only row never becomes a claim (the official Java SDK reports it as a product_id 0 SUCCESS)', async () => {
    json([{ message: 'Something happened' }]);
    const result = await call('Player123');
    expect(result.code).not.toBe('SUCCESS');
    expect(result.claims).toEqual([]);
  });
});

describe('claimVoteReward rows', () => {
  const vote = (amount: number | 'all' = 'all') => client().claimVoteReward({ player: 'Player123', reward: '1', amount });

  it('reward rows become rewards; total_points stays a string', async () => {
    json([voteRow]);
    expect(await vote()).toEqual({ rewards: [voteRow], messages: [], insufficientPoints: false });
  });

  it('a numeric total_points on the wire becomes a string', async () => {
    json([{ ...voteRow, total_points: 120 }]);
    const { rewards } = await vote(2);
    expect(rewards[0]?.total_points).toBe('120');
  });

  it('message rows are messages, not rewards', async () => {
    json([{ message: TEXT.notVoted }]);
    expect(await vote()).toEqual({ rewards: [], messages: [TEXT.notVoted], insufficientPoints: false });
  });

  it('a message starting "Insufficient Points" sets insufficientPoints', async () => {
    json([{ message: 'Insufficient Points: this reward costs 10 points.' }]);
    expect(await vote(5)).toEqual({ rewards: [], messages: ['Insufficient Points: this reward costs 10 points.'], insufficientPoints: true });
  });

  it('reward rows and message rows side by side are told apart', async () => {
    json([voteRow, { message: 'Insufficient Points for the second unit' }]);
    expect(await vote()).toEqual({ rewards: [voteRow], messages: ['Insufficient Points for the second unit'], insufficientPoints: true });
  });

  it('a bare {message} object is a message', async () => {
    json({ message: 'Unknown reward.' });
    expect(await vote()).toEqual({ rewards: [], messages: ['Unknown reward.'], insufficientPoints: false });
  });

  it('the "game server could not be found" text is an AuthenticationError', async () => {
    json([{ message: TEXT.serverNotFound }]);
    const error = expectInstance(await failureOf(vote()), AuthenticationError);
    expect(error.message).toMatch(/^claimVoteReward: /);
  });
});

describe('getCatalog', () => {
  it('resolves to { message, products } as sent', async () => {
    json(catalogBody);
    expect(await client().getCatalog()).toEqual(catalogBody);
  });

  it('a numeric productId becomes a string', async () => {
    json({ message: 'SUCCESS', products: [{ ...product, productId: 42 }] });
    const { products } = await client().getCatalog();
    expect(products[0]?.productId).toBe('42');
  });

  it('fills the defaults of absent or null fields', async () => {
    json({ message: 'SUCCESS', products: [{ id: 3, productId: 'p3', name: 'Whip', price: 5, description: null, sales: null }] });
    const { products } = await client().getCatalog();
    expect(products).toEqual([
      { id: 3, productId: 'p3', name: 'Whip', price: 5, priceOriginal: 5, priceWithSale: 5, quantity: 1, description: '', image: '', disabled: false, sales: [] },
    ]);
  });

  it('keeps fields beyond the documented ones, on products and sales', async () => {
    json({ message: 'SUCCESS', products: [{ ...product, categoryIds: [3], stock: 9, sales: [{ saleType: 'amount', discountAmount: 2, endsAt: '2026-02-01' }] }] });
    const [first] = (await client().getCatalog()).products;
    expect(first).toMatchObject({ categoryIds: [3], stock: 9, sales: [{ saleType: 'amount', discountAmount: 2, endsAt: '2026-02-01' }] });
  });

  it('an answer without products is an empty catalog', async () => {
    json({ message: 'SUCCESS' });
    expect(await client().getCatalog()).toEqual({ message: 'SUCCESS', products: [] });
  });

  it('GAME_SERVER_NOT_FOUND is an AuthenticationError', async () => {
    json({ products: [], message: 'GAME_SERVER_NOT_FOUND', extendedMessage: 'No game server for this key' });
    const error = expectInstance(await failureOf(client().getCatalog()), AuthenticationError);
    expect(error).toMatchObject({ code: 'AUTHENTICATION_FAILED', operation: 'getCatalog', endpoint: '/api/v2/client/global/products', status: 200 });
    expect(error.message).toMatch(/^getCatalog: .*GAME_SERVER_NOT_FOUND/);
  });
});
