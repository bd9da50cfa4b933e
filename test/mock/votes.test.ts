/**
 * The mock's vote rewards under what the dashboard and the network can do
 * (src/mock/operations/votes.ts, admin.ts, adapters/faults.ts): a price changed between
 * two claims (`updateReward`, `POST /__mock/rewards/update`) and a request carried out
 * after its answer was lost (`landLate`), over the three transports.
 */
import { describe, expect, it } from 'vitest';
import { ClaimOutcomeUnknownError } from '../../src/index.js';
import { MockAdminError } from '../../src/mock/index.js';
import { KEY } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

// storeSeed rewards: 1 "Vote Mystery Box" (1 point, gives 1), 2 "Scroll" (5 points, gives 2).
describe.each(transports)('the mock\'s vote rewards over $name', (transport) => {
  const session = useMockSession(transport);
  const { mock, client } = session;
  const left = () => mock.state().servers[0]?.votes.find((v) => v.playerName === 'Ann')?.vote_points;
  const ask = { player: 'Ann', reward: 2, amount: 1 } as const;

  it('updateReward changes the price and the units of the claims that follow', async () => {
    mock.recordVote(KEY, 'Ann', 20);
    expect(mock.updateReward(KEY, 2, { cost: 3, giveAmount: 4 })).toEqual({ id: 2, name: 'Scroll', cost: 3, giveAmount: 4 });
    const answer = await client().claimVoteReward(ask);
    expect(answer.rewards).toEqual([expect.objectContaining({ give_amount: 4, vote_points: 17 })]);
    expect(mock.state().servers[0]?.rewards.find((r) => r.id === 2)).toMatchObject({ cost: 3 });
    // The claims carried out, with the price each paid.
    expect(mock.state().servers[0]?.voteClaims).toEqual([{ playerName: 'Ann', rewardId: 2, units: 1, cost: 3, giveAmount: 4, total_points: 20, vote_points: 17, at: new Date(mock.clock.now()).toISOString() }]);
  });

  it('POST /__mock/rewards/update does the same over the wire; a bad patch or an unknown reward is refused', async () => {
    const post = (body: unknown) => session.fetch(`${session.baseUrl}/__mock/rewards/update`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await post({ apiKey: KEY, id: 2, patch: { cost: 7 } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: 2, cost: 7 });
    expect((await post({ apiKey: KEY, id: 2, patch: { cost: 0 } })).status).toBe(400);
    expect((await post({ apiKey: KEY, id: 2, patch: { id: 3 } })).status).toBe(400);
    expect((await post({ apiKey: KEY, id: 99, patch: { cost: 1 } })).status).toBe(404);
  });

  it('a landLate fault drops the answer, and the request is carried out after the next answer', async () => {
    mock.recordVote(KEY, 'Ann', 20);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1 });
    await expect(client().claimVoteReward(ask)).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(left()).toBe(20);
    const next = await client().claimVoteReward(ask);
    // The next answer is computed before the late request lands: it shows one claim's spending.
    expect(next.rewards[0]?.vote_points).toBe(15);
    expect(left()).toBe(10);
    expect(mock.state().servers[0]?.voteClaims.map((c) => c.units)).toEqual([1, 1]);
  });

  it('POST /__mock/faults takes a landLate rule with its landAfter, and refuses a bad one', async () => {
    const post = (body: unknown) => session.fetch(`${session.baseUrl}/__mock/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const added = await post({ operation: 'claimVoteReward', kind: 'landLate', times: 1, landAfter: 2 });
    expect(added.status).toBe(200);
    expect(await added.json()).toMatchObject({ rule: { kind: 'landLate', landAfter: 2 } });
    expect((await post({ operation: 'claimVoteReward', kind: 'landLate', times: 1, landAfter: 0 })).status).toBe(400);
  });

  it('landAfter holds the request for that many answers; land() carries out what is still held; reset() drops it', async () => {
    mock.recordVote(KEY, 'Ann', 30);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1, landAfter: 2 });
    await expect(client().claimVoteReward(ask)).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    await client().claimVoteReward(ask);
    expect(left()).toBe(25);
    await client().claimVoteReward(ask);
    expect(left()).toBe(15);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1 });
    await expect(client().claimVoteReward(ask)).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    // Another operation's answers do not carry it out.
    await client().claim('Ann');
    expect(left()).toBe(15);
    expect(mock.faults.land()).toBe(1);
    expect(left()).toBe(10);
    expect(mock.faults.land()).toBe(0);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', times: 1 });
    await expect(client().claimVoteReward(ask)).rejects.toBeInstanceOf(ClaimOutcomeUnknownError);
    mock.reset();
    expect(mock.faults.land()).toBe(0);
  });
});

describe('updateReward and landLate refuse what makes no sense', () => {
  const { mock } = useMockSession(transports[0] as (typeof transports)[number]);

  it('an unknown reward or key, a price of zero, a field it does not know', () => {
    expect(() => mock.updateReward(KEY, 99, { cost: 1 })).toThrow(MockAdminError);
    expect(() => mock.updateReward('nope', 2, { cost: 1 })).toThrow(/./);
    expect(() => mock.updateReward(KEY, 2, { cost: 0 })).toThrow(/patch\.cost/);
    expect(() => mock.updateReward(KEY, 2, { id: 5 } as never)).toThrow(/patch/);
  });

  it('landAfter is a whole number from 1 to 1000', () => {
    expect(() => mock.faults.add({ kind: 'landLate', times: 1, landAfter: 0 })).toThrow(RangeError);
    expect(() => mock.faults.add({ kind: 'landLate', times: 1, landAfter: 1001 })).toThrow(RangeError);
    expect(mock.faults.add({ kind: 'landLate', times: 1, landAfter: 1000 }).rule).toMatchObject({ landAfter: 1000 });
  });
});
