/**
 * The shop's side of the checkout hint through a shared journal (#47): `expectCheckout`
 * checks its arguments before anything is written, by the rules of `loop.expect`, never
 * echoing what may be a secret, and refuses a journal that cannot carry hints; the
 * MemoryJournal's hints (src/journals/memory.ts, src/journals/checkout-hints.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectCheckout, FileJournal, InvalidInputError, JournalError, MemoryJournal, type DeliveryJournal } from '../../src/index.js';
import { checkCheckoutHint, sharedHintOf } from '../../src/journals/checkout-hints.js';

// 25 bytes: its Base64 ends with '=', which no transactionId holds.
const SECRET = 'tg_live_9f8e7d6c5b4a32101';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'teamgames-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error `work` throws (it must throw). */
async function thrown(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('expectCheckout', () => {
  it('writes the hint into the journal, read back with its age and remaining life', async () => {
    const journal = new MemoryJournal();
    await expectCheckout(journal, 'Player123', { transactionId: 'tx-1', expiresInMs: 60_000 });
    await expectCheckout(journal, 'Ann');
    const hints = await journal.liveCheckoutHints();
    expect(hints.map(({ playerName, transactionId }) => ({ playerName, transactionId }))).toEqual([
      { playerName: 'Player123', transactionId: 'tx-1' },
      { playerName: 'Ann', transactionId: undefined },
    ]);
    expect(hints[0]!.remainingMs).toBeGreaterThan(59_000);
    expect(hints[0]!.remainingMs).toBeLessThanOrEqual(60_000);
    // No transaction: the default life, 10 minutes.
    expect(hints[1]!.remainingMs).toBeGreaterThan(599_000);
    expect(hints[1]!.remainingMs).toBeLessThanOrEqual(600_000);
    expect(hints[1]).not.toHaveProperty('transactionId');
  });

  it('hands the journal the hint it checked: the transaction and the life, or the life alone (no transactionId key at all)', async () => {
    const journal = new MemoryJournal();
    const add = vi.spyOn(journal, 'addCheckoutHint');
    await expectCheckout(journal, 'Player123', { transactionId: 'tx-1', expiresInMs: 60_000 });
    await expectCheckout(journal, 'Ann');
    expect(add.mock.calls[0]).toStrictEqual(['Player123', { transactionId: 'tx-1', expiresInMs: 60_000 }]);
    expect(add.mock.calls[1]).toStrictEqual(['Ann', { expiresInMs: 600_000 }]);
  });

  it.each([
    ['a blank name', '', undefined, 'playerName'],
    ['a name with a control character', 'Ann\u0007', undefined, 'playerName'],
    ['a name of 65 characters', 'x'.repeat(65), undefined, 'playerName'],
    ['a transactionId with a space', 'Ann', { transactionId: 'a b' }, 'hint.transactionId'],
    ['a transactionId of 129 characters', 'Ann', { transactionId: 'x'.repeat(129) }, 'hint.transactionId'],
    ['a life under a window', 'Ann', { expiresInMs: 9_999 }, 'hint.expiresInMs'],
    ['a life over an hour', 'Ann', { expiresInMs: 3_600_001 }, 'hint.expiresInMs'],
    ['an unknown option', 'Ann', { expiresInMS: 60_000 }, 'hint.expiresInMS'],
    ['a hint that is a string', 'Ann', 'tx-1', 'hint'],
    ['a transactionId that is a number', 'Ann', { transactionId: 7 }, 'hint.transactionId'],
  ])('refuses %s (InvalidInputError naming it) before anything is written', async (_, name, hint, argument) => {
    const journal = new MemoryJournal();
    const add = vi.spyOn(journal, 'addCheckoutHint');
    const error = await thrown(() => expectCheckout(journal, name, hint as never));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).argument).toBe(argument);
    expect((error as InvalidInputError).message).toMatch(/^expectCheckout: invalid /);
    expect((error as InvalidInputError).rule).toMatch(argument === 'hint' ? /^must be an object, got / : argument === 'hint.transactionId' ? /^must be the transactionId checkout returned \(1 to 128 letters, digits, '_', '\.', ':' or '-'\), got / : /./);
    expect(add).not.toHaveBeenCalled();
    expect(await journal.liveCheckoutHints()).toEqual([]);
  });

  it('never echoes what may be a key given by mistake (as the hint, its transactionId, the name or the journal)', async () => {
    const journal = new MemoryJournal();
    const errors = [
      await thrown(() => expectCheckout(journal, 'Ann', SECRET as never)),
      await thrown(() => expectCheckout(journal, 'Ann', { transactionId: SECRET_B64 })),
      await thrown(() => expectCheckout(journal, `${SECRET}\u0000`)),
      await thrown(() => expectCheckout(SECRET as never, 'Ann')),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(InvalidInputError);
      const text = `${(error as Error).message} ${JSON.stringify(error)}`;
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET_B64);
    }
    expect(await journal.liveCheckoutHints()).toEqual([]);
  });

  it('refuses a journal that cannot carry hints (the file journal, one of your own without addCheckoutHint), naming what it needs', async () => {
    const file = new FileJournal(join(dir, 'journal.jsonl'));
    const own: DeliveryJournal = { append: async () => {}, pending: async () => [], acknowledge: async () => {} };
    for (const journal of [file, own, undefined]) {
      const error = await thrown(() => expectCheckout(journal as DeliveryJournal, 'Ann', { transactionId: 'tx-1' }));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).argument).toBe('journal');
      expect((error as Error).message).toMatch(/^expectCheckout: invalid journal: must be a journal the game's nodes share that carries checkout hints \(with addCheckoutHint\): a PostgresJournal or MySqlJournal/);
    }
    // The name is checked first: a bad one fails the same way whatever the journal.
    expect(((await thrown(() => expectCheckout(own, ''))) as InvalidInputError).argument).toBe('playerName');
    await file.close();
  });

  it('passes on what the journal refuses (the database down) as it failed', async () => {
    const down: DeliveryJournal = {
      append: async () => {},
      pending: async () => [],
      acknowledge: async () => {},
      addCheckoutHint: async () => {
        throw new JournalError('PostgresJournal: could not write the checkout hint: connection refused');
      },
    };
    await expect(expectCheckout(down, 'Ann')).rejects.toThrow(JournalError);
  });
});

