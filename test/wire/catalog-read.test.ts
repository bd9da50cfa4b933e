/**
 * How a catalog answer is read (src/wire/catalog.ts): zod checks every field, and a valid
 * answer's own objects are completed in place rather than copied (the cost of a
 * 500-product catalog, #47). What a copy used to guarantee still holds: no `__proto__`
 * key survives, and an invalid answer reports the same issues.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';
import { product, useMsw } from '../support/msw.js';

// Loaded afresh for each test: the schemas are built on the first answer, once per load, so
// each test must build them for a mutation run to see its checks.
let sdk: typeof Sdk;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
});

const { text } = useMsw();
const client = () => new sdk.StorefrontClient({ apiKey: KEY, rateLimit: false, catalogCacheTtlMs: 0, retry: 0 });

describe('reading a catalog answer', () => {
  it('drops a "__proto__" key of a product or a sale: no copy the user makes gets another prototype', async () => {
    // JSON.parse makes "__proto__" an own field; written by hand, as a service would send it.
    const sale = '{"saleType":"amount","discountAmount":2,"__proto__":{"polluted":"sale"}}';
    const wire = JSON.stringify({ ...product, sales: [] }).replace('"sales":[]', `"sales":[${sale}],"__proto__":{"polluted":"product"}`);
    text(`{"message":"SUCCESS","products":[${wire}]}`, { headers: { 'content-type': 'application/json' } });

    const [first] = (await client().getCatalog()).products;
    expect(Object.hasOwn(first!, '__proto__')).toBe(false);
    expect(Object.hasOwn(first!.sales[0]!, '__proto__')).toBe(false);
    expect((Object.assign({}, first) as { polluted?: unknown }).polluted).toBeUndefined();
    expect((Object.assign({}, first!.sales[0]) as { polluted?: unknown }).polluted).toBeUndefined();
    expect(first).toMatchObject({ id: product.id, sales: [{ saleType: 'amount', discountAmount: 2 }] });
  });

  it.each([
    [{ products: [product] }, { path: ['message'], message: 'Invalid input: expected string, received undefined' }],
    [{ message: 'SUCCESS', products: { 0: product } }, { path: ['products'], message: 'Invalid input: expected array, received object' }],
  ])('refuses an answer whose envelope is wrong: %j', async (body, issue) => {
    text(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
    const error = expectInstance(await failureOf(client().getCatalog()), sdk.ResponseValidationError);
    expect(error.issues).toEqual([issue]);
  });

  it('a sale\'s discounts sent as null are left out, not kept as null', async () => {
    text(JSON.stringify({ message: 'SUCCESS', products: [{ ...product, sales: [{ saleType: 'percentage', discountPercentage: null, discountAmount: null }] }] }), {
      headers: { 'content-type': 'application/json' },
    });
    const [first] = (await client().getCatalog()).products;
    expect(first?.sales).toStrictEqual([{ saleType: 'percentage' }]);
  });

  it('refuses a sale without its saleType, and says the catalog does not match the schema', async () => {
    text(JSON.stringify({ message: 'SUCCESS', products: [{ ...product, sales: [{ discountAmount: 2 }] }] }), { headers: { 'content-type': 'application/json' } });
    const error = expectInstance(await failureOf(client().getCatalog()), sdk.ResponseValidationError);
    expect(error.message).toBe('getCatalog: unexpected response from api.teamgames.io/api/v2/client/global/products: the catalog does not match the schema');
    expect(error.issues).toEqual([{ path: ['products', 0, 'sales', 0, 'saleType'], message: 'Invalid input: expected string, received undefined' }]);
  });

  it('reports every faulty field of an invalid answer, by path, as zod words it', async () => {
    const body = {
      message: 'SUCCESS',
      products: [product, { ...product, price: 'free', quantity: 1.5, sales: [{ saleType: 3, discountAmount: null }] }, { name: 3, extra: true }],
    };
    text(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

    const error = expectInstance(await failureOf(client().getCatalog()), sdk.ResponseValidationError);
    expect(error.issues).toEqual([
      { path: ['products', 1, 'price'], message: 'Invalid input: expected number, received string' },
      { path: ['products', 1, 'quantity'], message: 'Invalid input: expected int, received number' },
      { path: ['products', 1, 'sales', 0, 'saleType'], message: 'Invalid input: expected string, received number' },
      { path: ['products', 2, 'id'], message: 'Invalid input: expected number, received undefined' },
      { path: ['products', 2, 'productId'], message: 'Invalid input' },
      { path: ['products', 2, 'name'], message: 'Invalid input: expected string, received number' },
      { path: ['products', 2, 'price'], message: 'Invalid input: expected number, received undefined' },
    ]);
  });
});
