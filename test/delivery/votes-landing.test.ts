/**
 * How long a lost vote call is kept open (src/delivery/votes/recovery.ts, `VOTE_LANDING_MS`):
 * 10 minutes after it was sent, as the delivery guide says ("Vote rewards"). Written with
 * the guide's figure, not the constant, and this file imports nothing of recovery.ts: its
 * first vote call loads the module (StrykerJS then counts this test as covering its
 * constants).
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { game } from '../support/votes.js';

const TEN_MINUTES = 10 * 60_000;

describe('a lost vote call that never reached the service', () => {
  it('is kept open (pending) for 10 minutes after it was sent, then settled without a window', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.recordVote(KEY, 'Ann', 40);
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal: new MemoryJournal(), retry: 0 });
    const { give } = game();
    const box = { player: 'Ann', reward: 1, amount: 1 } as const;
    expect((await sdk.deliverVoteReward(box, give)).code).toBe('SUCCESS');
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropBefore', times: 1 });
    const sentAt = mock.clock.now();
    expect((await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, give)).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.set(sentAt + TEN_MINUTES - 1);
    const before = await sdk.deliverVoteReward(box, give);
    expect(before).toMatchObject({ code: 'SUCCESS', pending: 1 });
    expect(before.unverified).toBeUndefined();
    mock.clock.set(sentAt + TEN_MINUTES);
    const after = await sdk.deliverVoteReward(box, give);
    expect(after).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(after.unverified).toBeUndefined();
  });
});
