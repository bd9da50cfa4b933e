import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createMockService, exampleSeed, parseMockSeed, type MockSeed } from '../../src/mock/index.js';
import { storeSeed, switchesSeed } from '../support/fixtures.js';

const withServer = (server: Record<string, unknown>): unknown => ({ servers: [{ apiKey: 'k', ...server }] });

describe('seed validation', () => {
  it('accepts the test seed, the seed with the switches, and the example seed', () => {
    expect(parseMockSeed(storeSeed)).toEqual(storeSeed);
    expect(parseMockSeed(switchesSeed)).toEqual(switchesSeed);
    expect(parseMockSeed(exampleSeed)).toEqual(exampleSeed);
  });

  it('examples/seed.json holds the same data as exampleSeed', async () => {
    const file = JSON.parse(await readFile(new URL('../../examples/seed.json', import.meta.url), 'utf8')) as MockSeed;
    expect(file).toEqual(exampleSeed);
  });

  it.each<[string, unknown, string]>([
    [
      'a negative price',
      withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1 }, { id: 2, productId: 'b', name: 'B', price: 1 }, { id: 3, productId: 'c', name: 'C', price: -1 }] }),
      'Invalid mock seed: seed.servers[0].products[2].price: expected a number >= 0',
    ],
    ['a missing price', withServer({ products: [{ id: 1, productId: 'a', name: 'A' }] }), 'seed.servers[0].products[0].price: is required (a number >= 0)'],
    ['an unknown key', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, colour: 'red' }] }), 'seed.servers[0].products[0]: unknown key "colour"'],
    ['an unknown top-level key', { servers: [{ apiKey: 'k' }], version: 2 }, 'seed: unknown key "version"'],
    ['no servers', { servers: [] }, 'seed.servers: expected at least one server'],
    ['not an object', 42, 'seed: expected an object'],
    ['a key with a space', withServer({ apiKey: 'my key' }), 'seed.servers[0].apiKey: expected a non-empty key of printable ASCII'],
    ['a duplicate API key', { servers: [{ apiKey: 'k' }, { apiKey: 'k' }] }, 'seed.servers[1].apiKey: duplicate API key "k"'],
    [
      'a duplicate product id',
      withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1 }, { id: 1, productId: 'b', name: 'B', price: 2 }] }),
      'seed.servers[0].products[1].id: duplicate product id 1',
    ],
    ['an id that is not a positive integer', withServer({ products: [{ id: 1.5, productId: 'a', name: 'A', price: 1 }] }), 'seed.servers[0].products[0].id: expected a positive integer'],
    ['a boolean productId', withServer({ products: [{ id: 1, productId: true, name: 'A', price: 1 }] }), 'seed.servers[0].products[0].productId: expected a non-blank string or an integer within a Java int'],
    ['an unknown category', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, categoryIds: [9] }] }), 'seed.servers[0].products[0].categoryIds[0]: unknown category 9'],
    ['a bad date', withServer({ coupons: [{ code: 'X', expiresAt: 'tomorrow' }] }), 'seed.servers[0].coupons[0].expiresAt: expected an ISO 8601 date string'],
    ['an end before the start', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, startDate: '2026-02-01', endDate: '2026-01-01' }] }), 'seed.servers[0].products[0].endDate: expected a date after startDate'],
    ['a percentage sale without a percentage', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, sales: [{ saleType: 'percentage' }] }] }), 'seed.servers[0].products[0].sales[0].discountPercentage: is required for saleType "percentage"'],
    ['an unknown sale type', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, sales: [{ saleType: 'bogo' }] }] }), 'seed.servers[0].products[0].sales[0].saleType: expected "percentage" or "amount"'],
    ['a percentage above 100', withServer({ coupons: [{ code: 'X', percentOff: 120 }] }), 'seed.servers[0].coupons[0].percentOff: expected a number from 0 to 100'],
    ['a reward costing 0', withServer({ rewards: [{ id: 1, name: 'Box', cost: 0 }] }), 'seed.servers[0].rewards[0].cost: expected a positive integer'],
    ['negative stock', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, stock: -1 }] }), 'seed.servers[0].products[0].stock: expected an integer >= 0'],
    // Every integer the mock sends back fits a Java int.
    ['an id past a Java int', withServer({ products: [{ id: 2_147_483_648, productId: 'a', name: 'A', price: 1 }] }), 'seed.servers[0].products[0].id: expected a positive integer up to 2147483647'],
    ['stock past a Java int', withServer({ products: [{ id: 1, productId: 'a', name: 'A', price: 1, stock: 2 ** 31 }] }), 'seed.servers[0].products[0].stock: expected an integer from 0 to 2147483647'],
    ['a numeric productId past a Java int', withServer({ products: [{ id: 1, productId: 1e10, name: 'A', price: 1 }] }), 'productId: expected a non-blank string or an integer within a Java int'],
    ['a giveAmount past a Java int', withServer({ rewards: [{ id: 1, name: 'Box', cost: 1, giveAmount: 2 ** 31 }] }), 'seed.servers[0].rewards[0].giveAmount: expected a positive integer up to 2147483647'],
    ['a transactionMessage that is not a string', withServer({ transactionMessage: 1 }), 'seed.servers[0].transactionMessage: expected a string'],
    ['an integrationComplete that is not a boolean', withServer({ gateway: { integrationComplete: 'no' } }), 'seed.servers[0].gateway.integrationComplete: expected true or false'],
  ])('names the field for %s', (_, seed, message) => {
    expect(() => parseMockSeed(seed)).toThrow(message);
  });

  it('counts further problems', () => {
    // Every problem, one per line (not "and 1 more problem").
    expect(() => parseMockSeed(withServer({ name: 1, products: 'none' }))).toThrow(
      /^Invalid mock seed, 2 problems:\n  seed\.servers\[0\]\.name: .+\n  seed\.servers\[0\]\.products: .+$/,
    );
  });

  it('createMockService refuses a bad seed', () => {
    expect(() => createMockService({ seed: { servers: [] } })).toThrow('Invalid mock seed: seed.servers: expected at least one server');
  });

  it('the mock does not share objects with the seed it was given', () => {
    const seed = structuredClone(storeSeed);
    const mock = createMockService({ seed, now: 0 });
    seed.servers[0]!.products![0]!.price = 1234;
    expect(mock.state().servers[0]?.products[0]?.price).toBe(10);
  });
});
