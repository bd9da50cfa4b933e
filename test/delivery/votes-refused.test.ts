/**
 * Vote rewards (`deliverVoteReward`, src/delivery/votes/votes.ts) when the journal refuses
 * records itself (its checks throw `INVALID_INPUT`, which no retry will change) while the
 * SDK holds them in memory: what the window it writes for staff names (the refused rows and
 * lost calls, when, which rewards, which node), the event and the report that tell it, what
 * is not named (a refused record that was no work left), and a failing journal, which is no
 * refusal: the player's calls then claim nothing and nothing refused is forgotten.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient, inspectJournal, type DeliveryJournal, type GivenVoteReward, type JournalEntry, type StorefrontEvent } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

type Verdict = 'invalid' | 'disk' | undefined;

/** A journal whose `judge` decides each append: refused by its checks (`invalid`), failed (`disk`), or taken. */
function judging(judge: (entries: readonly JournalEntry[]) => Verdict, nodeId?: string) {
  const inner = new MemoryJournal();
  const journal: DeliveryJournal = {
    append: async (entries) => {
      const verdict = judge(entries);
      if (verdict === 'invalid') throw new InvalidInputError('entries', 'must be a journal entry: refused by this journal\'s checks');
      if (verdict === 'disk') throw new Error('disk full');
      return inner.append(entries);
    },
    pending: (player) => inner.pending(player),
    acknowledge: (ids) => inner.acknowledge(ids),
    ...(nodeId === undefined ? {} : { nodeId }),
  };
  return { inner, journal };
}

const cursed = (entries: readonly JournalEntry[]) => entries.some((e) => e.state === 'voteClaimed' && e.reward.reward_name === 'Cursed');
const row = (fields: Record<string, unknown>) => ({ total_points: '20', votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll', ...fields });

/** The service's answers, one per call (the last repeated), and how many calls it had. */
function scripted(...bodies: unknown[]) {
  let calls = 0;
  const fetch: typeof globalThis.fetch = async () => new Response(JSON.stringify(bodies[Math.min(calls++, bodies.length - 1)]));
  return { fetch, calls: () => calls };
}

/** A client on `journal` whose clock is `clock.now`, its events in `events`. */
function sdkOf(journal: DeliveryJournal, fetch: typeof globalThis.fetch, clock: { now: number }) {
  const events: StorefrontEvent[] = [];
  const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, now: () => clock.now, journal, retry: 0, onEvent: (event) => events.push(event) });
  return { sdk, events };
}

const failing = () => {
  throw new Error('inventory full');
};
const ask = { player: 'Ann', reward: 2, amount: 1 } as const;

describe('the window that names what the journal refused', () => {
  it.each([undefined, 'node-a'])('runs from the first refused record to now, names every reward refused, once each, and the node (%s); the report and an unverified event say so', async (nodeId) => {
    const { inner, journal } = judging((entries) => (cursed(entries) ? 'invalid' : undefined), nodeId);
    const service = scripted([row({ reward_name: 'Cursed', vote_points: 15 }), row({ reward_id: 3, reward_name: 'Cursed', vote_points: 15 }), row({ reward_id: 3, reward_name: 'Cursed', vote_points: 15 })], [row({ vote_points: 10 })]);
    const clock = { now: T0 };
    const { sdk, events } = sdkOf(journal, service.fetch, clock);
    expect((await sdk.deliverVoteReward(ask, failing)).code).toBe('PARTIAL');
    clock.now = T0 + 300_000;
    events.length = 0;
    const next = await sdk.deliverVoteReward(ask, () => undefined);
    const window = { playerName: 'Ann', from: T0, to: T0 + 300_000 };
    expect(next).toMatchObject({ code: 'SUCCESS', unverified: { ...window, reward: '2,3' } });
    expect(next.message).toMatch(/staff can check it/);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([{ type: 'unverified', operation: 'deliverVoteReward', window }]);
    const [written, ...others] = (await inspectJournal(inner)).openWindows;
    expect(others).toEqual([]);
    expect(written).toMatchObject({ ...window, reward: '2,3', cause: 'lostVote', recordedAt: T0 + 300_000 });
    expect(written?.node).toBe(nodeId);
    expect(Object.hasOwn(written ?? {}, 'node')).toBe(nodeId !== undefined);
  });

  it('names a refused lost call (a mark a window already named) by the reward it asked for', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.recordVote(KEY, 'Ann', 30);
    // Refuses a lost call's mark once a window names it.
    const { inner, journal } = judging((entries) => (entries.some((e) => e.state === 'voteClaiming' && e.window !== undefined) ? 'invalid' : undefined));
    const clock = {
      get now() {
        return mock.clock.now();
      },
    };
    const { sdk, events } = sdkOf(journal, mock.fetch, clock);
    expect((await sdk.deliverVoteReward(ask, () => undefined)).code).toBe('SUCCESS');
    const lostAt = mock.clock.now();
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward(ask, () => undefined)).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(60_000);
    // The answer cannot rule the lost call out: a window names it and keeps it open; the journal refuses the named mark.
    const third = await sdk.deliverVoteReward(ask, () => undefined);
    expect(third).toMatchObject({ code: 'SUCCESS', unverified: { from: lostAt, reward: '2' }, journalError: expect.objectContaining({ code: 'JOURNAL_FAILED' }) });
    mock.clock.advance(60_000);
    events.length = 0;
    await sdk.deliverVoteReward(ask, () => undefined);
    // The refused mark's window runs from when the lost call was sent to now.
    expect(events).toContainEqual({ type: 'unverified', operation: 'deliverVoteReward', window: { playerName: 'Ann', from: lostAt, to: lostAt + 120_000 } });
    const windows = (await inspectJournal(inner)).openWindows;
    expect(windows).toContainEqual(expect.objectContaining({ from: lostAt, to: lostAt + 120_000, recordedAt: lostAt + 120_000 }));
    expect(windows.map((w) => w.reward)).toEqual(windows.map(() => '2'));
  });

  it('a refused record that was no work left (the counters) names nothing: no window, no event, the rows given', async () => {
    // Refuses the counters of the first answer (15 points left).
    const { inner, journal } = judging((entries) => (entries.some((e) => e.state === 'voteCounters' && e.votePoints === 15) ? 'invalid' : undefined));
    const service = scripted([row({ vote_points: 15 })], [row({ vote_points: 10 })]);
    const { sdk, events } = sdkOf(journal, service.fetch, { now: T0 });
    expect((await sdk.deliverVoteReward(ask, failing)).code).toBe('PARTIAL');
    events.length = 0;
    const handed: GivenVoteReward[] = [];
    const next = await sdk.deliverVoteReward(ask, (reward) => void handed.push(reward));
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(next).not.toHaveProperty('unverified');
    expect(handed).toHaveLength(2);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([]);
    expect((await inspectJournal(inner)).openWindows).toEqual([]);
    expect(service.calls()).toBe(2);
  });

  it('a window the journal cannot take now is written with the player\'s next records', async () => {
    const state = { windows: 'disk' as Verdict };
    const { inner, journal } = judging((entries) => (cursed(entries) ? 'invalid' : entries.some((e) => e.state === 'unverified') ? state.windows : undefined));
    const service = scripted([row({ reward_name: 'Cursed', vote_points: 15 })], [row({ vote_points: 10 })]);
    const { sdk, events } = sdkOf(journal, service.fetch, { now: T0 });
    await sdk.deliverVoteReward(ask, failing);
    const second = await sdk.deliverVoteReward(ask, () => undefined);
    expect(second).toMatchObject({ unverified: { playerName: 'Ann', reward: '2' } });
    expect(events).toContainEqual(expect.objectContaining({ type: 'journalError', error: expect.objectContaining({ message: expect.stringMatching(/disk full/) }) }));
    expect((await inspectJournal(inner)).openWindows).toEqual([]);
    state.windows = undefined;
    expect((await sdk.deliverVoteReward(ask, () => undefined)).code).toBe('SUCCESS');
    expect((await inspectJournal(inner)).openWindows).toEqual([expect.objectContaining({ playerName: 'Ann', reward: '2', cause: 'lostVote' })]);
  });
});

