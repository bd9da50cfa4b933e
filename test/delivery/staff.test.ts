/**
 * What staff see (issue #24): windows are journal records written before they are
 * reported and kept until resolved (compaction included), the player's texts follow them,
 * and the bridge's API lists and resolves them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileJournal,
  InvalidInputError,
  JournalError,
  MAX_RESOLUTION_NOTE_LENGTH,
  MAX_RESOLVED_BY_LENGTH,
  MemoryJournal,
  WindowAlreadyResolvedError,
  inspectJournal,
  isStorefrontError,
  resolveWindow,
  type DeliveryJournal,
  type JournalEntry,
  type JournalWindow,
  type StorefrontEvent,
} from '../../src/index.js';
import { KEY, inProcessStore } from '../support/reliability.js';
import { journalLine, journalWindow } from '../support/journal.js';
import { TWO_SCROLLS } from '../support/fixtures.js';

const { mock, sleep, client } = inProcessStore();
const dirs: string[] = [];

afterEach(async () => {
  mock.reset();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A claim whose answer is lost, then the reconciling call: one window for the player. */
async function lostClaim(journal: DeliveryJournal, player: string, events: StorefrontEvent[] = []): Promise<void> {
  mock.addPurchase(KEY, { playerName: player, id: 1, quantity: 1 });
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
  const c = client(journal, { onEvent: (e) => events.push(e) });
  expect((await c.deliver(player, () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
  expect((await c.deliver(player, () => {}, { sleep })).unverified).toBeDefined();
}

describe('a window is a journal record', () => {
  it('written before it is reported: onEvent finds it in the journal', async () => {
    const journal = new MemoryJournal();
    let seenInJournal: JournalEntry[] | undefined;
    const c = client(journal, {
      onEvent: (e) => {
        if (e.type === 'unverified') void journal.pending('Ann').then((entries) => (seenInJournal = entries));
      },
    });
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    await c.deliver('Ann', () => {}, { sleep });
    await c.deliver('Ann', () => {}, { sleep });
    expect(seenInJournal?.filter((e) => e.state === 'unverified')).toHaveLength(1);
    const [window] = (await inspectJournal(journal)).openWindows;
    expect(window).toMatchObject({ playerName: 'Ann', state: 'unverified', cause: 'lostClaim', deliveryId: expect.stringMatching(/^window:/) });
  });

  it('kept through compactions and a restart until resolved, then kept as resolved (the audit trail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-staff-'));
    dirs.push(dir);
    const path = join(dir, 'journal.jsonl');
    const journal = new FileJournal(path, { compactAfter: 3 });
    await lostClaim(journal, 'Bo');
    // Many more deliveries for others: the file is compacted several times.
    for (let i = 0; i < 6; i++) {
      mock.addPurchase(KEY, { playerName: `Other${i}`, id: 1, quantity: 1 });
      await client(journal).deliver(`Other${i}`, () => {}, { sleep, mode: 'fast' });
    }
    await journal.close();
    const reopened = new FileJournal(path);
    const seen = await inspectJournal(reopened);
    expect(seen.openWindows.map((w) => w.playerName)).toEqual(['Bo']);
    expect(seen.pending).toEqual([]);
    const resolved = await resolveWindow(reopened, { playerName: 'Bo', by: 'mod:alice', note: 'granted by hand' }, { now: 123 });
    expect(resolved.resolution).toEqual({ by: 'mod:alice', at: 123, note: 'granted by hand' });
    await reopened.close();
    // Closed after reading: a FileJournal left open has its file closed by the garbage collector (DEP0137).
    const third = new FileJournal(path);
    const again = await inspectJournal(third);
    await third.close();
    expect(again.openWindows).toEqual([]);
    expect(again.resolvedWindows).toMatchObject([{ playerName: 'Bo', state: 'resolved', resolution: { by: 'mod:alice' } }]);
  });
});

