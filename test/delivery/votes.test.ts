/**
 * Vote rewards delivered crash-safe (`client.deliverVoteReward`, `resumeVoteRewards`,
 * src/delivery/votes/votes.ts): each outcome of the vote claim, a lost answer worked out from
 * the service's counters (recovered, or reported as a window), a give that throws, two
 * clients on one journal and a crash between the answer and the give, against the mock in
 * process and over HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileJournal, InvalidInputError, MemoryJournal, StorefrontClient, inspectJournal, resolveWindow, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { VOTE_LANDING_MS } from '../../src/delivery/votes/recovery.js';
import { KEY, T0, TEXT, storeSeed } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';
import { Crash, CrashingJournal, processView } from '../support/reliability.js';
import { game, states } from '../support/votes.js';

// storeSeed rewards: 1 "Vote Mystery Box" (1 point, gives 1), 2 "Scroll" (5 points, gives 2).
describe.each(transports)('deliverVoteReward over $name', (transport) => {
  const { mock, client } = useMockSession(transport);
  const pointsLeft = (player: string) => mock.state().servers[0]?.votes.find((v) => v.playerName === player)?.vote_points;

  it('gives the rows the answer grants, journaled before the give, one deliveryId each, and keeps only the counters', async () => {
    mock.recordVote(KEY, 'Ann', 7);
    const journal = new MemoryJournal();
    const seenInJournal: string[][] = [];
    const report = await client({ journal }).deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, async (reward) => {
      seenInJournal.push(states(await journal.pending('Ann')));
      expect(reward).toMatchObject({ playerName: 'Ann', reward_id: 2, reward_name: 'Scroll', give_amount: 2, total_points: '7', vote_points: 2 });
    });
    expect(report).toMatchObject({ code: 'SUCCESS', message: 'You have claimed 1 x Scroll.', pending: 0, failed: [] });
    expect(report.granted.map((r) => r.deliveryId)).toEqual([expect.stringMatching(/^vote:[0-9a-f-]{36}:0$/)]);
    expect(seenInJournal).toEqual([['voteClaimed', 'voteCounters']]);
    expect(await journal.pending('Ann')).toEqual([expect.objectContaining({ deliveryId: 'votes:Ann', state: 'voteCounters', totalPoints: 7, votePoints: 2, prices: [] })]);
  });

  it('"You have not voted yet", "Insufficient Points" and an unknown reward come back as codes with the text to show; nothing given, nothing left to do', async () => {
    const journal = new MemoryJournal();
    const sdk = client({ journal });
    const nothing = () => expect.unreachable('nothing to give');
    expect(await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 'all' }, nothing)).toMatchObject({ code: 'NOT_VOTED', message: TEXT.notVoted, granted: [], pending: 0 });
    mock.recordVote(KEY, 'Ann', 3);
    const poor = await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, nothing);
    expect(poor).toMatchObject({ code: 'INSUFFICIENT_POINTS', granted: [], pending: 0 });
    expect(poor.message).toMatch(/^Insufficient Points/);
    expect(await sdk.deliverVoteReward({ player: 'Ann', reward: 9, amount: 1 }, nothing)).toMatchObject({ code: 'REWARD_NOT_FOUND', message: TEXT.rewardNotFound });
    expect(pointsLeft('Ann')).toBe(3);
    expect(states(await journal.pending('Ann'))).toEqual(['voteCounters']);
  });

  it('a lost answer is recovered from the next answer\'s counters when they prove it was carried out: given once', async () => {
    mock.recordVote(KEY, 'Ann', 40);
    const journal = new MemoryJournal();
    const sdk = client({ journal });
    const { give, units, repeats } = game();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give); // the first counters
    await sdk.deliverVoteReward(ask, give); // 2 units given per unit asked
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    const lost = await sdk.deliverVoteReward(ask, give);
    expect(lost).toMatchObject({ code: 'OUTCOME_UNKNOWN', granted: [], pending: 1 });
    expect(pointsLeft('Ann')).toBe(25);

    // 15 points spent since: two units cannot have cost an odd number of points, so the lost call was carried out.
    const next = await sdk.deliverVoteReward({ ...ask, amount: 2 }, give);
    expect(next.code).toBe('SUCCESS');
    expect(next.unverified).toBeUndefined();
    expect(next.granted).toEqual([expect.objectContaining({ recovered: true, reward_id: 2, give_amount: 2, total_points: '40', vote_points: 15 }), expect.objectContaining({ reward_id: 2, give_amount: 4 })]);
    expect(next.granted.map((r) => r.deliveryId)[0]).toMatch(/^vote:[0-9a-f-]{36}:0$/);
    // 25 points spent, 5 units of 2 given: nothing lost, nothing twice.
    expect(units.get(2)).toBe(10);
    expect(repeats()).toBe(0);
    expect(next.pending).toBe(0);
    expect((await inspectJournal(journal)).openWindows).toEqual([]);
  });

  it('a lost answer followed by a call of one unit is a window with the points at stake: one unit can cost anything the dashboard says', async () => {
    mock.recordVote(KEY, 'Ann', 40);
    const journal = new MemoryJournal();
    const sdk = client({ journal });
    const { give, units } = game();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward(ask, give);
    const next = await sdk.deliverVoteReward(ask, give);
    expect(next.granted.filter((r) => r.recovered)).toEqual([]);
    expect(next.unverified).toMatchObject({ playerName: 'Ann', reward: '2', points: 9 });
    expect(units.get(2)).toBe(6);
  });

  it('a lost answer the counters cannot identify (amount "all") is reported as a window naming the player, the reward, the points and the span; staff resolve it', async () => {
    mock.recordVote(KEY, 'Ann', 12);
    const journal = new MemoryJournal();
    const sdk = client({ journal });
    const { give } = game();
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, give);
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give); // the price of reward 1
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    const sentAt = mock.clock.now();
    await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, give); // spends 5, answer lost
    mock.clock.advance(60_000);
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(next.code).toBe('SUCCESS');
    expect(next.granted).toHaveLength(1);
    expect(next.unverified).toEqual({ playerName: 'Ann', reward: '2', points: 5, from: sentAt, to: sentAt + 60_000 });
    expect(next.message).toMatch(/staff can check it/);
    const { openWindows } = await inspectJournal(journal);
    expect(openWindows).toEqual([expect.objectContaining({ playerName: 'Ann', cause: 'lostVote', reward: '2', points: 5, from: sentAt })]);
    const resolved = await resolveWindow(journal, { playerName: 'Ann', by: 'mod:alice', note: 'gave 1 scroll by hand' });
    expect(resolved.state).toBe('resolved');
    // The lost call stays open (named by the window) until the service can no longer carry it out.
    expect(next.pending).toBe(1);
    mock.clock.advance(VOTE_LANDING_MS);
    const later = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(later).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(later.unverified).toBeUndefined();
    expect((await inspectJournal(journal)).openWindows).toEqual([]);
  });
});

describe('deliverVoteReward, in process', () => {
  const mock = createMockService({ seed: storeSeed, now: T0 });
  const client = (journal: DeliveryJournal, fetch: typeof globalThis.fetch = mock.fetch) => new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, now: mock.clock.now, journal, retry: 0 });
  const fresh = () => {
    mock.reset();
    return new MemoryJournal();
  };

  it('a lost answer followed by a message row (no counters) is a window at once, points unknown; the count starts again from the next counters', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 5);
    const sdk = client(journal);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    expect(next.code).toBe('INSUFFICIENT_POINTS');
    expect(next.unverified).toMatchObject({ playerName: 'Ann', reward: '2' });
    expect(next.unverified?.points).toBeUndefined();
    const counters = (await journal.pending('Ann')).find((e) => e.state === 'voteCounters');
    expect(counters).not.toHaveProperty('totalPoints');
  });

  it('a lost answer that spent nothing (it met "Insufficient Points") stays open while it could still land, and is settled without a window after', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 11);
    const sdk = client(journal);
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, () => undefined);
    await sdk.deliverVoteReward(ask, () => undefined); // 1 point left
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 3 }, () => undefined)).code).toBe('OUTCOME_UNKNOWN');
    mock.recordVote(KEY, 'Ann', 4);
    // One point spent: this call's unit; the lost call's 3 units would have cost 3 more.
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 1 });
    expect(next.granted).toHaveLength(1);
    expect(next.unverified).toBeUndefined();
    mock.clock.advance(VOTE_LANDING_MS);
    const after = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(after).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(after.unverified).toBeUndefined();
  });

  it('a give that throws keeps its row pending (noted for staff); resumeVoteRewards gives it, never twice', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 3);
    const sdk = client(journal);
    const { give, units, repeats } = game();
    const failed = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, () => {
      throw new Error('inventory full');
    });
    expect(failed).toMatchObject({ code: 'PARTIAL', pending: 1, granted: [] });
    expect(failed.failed[0]?.error).toEqual(new Error('inventory full'));
    const { pending } = await inspectJournal(journal);
    expect(pending).toEqual([expect.objectContaining({ state: 'voteClaimed', reward: expect.objectContaining({ give_amount: 2 }), lastError: expect.objectContaining({ message: 'inventory full', attempts: 1 }) })]);

    const resumed = await sdk.resumeVoteRewards(give);
    expect(resumed).toMatchObject({ pending: 0, errors: [], failed: [] });
    expect(resumed.granted.map((r) => r.deliveryId)).toEqual([failed.failed[0]?.reward.deliveryId]);
    expect((await sdk.resumeVoteRewards(give)).granted).toEqual([]);
    expect(units.get(1)).toBe(2);
    expect(repeats()).toBe(0);
  });

  it('a row whose give threw is given first by the player\'s next call', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 3);
    const sdk = client(journal);
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => Promise.reject(new Error('offline')));
    const { give, units } = game();
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, give);
    expect(next).toMatchObject({ code: 'SUCCESS', pending: 0 });
    expect(next.granted).toHaveLength(2);
    expect(units.get(1)).toBe(2);
  });

  it('two clients on one journal: calls for one player take turns, every point spent is given once', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 10);
    const clients = [client(journal), client(journal)];
    const { give, units, repeats } = game();
    const reports = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => (clients[i % 2] as StorefrontClient).deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, give)));
    expect(reports.map((r) => r.code).sort()).toEqual(['INSUFFICIENT_POINTS', 'INSUFFICIENT_POINTS', 'INSUFFICIENT_POINTS', 'INSUFFICIENT_POINTS', 'SUCCESS', 'SUCCESS'].sort());
    expect(units.get(2)).toBe(4);
    expect(repeats()).toBe(0);
    // Nothing left behind but the counters.
    expect(states(await journal.pending())).toEqual(['voteCounters']);
  });

  it('a crash between the answer and its rows reaching the journal: the next process recovers the row from the counters', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 30);
    const { give, units, repeats } = game();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    const first = client(storage);
    await first.deliverVoteReward(ask, give);
    await first.deliverVoteReward(ask, give);
    // The process dies as it is about to journal the rows of the third answer.
    const dying = new CrashingJournal(processView(storage), (point, entries) => point === 'appendBefore' && (entries as JournalEntry[]).some((e) => e.state === 'voteClaimed'));
    await expect(dying.run(client(dying).deliverVoteReward(ask, give))).rejects.toBeInstanceOf(Crash);
    expect(states(await storage.pending('Ann')).sort()).toEqual(['voteClaiming', 'voteCounters']);

    const next = await client(processView(storage)).deliverVoteReward({ ...ask, amount: 2 }, give);
    expect(next.granted.map((r) => r.recovered === true)).toEqual([true, false]);
    expect(units.get(2)).toBe(10);
    expect(repeats()).toBe(0);
  });

  it('a file journal reopened after a give that never returned: the row is read back and given by the next process', async () => {
    fresh();
    const dir = mkdtempSync(join(tmpdir(), 'teamgames-votes-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'journal.jsonl');
    mock.recordVote(KEY, 'Ann', 20);
    const { give, units, repeats } = game();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    const first = new FileJournal(path);
    await client(first).deliverVoteReward(ask, give);
    await client(first).deliverVoteReward(ask, give);
    // The game hangs in the give, and the process is stopped there: the row is journaled, not acknowledged.
    const hanging = client(first).deliverVoteReward(ask, () => new Promise<never>(() => {}));
    await expect.poll(async () => states(await first.pending('Ann')).sort()).toEqual(['voteClaimed', 'voteCounters']);
    void hanging;
    const second = new FileJournal(`${dir}/./journal.jsonl`);
    // A file journal has one owner: the next process opens it once the first is gone.
    await expect(second.pending()).rejects.toThrow(/held by|lock/i);
    await first.close().catch(() => undefined);
    const third = new FileJournal(path);
    const next = await client(third).deliverVoteReward(ask, give);
    expect(next.granted.map((r) => r.give_amount)).toEqual([2, 2]);
    // 20 points: four scrolls of 2, the one whose give hung included, each given once.
    expect(units.get(2)).toBe(8);
    expect(repeats()).toBe(0);
    expect(states(await third.pending('Ann'))).toEqual(['voteCounters']);
    await third.close();
  });

  it('a crash after the rows were journaled, before the give: resumeVoteRewards in the next process gives them', async () => {
    const storage = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const { give, units } = game();
    const dying = new CrashingJournal(processView(storage), (point, entries) => point === 'appendAfter' && (entries as JournalEntry[]).some((e) => e.state === 'voteClaimed'));
    await expect(dying.run(client(dying).deliverVoteReward({ player: 'Ann', reward: 1, amount: 4 }, give))).rejects.toBeInstanceOf(Crash);
    expect(units.size).toBe(0);
    const resumed = await client(processView(storage)).resumeVoteRewards(give);
    expect(resumed.granted).toEqual([expect.objectContaining({ give_amount: 4, playerName: 'Ann' })]);
    expect(resumed.pending).toBe(0);
    expect(units.get(1)).toBe(4);
  });

  it('a journal that cannot write claims nothing: no point is spent', async () => {
    fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const broken: DeliveryJournal = { append: () => Promise.reject(new Error('disk full')), pending: async () => [], acknowledge: async () => undefined };
    const report = await client(broken).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'ERROR', granted: [] });
    expect(report.journalError?.message).toMatch(/disk full/);
    expect(mock.state().servers[0]?.votes[0]?.vote_points).toBe(4);
  });

  it('the player reads the service\'s text without the key, whatever the service echoes', async () => {
    const journal = fresh();
    const echo: typeof globalThis.fetch = async () => new Response(JSON.stringify([{ message: `Insufficient Points for key ${KEY}` }]), { headers: { 'content-type': 'application/json' } });
    const report = await client(journal, echo).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report.code).toBe('INSUFFICIENT_POINTS');
    expect(report.message).toBe('Insufficient Points for key <redacted>');
    const other = async () => new Response(JSON.stringify([{ message: 'Come back tomorrow' }]));
    expect(await client(journal, other).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).toMatchObject({ code: 'UNKNOWN', message: 'Come back tomorrow', granted: [] });
  });

  it('a give that claims for its own player is refused at once (it would wait for itself); the row stays pending', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const sdk = client(journal);
    let refused: unknown;
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, async () => {
      refused = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined).catch((error: unknown) => error);
      throw refused;
    });
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect(report).toMatchObject({ code: 'PARTIAL', pending: 1 });
  });

  it('checks its arguments before anything is journaled or sent', async () => {
    const journal = fresh();
    const sdk = client(journal);
    await expect(sdk.deliverVoteReward({ player: ' ', reward: 1, amount: 1 }, () => undefined)).rejects.toThrow(/input\.player/);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 0 }, () => undefined)).rejects.toThrow(/input\.amount/);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, 'give' as never)).rejects.toThrow(/give.*must be a function/);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { mode: 'fast' } as never)).rejects.toThrow(InvalidInputError);
    expect(journal.size).toBe(0);
  });
});
