/**
 * The delivery core's parts, each decision pinned (src/delivery/core/thrown.ts, give.ts's
 * policy, src/delivery/records/item-records.ts): what the public tests reach only through
 * whole deliveries, checked here value by value.
 */
import { describe, expect, it } from 'vitest';
import { JournalError, MemoryJournal, type JournalEntry, type JournalLine, type JournalVoteReward } from '../../src/index.js';
import { SEEN_LIMIT, claimLoop, failureOf, journalErrorOf, notedFailure, releaseLoop, sharedOf } from '../../src/delivery/core/index.js';
import { EngineRecords } from '../../src/delivery/engine/records.js';
import { readThrown, thrownText } from '../../src/delivery/core/thrown.js';
import { itemRecordsOf } from '../../src/delivery/records/index.js';
import { journalLine } from '../support/journal.js';

const hostile = () => new Proxy({}, new Proxy({}, { get: () => () => { throw new Error('trap'); } }));
const throwingGetter = () => Object.defineProperty({}, 'message', { get() { throw new Error('getter'); } });

describe("the engine's memory of when each player's list was seen", () => {
  it(`holds ${SEEN_LIMIT} players at most, forgetting the one seen longest ago; a player seen again is the newest`, () => {
    const journal = new MemoryJournal();
    const records = new EngineRecords({ now: () => 0, monotonic: () => 0, journal });
    const at = { wall: 1, mono: 1 };
    for (let i = 0; i < SEEN_LIMIT; i++) records.seen(`P${i}`, at);
    const { seen } = sharedOf(journal);
    expect(seen.size).toBe(SEEN_LIMIT);
    records.seen('P0', at);
    records.seen('New', at);
    expect(seen.size).toBe(SEEN_LIMIT);
    expect([seen.has('P0'), seen.has('P1'), seen.has('New')]).toEqual([true, false, true]);
  });
});

describe('reading a thrown value', () => {
  it('reads a property, and undefined where there is none or reading throws', () => {
    expect(readThrown({ staff: true }, 'staff')).toBe(true);
    expect(readThrown('abc', 'length')).toBe(3);
    expect(readThrown(undefined, 'message')).toBeUndefined();
    expect(readThrown(null, 'message')).toBeUndefined();
    expect(readThrown(throwingGetter(), 'message')).toBeUndefined();
    expect(readThrown(hostile(), 'message')).toBeUndefined();
  });

  it("its text: the message when it is a string, else String(), else the value's type", () => {
    expect(thrownText(new Error('busy'))).toBe('busy');
    expect(thrownText('no')).toBe('no');
    expect(thrownText(undefined)).toBe('undefined');
    expect(thrownText(null)).toBe('null');
    expect(thrownText({ message: 5 })).toBe('[object Object]');
    expect(thrownText(throwingGetter())).toBe('[object Object]');
    expect(thrownText(Object.create(null))).toBe('a thrown object that cannot be shown as text');
    expect(thrownText(hostile())).toBe('a thrown object that cannot be shown as text');
  });
});

describe("a give's failure and the policy", () => {
  it('a window only with both ends finite numbers; staff only for staff: true; the text redacted, then cut to 300', () => {
    expect(failureOf({ unverified: { from: 1, to: 2 } }, undefined).window).toEqual({ from: 1, to: 2 });
    expect(failureOf({ unverified: { from: 1, to: '2' } }, undefined).window).toBeUndefined();
    expect(failureOf({ unverified: { from: 1, to: Number.NaN } }, undefined).window).toBeUndefined();
    expect(failureOf({ staff: 'yes' }, undefined).staff).toBe(false);
    expect(failureOf({ staff: true }, undefined).staff).toBe(true);
    const long = failureOf(new Error(`SECRET${'x'.repeat(400)}`), (t) => t.replace('SECRET', '[redacted]'));
    expect(long.message).toHaveLength(300);
    expect(long.message.startsWith('[redacted]x')).toBe(true);
    expect(long.late).toBe(false);
  });

  it('stuck at staffAfterAttempts, at once for staff, kept once marked; never without a limit', () => {
    const line = journalLine('invoice:1', 'Ann');
    const busy = failureOf(new Error('busy'), undefined);
    const first = notedFailure(line, busy, 5, 2);
    expect(first).toMatchObject({ stuckNow: false, attempts: 1, record: { lastError: { message: 'busy', at: 5, attempts: 1 } } });
    expect(first.record.lastError).not.toHaveProperty('stuck');
    const second = notedFailure(first.record, busy, 6, 2);
    expect(second).toMatchObject({ stuckNow: true, attempts: 2, record: { lastError: { attempts: 2, stuck: true } } });
    expect(notedFailure(second.record, busy, 7, 2)).toMatchObject({ stuckNow: false, record: { lastError: { attempts: 3, stuck: true } } });
    expect(notedFailure(line, failureOf({ staff: true }, undefined), 5, 9)).toMatchObject({ stuckNow: true, record: { lastError: { stuck: true } } });
    let unlimited: JournalLine = line;
    for (let i = 0; i < 50; i++) unlimited = notedFailure(unlimited, busy, i, undefined).record;
    expect(unlimited.lastError).toEqual({ message: 'busy', at: 49, attempts: 50 });
  });
});