describe('MemoryJournal: checkout hints', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('written again while it lives, a hint changes nothing (it never extends itself); expired, it is dropped and may be written anew', async () => {
    const journal = new MemoryJournal();
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(30_000);
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
    let [hint, ...more] = await journal.liveCheckoutHints();
    expect(more).toEqual([]);
    expect(hint!.ageMs).toBe(30_000);
    expect(hint!.remainingMs).toBe(30_000);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await journal.liveCheckoutHints()).toEqual([]);
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
    [hint] = await journal.liveCheckoutHints();
    expect(hint).toEqual({ playerName: 'Ann', transactionId: 'tx-1', ageMs: 0, remainingMs: 60_000 });
  });

  it('written again the moment it expires, with no read between: written anew, not kept expired', async () => {
    const journal = new MemoryJournal();
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
    await vi.advanceTimersByTimeAsync(60_000);
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1', expiresInMs: 60_000 });
    expect(await journal.liveCheckoutHints()).toEqual([{ playerName: 'Ann', transactionId: 'tx-1', ageMs: 0, remainingMs: 60_000 }]);
  });

  it('one hint per player and transaction: another transaction, or none, is another hint', async () => {
    const journal = new MemoryJournal();
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-1' });
    await journal.addCheckoutHint('Ann', { transactionId: 'tx-2' });
    await journal.addCheckoutHint('Ann');
    await journal.addCheckoutHint('Bob', { transactionId: 'tx-1' });
    expect((await journal.liveCheckoutHints()).map((h) => `${h.playerName}/${h.transactionId ?? ''}`)).toEqual(['Ann/tx-1', 'Ann/tx-2', 'Ann/', 'Bob/tx-1']);    // Ended one by one, once delivered: the transaction, or the one naming none.
    await journal.endCheckoutHint('Ann', 'tx-1');
    await journal.endCheckoutHint('Ann');
    await journal.endCheckoutHint('Nobody');
    expect((await journal.liveCheckoutHints()).map((h) => `${h.playerName}/${h.transactionId ?? ''}`)).toEqual(['Ann/tx-2', 'Bob/tx-1']);
  });

  it('checks what it is given itself, by the same rules', async () => {
    const journal = new MemoryJournal();
    await expect(journal.addCheckoutHint('', {})).rejects.toThrow(InvalidInputError);
    await expect(journal.addCheckoutHint('Ann', { expiresInMs: 5 })).rejects.toThrow(/hint\.expiresInMs/);
    expect(await journal.liveCheckoutHints()).toEqual([]);
  });
});