describe('a failing journal is no refusal', () => {
  it('the rewrite failing (even if each record alone would be taken): the player\'s call claims nothing until it takes them', async () => {
    const state = { failing: false };
    // Fails every append of more than one record while `failing`.
    const { journal } = judging((entries) => (state.failing && entries.length > 1 ? 'disk' : undefined));
    const service = scripted([row({ vote_points: 15 })], [row({ vote_points: 10 })]);
    const { sdk } = sdkOf(journal, service.fetch, { now: T0 });
    state.failing = true;
    expect((await sdk.deliverVoteReward(ask, failing)).code).toBe('PARTIAL');
    const blocked = await sdk.deliverVoteReward(ask, failing);
    expect(blocked).toMatchObject({ code: 'PARTIAL', journalError: expect.objectContaining({ message: expect.stringMatching(/disk full/) }) });
    expect(service.calls()).toBe(1);
    state.failing = false;
    expect((await sdk.deliverVoteReward(ask, () => undefined)).code).toBe('SUCCESS');
    expect(service.calls()).toBe(2);
  });

  it('failing after a record was refused: the call claims nothing, and the refused row is still named for staff once the journal is back', async () => {
    const state = { disk: false };
    // Refuses the "Cursed" row; while `disk`, fails every other append holding the counters.
    const { inner, journal } = judging((entries) => (cursed(entries) ? 'invalid' : state.disk && entries.some((e) => e.state === 'voteCounters') ? 'disk' : undefined));
    const service = scripted([row({ reward_name: 'Cursed', vote_points: 15 })], [row({ vote_points: 10 })]);
    const { sdk, events } = sdkOf(journal, service.fetch, { now: T0 });
    expect((await sdk.deliverVoteReward(ask, failing)).code).toBe('PARTIAL');
    state.disk = true;
    events.length = 0;
    const blocked = await sdk.deliverVoteReward(ask, failing);
    expect(blocked).toMatchObject({ code: 'PARTIAL', journalError: expect.objectContaining({ code: 'JOURNAL_FAILED' }) });
    // The failure is told too, not only the refusal before it.
    expect(events).toContainEqual({ type: 'journalError', operation: 'deliverVoteReward', playerName: 'Ann', error: expect.objectContaining({ message: expect.stringMatching(/disk full/) }) });
    expect(blocked).not.toHaveProperty('unverified');
    expect(service.calls()).toBe(1);
    state.disk = false;
    const back = await sdk.deliverVoteReward(ask, () => undefined);
    expect(back).toMatchObject({ code: 'SUCCESS', unverified: { playerName: 'Ann', reward: '2' } });
    expect(service.calls()).toBe(2);
    expect((await inspectJournal(inner)).openWindows).toEqual([expect.objectContaining({ playerName: 'Ann', reward: '2', cause: 'lostVote' })]);
  });
});