describe("the player's texts follow the journal", () => {
  it('staff are checking while a window is open, on this client or another on the journal; normal texts once resolved', async () => {
    const journal = new MemoryJournal();
    await lostClaim(journal, 'Cy');
    const other = client(journal);
    const next = await other.deliver('Cy', () => {}, { sleep });
    expect(next.message).toMatch(/staff can check/);
    await resolveWindow(journal, { playerName: 'Cy', by: 'staff', note: 'checked: nothing missing' });
    mock.clock.advance(10_000);
    const after = await other.deliver('Cy', () => {}, { sleep });
    expect(after.message).not.toMatch(/staff can check/);
  });
});

describe("a vote reward's window and the purchase texts", () => {
  it("an open lostVote window does not make the player's purchase texts say staff are checking", async () => {
    const journal = new MemoryJournal();
    await journal.append([{ ...journalWindow('window:v1', 'Dee'), cause: 'lostVote', reward: '2', points: 5 }]);
    const report = await client(journal).deliver('Dee', () => {}, { sleep });
    expect(report.code).toBe('NO_ITEMS');
    expect(report.message).not.toMatch(/staff can check/);
  });
});

describe('inspectJournal', () => {
  it('lists pending lines with their age and last grant failure', async () => {
    const journal = new MemoryJournal();
    mock.addPurchase(KEY, { playerName: 'Dee', id: 4, quantity: 1 });
    const failing = () => {
      throw new Error('unknown item rank_vip');
    };
    await client(journal).deliver('Dee', failing, { sleep, mode: 'fast' });
    mock.clock.advance(10_000);
    await client(journal).deliver('Dee', failing, { sleep, mode: 'fast' });
    const seen = await inspectJournal(journal, { now: mock.clock.now() + 60_000 });
    expect(seen.pending).toHaveLength(1);
    expect(seen.pending[0]).toMatchObject({ playerName: 'Dee', state: 'claimed', lastError: { message: 'unknown item rank_vip', attempts: 2 } });
    expect(seen.pending[0]?.ageMs).toBeGreaterThanOrEqual(60_000);
    expect(seen.oldestPendingMs).toBe(seen.pending[0]?.ageMs);
  });
});

describe('resolveWindow', () => {
  it('refuses a player with no open window, and asks which when there are several', async () => {
    const journal = new MemoryJournal();
    await expect(resolveWindow(journal, { playerName: 'Eve', by: 'x', note: 'y' })).rejects.toThrow(InvalidInputError);
    await lostClaim(journal, 'Eve');
    mock.clock.advance(10_000);
    await lostClaim(journal, 'Eve');
    const error = await resolveWindow(journal, { playerName: 'Eve', by: 'x', note: 'y' }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/input\.windowId.*2 open windows/);
    const [first] = (await inspectJournal(journal)).openWindows;
    await resolveWindow(journal, { playerName: 'Eve', windowId: first?.deliveryId as string, by: 'x', note: 'y' });
    expect((await inspectJournal(journal)).openWindows).toHaveLength(1);
    await expect(resolveWindow(journal, { playerName: 'Eve', by: ' ', note: 'y' })).rejects.toThrow(/input\.by/);
  });
});