describe('a hint read back from a database row', () => {
  const row = { playerName: 'Ann', transactionId: 'tx-1', ageMs: 1_000, remainingMs: 59_000 };

  it('is a hint when every field is one (an empty or null transaction id: none)', () => {
    expect(sharedHintOf('PostgresJournal', row)).toEqual(row);
    expect(sharedHintOf('PostgresJournal', { ...row, transactionId: '', ageMs: '1000.4', remainingMs: '59000' })).toEqual({ playerName: 'Ann', ageMs: 1_000, remainingMs: 59_000 });
    expect(sharedHintOf('PostgresJournal', { ...row, transactionId: null })).toEqual({ playerName: 'Ann', ageMs: 1_000, remainingMs: 59_000 });
    expect(sharedHintOf('PostgresJournal', { ...row, transactionId: undefined })).toEqual({ playerName: 'Ann', ageMs: 1_000, remainingMs: 59_000 });
    // An hour at most: exactly an hour is a hint.
    expect(sharedHintOf('PostgresJournal', { ...row, remainingMs: 3_600_000 })).toEqual({ ...row, remainingMs: 3_600_000 });
  });

  it('says what is wrong with its times, showing them', () => {
    expect(() => sharedHintOf('MySqlJournal', { ...row, ageMs: 'soon', remainingMs: 5 })).toThrow('MySqlJournal: a row of the checkout hints is not a hint (its times are not a hint\'s: age "soon", remaining 5); it was changed outside the SDK');
  });

  /** What sharedHintOf throws for `bad` (vitest's toThrow(text) passes when `undefined` is thrown: the error itself is checked). */
  const rowError = (bad: Parameters<typeof sharedHintOf>[1]): unknown => {
    try {
      sharedHintOf('PostgresJournal', bad);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('says which field is not a hint\'s: the name, or the transaction id (a number is not one, though its digits would be)', () => {
    const prefix = 'PostgresJournal: a row of the checkout hints is not a hint';
    for (const [bad, what] of [
      [{ ...row, playerName: 'Ann\u0007' }, 'its player name is not a player name'],
      [{ ...row, playerName: 7 }, 'its player name is not a player name'],
      [{ ...row, transactionId: 7 }, 'its transaction id is not one'],
    ] as const) {
      const error = rowError(bad);
      expect(error).toBeInstanceOf(JournalError);
      expect((error as Error).message).toBe(`${prefix} (${what}); it was changed outside the SDK`);
    }
  });

  it.each([
    ['a name that is not a player name', { ...row, playerName: '' }],
    ['a transaction id that is not one', { ...row, transactionId: 'a b' }],
    ['a remaining life over an hour', { ...row, remainingMs: 3_600_001 }],
    ['times that are not numbers', { ...row, ageMs: 'soon' }],
  ])('fails loudly with %s (JournalError naming the journal)', (_, bad) => {
    expect(() => sharedHintOf('MySqlJournal', bad)).toThrow(JournalError);
    expect(() => sharedHintOf('MySqlJournal', bad)).toThrow(/^MySqlJournal: a row of the checkout hints is not a hint/);
  });
});

describe('the checks of a hint, as the loop and the bridge call them', () => {
  it('echo a bad transactionId by default (it is no secret there), and describe it only when secretSafe', () => {
    const error = (secretSafe?: boolean) => {
      try {
        checkCheckoutHint({ transactionId: 'a b' }, 'startDeliveryLoop', secretSafe);
      } catch (e) {
        return e as InvalidInputError;
      }
      throw new Error('expected a throw');
    };
    expect(error().rule).toMatch(/, got "a b"$/);
    expect(error(undefined).rule).toMatch(/, got "a b"$/);
    expect(error(true).rule).not.toContain('a b');
  });
});

describe('the transactionId pattern (a module-level constant), loaded afresh', () => {
  afterEach(() => {
    vi.resetModules();
  });

  it('is the whole id: a good part before or after a space does not pass', async () => {
    vi.resetModules();
    const fresh = await import('../../src/journals/checkout-hints.js');
    for (const id of ['a b', 'tx-1 ', ' tx-1', 'tx-1\n']) {
      expect(() => fresh.checkCheckoutHint({ transactionId: id }, 'startDeliveryLoop')).toThrow(/invalid hint\.transactionId/);
      expect(() => fresh.sharedHintOf('PostgresJournal', { ...{ playerName: 'Ann', ageMs: 0, remainingMs: 60_000 }, transactionId: id })).toThrow(/its transaction id is not one/);
    }
    expect(fresh.checkCheckoutHint({ transactionId: 'tx-1.a:b_C' }, 'startDeliveryLoop').transactionId).toBe('tx-1.a:b_C');
  });
});
