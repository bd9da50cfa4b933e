import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { encodeApiKey } from 'teamgames-sdk';
import { catalogSchemas } from '../../src/wire/catalog.js';
import { checkoutSchemas } from '../../src/wire/checkout.js';
import { claimSchemas } from '../../src/wire/claim.js';
import { v3RowSchemas } from '../../src/wire/v3-rows.js';
import { voteRewardSchemas } from '../../src/wire/vote-reward.js';
import { KEY, KEY_UNCONFIGURED } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

const { catalogResponse: catalogResponseSchema } = catalogSchemas();
const { claimResponse: claimResponseSchema, transaction: transactionSchema } = claimSchemas();
const { checkoutResponse: checkoutResponseSchema } = checkoutSchemas();
const { v3Answer: v3AnswerSchema, messageRow: messageRowSchema } = v3RowSchemas();
const { voteReward: voteRewardSchema } = voteRewardSchemas();

/** Asserts that `body` parses with `schema`, showing zod's issues when it does not. */
function expectParses(schema: z.ZodMiniType, body: unknown): void {
  const result = schema.safeParse(body);
  expect(result.success, `${JSON.stringify(body)}\n${result.error?.message ?? ''}`).toBe(true);
}

const asRecord = (body: unknown): Record<string, any> => body as Record<string, any>;
const asRows = (body: unknown): Array<Record<string, unknown>> => {
  expect(Array.isArray(body), JSON.stringify(body)).toBe(true);
  return body as Array<Record<string, unknown>>;
};

