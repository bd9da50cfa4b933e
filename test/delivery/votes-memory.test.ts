/**
 * Vote rewards (`deliverVoteReward`, `resumeVoteRewards`, src/delivery/votes/votes.ts) while the
 * journal refuses the rows of an answer: what the SDK keeps in memory meanwhile (rows,
 * counters, marks), what each report counts as pending, whose call gives what, and the
 * failures noted on a row across attempts. Also what a give's failure leaves on its row.
 */
import { describe, expect, it } from 'vitest';
import { GrantTimeoutError, InvalidInputError, JournalError, MemoryJournal, StorefrontClient, inspectJournal, type DeliveryJournal, type GivenVoteReward, type JournalEntry } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { states } from '../support/votes.js';

const mock = createMockService({ seed: storeSeed, now: T0 });
const client = (journal: DeliveryJournal) => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0 });
const PARTIAL_TEXT = 'Some of your vote rewards could not be given yet; they will be given on your next claim.';

/** A journal that refuses, while `failing`, every append holding a vote reward row ("disk full"). */
function refusingRows() {
  const inner = new MemoryJournal();
  const state = { failing: true };
  const journal: DeliveryJournal = {
    append: (entries) => (state.failing && entries.some((e) => e.state === 'voteClaimed') ? Promise.reject(new Error('disk full')) : inner.append(entries)),
    pending: (player) => inner.pending(player),
    acknowledge: (ids) => inner.acknowledge(ids),
  };
  return { inner, journal, state };
}

/** A give that records every reward it is handed, throwing `error` while it is set. */
function recordingGive() {
  const handed: GivenVoteReward[] = [];
  const control: { error?: unknown } = {};
  const give = (reward: GivenVoteReward) => {
    handed.push(reward);
    if ('error' in control) throw control.error;
  };
  return { give, handed, control };
}

describe('rows the journal refused, kept in memory', () => {
  it('a failed give\'s row is pending in memory, given again only for its player, its attempts counted until the journal takes it', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 10);
    mock.recordVote(KEY, 'Bo', 10);
    const { inner, journal, state } = refusingRows();
    const sdk = client(journal);
    const ann = recordingGive();
    ann.control.error = new Error('inventory full');
    const first = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, ann.give);
    // Pending: the row (in memory), and the call's mark, which the journal holds open until
    // memory's settled copy is written.
    expect(first).toMatchObject({ code: 'PARTIAL', message: PARTIAL_TEXT, granted: [], pending: 2, journalError: expect.objectContaining({ message: expect.stringMatching(/disk full/) }) });
    const row = first.failed[0]?.reward.deliveryId;
    expect(row).toMatch(/^vote:/);

    // Bo's call claims for Bo, gives Bo's row only, and counts none of Ann's (only its own open mark).
    const bo = recordingGive();
    const boReport = await sdk.deliverVoteReward({ player: 'Bo', reward: 1, amount: 1 }, bo.give);
    expect(boReport).toMatchObject({ code: 'SUCCESS', pending: 1, failed: [] });
    expect(bo.handed.map((r) => [r.playerName, r.give_amount])).toEqual([['Bo', 1]]);
    expect(mock.state().servers[0]?.votes.find((v) => v.playerName === 'Bo')?.vote_points).toBe(9);

    // resumeVoteRewards (every player) still cannot write Ann's records: it gives her row
    // from memory (and nothing else), names her in its errors and counts her row as pending
    // (with the two open marks).
    ann.control.error = new Error('still full');
    const resumed = await sdk.resumeVoteRewards(ann.give);
    expect(resumed.failed.map((f) => f.reward.deliveryId)).toEqual([row]);
    expect(resumed).toMatchObject({ granted: [], pending: 3, errors: [{ playerName: 'Ann', error: expect.any(JournalError) }] });
    expect(resumed.errors[0]?.error).toBe(resumed.journalError);
    expect(ann.handed.map((r) => r.deliveryId)).toEqual([row, row]);

    // The journal back: the row is written with both failures noted, and a third is counted on it.
    state.failing = false;
    ann.control.error = new Error('full again');
    expect((await sdk.resumeVoteRewards(ann.give)).failed).toHaveLength(1);
    const [kept] = (await inner.pending('Ann')).filter((e) => e.state === 'voteClaimed');
    expect(kept).toMatchObject({ deliveryId: row, lastError: { message: 'full again', attempts: 3 } });
    delete ann.control.error;
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, ann.give);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(next.granted.map((r) => r.deliveryId)).toEqual([row, expect.stringMatching(/^vote:/)]);
    expect(new Set(ann.handed.map((r) => r.deliveryId)).size).toBe(2);
    expect(states(await inner.pending('Ann'))).toEqual(['voteCounters']);
  });

  it('a write that lands but answers with an error: the rows kept in memory are not counted twice', async () => {
    const inner = new MemoryJournal();
    const journal: DeliveryJournal = {
      append: async (entries) => {
        await inner.append(entries);
        if (entries.some((e) => e.state === 'voteClaimed')) throw new Error('timeout after commit');
      },
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    // An answer of two rows.
    const row = { total_points: '20', vote_points: 10, votes_month: 1, give_amount: 1, reward_id: 1, reward_name: 'Box' };
    const twoRows: typeof globalThis.fetch = async () => new Response(JSON.stringify([row, row]));
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: twoRows, journal, retry: 0 });
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, () => {
      throw new Error('inventory full');
    });
    expect(report).toMatchObject({ code: 'PARTIAL', pending: 2 });
    expect(report.failed).toHaveLength(2);
    expect(report.journalError?.message).toMatch(/timeout after commit/);
  });
});

