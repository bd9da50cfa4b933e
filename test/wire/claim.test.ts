/**
 * What a v4 claim answer says was claimed (src/wire/claim.ts), each rule pinned so that
 * changing it fails a test (issue #46): the pairs a purchase row must have (one of each,
 * every missing one named at its path, nothing else reported then), the merchant id as an
 * integer only when it is one, the fields kept or left out, and the answer's own optional
 * parts. Through previewClaim, whose failures are plain ResponseValidationErrors. The SDK is
 * loaded afresh for each test (see below).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';
import type { ClaimResult, Transaction } from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';

// Loaded afresh for each test: the schemas (and their number rules) are built on the first
// answer, once per load, so each test must build them for a mutation run to see its checks.
let sdk: typeof Sdk;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
});

const client = (body: unknown) => new sdk.StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch: async () => Response.json(body) });

/** A preview answer listing `rows`. */
const preview = (rows: unknown[]) => ({ status: 'PREVIEW', code: 'PREVIEW', message: 'm', data: { claims: rows } });

/** A complete row, every field of both names. */
const row: Record<string, unknown> = {
  player_name: 'Ann',
  product_id: 42,
  product_id_string: '42',
  product_name: 'Whip',
  product_price: 4.5,
  quantity_to_grant: 2,
  quantity_purchased: 1,
  product_amount: 2,
  amount_purchased: 1,
};

/** `row` without `drop`, with `set`. */
function rowWith(set: Record<string, unknown>, ...drop: string[]): Record<string, unknown> {
  const out = { ...row, ...set };
  for (const key of drop) delete out[key];
  return out;
}

async function claimsOf(...rows: unknown[]): Promise<Transaction[]> {
  const result = await client(preview(rows)).previewClaim('Ann');
  expect(result.code).toBe('PREVIEW');
  return result.claims;
}

async function issuesOf(...rows: unknown[]): Promise<Array<[string, string]>> {
  const error = expectInstance(await failureOf(client(preview(rows)).previewClaim('Ann')), sdk.ResponseValidationError);
  expect(error.message).toBe('claim: unexpected response from api.teamgames.io/api/v4/store/transaction/update: a claimed transaction does not match the schema');
  return error.issues.map((issue) => [issue.path.join('.'), issue.message]);
}

describe('the pairs a purchase row must have', () => {
  it('neither product_id nor product_id_string: that one problem, at its path', async () => {
    expect(await issuesOf(row, rowWith({}, 'product_id', 'product_id_string'))).toEqual([['data.claims.1.product_id', 'product_id or product_id_string is required']]);
  });

  it('either id alone is enough', async () => {
    const [fromString, fromNumber] = await claimsOf(rowWith({ product_id_string: '17' }, 'product_id'), rowWith({ product_id: 18 }, 'product_id_string'));
    expect([fromString?.product_id, fromString?.product_id_string]).toEqual([17, '17']);
    expect([fromNumber?.product_id, fromNumber?.product_id_string]).toEqual([18, '18']);
  });

  it('no units to grant: that one problem', async () => {
    expect(await issuesOf(rowWith({}, 'quantity_to_grant', 'product_amount'))).toEqual([['data.claims.0.quantity_to_grant', 'quantity_to_grant or product_amount is required']]);
  });

  it('no units bought: that one problem', async () => {
    expect(await issuesOf(rowWith({}, 'quantity_purchased', 'amount_purchased'))).toEqual([['data.claims.0.quantity_purchased', 'quantity_purchased or amount_purchased is required']]);
  });

  it('everything missing at once: each pair named once, no bound checked on what is absent', async () => {
    expect(await issuesOf(rowWith({}, 'product_id', 'product_id_string', 'quantity_to_grant', 'product_amount', 'quantity_purchased', 'amount_purchased'))).toEqual([
      ['data.claims.0.product_id', 'product_id or product_id_string is required'],
      ['data.claims.0.quantity_to_grant', 'quantity_to_grant or product_amount is required'],
      ['data.claims.0.quantity_purchased', 'quantity_purchased or amount_purchased is required'],
    ]);
  });

  it('a row missing its id is not bound-checked: only the id is named', async () => {
    expect(await issuesOf(rowWith({ quantity_to_grant: 0, product_amount: 0 }, 'product_id', 'product_id_string'))).toEqual([['data.claims.0.product_id', 'product_id or product_id_string is required']]);
  });

  it('a row that fails the schema is named at its index under data.claims', async () => {
    expect((await issuesOf(row, rowWith({ player_name: 7 })))[0]?.[0]).toBe('data.claims.1.player_name');
  });
});

