/**
 * One delivery core for every kind of item (issue #45 point 1): purchases and vote rewards
 * go through the same bounded give (one timeout marker no return value can imitate), the
 * same conversion of whatever a give throws, and the same failure policy. Each test here
 * failed on the code before the core (the copies disagreed).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GrantTimeoutError, InvalidInputError, MemoryJournal, StorefrontClient, checkDeliveryLoopSettings, type DeliveryJournal, type StorefrontEvent } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY as VOTE_KEY, T0, storeSeed } from '../support/fixtures.js';
import { KEY, clockSleep, inProcessStore } from '../support/reliability.js';

const { mock, sleep, client } = inProcessStore();
afterEach(() => mock.reset());

const votes = createMockService({ seed: storeSeed, now: T0 });
afterEach(() => votes.reset());
const voteClient = (journal: DeliveryJournal, onEvent?: (e: StorefrontEvent) => void) =>
  new StorefrontClient({ apiKey: VOTE_KEY, baseUrl: 'https://api.teamgames.io', fetch: votes.fetch, now: votes.clock.now, journal, retry: 0, ...(onEvent === undefined ? {} : { onEvent }) });

/** Values a give may throw that are not Errors, each hostile in its own way. */
function oddValues(): Array<[string, () => unknown]> {
  return [
    ['a null-prototype object', () => Object.create(null) as unknown],
    [
      'an object whose message getter throws',
      () =>
        Object.defineProperty({}, 'message', {
          get() {
            throw new Error('message getter');
          },
        }),
    ],
    [
      'a Proxy that throws on every trap',
      () =>
        new Proxy(
          {},
          new Proxy(
            {},
            {
              get: () => () => {
                throw new Error('trap');
              },
            },
          ),
        ),
    ],
    ['undefined', () => undefined],
    ['a string', () => 'the game said no'],
  ];
}

describe('one bounded give: its timeout marker cannot be imitated', () => {
  it("a grant that returns the string 'late' is given (deliver reports SUCCESS, no GrantTimeoutError)", async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const report = await client(journal).deliver('Ann', () => 'late', { sleep });
    expect(report).toMatchObject({ code: 'SUCCESS', failed: [], pending: 0 });
    expect(report.granted).toHaveLength(1);
    expect(journal.size).toBe(0);
  });

  it("a vote give that returns the string 'late' is given", async () => {
    votes.recordVote(VOTE_KEY, 'Ann', 3);
    const journal = new MemoryJournal();
    const report = await voteClient(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => 'late');
    expect(report).toMatchObject({ code: 'SUCCESS', failed: [], pending: 0 });
  });
});

describe('one conversion of whatever a give throws', () => {
  for (const [name, make] of oddValues()) {
    it(`deliver: a grant rejecting with ${name} is a grant failure (PARTIAL, noted on the line), not a journal error`, async () => {
      mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
      const journal = new MemoryJournal();
      const report = await client(journal).deliver('Ann', () => Promise.reject(make()), { sleep });
      expect(report.code).toBe('PARTIAL');
      expect(report.failed).toHaveLength(1);
      expect(report).not.toHaveProperty('journalError');
      const [line] = await journal.pending('Ann');
      expect(line).toMatchObject({ state: 'claimed', lastError: { attempts: 1, message: expect.any(String) } });
    });

    it(`deliverVoteReward: a give rejecting with ${name} resolves PARTIAL with the row noted (never a raw TypeError)`, async () => {
      votes.recordVote(VOTE_KEY, 'Ann', 3);
      const journal = new MemoryJournal();
      const report = await voteClient(journal).deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => Promise.reject(make()));
      expect(report.code).toBe('PARTIAL');
      expect(report.failed).toHaveLength(1);
      expect(report).not.toHaveProperty('journalError');
      const row = (await journal.pending('Ann')).find((e) => e.state === 'voteClaimed');
      expect(row).toMatchObject({ lastError: { attempts: 1, message: expect.any(String) } });
    });
  }

  it('the note on the line never holds the API key (redacted as every text the SDK shows)', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    await client(journal).deliver('Ann', () => Promise.reject(new Error(`the game echoed ${KEY} and ${Buffer.from(KEY).toString('base64')}`)), { sleep });
    const [line] = await journal.pending('Ann');
    const message = (line as { lastError?: { message: string } }).lastError?.message ?? '';
    expect(message).toMatch(/the game echoed/);
    expect(message).not.toContain(KEY);
    expect(message).not.toContain(Buffer.from(KEY).toString('base64'));
  });

  it('a grant that outlives grantTimeoutMs is still a GrantTimeoutError, the line pending', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const report = await client(journal).deliver('Ann', () => new Promise(() => {}), { sleep, grantTimeoutMs: 5 });
    expect(report.code).toBe('PARTIAL');
    expect(report.failed[0]?.error).toBeInstanceOf(GrantTimeoutError);
  });
});

