import { describe, expect, it } from 'vitest';
import { AuthenticationError, type Product } from 'teamgames-sdk';
import { KEY, LISTED_AT_T0 } from '../support/fixtures.js';
import { ids, transports, useMockSession } from '../support/mock-session.js';

describe.each(transports)('catalog through the SDK, over $name', (transport) => {
  const { mock, client } = useMockSession(transport);
  const product = (products: readonly Product[], id: number): Product => {
    const found = products.find((p) => p.id === id);
    if (found === undefined) throw new Error(`product ${id} is not listed`);
    return found;
  };

  it('lists only enabled products inside their window, each parsed by the SDK', async () => {
    const catalog = await client().getCatalog();
    expect(catalog.message).toBe('SUCCESS');
    expect(ids(catalog)).toEqual(LISTED_AT_T0);
    // Every field the SDK types is filled; extras (categoryIds, stock) are kept.
    expect(product(catalog.products, 4)).toEqual({
      id: 4,
      productId: 'claws',
      name: 'Dragon claws',
      price: 3,
      priceOriginal: 3,
      priceWithSale: 3,
      quantity: 1,
      description: '',
      image: '',
      disabled: false,
      sales: [],
      categoryIds: [],
      stock: 2,
    });
  });

  it('follows `disabled` as the store owner toggles it', async () => {
    const sdk = client();
    mock.updateProduct(KEY, 1, { disabled: true });
    mock.updateProduct(KEY, 6, { disabled: false });
    const catalog = await sdk.getCatalog();
    expect(ids(catalog)).not.toContain(1);
    expect(product(catalog.products, 6).disabled).toBe(false);
  });

  it('opens and closes a product window as the clock crosses its boundaries', async () => {
    const sdk = client();
    // Event cape: from 2026-01-10 (inclusive) to 2026-01-20 (exclusive).
    mock.clock.set('2026-01-09T23:59:59.999Z');
    expect(ids(await sdk.getCatalog())).not.toContain(7);
    mock.clock.advance(1);
    expect(ids(await sdk.getCatalog())).toContain(7);
    mock.clock.set('2026-01-19T23:59:59.999Z');
    expect(ids(await sdk.getCatalog())).toContain(7);
    mock.clock.advance(1);
    expect(ids(await sdk.getCatalog())).not.toContain(7);
    // A product whose window ended before T0 never comes back.
    expect(ids(await sdk.getCatalog())).not.toContain(8);
  });

  it('narrows to a category; an empty or unknown category gives an empty list', async () => {
    const sdk = client();
    expect(ids(await sdk.getCatalog({ categoryId: 1 }))).toEqual([1, 2]);
    expect(ids(await sdk.getCatalog({ categoryId: 2 }))).toEqual([3, 10]);
    expect(await sdk.getCatalog({ categoryId: 3 })).toEqual({ message: 'SUCCESS', products: [] });
    expect(await sdk.getCatalog({ categoryId: 99 })).toEqual({ message: 'SUCCESS', products: [] });
  });

  it('shows a sale only while it is active, and priceWithSale follows it', async () => {
    const sdk = client();
    // Diamonds: 20 % off from 2026-01-05 to 2026-01-06.
    const before = product((await sdk.getCatalog()).products, 12);
    expect(before).toMatchObject({ price: 5, priceOriginal: 5, priceWithSale: 5, sales: [] });

    mock.clock.set('2026-01-05T00:00:00Z');
    const during = product((await sdk.getCatalog()).products, 12);
    expect(during).toMatchObject({ price: 5, priceOriginal: 5, priceWithSale: 4 });
    expect(during.sales).toEqual([
      { saleType: 'percentage', discountPercentage: 20, discountAmount: 0, startDate: '2026-01-05T00:00:00Z', endDate: '2026-01-06T00:00:00Z' },
    ]);

    mock.clock.set('2026-01-06T00:00:00Z');
    const after = product((await sdk.getCatalog()).products, 12);
    expect(after).toMatchObject({ priceWithSale: 5, sales: [] });
  });

  it('prices with the best active sale, never below 0', async () => {
    const sdk = client();
    // Sword 20.00: 10 % → 18.00, 5.00 off → 15.00; best is 15.00.
    const sword = product((await sdk.getCatalog()).products, 2);
    expect(sword).toMatchObject({ price: 20, priceOriginal: 20, priceWithSale: 15 });
    expect(sword.sales.map((s) => s.saleType)).toEqual(['percentage', 'amount']);
    // From February a 19.00-off sale starts and wins.
    mock.clock.set('2026-02-01T00:00:00Z');
    const later = product((await sdk.getCatalog()).products, 2);
    expect(later.priceWithSale).toBe(1);
    expect(later.sales).toHaveLength(3);
    // Giveaway 4.00 with 10.00 off is free, not negative.
    expect(product((await sdk.getCatalog()).products, 9).priceWithSale).toBe(0);
  });

  it('exposes the merchant productId as a string, even when the wire sends a number', async () => {
    const { products } = await client().getCatalog();
    expect(product(products, 2).productId).toBe('7');
    expect(product(products, 1).productId).toBe('42');
    expect(product(products, 3).productId).toBe('rank_donator');
    expect(products.every((p) => typeof p.productId === 'string')).toBe(true);
  });

  it('caches per client on the shared clock: advancing the mock clock expires the entry', async () => {
    const sdk = client({ catalogCacheTtlMs: 60_000 });
    expect(ids(await sdk.getCatalog())).toContain(1);
    mock.updateProduct(KEY, 1, { disabled: true });
    mock.clock.advance(59_999);
    expect(ids(await sdk.getCatalog())).toContain(1);
    mock.clock.advance(1);
    expect(ids(await sdk.getCatalog())).not.toContain(1);
  });

  it('rejects an unknown key with AuthenticationError (GAME_SERVER_NOT_FOUND)', async () => {
    const error = await client({ apiKey: 'not-a-known-key' }).getCatalog().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'AUTHENTICATION_FAILED', operation: 'getCatalog', status: 200 });
  });
});
