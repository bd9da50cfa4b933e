/**
 * Vote rewards (`deliverVoteReward`, `resumeVoteRewards`, src/delivery/votes/votes.ts): the
 * report's code and text for every shape of answer, what it counts as pending, the
 * JournalError it carries and the events, the records written (no empty field, no empty
 * write), the refusals' wording, and two lost answers in a row.
 */
import { describe, expect, it, vi } from 'vitest';
import { InvalidInputError, JournalError, MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry, type StorefrontEvent } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { game } from '../support/votes.js';

const mock = createMockService({ seed: storeSeed, now: T0 });
const client = (journal: DeliveryJournal, options: { fetch?: typeof globalThis.fetch; onEvent?: (event: StorefrontEvent) => void } = {}) =>
  new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: options.fetch ?? mock.fetch, now: mock.clock.now, journal, retry: 0, ...(options.onEvent ? { onEvent: options.onEvent } : {}) });
const fresh = () => {
  mock.reset();
  return new MemoryJournal();
};
const ERROR_TEXT = 'Vote rewards are unavailable right now. Your points are safe; try again later.';
const row = (message?: string) => ({ total_points: '20', vote_points: 10, votes_month: 1, give_amount: 1, reward_id: 1, reward_name: 'Box', ...(message === undefined ? {} : { message }) });
const answering = (body: unknown): typeof globalThis.fetch => async () => new Response(JSON.stringify(body));

describe('the report\'s code and text', () => {
  it('an answer with neither rows nor messages: UNKNOWN with the SDK\'s text, nothing given', async () => {
    const report = await client(fresh(), { fetch: answering([]) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => expect.unreachable());
    expect(report).toStrictEqual({ code: 'UNKNOWN', message: ERROR_TEXT, granted: [], failed: [], pending: 0 });
  });

  it('SUCCESS shows the first text the rows carry, or the SDK\'s when none does', async () => {
    const journal = fresh();
    const texted = await client(journal, { fetch: answering([row(), row('You have claimed 2 x Box.')]) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, () => undefined);
    expect(texted).toMatchObject({ code: 'SUCCESS', message: 'You have claimed 2 x Box.' });
    expect(texted.granted).toHaveLength(2);
    const bare = await client(journal, { fetch: answering([row()]) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(bare).toMatchObject({ code: 'SUCCESS', message: 'Your vote reward has been given.' });
  });

  it('a give that wrote a window (it threw `unverified: { from, to }`): PARTIAL with the window\'s text and its event; with a failed row too, both texts', async () => {
    const PARTIAL_TEXT = 'Some of your vote rewards could not be given yet; they will be given on your next claim.';
    const WINDOW_TEXT = 'We could not confirm every vote reward you claimed. If one is missing, staff can check it for you.';
    const unsure = Object.assign(new Error('sent, no answer'), { unverified: { from: T0 - 5, to: T0 + 5 } });
    const events: StorefrontEvent[] = [];
    const thrown: Error[] = [unsure, new Error('inventory full')];
    const both = await client(fresh(), { fetch: answering([row(), row()]), onEvent: (event) => events.push(event) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 2 }, () => {
      throw thrown.shift();
    });
    expect(both).toMatchObject({ code: 'PARTIAL', message: `${PARTIAL_TEXT} ${WINDOW_TEXT}`, unverified: { playerName: 'Ann', from: T0 - 5, to: T0 + 5, reward: '1' } });
    expect(both.failed).toHaveLength(1);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([{ type: 'unverified', operation: 'deliverVoteReward', window: { playerName: 'Ann', from: T0 - 5, to: T0 + 5 } }]);
    const alone = await client(fresh(), { fetch: answering([row()]) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => {
      throw unsure;
    });
    expect(alone).toMatchObject({ code: 'PARTIAL', message: WINDOW_TEXT, failed: [] });
  });
});

describe('what the report counts as pending', () => {
  it('a row given whose acknowledgement the journal refused is pending; its settled mark is not', async () => {
    const inner = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const journal: DeliveryJournal = { append: (entries) => inner.append(entries), pending: (player) => inner.pending(player), acknowledge: () => Promise.reject(new Error('disk full')) };
    const report = await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'SUCCESS', pending: 1 });
    expect((await inner.pending('Ann')).map((e) => [e.state, e.state === 'voteClaiming' ? e.settled : undefined]).sort()).toEqual([
      ['voteClaimed', undefined],
      ['voteClaiming', true],
      ['voteCounters', undefined],
    ]);
  });

  it('a journal that cannot be read back after the give: the report carries its JournalError, and the event names the player', async () => {
    const inner = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    let reads = 0;
    const journal: DeliveryJournal = {
      append: (entries) => inner.append(entries),
      pending: (player) => (++reads > 1 ? Promise.reject(new Error('EIO')) : inner.pending(player)),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const events: StorefrontEvent[] = [];
    const report = await client(journal, { onEvent: (e) => events.push(e) }).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report).toMatchObject({ code: 'SUCCESS', pending: 0, journalError: expect.objectContaining({ message: 'deliverVoteReward: the delivery journal failed (EIO)' }) });
    expect(report.granted).toHaveLength(1);
    expect(events.filter((e) => e.type === 'journalError')).toEqual([expect.objectContaining({ operation: 'deliverVoteReward', playerName: 'Ann', error: report.journalError })]);
  });
});

describe('what resumeVoteRewards counts as pending with no row to give', () => {
  it('a lost answer\'s open mark, not the counters', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 9);
    const c = client(journal);
    expect((await c.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).code).toBe('SUCCESS');
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await c.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).code).toBe('OUTCOME_UNKNOWN');
    expect((await journal.pending('Ann')).map((e) => e.state).sort()).toEqual(['voteClaiming', 'voteCounters']);
    const given = vi.fn();
    expect(await c.resumeVoteRewards(given)).toStrictEqual({ granted: [], failed: [], pending: 1, errors: [] });
    expect(given).not.toHaveBeenCalled();
  });
});