describe("one player's order for every kind of item", () => {
  it.each([
    ['a purchase delivery, then a vote reward', ['purchase', 'vote']],
    ['a vote reward, then a purchase delivery', ['vote', 'purchase']],
  ])('%s, asked in one turn: given in the order asked', async (_, asked) => {
    const journal = new MemoryJournal();
    const shop = voteClient(journal);
    const sleep = clockSleep(votes.clock);
    // Both kinds loaded already (a server's first calls load them; Bob's are those).
    votes.recordVote(VOTE_KEY, 'Bob', 1);
    await shop.deliver('Bob', () => undefined, { sleep });
    await shop.deliverVoteReward({ player: 'Bob', reward: 1, amount: 1 }, () => undefined);
    votes.recordVote(VOTE_KEY, 'Ann', 1);
    votes.addPurchase(VOTE_KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const given: string[] = [];
    const call = {
      purchase: () => shop.deliver('Ann', () => void given.push('purchase'), { sleep }),
      vote: () => shop.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, () => void given.push('vote')),
    };
    const reports = await Promise.all(asked.map((kind) => call[kind as keyof typeof call]()));
    expect(reports.map((r) => r.code)).toEqual(['SUCCESS', 'SUCCESS']);
    expect(given).toEqual(asked);
  });
});

describe('grantTimeoutMs: one name, one default, one check', () => {
  it('checkDeliveryLoopSettings is the rule of startDeliveryLoop: the same defaults and the same refusal', () => {
    expect(checkDeliveryLoopSettings({})).toEqual({ pollIntervalMs: 30_000, maxCallsPerSecond: 10, grantTimeoutMs: 60_000, claimMode: 'exactlyOnce', hintClaimMode: 'exactlyOnce', staffAfterAttempts: 5 });
    // The hints' claim mode follows claimMode unless given.
    expect(checkDeliveryLoopSettings({ claimMode: 'fast' }).hintClaimMode).toBe('fast');
    expect(checkDeliveryLoopSettings({ hintClaimMode: 'fast' })).toMatchObject({ claimMode: 'exactlyOnce', hintClaimMode: 'fast' });
    expect(checkDeliveryLoopSettings({ claimMode: 'fast', hintClaimMode: 'exactlyOnce' }).hintClaimMode).toBe('exactlyOnce');
    expect(checkDeliveryLoopSettings({ grantTimeoutMs: 86_400_000 }).grantTimeoutMs).toBe(86_400_000);
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error as InvalidInputError;
      }
      throw new Error('not refused');
    };
    const fromSettings = refused(() => checkDeliveryLoopSettings({ grantTimeoutMs: 86_400_001 }));
    const fromLoop = refused(() => new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, journal: new MemoryJournal() }).startDeliveryLoop({ give: () => {}, grantTimeoutMs: 86_400_001 }));
    expect(fromSettings).toBeInstanceOf(InvalidInputError);
    expect(fromSettings.message).toBe(fromLoop.message);
    expect(refused(() => checkDeliveryLoopSettings({ give: () => {} })).argument).toBe('options.give');
    const hintMode = refused(() => checkDeliveryLoopSettings({ hintClaimMode: 'quick' }));
    expect([hintMode.argument, hintMode.message]).toEqual(['options.hintClaimMode', expect.stringContaining(`must be 'exactlyOnce' or 'fast' (default: claimMode), got "quick"`)]);
  });

  it('deliverVoteReward takes grantTimeoutMs, as deliver does; giveTimeoutMs is its deprecated name, refused together with it', async () => {
    votes.recordVote(VOTE_KEY, 'Ann', 3);
    const sdk = voteClient(new MemoryJournal());
    const hang = () => new Promise(() => {});
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, hang, { grantTimeoutMs: 5 });
    expect(report.failed[0]?.error).toMatchObject({ name: 'GrantTimeoutError', timeoutMs: 5 });
    const old = await sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, hang, { giveTimeoutMs: 6 });
    expect(old.failed.map((f) => (f.error as GrantTimeoutError).timeoutMs)).toContain(6);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, hang, { grantTimeoutMs: 5, giveTimeoutMs: 5 })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(sdk.deliverVoteReward({ player: 'Ann', reward: 1, amount: 1 }, hang, { grantTimeoutMs: 86_400_001 })).rejects.toThrow(/options.grantTimeoutMs: must be an integer from 1 to 86,400,000/);
  });
});
