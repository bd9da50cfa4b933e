/**
 * How a v3 claim answer is read (src/wire/legacy.ts and the v3 rows it shares,
 * src/wire/v3-rows.ts), each rule pinned so that changing it fails a test (#46): purchases
 * win over messages, each known message's outcome, an unknown one never a purchase, the
 * refused key, and the words and paths of each refusal. The SDK is loaded afresh for each
 * test: the schemas are built on the first answer and the known messages when the module
 * loads, once per load.
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

const claim = (body: unknown) => new sdk.StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, fetch: async () => Response.json(body) }).claimLegacy('Ann');
const purchase = (fields: Record<string, unknown> = {}) => ({ player_name: 'Ann', product_id: 7, product_name: 'Cape', product_price: '4.99', product_amount: 2, amount_purchased: 1, ...fields });
const unreadable = (what: string) =>
  `claimLegacy: the answer could not be read (${what}); the request was sent, so the service may have delivered the items. Do not retry blindly: preview the claim to see what is still pending.`;

/** The ClaimOutcomeUnknownError `body` is refused with. */
async function refusal(body: unknown): Promise<Sdk.ClaimOutcomeUnknownError> {
  return expectInstance(await failureOf(claim(body)), sdk.ClaimOutcomeUnknownError);
}

describe('purchases', () => {
  it('purchase rows are claims, with every v4 field filled; a message beside them changes nothing', async () => {
    const result = await claim([purchase(), { message: 'There are currently no items to claim.' }]);
    expect(result.code).toBe('SUCCESS');
    expect(result.claims).toEqual([
      { player_name: 'Ann', product_id: 7, product_id_string: '7', product_name: 'Cape', product_price: 4.99, quantity_to_grant: 2, quantity_purchased: 1, product_amount: 2, amount_purchased: 1 },
    ]);
  });

  it('a faulty purchase row is refused, each issue at its row\'s index', async () => {
    const error = await refusal([purchase(), purchase({ product_name: 3 })]);
    expect(error.message).toBe(unreadable('a claimed transaction does not match the schema'));
    expect(error.issues).toEqual([{ path: [1, 'product_name'], message: 'Invalid input: expected string, received number' }]);
  });
});

describe('message-only rows', () => {
  it.each([
    ['There are currently no items to claim.', 'NO_ITEMS'],
    ['  please wait a few seconds before trying again', 'RATE_LIMIT'],
    ['Invalid player name.', 'INVALID_PLAYER'],
    ['The product could not be found.', 'PRODUCT_NOT_FOUND'],
  ] as const)('%j is %s, with no claims', async (message, code) => {
    const result = await claim([{ message }]);
    expect([result.code, result.message, result.claims]).toEqual([code, message, []]);
  });

  it('a text the SDK does not know is UNKNOWN, never a purchase; an empty text too', async () => {
    for (const message of ['Something new.', '']) {
      expect(await claim({ message })).toStrictEqual({ code: 'UNKNOWN', status: 'ERROR', message, serverCode: '', claims: [] });
    }
  });

  it('a text of 256 characters is kept whole; a longer one is cut to 256 with an ellipsis', async () => {
    const long = 'x'.repeat(256);
    expect((await claim([{ message: long }])).message).toBe(long);
    expect((await claim([{ message: `${long}y` }])).message).toBe(`${'x'.repeat(255)}…`);
  });

  it('a row that is neither a purchase nor a message is refused, at its index', async () => {
    const error = await refusal([{ message: 'x' }, { note: 'x' }]);
    expect(error.message).toBe(unreadable('a v3 row is neither a purchase nor a message'));
    expect(error.issues).toEqual([{ path: [1, 'message'], message: 'Invalid input: expected string, received undefined' }]);
  });

  it('an answer neither an array nor an object is refused and says so', async () => {
    const error = await refusal(12);
    expect(error.message).toBe(unreadable('the v3 claim answer is neither an array nor an object'));
  });

  it('"The game server could not be found", with spaces before it: an AuthenticationError saying so', async () => {
    const error = expectInstance(await failureOf(claim([{ message: '  The game server could not be found.' }])), sdk.AuthenticationError);
    expect(error.message).toBe('claimLegacy: the API key was refused (the game server could not be found). Pass the raw key from the TeamGames dashboard, not its Base64 form.');
  });
});
