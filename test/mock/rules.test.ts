import { describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/mock/service/auth.js';
import { createClock } from '../../src/mock/service/clock.js';
import { MockAdminError, createMockService } from '../../src/mock/index.js';
import { claim } from '../../src/mock/operations/claims.js';
import { bestSale, isValidPlayerName, priceWithSale, productIdAsInt, roundCents, toTransaction } from '../../src/mock/service/rules.js';
import { createState } from '../../src/mock/service/state.js';
import type { WireRequest } from '../../src/mock/service/wire.js';
import { KEY, KEY_BASE64, T0, storeSeed } from '../support/fixtures.js';

const request = (headers: Record<string, string>, body: unknown): WireRequest => ({
  header: (name) => headers[name.toLowerCase()] ?? null,
  body: JSON.stringify(body),
  origin: 'http://mock.test',
});

describe('key resolution', () => {
  const known = (value: string) => (value === KEY_BASE64 ? KEY : undefined);

  it('v2/v4 take only the exact Base64 of a known key', () => {
    expect(presentedKey((n) => (n === 'authorization' ? KEY_BASE64 : null), 'base64', known)).toBe(KEY);
    const wrapped = `${KEY_BASE64.slice(0, 8)}\n${KEY_BASE64.slice(8)}`;
    expect(presentedKey((n) => (n === 'authorization' ? wrapped : null), 'base64', known)).toBeUndefined();
    expect(presentedKey((n) => (n === 'authorization' ? `${KEY_BASE64}\n` : null), 'base64', known)).toBeUndefined();
  });

  it('a wrapped `base64` output is SERVER_NOT_FOUND on claim v4', () => {
    const state = createState(storeSeed, createClock(T0));
    const wrapped = `${KEY_BASE64.slice(0, 8)}\r\n${KEY_BASE64.slice(8)}`;
    const answer = claim(state, request({ authorization: wrapped, 'content-type': 'application/json' }, { playerName: 'P' }));
    expect(answer.body).toMatchObject({ code: 'SERVER_NOT_FOUND' });
  });

  it('Bearer only where allowed', () => {
    const bearer = (n: string) => (n === 'authorization' ? `bearer ${KEY}` : null);
    expect(presentedKey(bearer, 'api-key-or-bearer', known)).toBe(KEY);
    expect(presentedKey(bearer, 'api-key', known)).toBeUndefined();
  });
});

describe('rule helpers', () => {
  it('rounds money to cents', () => {
    expect(roundCents(1.005)).toBe(1.01);
    expect(roundCents(0.1 + 0.2)).toBe(0.3);
    expect(roundCents(19.999)).toBe(20);
  });

  it('product_id is the merchant id as an int when it is an integer string within a Java int, else 0', () => {
    expect(productIdAsInt('42')).toBe(42);
    expect(productIdAsInt('minecraft:diamond')).toBe(0);
    expect(productIdAsInt('4.5')).toBe(0);
    expect(productIdAsInt('99999999999999999999')).toBe(0);
    expect(productIdAsInt('2147483647')).toBe(2_147_483_647);
    expect(productIdAsInt('-2147483648')).toBe(-2_147_483_648);
    expect(productIdAsInt('2147483648')).toBe(0);
    expect(productIdAsInt('99999999999')).toBe(0);
  });

  it('v4 rows send both quantity pairs, v3 rows the legacy pair; message only when given', () => {
    const row = createMockService({ seed: storeSeed, now: T0 }).addPurchase(KEY, { playerName: 'P', id: 2, quantity: 3 });
    const v4 = toTransaction(row, 'v4', undefined);
    expect(v4).toEqual({
      player_name: 'P',
      product_id: 7,
      product_id_string: '7',
      product_name: 'Dragon sword',
      product_price: 15,
      quantity_to_grant: 6,
      quantity_purchased: 3,
      product_amount: 6,
      amount_purchased: 3,
    });
    const { quantity_to_grant: _grant, quantity_purchased: _bought, ...legacy } = v4;
    expect(toTransaction(row, 'v3', undefined)).toEqual(legacy);
    expect(toTransaction(row, 'v3', '')).toEqual({ ...legacy, message: '' });
  });

  it('player names: non-blank, at most 64 code points, no control or bidi-override characters', () => {
    expect(isValidPlayerName('😀'.repeat(64))).toBe(true);
    expect(isValidPlayerName('😀'.repeat(65))).toBe(false);
    expect(isValidPlayerName('tab\there')).toBe(false);
    expect(isValidPlayerName('\u007f')).toBe(false);
    expect(isValidPlayerName('evil\u202egnp.exe')).toBe(false);
    expect(isValidPlayerName('\u2066Admin\u2069')).toBe(false);
    expect(isValidPlayerName('Player\ud835')).toBe(false);
    expect(isValidPlayerName('Player\u200eName')).toBe(true);
  });

  it('priceWithSale takes the best active sale and never goes below 0', () => {
    const base = { id: 1, productId: 'x', name: 'X', price: 10 };
    expect(priceWithSale({ ...base, sales: [{ saleType: 'percentage', discountPercentage: 33.333 }] }, T0)).toBe(6.67);
    expect(priceWithSale({ ...base, sales: [{ saleType: 'amount', discountAmount: 50 }] }, T0)).toBe(0);
    expect(priceWithSale({ ...base, sales: [{ saleType: 'amount', discountAmount: 5, startDate: '2026-01-01T00:00:00Z' }] }, T0)).toBe(5);
    expect(priceWithSale({ ...base, sales: [{ saleType: 'amount', discountAmount: 5, endDate: '2026-01-01T00:00:00Z' }] }, T0)).toBe(10);
  });

  it('bestSale is the active sale that lowers the price most, if any does', () => {
    const base = { id: 1, productId: 'x', name: 'X', price: 10 };
    const tenOff = { saleType: 'percentage', discountPercentage: 10 } as const;
    const fiveOff = { saleType: 'amount', discountAmount: 5 } as const;
    expect(bestSale({ ...base, sales: [tenOff, fiveOff] }, T0)).toEqual(fiveOff);
    expect(bestSale({ ...base, sales: [{ saleType: 'amount', discountAmount: 0 }] }, T0)).toBeUndefined();
    expect(bestSale(base, T0)).toBeUndefined();
  });
});

describe('admin operations', () => {
  const mock = createMockService({ seed: storeSeed, now: T0 });

  it('throw MockAdminError with a status', () => {
    expect(() => mock.completePayment('nope')).toThrow(MockAdminError);
    expect(() => mock.addPurchase('nope', { playerName: 'P', id: 1 })).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => mock.addPurchase(KEY, { playerName: ' ', id: 1 })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => mock.addPurchase(KEY, { playerName: 'P', id: 1, quantity: 0 })).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => mock.recordVote(KEY, 'P', 0)).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => mock.removeProduct(KEY, 999)).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => mock.updateProduct(KEY, 1, { price: -1 })).toThrow(/patch\.price: expected a number >= 0/);
  });

  it('return copies, never live state', () => {
    const row = mock.addPurchase(KEY, { playerName: 'P', id: 1 });
    row.deliverystatus = 'Delivered';
    expect(mock.purchases(KEY, 'P')[0]?.deliverystatus).toBe('Undelivered');
    expect(mock.purchases(KEY, 'P')[0]?.invoice).toBe(1);
    mock.reset();
    expect(mock.addPurchase(KEY, { playerName: 'P', id: 1 }).invoice).toBe(1);
  });
});
