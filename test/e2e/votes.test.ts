import { describe, expect, it } from 'vitest';
import { KEY, TEXT, TWO_SCROLLS } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

describe.each(transports)('vote rewards through the SDK, over $name', (transport) => {
  const { mock, client } = useMockSession(transport);
  const votesOf = (player: string) => mock.state().servers[0]?.votes.find((v) => v.playerName === player);

  it('a player who has not voted gets the message, no reward', async () => {
    expect(await client().claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' })).toEqual({
      rewards: [],
      messages: [TEXT.notVoted],
      insufficientPoints: false,
    });
  });

  it('an unknown reward gets a message and spends nothing', async () => {
    mock.recordVote(KEY, 'Player1', 3);
    expect(await client().claimVoteReward({ player: 'Player1', reward: '9', amount: 1 })).toEqual({
      rewards: [],
      messages: [TEXT.rewardNotFound],
      insufficientPoints: false,
    });
    expect(votesOf('Player1')?.vote_points).toBe(3);
  });

  it('a numeric amount spends its cost; total_points is a string; vote_points decreases', async () => {
    mock.recordVote(KEY, 'Player1', 7);
    mock.recordVote(KEY, 'Player1', 5);
    const sdk = client();
    const first = await sdk.claimVoteReward({ player: 'Player1', reward: 2, amount: 2 });
    expect(first).toEqual({
      rewards: [TWO_SCROLLS],
      messages: [],
      insufficientPoints: false,
    });
    const second = await sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 1 });
    expect(second.rewards).toEqual([expect.objectContaining({ total_points: '12', vote_points: 1, give_amount: 1, reward_id: 1 })]);
    expect(votesOf('Player1')).toMatchObject({ vote_points: 1, total_points: 12 });
  });

  it("'all' buys as many units as the points pay for, then Insufficient Points", async () => {
    mock.recordVote(KEY, 'Player1', 3);
    const sdk = client();
    const all = await sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' });
    expect(all.rewards).toEqual([expect.objectContaining({ give_amount: 3, vote_points: 0, total_points: '3', reward_id: 1, reward_name: 'Vote Mystery Box' })]);
    expect(all.insufficientPoints).toBe(false);
    const again = await sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 'all' });
    expect(again).toEqual({
      rewards: [],
      messages: ['Insufficient Points: you have 0 vote points and Vote Mystery Box costs 1 per unit.'],
      insufficientPoints: true,
    });
  });

  it('too few points for a numeric amount: insufficientPoints, and the points are kept', async () => {
    mock.recordVote(KEY, 'Player1', 4);
    const result = await client().claimVoteReward({ player: 'Player1', reward: '2', amount: 1 });
    expect(result.rewards).toEqual([]);
    expect(result.insufficientPoints).toBe(true);
    expect(result.messages[0]).toMatch(/^Insufficient Points/);
    expect(votesOf('Player1')?.vote_points).toBe(4);
  });

  it('carries a voter name with spaces, symbols and accents intact (form body)', async () => {
    const name = 'Zézima & co+1 = 100%';
    mock.recordVote(KEY, name, 1);
    const result = await client().claimVoteReward({ player: name, reward: '1', amount: 'all' });
    expect(result.rewards).toEqual([expect.objectContaining({ give_amount: 1, vote_points: 0 })]);
  });

  it('votes are not covered by the claim guard', async () => {
    mock.recordVote(KEY, 'Player1', 2);
    const sdk = client();
    expect((await sdk.claim('Player1')).code).toBe('NO_ITEMS');
    expect((await sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 1 })).rewards).toHaveLength(1);
    expect((await sdk.claimVoteReward({ player: 'Player1', reward: '1', amount: 1 })).rewards).toHaveLength(1);
  });
});