describe('the JournalError', () => {
  it('names the operation, keeps the cause, and quotes at most 200 characters of what the journal threw (undefined included)', async () => {
    fresh();
    const cause = new Error(`${'y'.repeat(200)}TAIL`);
    const failing = (error: unknown): DeliveryJournal => ({ append: async () => undefined, pending: () => Promise.reject(error), acknowledge: async () => undefined });
    const report = await client(failing(cause)).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(report.journalError).toBeInstanceOf(JournalError);
    expect(report.journalError).toMatchObject({ message: `deliverVoteReward: the delivery journal failed (${'y'.repeat(200)})`, operation: 'deliverVoteReward', cause });
    const blank = await client(failing(undefined)).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined);
    expect(blank.journalError?.message).toBe('deliverVoteReward: the delivery journal failed (undefined)');
  });

  it('resumeVoteRewards over a journal that cannot be read throws it, and emits no event without a player', async () => {
    fresh();
    const events: StorefrontEvent[] = [];
    const broken: DeliveryJournal = { append: async () => undefined, pending: () => Promise.reject(new Error('EIO')), acknowledge: async () => undefined };
    await expect(client(broken, { onEvent: (e) => events.push(e) }).resumeVoteRewards(() => undefined)).rejects.toMatchObject({ operation: 'resumeVoteRewards', cause: expect.objectContaining({ message: 'EIO' }) });
    expect(events).toEqual([]);
  });
});

describe('the records written', () => {
  /** The journal, and every append and acknowledgement asked of it. */
  function spied(inner: DeliveryJournal) {
    const appended: JournalEntry[][] = [];
    const acknowledged: string[][] = [];
    const journal: DeliveryJournal = {
      append: (entries) => (appended.push([...entries]), inner.append(entries)),
      pending: (player) => inner.pending(player),
      acknowledge: (ids) => (acknowledged.push([...ids]), inner.acknowledge(ids)),
    };
    return { journal, appended, acknowledged };
  }

  it('a journal without a node id gets no node field; a window whose points are unknown gets no points field; no write is empty', async () => {
    const inner = fresh();
    mock.recordVote(KEY, 'Ann', 5);
    const { journal, appended, acknowledged } = spied(inner);
    const sdk = client(journal);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined)).code).toBe('OUTCOME_UNKNOWN');
    const next = await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 'all' }, () => undefined);
    expect(next.unverified).toMatchObject({ playerName: 'Ann', reward: '2' });
    expect(next.unverified).not.toHaveProperty('points');
    const marks = appended.flat().filter((e) => e.state === 'voteClaiming');
    expect(marks.length).toBeGreaterThan(0);
    for (const mark of marks) expect(mark).not.toHaveProperty('node');
    const [window] = (await inner.pending('Ann')).filter((e) => e.state === 'unverified');
    expect(window).toMatchObject({ cause: 'lostVote', reward: '2' });
    expect(window).not.toHaveProperty('points');
    expect(window).not.toHaveProperty('node');
    expect(appended.filter((entries) => entries.length === 0)).toEqual([]);
    expect(acknowledged.filter((ids) => ids.length === 0)).toEqual([]);
  });
});

describe('two lost answers in a row', () => {
  it('the next answer reports one window from the first lost call: the first mark is not dropped by the second call', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 30);
    const sdk = client(journal);
    const { give } = game();
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    await sdk.deliverVoteReward(ask, give);
    await sdk.deliverVoteReward(ask, give); // the price: 5 points, 2 given
    const firstLost = mock.clock.now();
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(60_000);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    expect((await sdk.deliverVoteReward(ask, give)).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(60_000);
    const next = await sdk.deliverVoteReward(ask, give);
    expect(next.granted.filter((r) => r.recovered)).toEqual([]);
    expect(next.unverified).toEqual({ playerName: 'Ann', reward: '2', points: 14, from: firstLost, to: firstLost + 120_000 });
  });
});