describe('the core records a give writes through', () => {
  const row = (id: string): JournalVoteReward => ({ deliveryId: id, playerName: 'Ann', state: 'voteClaimed', reward: { reward_id: 1, reward_name: 'Key', give_amount: 1, total_points: '3', vote_points: 2, votes_month: 1 }, recordedAt: 1 });

  it("reads the journal's records with memory's copy first, once", async () => {
    const journal = new MemoryJournal();
    const line = journalLine('invoice:1', 'Ann');
    await journal.append([line, journalLine('invoice:2', 'Ann')]);
    sharedOf(journal).unjournaled.set('invoice:1', { ...line, lastError: { message: 'm', at: 1, attempts: 1 } });
    const entries = await itemRecordsOf(journal).entriesOf('Ann');
    expect(entries.map((e) => e.deliveryId).sort()).toEqual(['invoice:1', 'invoice:2']);
    expect(entries.find((e) => e.deliveryId === 'invoice:1')).toHaveProperty('lastError');
  });

  it("keeps memory's copy of a purchase line and of a vote row in step with the mark written", async () => {
    const journal = new MemoryJournal();
    const { unjournaled, unwrittenVotes } = sharedOf(journal);
    const line = journalLine('invoice:1', 'Ann');
    const vote = row('vote:a:0');
    unjournaled.set(line.deliveryId, line);
    unwrittenVotes.set(vote.deliveryId, vote);
    const records = itemRecordsOf(journal);
    await records.mark({ ...line, sending: 7 });
    await records.mark({ ...vote, sending: 8 });
    expect(unjournaled.get('invoice:1')).toMatchObject({ sending: 7 });
    expect(unwrittenVotes.get('vote:a:0')).toMatchObject({ sending: 8 });
    expect(unjournaled.has('vote:a:0')).toBe(false);
    expect(unwrittenVotes.has('invoice:1')).toBe(false);
    // A record memory does not hold stays out of it.
    await records.mark({ ...journalLine('invoice:2', 'Ann'), sending: 9 });
    expect(unjournaled.has('invoice:2')).toBe(false);
  });

  it('a journal refusing with nothing at all: the failure is still an Error, and the window is held in memory', async () => {
    const journal = new MemoryJournal();
    journal.append = async () => Promise.reject(undefined);
    const records = itemRecordsOf(journal);
    expect(await records.rewrite(journalLine('invoice:1', 'Ann'))).toEqual(new Error('the journal refused the record'));
    const window = { deliveryId: 'window:command:invoice:1', playerName: 'Ann', state: 'unverified', from: 1, to: 2, cause: 'unknownCommand', recordedAt: 2 } as JournalEntry & { state: 'unverified' };
    expect(await records.window(window)).toEqual(new Error('the journal refused the window'));
    expect(records.unwritten('window:command:invoice:1')).toEqual(window);
    await expect(records.mark(journalLine('invoice:1', 'Ann'))).rejects.toBeUndefined();
  });
});

describe("the journal's shared state", () => {
  it('a journal failure as a JournalError: its text redacted when a redaction is given, then cut to 200; one already a JournalError as it is', () => {
    const failure = new Error(`disk full at k3y-secret ${'x'.repeat(300)}`);
    const plain = journalErrorOf('deliver', failure, undefined);
    expect(plain).toBeInstanceOf(JournalError);
    expect(plain.message).toBe(`deliver: the delivery journal failed (${`disk full at k3y-secret ${'x'.repeat(300)}`.slice(0, 200)})`);
    expect(plain.cause).toBe(failure);
    const redacted = journalErrorOf('deliver', failure, (text) => text.replaceAll('k3y-secret', '[redacted]'));
    expect(redacted.message).toBe(`deliver: the delivery journal failed (${`disk full at [redacted] ${'x'.repeat(300)}`.slice(0, 200)})`);
    expect(journalErrorOf('deliver', plain, undefined)).toBe(plain);
  });

  it("one loop per journal: a second is told the first; a release by a loop that is not the journal's leaves the journal's registered", () => {
    const journal = new MemoryJournal();
    const first = {};
    const second = {};
    expect(claimLoop(journal, first)).toBeUndefined();
    expect(claimLoop(journal, second)).toBe(first);
    releaseLoop(journal, second);
    expect(claimLoop(journal, second)).toBe(first);
    releaseLoop(journal, first);
    expect(claimLoop(journal, second)).toBeUndefined();
  });
});