// The mock's raw bodies (fetched with plain fetch, as a plugin in another language would)
// parse with the SDK's own schemas: the mock never answers what the client cannot read.
describe.each(transports)("the mock's responses parse with the client's schemas, over $name", (transport) => {
  const { mock, api } = useMockSession(transport);
  const catalog = async (body: Record<string, unknown> = {}, key = KEY): Promise<unknown> => (await api.getCatalog(body, { authorization: encodeApiKey(key) })).body;
  const checkout = async (items: Array<{ id: number; quantity: number }>, extra: Record<string, unknown> = {}, key = KEY): Promise<unknown> =>
    (await api.checkout('Player1', items, extra, { authorization: encodeApiKey(key) })).body;
  const claim = (playerName: string, options: Record<string, unknown> = {}, key = KEY): Promise<unknown> =>
    api.claim(playerName, options, { authorization: encodeApiKey(key) });
  const vote = async (player: string, reward: string, amount: string): Promise<unknown> => (await api.claimVoteReward({ player, reward, amount })).body;

  it('catalog: every product, with and without sales, a category, and GAME_SERVER_NOT_FOUND', async () => {
    const bodies = [await catalog(), await catalog({ categoryId: 2 }), await catalog({ categoryId: 99 }), await catalog({}, 'wrong-key')];
    mock.clock.set('2026-01-05T00:00:00Z');
    bodies.push(await catalog());
    mock.clock.set('2026-02-01T00:00:00Z');
    bodies.push(await catalog());
    for (const body of bodies) expectParses(catalogResponseSchema, body);
    expect(asRecord(bodies[0]).products.length).toBeGreaterThan(0);
    expect(asRecord(bodies[3]).message).toBe('GAME_SERVER_NOT_FOUND');
  });

  it('checkout: every outcome', async () => {
    const bodies = [
      await checkout([{ id: 99, quantity: 1 }, { id: 4, quantity: 5 }]), // INVALID_STOCK
      await checkout([{ id: 1, quantity: 1 }], { coupon: 'NOPE' }), // error
      await checkout([{ id: 5, quantity: 1 }]), // free
      await checkout([{ id: 11, quantity: 1 }]), // ERROR: minimum charge
      await checkout([{ id: 1, quantity: 1 }], {}, KEY_UNCONFIGURED), // ERROR: no gateway
      await checkout([{ id: 10, quantity: 2 }]), // statusCode 400
      await checkout([{ id: 1, quantity: 1 }]), // SUCCESS with redirect
    ];
    for (const body of bodies) expectParses(checkoutResponseSchema, body);
    expect(bodies.map((b) => asRecord(b).status ?? asRecord(b).statusCode ?? 'error')).toEqual([
      'INVALID_STOCK',
      'error',
      'SUCCESS',
      'ERROR',
      'ERROR',
      '400',
      'SUCCESS',
    ]);
  });

  it('claim v4: every code, and every claimed transaction', async () => {
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1, quantity: 2 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 3 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 12 });
    mock.addPurchase(KEY, { playerName: 'Player2', id: 1 });
    const bodies = [await claim('Player1', { preview: true, includeRawTransactions: true })];
    bodies.push(await claim('Player1')); // RATE_LIMIT
    mock.clock.advance(10_000);
    bodies.push(await claim('Player1', { includeRawTransactions: true })); // SUCCESS
    mock.clock.advance(10_000);
    bodies.push(await claim('Player1')); // ALREADY_CLAIMED
    bodies.push(await claim('Nobody')); // NO_ITEMS
    bodies.push(await claim('a'.repeat(65))); // INVALID_PLAYER
    bodies.push(await claim('Player1', {}, 'wrong-key')); // SERVER_NOT_FOUND
    mock.removeProduct(KEY, 1);
    bodies.push(await claim('Player2')); // PRODUCT_NOT_FOUND

    for (const body of bodies) expectParses(claimResponseSchema, body);
    expect(bodies.map((b) => asRecord(b).code)).toEqual([
      'PREVIEW',
      'RATE_LIMIT',
      'SUCCESS',
      'ALREADY_CLAIMED',
      'NO_ITEMS',
      'INVALID_PLAYER',
      'SERVER_NOT_FOUND',
      'PRODUCT_NOT_FOUND',
    ]);
    const claims = bodies.flatMap((b) => asRecord(b).data.claims as unknown[]);
    expect(claims).toHaveLength(6);
    for (const transaction of claims) expectParses(transactionSchema, transaction);
  });

  it('claim v3 and store claim: purchase rows and message rows', async () => {
    mock.addPurchase(KEY, { playerName: 'Player1', id: 2 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 12, quantity: 3 });
    mock.addPurchase(KEY, { playerName: 'Player2', id: 3 });
    const purchases: unknown[] = [await api.claimLegacy('Player1'), await api.claimStoreTransactions('Player2')];
    const messages = [
      await api.claimLegacy('Player1'), // rate limit
      await api.claimStoreTransactions('Nobody'), // no items
      await api.claimLegacy('a'.repeat(65)), // invalid player
      await api.claimStoreTransactions('Player3', { 'X-API-Key': 'wrong-key' }), // server not found
    ];
    for (const body of [...purchases, ...messages]) expectParses(v3AnswerSchema, body);
    const rows = purchases.flatMap(asRows);
    expect(rows).toHaveLength(3);
    for (const row of rows) expectParses(transactionSchema, row);
    for (const body of messages) {
      const [row, ...rest] = asRows(body);
      expect(rest).toEqual([]);
      expectParses(messageRowSchema, row);
      expect(Object.keys(row ?? {})).toEqual(['message']);
    }
  });

  it('vote rewards: reward rows and message rows', async () => {
    mock.recordVote(KEY, 'Player1', 12);
    const rewards = [await vote('Player1', '2', '1'), await vote('Player1', '1', 'all')];
    const messages = [await vote('Player1', '1', 'all'), await vote('Nobody', '1', '1'), await vote('Player1', '9', '1')];
    for (const row of rewards.flatMap(asRows)) {
      expectParses(voteRewardSchema, row);
      expect(typeof row['total_points']).toBe('string');
    }
    for (const row of messages.flatMap(asRows)) expectParses(messageRowSchema, row);
  });
});