describe('numbers sent as text (the v3 rows are loose about it)', () => {
  it('a price: a number, or text holding a decimal number, spaces around it allowed', async () => {
    for (const [sent, read] of [['12', 12], [' 4.50 ', 4.5], ['10.25', 10.25], [7, 7]] as const) {
      expect((await claimsOf(rowWith({ product_price: sent })))[0]?.product_price).toBe(read);
    }
  });

  it('a price that is not only a number: refused, with what was expected', async () => {
    for (const sent of ['x4.5', 'x 4.5', '4.5x', '4.5 x', '4.', '.5', '1 2', '']) {
      expect(await issuesOf(rowWith({ product_price: sent })), sent).toEqual([['data.claims.0.product_price', 'expected a number or a numeric string']]);
    }
  });

  it('a quantity: an integer, or text holding one, spaces around it allowed', async () => {
    for (const [sent, read] of [['12', 12], [' 2 ', 2], [3, 3]] as const) {
      expect((await claimsOf(rowWith({ quantity_to_grant: sent })))[0]?.quantity_to_grant).toBe(read);
    }
  });

  it('a quantity that is not only an integer: refused, with what was expected', async () => {
    for (const sent of ['x2', 'x 2', '2x', '2 x', '2.0', '']) {
      expect(await issuesOf(rowWith({ quantity_to_grant: sent })), sent).toEqual([['data.claims.0.quantity_to_grant', 'expected an integer or an integer string']]);
    }
  });
});

describe('the bounds of a row\'s numbers', () => {
  it('a price of exactly 2,147,483,647 is read; one past it is refused', async () => {
    expect((await claimsOf(rowWith({ product_price: 2_147_483_647 })))[0]?.product_price).toBe(2_147_483_647);
    expect(await issuesOf(rowWith({ product_price: 2_147_483_648 }))).toEqual([['data.claims.0.product_price', 'expected a price from 0 to 2147483647, got 2147483648']]);
  });
});

describe('the merchant id as an integer', () => {
  const idOf = async (product_id: unknown, product_id_string?: string) =>
    (await claimsOf(product_id_string === undefined ? rowWith({ product_id }, 'product_id_string') : rowWith({ product_id, product_id_string })))[0]?.product_id;

  it('a safe integer, as a number or as text (trimmed)', async () => {
    expect(await idOf(42)).toBe(42);
    expect(await idOf('42')).toBe(42);
    expect(await idOf(' 42 ')).toBe(42);
    expect(await idOf('-3')).toBe(-3);
  });

  it('0 for anything else: a fraction, text that is not only digits, a number past 2^53', async () => {
    expect(await idOf(4.5)).toBe(0);
    expect(await idOf('+12')).toBe(0);
    expect(await idOf('12e3')).toBe(0);
    expect(await idOf('0x10')).toBe(0);
    expect(await idOf('99999999999999999999')).toBe(0);
    expect(await idOf('minecraft:diamond')).toBe(0);
  });

  it('read from product_id when it is text, whatever product_id_string says', async () => {
    expect(await idOf('42', 'gold_99')).toBe(42);
    expect(await idOf(null, '17')).toBe(17);
  });
});

describe('the fields kept', () => {
  it('message only when the row has one', async () => {
    const [none, nulled, text] = await claimsOf(rowWith({}, 'message'), rowWith({ message: null }), rowWith({ message: 'gift' }));
    expect('message' in (none as object)).toBe(false);
    expect('message' in (nulled as object)).toBe(false);
    expect(text?.message).toBe('gift');
  });
});

describe('the answer', () => {
  const answer = async (body: unknown): Promise<ClaimResult> => client(body).previewClaim('Ann');

  it('data whose claims are not a list: a schema issue at data.claims', async () => {
    const error = expectInstance(await failureOf(client({ status: 'PREVIEW', code: 'PREVIEW', message: 'm', data: { claims: 'x' } }).previewClaim('Ann')), sdk.ResponseValidationError);
    expect(error.issues.map((issue) => issue.path.join('.'))).toEqual(['data.claims']);
  });

  it("without a message: ''", async () => {
    expect((await answer({ status: 'ERROR', code: 'NO_ITEMS' })).message).toBe('');
  });

  it('SUCCESS or PREVIEW without data: no claims', async () => {
    expect(await answer({ status: 'SUCCESS', code: 'SUCCESS', message: 'm' })).toEqual({ status: 'SUCCESS', code: 'SUCCESS', message: 'm', claims: [] });
    expect((await answer({ status: 'PREVIEW', code: 'PREVIEW', message: 'm', data: {} })).claims).toEqual([]);
  });

  it('an unknown code keeps data only when there was some', async () => {
    const without = await answer({ status: 'ERROR', code: 'NEW_THING', message: 'm' });
    expect(without).toEqual({ status: 'ERROR', code: 'UNKNOWN', serverCode: 'NEW_THING', message: 'm', claims: [] });
    expect('data' in without).toBe(false);
    const withData = await answer({ status: 'ERROR', code: 'NEW_THING', message: 'm', data: { x: 1 } });
    expect(withData).toMatchObject({ code: 'UNKNOWN', data: { x: 1 } });
  });
});