describe('what a give\'s failure leaves on its row', () => {
  const rowOf = async (journal: DeliveryJournal) => (await journal.pending('Ann')).find((e): e is Extract<JournalEntry, { state: 'voteClaimed' }> => e.state === 'voteClaimed');

  it('notes the first 300 characters of what it threw, whatever it threw (undefined included)', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 10);
    const journal = new MemoryJournal();
    const sdk = client(journal);
    const long = new Error(`${'x'.repeat(300)}TAIL`);
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => {
      throw long;
    });
    expect(report.failed.map((f) => f.error)).toEqual([long]);
    expect((await rowOf(journal))?.lastError).toMatchObject({ message: 'x'.repeat(300), attempts: 1 });
    const resumed = await sdk.resumeVoteRewards(() => Promise.reject(undefined));
    expect(resumed.failed).toEqual([expect.objectContaining({ error: undefined })]);
    expect((await rowOf(journal))?.lastError).toMatchObject({ message: 'undefined', attempts: 2 });
  });

  it('a give whose promise rejects: reported with its own error (not a timeout) and noted on the row', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 10);
    const journal = new MemoryJournal();
    const offline = new Error('offline');
    const report = await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, async () => {
      await Promise.resolve();
      throw offline;
    });
    expect(report).toMatchObject({ code: 'PARTIAL', pending: 1 });
    expect(report.failed.map((f) => f.error)).toEqual([offline]);
    expect((await rowOf(journal))?.lastError).toMatchObject({ message: 'offline', attempts: 1 });
  });

  it('a give still running past giveTimeoutMs is no failed attempt (nothing noted); one that then rejects is given again by the next call', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 10);
    const journal = new MemoryJournal();
    const sdk = client(journal);
    let reject!: (error: Error) => void;
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => new Promise<void>((_resolve, fail) => (reject = fail)), { giveTimeoutMs: 20 });
    expect(report.failed.map((f) => f.error)).toEqual([expect.any(GrantTimeoutError)]);
    const row = await rowOf(journal);
    expect(row?.deliveryId).toBe(report.failed[0]?.reward.deliveryId);
    expect(row).not.toHaveProperty('lastError');
    reject(new Error('gave up'));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(next.granted.map((r) => r.deliveryId)).toEqual([row?.deliveryId, expect.stringMatching(/^vote:/)]);
    expect(next.pending).toBe(0);
  });
});

describe('a record the journal refuses itself (its checks, not a failing disk)', () => {
  /** A journal whose checks refuse, as invalid, every append holding a row named "Cursed" (a custom journal's stricter rule). */
  function refusingCursed() {
    const inner = new MemoryJournal();
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (entries.some((e) => e.state === 'voteClaimed' && e.reward.reward_name === 'Cursed')) throw new InvalidInputError('entries', 'must be a journal entry: reward.reward_name is refused');
        return inner.append(entries);
      },
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    return { inner, journal };
  }
  const row = (fields: Record<string, unknown>) => ({ total_points: '20', votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll', ...fields });
  const scripted = (...bodies: unknown[]): typeof globalThis.fetch => {
    let i = 0;
    return async () => new Response(JSON.stringify(bodies[Math.min(i++, bodies.length - 1)]));
  };

  it('never blocks the player\'s later claims: the others are written, the refused row is named in a window for staff, and the player is told', async () => {
    const { inner, journal } = refusingCursed();
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: scripted([row({ reward_name: 'Cursed', vote_points: 15 })], [row({ vote_points: 10 })], [row({ vote_points: 5 })]), now: () => T0, journal, retry: 0 });
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    const full = recordingGive();
    full.control.error = new Error('inventory full');
    const first = await sdk.deliverVoteReward(ask, full.give);
    expect(first).toMatchObject({ code: 'PARTIAL', journalError: expect.objectContaining({ code: 'JOURNAL_FAILED' }) });
    const ok = recordingGive();
    const second = await sdk.deliverVoteReward(ask, ok.give);
    expect(second).toMatchObject({ code: 'SUCCESS', unverified: { playerName: 'Ann', reward: '2' } });
    expect(second.message).toMatch(/staff can check it/);
    expect(ok.handed.map((r) => r.reward_name)).toEqual(['Scroll']);
    expect((await inspectJournal(inner)).openWindows).toEqual([expect.objectContaining({ playerName: 'Ann', cause: 'lostVote', reward: '2' })]);
    const third = await sdk.deliverVoteReward(ask, ok.give);
    expect(third).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(third).not.toHaveProperty('unverified');
    expect(states(await inner.pending('Ann')).sort()).toEqual(['unverified', 'voteCounters']);
  });

  it('a failing disk is not a refusal: the records stay in memory and the player\'s calls claim nothing until it takes them', async () => {
    mock.reset();
    mock.recordVote(KEY, 'Ann', 10);
    const { journal, state } = refusingRows();
    const sdk = client(journal);
    const full = recordingGive();
    full.control.error = new Error('inventory full');
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, full.give);
    const blocked = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, full.give);
    expect(blocked).toMatchObject({ code: 'PARTIAL', journalError: expect.objectContaining({ message: expect.stringMatching(/disk full/) }) });
    expect(blocked).not.toHaveProperty('unverified');
    state.failing = false;
    const later = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, recordingGive().give);
    expect(later).toMatchObject({ code: 'SUCCESS', pending: 0 });
  });
});
