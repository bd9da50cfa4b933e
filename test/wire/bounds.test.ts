/**
 * The service's numbers bounded before anything is given (src/wire/bounds.ts, #43 point 2):
 * vote reward rows and purchase lines with amounts, points, prices or quantities past
 * 2,147,483,647, or zero and negative where they make no sense, are never read as items:
 * a typed error for the bare calls, and for the journaled deliveries nothing handed to the
 * give, a window for staff, and the player's later claims unblocked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaimOutcomeUnknownError, FileJournal, MemoryJournal, StorefrontClient, inspectJournal, type DeliveryJournal } from '../../src/index.js';
import { MAX_SERVICE_COUNT } from '../../src/wire/bounds.js';
import { KEY, T0 } from '../support/fixtures.js';

/** A service answering the given bodies in turn (the last one from then on). */
const scripted = (...bodies: unknown[]): typeof globalThis.fetch => {
  let i = 0;
  return async () => new Response(JSON.stringify(bodies[Math.min(i++, bodies.length - 1)]));
};
const sdk = (fetch: typeof globalThis.fetch, journal?: DeliveryJournal) =>
  new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, retry: 0, now: () => T0, ...(journal === undefined ? {} : { journal }) });

const vote = (fields: Record<string, unknown> = {}) => ({ total_points: '20', vote_points: 15, votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll', ...fields });
const line = (fields: Record<string, unknown> = {}) => ({ player_name: 'Ann', product_id: 7, product_id_string: '7', product_name: 'Cape', product_price: 4.99, quantity_to_grant: 1, quantity_purchased: 1, ...fields });
const claimed = (...claims: unknown[]) => ({ status: 'SUCCESS', code: 'SUCCESS', message: 'ok', data: { claims } });

describe('vote reward rows', () => {
  it.each<[string, Record<string, unknown>]>([
    ['give_amount "99999999999999999999"', { give_amount: '99999999999999999999' }],
    ['give_amount one past the bound', { give_amount: MAX_SERVICE_COUNT + 1 }],
    ['give_amount 0', { give_amount: 0 }],
    ['give_amount negative', { give_amount: -3 }],
    ['reward_id 0', { reward_id: 0 }],
    ['vote_points negative', { vote_points: -1 }],
    ['votes_month past the bound', { votes_month: MAX_SERVICE_COUNT + 1 }],
  ])('%s: claimVoteReward throws a ClaimOutcomeUnknownError naming the field', async (_name, fields) => {
    const error = await sdk(scripted([vote(fields)])).claimVoteReward({ player: 'Ann', reward: 2, amount: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimOutcomeUnknownError);
    expect((error as ClaimOutcomeUnknownError).issues?.map((i) => i.path.join('.'))).toEqual([`0.${Object.keys(fields)[0]}`]);
    expect((error as ClaimOutcomeUnknownError).issues?.[0]?.message).toMatch(/^expected a whole number from [01] to 2147483647, got /);
  });

  it('the issue says what was expected and what came', async () => {
    const error = (await sdk(scripted([vote({ give_amount: '99999999999999999999' })])).claimVoteReward({ player: 'Ann', reward: 2, amount: 1 }).catch((e: unknown) => e)) as ClaimOutcomeUnknownError;
    expect(error.issues).toEqual([{ path: [0, 'give_amount'], message: 'expected a whole number from 1 to 2147483647, got 100000000000000000000' }]);
    const price = (await sdk(scripted(claimed(line({ product_price: -5 })))).claim('Ann').catch((e: unknown) => e)) as ClaimOutcomeUnknownError;
    expect(price.issues?.map((i) => i.message)).toEqual(['expected a price from 0 to 2147483647, got -5']);
  });

  it('the bound itself is read', async () => {
    const answer = await sdk(scripted([vote({ give_amount: MAX_SERVICE_COUNT, vote_points: 0, votes_month: MAX_SERVICE_COUNT })])).claimVoteReward({ player: 'Ann', reward: 2, amount: 1 });
    expect(answer.rewards[0]?.give_amount).toBe(MAX_SERVICE_COUNT);
  });

  it("deliverVoteReward never gives an oversized row; the player is told, staff see a window, and the player's later claims work", async () => {
    const journal = new MemoryJournal();
    const given: number[] = [];
    const give = (r: { give_amount: number }) => void given.push(r.give_amount);
    const client = sdk(scripted([vote()], [vote({ vote_points: 10 })], [vote({ give_amount: '99999999999999999999', vote_points: 5 })], [vote({ vote_points: 0 })]), journal);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await client.deliverVoteReward(ask, give);
    await client.deliverVoteReward(ask, give);
    const odd = await client.deliverVoteReward(ask, give);
    expect(odd).toMatchObject({ code: 'OUTCOME_UNKNOWN', granted: [], error: expect.objectContaining({ code: 'CLAIM_OUTCOME_UNKNOWN' }) });
    expect(odd.message).toMatch(/points are safe/);
    // The next claim is not blocked: it gives its own row and reports the odd answer's points for staff.
    const next = await client.deliverVoteReward(ask, give);
    expect(next).toMatchObject({ code: 'SUCCESS', unverified: { playerName: 'Ann', reward: '2', points: 9 } });
    expect(given).toEqual([2, 2, 2]);
    expect((await inspectJournal(journal)).openWindows).toHaveLength(1);
  });
});

describe('purchase lines', () => {
  it.each<[string, Record<string, unknown>]>([
    ['quantity_to_grant "99999999999999999999"', { quantity_to_grant: '99999999999999999999' }],
    ['quantity_to_grant 0', { quantity_to_grant: 0 }],
    ['quantity_purchased negative', { quantity_purchased: -1 }],
    ['product_amount past the bound (the legacy name)', { quantity_to_grant: undefined, product_amount: MAX_SERVICE_COUNT + 1 }],
    ['product_price past the bound', { product_price: 1e12 }],
    ['product_price negative', { product_price: -5 }],
  ])('%s: claim throws a ClaimOutcomeUnknownError naming the field', async (_name, fields) => {
    const error = await sdk(scripted(claimed(line(fields)))).claim('Ann').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimOutcomeUnknownError);
    expect((error as ClaimOutcomeUnknownError).issues?.map((i) => String(i.path.at(-1)))).toEqual([Object.keys(fields).at(-1) === 'product_amount' ? 'quantity_to_grant' : (Object.keys(fields)[0] as string)]);
  });

  it('a free product and the bound itself are read', async () => {
    const result = await sdk(scripted(claimed(line({ product_price: 0, quantity_to_grant: MAX_SERVICE_COUNT })))).claim('Ann');
    expect(result.claims[0]).toMatchObject({ product_price: 0, quantity_to_grant: MAX_SERVICE_COUNT });
  });

  it('deliver never grants an oversized line: refused in the preview, nothing is claimed; in the claim\'s answer, the previewed line is what is granted', async () => {
    const granted: Array<{ quantity_to_grant: number }> = [];
    const grant = (item: { quantity_to_grant: number }) => void granted.push(item);
    const oversized = claimed(line({ quantity_to_grant: '99999999999999999999' }));
    const refused = await sdk(scripted(oversized), new MemoryJournal()).deliver('Ann', grant);
    expect(refused).toMatchObject({ code: 'ERROR', error: expect.objectContaining({ code: 'RESPONSE_VALIDATION_FAILED' }), pending: 0 });
    expect(granted).toEqual([]);
    const report = await sdk(scripted(claimed(line()), oversized), new MemoryJournal()).deliver('Ann', grant);
    expect(report.error).toMatchObject({ code: 'RESPONSE_VALIDATION_FAILED' });
    expect(granted.map((item) => item.quantity_to_grant)).toEqual([1]);
  });
});

describe('texts no bound applies to', () => {
  it('a 100,000-character reward name with NUL, a bidi override and a lone surrogate is journaled and read back by a file journal; the player\'s next claims work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamgames-bounds-'));
    try {
      const journal = new FileJournal(join(dir, 'journal.jsonl'));
      const name = `${'x'.repeat(100_000)}\u0000\u202e\ud800`;
      const client = sdk(scripted([vote({ reward_name: name, give_amount: 1 })], [vote({ reward_name: name, vote_points: 10 })]), journal);
      const names: string[] = [];
      const first = await client.deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, (r) => {
        names.push(r.reward_name);
        throw new Error('inventory full');
      });
      expect(first).toMatchObject({ code: 'PARTIAL', pending: 1 });
      expect(first).not.toHaveProperty('journalError');
      const next = await client.deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, (r) => void names.push(r.reward_name));
      expect(next).toMatchObject({ code: 'SUCCESS', pending: 0 });
      expect(names).toEqual([name, name, name]);
      await journal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
