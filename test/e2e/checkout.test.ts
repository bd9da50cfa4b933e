import { describe, expect, it } from 'vitest';
import { AuthenticationError, InvalidInputError, type CheckoutResult } from 'teamgames-sdk';
import { KEY, KEY_UNCONFIGURED, TEXT, TWO_WHIPS } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

/** Narrows a checkout result to one outcome, failing the test with the whole value otherwise. */
function expectOutcome<O extends CheckoutResult['outcome']>(result: CheckoutResult, outcome: O): Extract<CheckoutResult, { outcome: O }> {
  expect(result, JSON.stringify(result)).toMatchObject({ outcome });
  return result as Extract<CheckoutResult, { outcome: O }>;
}

describe.each(transports)('checkout through the SDK, over $name', (transport) => {
  const session = useMockSession(transport);
  const { mock, client } = session;

  // Validation order (I-16 in docs/testing-with-the-mock.md): key → body (404) → stock → coupon → units → total.
  // The 404 step needs a payload the SDK never sends (it checks username and cart
  // first); the mock's wire suite, test/mock/contract.test.ts, covers it. Here we only show
  // that such a payload never leaves the SDK.
  it('a payload the mock would refuse with 404 never leaves the SDK', async () => {
    const sdk = client();
    await expect(sdk.checkout({ username: ' ', items: [{ id: 1, quantity: 1 }] })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(sdk.checkout({ username: 'Player1', items: [] })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(sdk.checkout({ username: 'Player1', items: [{ id: 1, quantity: 1.5 }] })).rejects.toBeInstanceOf(InvalidInputError);
    expect(mock.state().checkouts).toEqual([]);
  });

  it('1. a wrong key: AuthenticationError (HTTP 401), before the cart is looked at', async () => {
    const error = await client({ apiKey: 'wrong-key' })
      .checkout({ username: 'Player1', items: [{ id: 99, quantity: 1 }], coupon: 'NOPE' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'AUTHENTICATION_FAILED', operation: 'checkout', status: 401 });
    expect(mock.state().checkouts).toEqual([]);
  });

  it('2. INVALID_STOCK for unknown, disabled, out-of-window and out-of-stock products, before the coupon', async () => {
    const result = await client().checkout({
      username: 'Player1',
      items: [
        { id: 1, quantity: 1 },
        { id: 99, quantity: 1 },
        { id: 6, quantity: 1 },
        { id: 7, quantity: 1 },
        { id: 4, quantity: 3 },
      ],
      coupon: 'NOPE',
    });
    const stock = expectOutcome(result, 'INVALID_STOCK');
    expect(stock).toMatchObject({ status: 'INVALID_STOCK', code: 'INVALID_STOCK' });
    // The mock's fields (reason, requested) and the Java SDK's ProductSnapshot names side by side.
    const unlimited = { stock: null, hasStock: true, unlimitedStock: true, saleType: null, discountAmount: 0, discountPercentage: 0 };
    expect(stock.productsAffected).toEqual([
      { id: 99, reason: 'NOT_FOUND', requested: 1, hasStock: false, unlimitedStock: false },
      { id: 6, reason: 'DISABLED', requested: 1, productId: 'off', name: 'Disabled item', price: 1, disabled: true, ...unlimited },
      { id: 7, reason: 'NOT_AVAILABLE', requested: 1, productId: 'event', name: 'Event cape', price: 2, disabled: false, ...unlimited },
      {
        id: 4,
        reason: 'OUT_OF_STOCK',
        requested: 3,
        productId: 'claws',
        name: 'Dragon claws',
        price: 3,
        stock: 2,
        hasStock: true,
        unlimitedStock: false,
        disabled: false,
        saleType: null,
        discountAmount: 0,
        discountPercentage: 0,
      },
    ]);
    // The per-line validation rows are kept (passthrough).
    expect(stock['cartItems']).toHaveLength(5);
    expect(mock.purchases(KEY)).toEqual([]);
  });

  it('3. COUPON_REJECTED for an unknown and for an expired coupon, with the text to show', async () => {
    const sdk = client();
    const unknown = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 1, quantity: 1 }], coupon: 'NOPE' }), 'COUPON_REJECTED');
    expect(unknown.error).toBe('The coupon code "NOPE" is not valid.');
    const expired = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 1, quantity: 1 }], coupon: 'OLD' }), 'COUPON_REJECTED');
    expect(expired.error).toBe('The coupon code "OLD" has expired.');
    expect(mock.state().checkouts).toEqual([]);
  });

  it('4. FREE when the total is zero: rows Paid at once, stock taken, claimable', async () => {
    const sdk = client();
    const result = await sdk.checkout({ username: 'Player1', items: [{ id: 5, quantity: 1 }, { id: 9, quantity: 2 }] });
    const free = expectOutcome(result, 'FREE');
    expect(free).toMatchObject({ isFree: true, status: 'SUCCESS', statusCode: '200' });
    expect(free.transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(free['redirect']).toBeUndefined();
    expect(mock.purchases(KEY, 'Player1').map((r) => [r.productid, r.paymentstatus, r.deliverystatus])).toEqual([
      ['starter', 'Paid', 'Undelivered'],
      ['give', 'Paid', 'Undelivered'],
    ]);
    const claim = await sdk.claim('Player1');
    expect(claim.code).toBe('SUCCESS');
    expect(claim.claims.map((t) => [t.product_id_string, t.quantity_to_grant])).toEqual([
      ['starter', 1],
      ['give', 2],
    ]);
  });

  it('5. GATEWAY_ERROR below the minimum charge and when the gateway is not configured', async () => {
    const below = expectOutcome(await client().checkout({ username: 'Player1', items: [{ id: 11, quantity: 1 }] }), 'GATEWAY_ERROR');
    expect(below.message).toBe('The total 0.50 is below the minimum charge of 1.00.');
    const unconfigured = expectOutcome(
      await client({ apiKey: KEY_UNCONFIGURED }).checkout({ username: 'Player1', items: [{ id: 1, quantity: 1 }] }),
      'GATEWAY_ERROR',
    );
    expect(unconfigured.message).toBe('The payment gateway of this store is not configured.');
    expect(mock.state().checkouts).toEqual([]);
  });

  it('6. BASKET_REJECTED above the maximum total and with more lines than the maximum', async () => {
    const sdk = client();
    const total = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 10, quantity: 2 }] }), 'BASKET_REJECTED');
    expect(total).toMatchObject({ statusCode: '400', message: 'The basket total 120.00 exceeds the gateway maximum of 100.00.' });
    const lines = expectOutcome(
      await sdk.checkout({ username: 'Player1', items: [1, 2, 3, 12].map((id) => ({ id, quantity: 1 })) }),
      'BASKET_REJECTED',
    );
    expect(lines).toMatchObject({ statusCode: '400', message: 'The basket has 4 items; the gateway accepts at most 3.' });
    expect(mock.state().checkouts).toEqual([]);
  });

  it('7. PAYMENT_REQUIRED with a redirect on the same origin; rows Pending, not claimable yet', async () => {
    const sdk = client();
    const pay = expectOutcome(
      await sdk.checkout({ username: 'Player1', items: [{ id: 2, quantity: 1 }, { id: 1, quantity: 2 }], coupon: 'spring' }),
      'PAYMENT_REQUIRED',
    );
    expect(pay).toMatchObject({ isFree: false, status: 'SUCCESS', statusCode: '200', total: 31.5 });
    expect(new URL(pay.redirect).origin).toBe(new URL(session.baseUrl).origin);
    expect(pay.redirect).toBe(`${session.baseUrl}/__mock/pay/${pay.transactionId}`);
    expect(mock.purchases(KEY, 'Player1').map((r) => [r.paymentstatus, r.deliverystatus])).toEqual([
      ['Pending', 'Undelivered'],
      ['Pending', 'Undelivered'],
    ]);
    expect((await sdk.claim('Player1')).code).toBe('NO_ITEMS');
  });

  it('reserves stock for a pending checkout and releases it when the checkout is cancelled', async () => {
    const sdk = client();
    const first = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 4, quantity: 2 }] }), 'PAYMENT_REQUIRED');
    const blocked = expectOutcome(await sdk.checkout({ username: 'Player2', items: [{ id: 4, quantity: 1 }] }), 'INVALID_STOCK');
    expect(blocked.productsAffected).toEqual([
      expect.objectContaining({ id: 4, reason: 'OUT_OF_STOCK', requested: 1, productId: 'claws', name: 'Dragon claws', stock: 0, hasStock: false, unlimitedStock: false }),
    ]);

    expect(mock.cancelPayment(first.transactionId).status).toBe('cancelled');
    expect(mock.purchases(KEY, 'Player1')).toEqual([]);
    const again = await sdk.checkout({ username: 'Player2', items: [{ id: 4, quantity: 2 }] });
    expect(again.outcome).toBe('PAYMENT_REQUIRED');
  });

  it('pays by a GET of the redirect (what the player does), then the claim delivers', async () => {
    const sdk = client();
    const pay = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 1, quantity: 2 }] }), 'PAYMENT_REQUIRED');
    const page = await session.fetch(pay.redirect);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toMatch(/Payment complete/);
    expect(mock.purchases(KEY, 'Player1').map((r) => r.paymentstatus)).toEqual(['Paid']);

    const claim = await sdk.claim('Player1');
    expect(claim).toMatchObject({ code: 'SUCCESS', status: 'SUCCESS', message: TEXT.success });
    expect(claim.claims).toEqual([TWO_WHIPS]);
  });

  it('pays by mock.completePayment (the admin call), then the claim delivers', async () => {
    const sdk = client();
    const pay = expectOutcome(await sdk.checkout({ username: 'Player1', items: [{ id: 2, quantity: 3 }] }), 'PAYMENT_REQUIRED');
    expect(mock.completePayment(pay.transactionId)).toMatchObject({ status: 'paid', transactionId: pay.transactionId });
    expect(mock.purchases(KEY, 'Player1').map((r) => r.paymentstatus)).toEqual(['Paid']);
    const claim = await sdk.claim('Player1');
    expect(claim.code).toBe('SUCCESS');
    // Sword: merchant id 7 (a number), 2 units per purchase, 15.00 after its best sale.
    expect(claim.claims).toEqual([
      expect.objectContaining({ product_id: 7, product_id_string: '7', product_price: 15, quantity_purchased: 3, quantity_to_grant: 6 }),
    ]);
  });
});