describe('resolveWindow: one resolution per window (issue #34)', () => {
  it('on a FileJournal in a bridge, two resolves at once: one wins, the other is told who, and the file keeps the first note after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-staff-'));
    dirs.push(dir);
    const path = join(dir, 'journal.jsonl');
    const journal = new FileJournal(path);
    await journal.append([journalWindow('window:w1')]);
    const [a, b] = await Promise.allSettled([
      resolveWindow(journal, { playerName: 'Ann', by: 'mod:alice', note: 'granted VIP by hand' }, { now: 1_000 }),
      resolveWindow(journal, { playerName: 'Ann', by: 'mod:bob', note: 'nothing missing' }, { now: 2_000 }),
    ]);
    expect(a).toMatchObject({ status: 'fulfilled', value: { resolution: { by: 'mod:alice', at: 1_000, note: 'granted VIP by hand' } } });
    expect(b.status).toBe('rejected');
    const error = (b as PromiseRejectedResult).reason as WindowAlreadyResolvedError;
    expect(isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')).toBe(true);
    expect(error.resolution).toEqual({ by: 'mod:alice', at: 1_000, note: 'granted VIP by hand' });
    expect(error.message).toBe(
      'resolveWindow: window "window:w1" of player "Ann" was already resolved by "mod:alice" at 1970-01-01T00:00:01.000Z (note: "granted VIP by hand"); nothing was written, the first resolution stands',
    );
    await journal.close();
    const reopened = new FileJournal(path);
    expect((await inspectJournal(reopened)).resolvedWindows.map((w) => w.resolution)).toEqual([{ by: 'mod:alice', at: 1_000, note: 'granted VIP by hand' }]);
    await reopened.close();
  });

  it('by the player alone after another hand closed their only window: WindowAlreadyResolvedError naming who, not "no window"', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1')]);
    await resolveWindow(journal, { playerName: 'Ann', by: 'mod:alice', note: 'done' }, { now: 7 });
    await expect(resolveWindow(journal, { playerName: 'Ann', by: 'mod:bob', note: 'done too' })).rejects.toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', resolution: { by: 'mod:alice', at: 7, note: 'done' } });
    // An id that is another player's window is refused, whatever its state.
    await expect(resolveWindow(journal, { playerName: 'Bob', windowId: 'window:w1', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId' });
  });

  it('on a journal of your own without resolveWindow: the fallback is one resolve at a time, the state checked again in its turn', async () => {
    const inner = new MemoryJournal();
    const own: DeliveryJournal = { append: (e) => inner.append(e), pending: (p) => inner.pending(p), acknowledge: (ids) => inner.acknowledge(ids) };
    await own.append([journalWindow('window:w1')]);
    const results = await Promise.allSettled(['a', 'b', 'c', 'd'].map((by) => resolveWindow(own, { windowId: 'window:w1', by, note: `by ${by}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const winner = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<JournalWindow>).value.resolution;
    for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) expect(r.reason).toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', resolution: winner });
    expect((await own.pending())[0]).toMatchObject({ state: 'resolved', resolution: winner });
  });
});

describe("resolveWindow: a journal's own resolveWindow is checked like a read", () => {
  it.each([
    ['nothing', undefined],
    ['an unknown outcome', { outcome: 'maybe' }],
    ['a line instead of the window', { outcome: 'resolved', window: journalLine('window:w1') }],
    ['another window', { outcome: 'resolved', window: { ...journalWindow('window:other'), state: 'resolved', resolution: { by: 'x', at: 1, note: 'y' } } }],
    ['a window still open', { outcome: 'alreadyResolved', window: journalWindow('window:w1') }],
  ])('answering %s is a JournalError', async (_what, answer) => {
    const inner = new MemoryJournal();
    await inner.append([journalWindow('window:w1')]);
    const own: DeliveryJournal = { append: (e) => inner.append(e), pending: (p) => inner.pending(p), acknowledge: (ids) => inner.acknowledge(ids), resolveWindow: async () => answer as never };
    await expect(resolveWindow(own, { windowId: 'window:w1', by: 'x', note: 'y' })).rejects.toMatchObject({ code: 'JOURNAL_FAILED', message: expect.stringContaining('does not keep the DeliveryJournal contract') });
  });
});

describe('resolveWindow: bounded input, refused before anything is written (issue #34)', () => {
  const refused: Array<[string, Record<string, unknown>, string, string]> = [
    ['a note over 2,000 characters', { note: 'x'.repeat(MAX_RESOLUTION_NOTE_LENGTH + 1) }, 'input.note', 'must be at most 2000 characters, got 2001'],
    ['a note of 10 MB (the journal must stay openable)', { note: 'x'.repeat(10_000_000) }, 'input.note', 'must be at most 2000 characters, got 10000000'],
    ['an escape sequence in the note', { note: 'ok\u001b[2J' }, 'input.note', 'must not contain control characters other than line breaks and tabs'],
    ['a carriage return in the note', { note: 'ok\rforged' }, 'input.note', 'must not contain control characters'],
    ['a bidi override in the note', { note: 'ok\u202eevil' }, 'input.note', 'bidi-override'],
    ['a by over 200 characters', { by: 'b'.repeat(MAX_RESOLVED_BY_LENGTH + 1) }, 'input.by', 'must be at most 200 characters, got 201'],
    ['a newline in by', { by: 'mod:alice\nmod:bob' }, 'input.by', 'must not contain control or bidi-override characters'],
    ['a bidi isolate in by', { by: 'mod:\u2066alice' }, 'input.by', 'must not contain control or bidi-override characters'],
    ['a blank by', { by: ' ' }, 'input.by', 'must not be blank'],
    ['neither player nor window', { playerName: undefined }, 'input.playerName', 'is needed when input.windowId is not given'],
    ['a window id over 512 characters', { windowId: `window:${'w'.repeat(600)}` }, 'input.windowId', 'must be at most 512 characters'],
  ];

  it.each(refused)('%s', async (_what, change, argument, rule) => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1'), journalLine('a')]);
    const before = await journal.pending();
    const input = { playerName: 'Ann', by: 'mod:alice', note: 'granted', ...change };
    const error = await resolveWindow(journal, input as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ argument, rule: expect.stringContaining(rule) });
    expect(await journal.pending()).toEqual(before);
  });

  it('takes the limits themselves, newlines and tabs in the note, and any script', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1')]);
    const note = `line one\n\tline two — 已发放 🐉 ${'x'.repeat(MAX_RESOLUTION_NOTE_LENGTH - 40)}`.slice(0, MAX_RESOLUTION_NOTE_LENGTH);
    const by = 'm'.repeat(MAX_RESOLVED_BY_LENGTH);
    const resolved = await resolveWindow(journal, { windowId: 'window:w1', by, note });
    expect(resolved.resolution).toMatchObject({ by, note });
  });
});

describe('inspectJournal: its options, and a journal it cannot read (issue #33 point 10)', () => {
  it("lists one player's records with playerName, and ages from now (a record from the future is 0 ms old)", async () => {
    const journal = new MemoryJournal();
    await journal.append([{ ...journalLine('a'), recordedAt: 1_000 }, { ...journalLine('b', 'Bo'), recordedAt: 500 }, { ...journalLine('c'), recordedAt: 9_000 }]);
    const seen = await inspectJournal(journal, { playerName: 'Ann', now: 5_000 });
    expect(seen.pending.map((p) => [p.deliveryId, p.ageMs])).toEqual([['a', 4_000], ['c', 0]]);
    expect(seen.oldestPendingMs).toBe(4_000);
    const all = await inspectJournal(journal, { now: 5_000 });
    expect(all.oldestPendingMs).toBe(4_500);
    // Without now, the clock: written now, a few ms old at most.
    const fresh = new MemoryJournal();
    await fresh.append([{ ...journalLine('d'), recordedAt: Date.now() }]);
    expect((await inspectJournal(fresh)).oldestPendingMs).toBeLessThan(5_000);
  });

  it('refuses an unknown option and a name the service would refuse', async () => {
    const journal = new MemoryJournal();
    await expect(inspectJournal(journal, { player: 'Ann' } as never)).rejects.toMatchObject({ argument: 'options.player' });
    await expect(inspectJournal(journal, { playerName: ' ' })).rejects.toMatchObject({ argument: 'options.playerName', rule: 'must not be blank' });
  });

  it("a journal whose read fails: a JournalError saying so (the journal's own JournalError as it is)", async () => {
    const failing = (error: Error): DeliveryJournal => ({ append: async () => {}, acknowledge: async () => {}, pending: async () => Promise.reject(error) });
    const cause = new Error('disk gone');
    const error = await inspectJournal(failing(cause)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'JOURNAL_FAILED', message: 'the journal could not be read (disk gone)', cause });
    const own = new JournalError('FileJournal: it is gone');
    expect(await inspectJournal(failing(own)).catch((e: unknown) => e)).toBe(own);
    // A write that fails the same way, read through resolveWindow: the same errors.
    expect(await resolveWindow(failing(own), { playerName: 'Ann', by: 'x', note: 'y' }).catch((e: unknown) => e)).toBe(own);
  });

  it('a record that is not a journal entry: a JournalError naming the damage', async () => {
    const journal: DeliveryJournal = { append: async () => {}, acknowledge: async () => {}, pending: async () => [{ deliveryId: 'x' } as never] };
    await expect(inspectJournal(journal)).rejects.toMatchObject({
      code: 'JOURNAL_FAILED',
      message: 'the journal holds a record that is not a journal entry (playerName is not a non-empty string); it is damaged or was changed outside the SDK',
    });
  });
});

describe('resolveWindow: what it says when it cannot resolve (issue #33 point 10)', () => {
  const resolved = (id: string, at: number, player = 'Ann'): JournalEntry => ({ ...journalWindow(id, player), state: 'resolved', resolution: { by: `mod:${at}`, at, note: 'n' } });

  it('an unknown option or input field is refused, named', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1')]);
    await expect(resolveWindow(journal, { windowId: 'window:w1', by: 'x', note: 'y' }, { at: 1 } as never)).rejects.toMatchObject({ argument: 'options.at' });
    await expect(resolveWindow(journal, { windowId: 'window:w1', by: 'x', note: 'y', player: 'Ann' } as never)).rejects.toMatchObject({ argument: 'input.player' });
    expect((await inspectJournal(journal)).openWindows).toHaveLength(1);
  });

  it('a now that is not a finite number is refused; without now, the clock', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1')]);
    for (const now of [Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(resolveWindow(journal, { windowId: 'window:w1', by: 'x', note: 'y' }, { now })).rejects.toMatchObject({ argument: 'options.now', rule: `must be a finite number (epoch ms), got ${now}` });
    }
    const before = Date.now();
    const window = await resolveWindow(journal, { windowId: 'window:w1', by: 'x', note: 'y' });
    expect(window.resolution?.at).toBeGreaterThanOrEqual(before);
    expect(window.resolution?.at).toBeLessThanOrEqual(Date.now());
  });

  it("an id that is not the player's window names the player's open ones", async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:a1'), journalWindow('window:b1', 'Bob'), journalWindow('window:b2', 'Bob'), resolved('window:b3', 1, 'Bob')]);
    await expect(resolveWindow(journal, { playerName: 'Bob', windowId: 'window:a1', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'must name a window of "Bob", who has open: window:b1, window:b2' });
    await expect(resolveWindow(journal, { playerName: 'Cy', windowId: 'window:a1', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'must name a window of "Cy", who has no open window' });
    // The player's own resolved window is theirs: the answer is who resolved it.
    await expect(resolveWindow(journal, { playerName: 'Bob', windowId: 'window:b3', by: 'x', note: 'y' })).rejects.toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', windowId: 'window:b3' });
    expect(await resolveWindow(journal, { playerName: 'Bob', windowId: 'window:b2', by: 'x', note: 'y' })).toMatchObject({ deliveryId: 'window:b2', state: 'resolved' });
  });

  it('an id no window has (the longest id taken), a player with none, a player with several', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1'), journalWindow('window:w2'), journalLine('window:line')]);
    const long = `window:${'w'.repeat(505)}`;
    await expect(resolveWindow(journal, { windowId: long, by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: `must name a window in the journal; there is none with the id a string of 512 characters` });
    await expect(resolveWindow(journal, { windowId: 'window:line', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'must name a window in the journal; there is none with the id "window:line"' });
    await expect(resolveWindow(journal, { playerName: 'Eve', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.playerName', rule: 'must name an open window; "Eve" has none' });
    await expect(resolveWindow(journal, { playerName: 'Ann', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'is needed: "Ann" has 2 open windows (window:w1, window:w2)' });
    await expect(resolveWindow(journal, { windowId: 'window:\u0085', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'must not contain control or bidi-override characters' });
  });

  it('by the player with no open window: the one resolved last is named (the later of two at the same time)', async () => {
    const cases: Array<[JournalEntry[], string]> = [
      [[resolved('window:w1', 9), resolved('window:w2', 5)], 'window:w1'],
      [[resolved('window:w1', 5), resolved('window:w2', 9)], 'window:w2'],
      [[resolved('window:w1', 5), resolved('window:w2', 5)], 'window:w2'],
    ];
    for (const [entries, named] of cases) {
      const journal = new MemoryJournal();
      await journal.append(entries);
      await expect(resolveWindow(journal, { playerName: 'Ann', by: 'x', note: 'y' })).rejects.toMatchObject({ code: 'WINDOW_ALREADY_RESOLVED', windowId: named });
    }
  });

  it("a journal's resolveWindow that fails: a JournalError saying so, a StorefrontError as it is", async () => {
    const inner = new MemoryJournal();
    await inner.append([journalWindow('window:w1')]);
    const failing = (error: Error): DeliveryJournal => ({ append: (e) => inner.append(e), pending: (p) => inner.pending(p), acknowledge: (ids) => inner.acknowledge(ids), resolveWindow: async () => Promise.reject(error) });
    const cause = new Error('connection reset');
    expect(await resolveWindow(failing(cause), { windowId: 'window:w1', by: 'x', note: 'y' }).catch((e: unknown) => e)).toMatchObject({
      code: 'JOURNAL_FAILED',
      message: 'resolveWindow: the journal could not record the resolution (connection reset)',
      cause,
    });
    const own = new JournalError('PostgresJournal: lost');
    expect(await resolveWindow(failing(own), { windowId: 'window:w1', by: 'x', note: 'y' }).catch((e: unknown) => e)).toBe(own);
  });

  it("a journal's resolveWindow answering another record: the JournalError names what it got", async () => {
    const inner = new MemoryJournal();
    await inner.append([journalWindow('window:w1')]);
    const answering = (answer: unknown): DeliveryJournal => ({ append: (e) => inner.append(e), pending: (p) => inner.pending(p), acknowledge: (ids) => inner.acknowledge(ids), resolveWindow: async () => answer as never });
    const said = (answer: unknown) => resolveWindow(answering(answer), { windowId: 'window:w1', by: 'x', note: 'y' }).catch((e: unknown) => (e as Error).message);
    const contract = 'it is damaged or does not keep the DeliveryJournal contract';
    expect(await said(undefined)).toBe(`resolveWindow: the journal's resolveWindow answered with something other than the resolved window "window:w1" (outcome is undefined); ${contract}`);
    expect(await said({ outcome: 'resolved', window: { ...resolved('window:other', 1) } })).toBe(`resolveWindow: the journal's resolveWindow answered with something other than the resolved window "window:w1" (state "resolved", id "window:other"); ${contract}`);
    expect(await said({ outcome: 'alreadyResolved', window: journalWindow('window:w1') })).toBe(`resolveWindow: the journal's resolveWindow answered with something other than the resolved window "window:w1" (state "unverified", id "window:w1"); ${contract}`);
    expect(await said({ outcome: 'resolved', window: { deliveryId: 'window:w1' } })).toBe(`resolveWindow: the journal's resolveWindow answered with something other than the resolved window "window:w1" (playerName is not a non-empty string); ${contract}`);
    expect(await resolveWindow(answering({ outcome: 'resolved', window: resolved('window:w1', 3) }), { windowId: 'window:w1', by: 'x', note: 'y' })).toEqual(resolved('window:w1', 3));
  });

  it('on a journal of your own: an append that fails is a JournalError, and the next resolve still runs', async () => {
    const inner = new MemoryJournal();
    await inner.append([journalWindow('window:w1')]);
    let fails = 1;
    const own: DeliveryJournal = {
      append: async (e) => {
        if (fails-- > 0) throw new Error('disk full');
        await inner.append(e);
      },
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    await expect(resolveWindow(own, { windowId: 'window:w1', by: 'x', note: 'y' })).rejects.toMatchObject({ message: 'resolveWindow: the journal could not record the resolution (disk full)' });
    expect(await resolveWindow(own, { windowId: 'window:w1', by: 'x', note: 'y' }, { now: 4 })).toMatchObject({ state: 'resolved', resolution: { by: 'x', at: 4, note: 'y' } });
    await expect(resolveWindow(own, { windowId: 'window:nope', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId' });
  });
});

describe('inspectJournal: every kind of record, as staff see it (issue #33 point 10)', () => {
  it('lists claim marks, unsettled vote claims, vote rows and lines with exactly their fields; settled intents and vote claims and vote counters are not pending', async () => {
    const failure = { message: 'inventory full', at: 900, attempts: 2 };
    const journal = new MemoryJournal();
    await journal.append([
      { deliveryId: 'claim:m1', playerName: 'Ann', state: 'claiming', recordedAt: 100, since: 50 },
      { deliveryId: 'vote:c1', playerName: 'Ann', state: 'voteClaiming', reward: 'Scroll', amount: 1, recordedAt: 200 },
      { deliveryId: 'vote:c2', playerName: 'Ann', state: 'voteClaiming', reward: 'Scroll', amount: 'all', recordedAt: 210, settled: true },
      { deliveryId: 'vote:counters', playerName: 'Ann', state: 'voteCounters', recordedAt: 220, prices: [] },
      { deliveryId: 'vote:r1', playerName: 'Ann', state: 'voteClaimed', reward: TWO_SCROLLS, recordedAt: 300 },
      { deliveryId: 'vote:r2', playerName: 'Ann', state: 'voteClaimed', reward: TWO_SCROLLS, recordedAt: 310, lastError: failure, sending: 950 },
      { ...journalLine('line:1'), recordedAt: 400 },
      { ...journalLine('line:2'), recordedAt: 410, lastError: failure, sending: 960 },
      { ...journalLine('line:3', 'Ann', 'intended'), recordedAt: 420 },
      { ...journalLine('line:4', 'Ann', 'intended'), recordedAt: 430, settled: true },
      // A claimed line a journal of your own marked settled: still a line to grant.
      { ...journalLine('line:5'), recordedAt: 440, settled: true },
    ]);
    const { item } = journalLine('x');
    const seen = await inspectJournal(journal, { now: 1_000 });
    expect(seen.pending).toStrictEqual([
      { deliveryId: 'claim:m1', playerName: 'Ann', state: 'claiming', recordedAt: 100, ageMs: 900 },
      { deliveryId: 'vote:c1', playerName: 'Ann', state: 'voteClaiming', recordedAt: 200, ageMs: 800 },
      { deliveryId: 'vote:r1', playerName: 'Ann', state: 'voteClaimed', reward: TWO_SCROLLS, recordedAt: 300, ageMs: 700 },
      { deliveryId: 'vote:r2', playerName: 'Ann', state: 'voteClaimed', reward: TWO_SCROLLS, recordedAt: 310, ageMs: 690, lastError: failure, sending: 950 },
      { deliveryId: 'line:1', playerName: 'Ann', state: 'claimed', item, recordedAt: 400, ageMs: 600 },
      { deliveryId: 'line:2', playerName: 'Ann', state: 'claimed', item, recordedAt: 410, ageMs: 590, lastError: failure, sending: 960 },
      { deliveryId: 'line:3', playerName: 'Ann', state: 'intended', item, recordedAt: 420, ageMs: 580 },
      { deliveryId: 'line:5', playerName: 'Ann', state: 'claimed', item, recordedAt: 440, ageMs: 560 },
    ]);
    expect(seen.oldestPendingMs).toBe(900);
    expect(seen.openWindows).toStrictEqual([]);
    expect(seen.resolvedWindows).toStrictEqual([]);
  });
});

describe("resolveWindow: a player's lines are not windows (issue #33 point 10)", () => {
  it('by the player who has only lines pending: no open window; with an id of their line: not a window of theirs', async () => {
    const journal = new MemoryJournal();
    await journal.append([journalLine('line:1'), journalWindow('window:b1', 'Bob')]);
    await expect(resolveWindow(journal, { playerName: 'Ann', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.playerName', rule: 'must name an open window; "Ann" has none' });
    await expect(resolveWindow(journal, { playerName: 'Ann', windowId: 'line:1', by: 'x', note: 'y' })).rejects.toMatchObject({ argument: 'input.windowId', rule: 'must name a window of "Ann", who has no open window' });
    expect(await journal.pending()).toEqual([journalLine('line:1'), journalWindow('window:b1', 'Bob')]);
  });
});

describe('resolveWindow: the characters by, note and a window id refuse (issue #33 point 10)', () => {
  // C0 and C1 controls (NUL, US, DEL, NEL, CSI), a lone surrogate of each half, and each bidi mark, embedding, override and isolate.
  const controls = ['\u0000', '\u001f', '\u007f', '\u0085', '\u009b', '\u009f'];
  const bidi = ['\ud800', '\udfff', '\u061c', '\u200e', '\u200f', '\u202a', '\u202c', '\u202e', '\u2066', '\u2068', '\u2069'];
  const allowed = ['mod:alice', 'Zoë 已发放 🐉', '\u00a0', '\u061b', '\u061d', '\u200d', '\u2029', '\u202f', '\u2065', '\u206a', '\ud83d\udc09'];

  const named = (text: string): string => [...text].map((c) => (/^[\w:]$/.test(c) ? c : `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`)).join(' ');

  const refusal = async (input: Record<string, string>): Promise<unknown> => {
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1')]);
    return resolveWindow(journal, { windowId: 'window:w1', by: 'mod:alice', note: 'granted', ...input }).then(
      () => undefined,
      (e: unknown) => (e as { argument?: string }).argument,
    );
  };

  it.each([...controls, '\t', '\n', '\r', ...bidi].map((c) => [named(c), c]))('by with %s is refused', async (_name, c) => {
    expect(await refusal({ by: `mod:${c}alice` })).toBe('input.by');
  });

  it.each([...controls, '\r', ...bidi].map((c) => [named(c), c]))('a note with %s is refused', async (_name, c) => {
    expect(await refusal({ note: `found ${c}nothing` })).toBe('input.note');
  });

  it.each([...controls, '\t', ...bidi].map((c) => [named(c), c]))('a window id with %s is refused', async (_name, c) => {
    expect(await refusal({ windowId: `window:${c}w1` })).toBe('input.windowId');
  });

  it.each(allowed.map((c) => [named(c), c]))('%s is taken in by and in a note, and a note takes it with tabs and newlines', async (_name, c) => {
    expect(await refusal({ by: `mod:${c}` })).toBeUndefined();
    expect(await refusal({ note: `x${c}` })).toBeUndefined();
    expect(await refusal({ note: `a\t${c}\nb` })).toBeUndefined();
  });
});
