import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

// The schemas that read answers are compiled with `z.compile` (see `compiled` in
// src/wire/). zod promises the same results and issues either way; these tests hold
// the SDK to it on its own answers, valid and not, and check that a program which turned
// zod's code generation off (`jitless`, for a strict Content Security Policy) still gets
// schemas that never generate code.

const product = (id: number) => ({
  id,
  productId: id % 2 ? `item_${id}` : 1000 + id,
  name: `Product ${id}`,
  price: 4.5,
  priceOriginal: id % 3 ? null : 6,
  quantity: id % 4 ? undefined : 2,
  description: null,
  sales: id % 2 ? [{ saleType: 'percentage', discountPercentage: 10, discountAmount: null, extra: true }] : null,
  categoryIds: [1, 2],
});

const row = (n: number) => ({
  player_name: 'Ann',
  product_id: n,
  product_name: `Item ${n}`,
  product_price: n % 2 ? '2.50' : 2.5,
  quantity_to_grant: n % 2 ? '1' : 1,
  amount_purchased: 1,
  message: null,
  custom: { n },
});

/** Each answer, by path; a few are invalid on purpose, at several places. */
const answers: Record<string, Array<unknown>> = {
  '/api/v2/client/global/products': [
    { message: 'SUCCESS', products: [1, 2, 3, 4, 5, 6].map(product) },
    { message: 'SUCCESS', products: [product(1), { ...product(2), price: 'free', quantity: 1.5 }, { name: 3 }] },
  ],
  '/api/v4/store/transaction/update': [
    { status: 'SUCCESS', code: 'SUCCESS', message: 'ok', data: { claims: [row(1), row(2)], rawTransactions: [{ id: 1 }] } },
    { status: 'SUCCESS', code: 'SUCCESS', data: { claims: [row(1), { ...row(2), product_price: 'a lot' }, { player_name: 'Ann', product_name: 'x', product_price: 1 }] } },
  ],
  '/api/v2/client/global/checkout/complete': [
    { status: 'SUCCESS', statusCode: 200, transactionId: 42, redirect: 'https://pay.example/42', extra: [1] },
    { status: 'SUCCESS', statusCode: true, isFree: 'yes' },
  ],
  '/api/v3/store/transaction/update': [[row(1), { message: 'Nothing more' }], [row(1), { ...row(2), quantity_to_grant: '1.5' }]],
  '/v3/vote/reward/claim': [
    [{ message: null, total_points: 40, vote_points: '10', votes_month: 3, give_amount: 1, reward_id: '7', reward_name: 'Gem' }],
    [{ total_points: 40, vote_points: 'ten', votes_month: 3, give_amount: 1, reward_id: 7 }],
  ],
};

/** Every operation's outcome on every answer: the value, or the error's code and issues. */
async function readEveryAnswer(): Promise<unknown[]> {
  const { StorefrontClient } = await import('../../src/index.js');
  const next: Record<string, number> = {};
  const fetch = async (input: Request | URL | string) => {
    const path = new URL(input instanceof Request ? input.url : input).pathname;
    const index = (next[path] = (next[path] ?? -1) + 1);
    return Response.json(answers[path]![index]);
  };
  const client = new StorefrontClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch, rateLimit: false, catalogCacheTtlMs: 0, retry: 0 });
  const calls = [
    () => client.getCatalog(),
    () => client.claim('Ann'),
    () => client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] }),
    () => client.claimLegacy('Ann'),
    () => client.claimVoteReward({ player: 'Ann', reward: 7, amount: 1 }),
  ];
  const outcomes: unknown[] = [];
  for (const call of calls) {
    for (let i = 0; i < 2; i++) {
      outcomes.push(
        await call().then(
          (value) => ({ value }),
          (error: { code?: string; issues?: unknown }) => ({ code: error.code, issues: error.issues }),
        ),
      );
    }
  }
  return outcomes;
}

afterEach(() => {
  z.config({ jitless: false });
  vi.resetModules();
});

describe('compiled response schemas', () => {
  it('compile every schema that reads an answer', async () => {
    const { catalogSchemas } = await import('../../src/wire/catalog.js');
    const { claimSchemas } = await import('../../src/wire/claim.js');
    const { checkoutSchemas } = await import('../../src/wire/checkout.js');
    const { v3RowSchemas } = await import('../../src/wire/v3-rows.js');
    const { voteRewardSchemas } = await import('../../src/wire/vote-reward.js');
    const { catalogResponse } = catalogSchemas();
    const schemas = { catalogResponse, ...claimSchemas(), ...checkoutSchemas(), ...v3RowSchemas(), ...voteRewardSchemas() };
    const readers = Object.entries(schemas).filter(([, value]) => value instanceof z.core.$ZodType);
    expect(readers.map(([name]) => name).sort()).toEqual(['catalogResponse', 'checkoutResponse', 'claimResponse', 'v3Answer', 'messageRow', 'transaction', 'voteReward'].sort());
    // zod's `withParser`, behind `z.compile`, keeps the runtime parser it falls back to
    // in the clone's bag; `z.compile` returns the schema unchanged when it cannot compile.
    for (const [name, schema] of readers) expect(typeof (schema as z.core.$ZodType)._zod.bag.fallbackRun, name).toBe('function');
  });

  it('read valid and invalid answers exactly as zod without code generation does', async () => {
    const compiledOutcomes = await readEveryAnswer();
    vi.resetModules();
    z.config({ jitless: true });
    const runtimeOutcomes = await readEveryAnswer();

    expect(runtimeOutcomes).toEqual(compiledOutcomes);
    // Each operation read a valid answer, then refused an invalid one with issues to show
    // (a sent claim or vote that cannot be read is an outcome unknown).
    const kinds = compiledOutcomes.map((o) => {
      const { code, issues } = o as { code?: string; issues?: unknown[] };
      return code === undefined ? 'value' : `${code} (${issues!.length > 0 ? 'issues' : 'none'})`;
    });
    const invalid = (code: string) => `${code} (issues)`;
    expect(kinds).toEqual([
      'value',
      invalid('RESPONSE_VALIDATION_FAILED'),
      'value',
      invalid('CLAIM_OUTCOME_UNKNOWN'),
      'value',
      invalid('RESPONSE_VALIDATION_FAILED'),
      'value',
      invalid('CLAIM_OUTCOME_UNKNOWN'),
      'value',
      invalid('CLAIM_OUTCOME_UNKNOWN'),
    ]);
  });

  it('generate no code when the program set zod to jitless', async () => {
    z.config({ jitless: true });
    const { compiled } = await import('../../src/wire/parse.js');
    const schema = z.looseObject({ a: z.number() });
    expect(compiled(schema)).toBe(schema);
    z.config({ jitless: false });
    expect(compiled(schema)).not.toBe(schema);
  });
});
