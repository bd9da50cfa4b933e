/**
 * How a checkout answer is read (src/wire/checkout.ts), each rule pinned so that changing it
 * fails a test (#46): the documented order of the indicators, what a success must carry, the
 * fields kept (and none the service left out), and the words of each refusal. The SDK is
 * loaded afresh for each test: the checkout's schema is built on its first answer, once per
 * load, so a test that reads an answer after another would otherwise never build it again.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Sdk from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';

let sdk: typeof Sdk;
beforeEach(async () => {
  vi.resetModules();
  sdk = await import('../../src/index.js');
});

const cart = { username: 'Ann', items: [{ id: 1, quantity: 1 }] };
const checkout = (body: unknown) => new sdk.StorefrontClient({ apiKey: KEY, retry: 0, fetch: async () => Response.json(body) }).checkout(cart);
const PREFIX = 'checkout: unexpected response from api.teamgames.io/api/v2/client/global/checkout/complete: ';

/** The ResponseValidationError `body` is refused with. */
async function refusal(body: unknown): Promise<Sdk.ResponseValidationError> {
  return expectInstance(await failureOf(checkout(body)), sdk.ResponseValidationError);
}

describe('what a success must carry', () => {
  it('a success with no transactionId is refused, free or not, and says so', async () => {
    for (const body of [{ status: 'SUCCESS', isFree: true }, { status: 'SUCCESS', redirect: 'https://pay.example/1' }]) {
      const error = await refusal(body);
      expect(error.message).toBe(`${PREFIX}a successful checkout carries no transactionId`);
      expect(error.issues).toEqual([]);
    }
  });

  it('a success to pay with no redirect is refused and says so', async () => {
    const error = await refusal({ status: 'SUCCESS', transactionId: 'tx-1' });
    expect(error.message).toBe(`${PREFIX}a checkout to pay carries no redirect`);
    expect(error.issues).toEqual([]);
  });

  it('a free success needs no redirect; one to pay keeps both', async () => {
    expect(await checkout({ status: 'SUCCESS', transactionId: 7, isFree: true })).toStrictEqual({ status: 'SUCCESS', transactionId: '7', isFree: true, outcome: 'FREE' });
    expect(await checkout({ status: 'SUCCESS', transactionId: 'tx', redirect: 'https://pay.example/1' })).toStrictEqual({
      status: 'SUCCESS',
      transactionId: 'tx',
      redirect: 'https://pay.example/1',
      isFree: false,
      outcome: 'PAYMENT_REQUIRED',
    });
  });
});

describe('answers that are not a checkout answer', () => {
  it('no indicator at all: refused, naming the indicators', async () => {
    const error = await refusal({ message: 'hello' });
    expect(error.message).toBe(`${PREFIX}the checkout answer carries no status, error or statusCode "400"`);
    expect(error.issues).toEqual([]);
  });

  it('a body outside the schema: refused with zod\'s issues', async () => {
    const error = await refusal({ status: 5 });
    expect(error.message).toBe(`${PREFIX}the checkout answer does not match the schema`);
    expect(error.issues.map((issue) => issue.path)).toEqual([['status']]);
  });
});

describe('the fields of an outcome', () => {
  it('a gateway error without a text reads as an empty message; no field the service left out appears', async () => {
    const result = await checkout({ status: 'ERROR', code: null });
    expect(result).toStrictEqual({ status: 'ERROR', outcome: 'GATEWAY_ERROR', message: '' });
    expect(Object.keys(result).sort()).toEqual(['message', 'outcome', 'status']);
  });

  it('a gateway error keeps the service\'s text', async () => {
    expect(await checkout({ status: 'ERROR', message: 'Minimum charge is 0.50' })).toStrictEqual({ status: 'ERROR', outcome: 'GATEWAY_ERROR', message: 'Minimum charge is 0.50' });
  });
});