describe('the counters among other records', () => {
  it('a vote call leaves the player\'s purchase records alone (a settled purchase intent is the purchase engine\'s to acknowledge)', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const item = { player_name: 'Ann', product_id: 1, product_id_string: 'cape', product_name: 'Cape', product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 };
    const intent: JournalEntry = { deliveryId: 'intent:c:0', playerName: 'Ann', state: 'intended', settled: true, item, recordedAt: T0 };
    await journal.append([intent]);
    expect((await client(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined)).code).toBe('SUCCESS');
    expect((await journal.pending('Ann')).filter((e) => e.state === 'intended')).toEqual([intent]);
  });

  it('rows whose give keeps failing sit ahead of the counters in the journal: a lost answer is still recovered from the counters', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 30);
    const sdk = client(journal);
    const { give, units, repeats } = game();
    const busy = () => {
      throw new Error('the game is busy');
    };
    const ask = { player: 'Ann', reward: 2, amount: 1 } as const;
    expect((await sdk.deliverVoteReward(ask, busy)).code).toBe('PARTIAL'); // the first counters, after its row
    expect((await sdk.deliverVoteReward(ask, busy)).code).toBe('PARTIAL'); // the price
    expect((await journal.pending('Ann')).map((e) => e.state)).toEqual(['voteClaimed', 'voteCounters', 'voteClaimed']);
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', times: 1 });
    // The rows' gives fail again (PARTIAL); the call's answer is lost.
    expect(await sdk.deliverVoteReward(ask, busy)).toMatchObject({ code: 'PARTIAL', error: { code: 'CLAIM_OUTCOME_UNKNOWN' } });
    const next = await sdk.deliverVoteReward({ ...ask, amount: 2 }, give);
    expect(next.unverified).toBeUndefined();
    expect(next.granted.map((r) => r.recovered === true)).toEqual([false, false, true, false]);
    expect(units.get(2)).toBe(10);
    expect(repeats()).toBe(0);
  });
});

describe('the give\'s timer', () => {
  it('a give that returns in time leaves no timer behind', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const sdk = client(journal);
    vi.useFakeTimers({ now: T0 });
    try {
      const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, async () => undefined, { giveTimeoutMs: 60_000 });
      expect(report.code).toBe('SUCCESS');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the refusals\' wording', () => {
  it('names the argument and the rule', async () => {
    const sdk = client(fresh());
    const refusal = (call: Promise<unknown>) => call.then(() => expect.unreachable(), (error: unknown) => (expect(error).toBeInstanceOf(InvalidInputError), error as InvalidInputError));
    expect(await refusal(sdk.deliverVoteReward(undefined as never, () => undefined))).toMatchObject({ argument: 'input', rule: 'must be an object with player, reward and amount' });
    expect(await refusal(sdk.deliverVoteReward({ player: 'Ann', reward: 0, amount: 1 }, () => undefined))).toMatchObject({ argument: 'input.reward', rule: expect.stringMatching(/^must be a positive integer/) });
    expect(await refusal(sdk.deliverVoteReward({ player: 'Ann', reward: ' ', amount: 1 }, () => undefined))).toMatchObject({ argument: 'input.reward', rule: 'must not be blank' });
    expect(await refusal(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, 5 as never))).toMatchObject({ argument: 'options', rule: expect.stringMatching(/^must be an object/) });
  });

  it('names the method refused: deliverVoteReward or resumeVoteRewards, in the message and the error\'s operation', async () => {
    const sdk = client(fresh());
    const refusal = (call: Promise<unknown>) => call.then(() => expect.unreachable(), (error: unknown) => (expect(error).toBeInstanceOf(InvalidInputError), error as InvalidInputError));
    expect(await refusal(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, 'give' as never))).toMatchObject({
      operation: 'deliverVoteReward',
      argument: 'give',
      message: expect.stringMatching(/^deliverVoteReward: invalid give: must be a function/),
    });
    expect(await refusal(sdk.resumeVoteRewards('give' as never))).toMatchObject({
      operation: 'resumeVoteRewards',
      argument: 'give',
      message: expect.stringMatching(/^resumeVoteRewards: invalid give: must be a function/),
    });
    expect(await refusal(sdk.resumeVoteRewards(() => undefined, { grantTimeoutMs: 0 }))).toMatchObject({ operation: 'resumeVoteRewards', argument: 'options.grantTimeoutMs' });
  });

  it('grantTimeoutMs and its deprecated name giveTimeoutMs given together: refused, saying to give grantTimeoutMs only', async () => {
    const sdk = client(fresh());
    for (const call of [
      sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined, { grantTimeoutMs: 5, giveTimeoutMs: 5 }),
      sdk.resumeVoteRewards(() => undefined, { grantTimeoutMs: 5, giveTimeoutMs: 5 }),
    ]) {
      const error = await call.then(() => expect.unreachable(), (e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error).toMatchObject({ argument: 'options.giveTimeoutMs', rule: 'must not be given with options.grantTimeoutMs (its new name): give grantTimeoutMs only' });
    }
  });

  it('a give that claims for its own player is told why', async () => {
    const journal = fresh();
    mock.recordVote(KEY, 'Ann', 4);
    const sdk = client(journal);
    let refused: unknown;
    await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, async () => {
      refused = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => undefined).catch((error: unknown) => error);
    });
    expect(refused).toMatchObject({ argument: 'input.player', rule: expect.stringMatching(/^must not be the player of a delivery this call runs inside .*"Ann" would wait for itself forever/) });
  });
});
