/**
 * The rows of a shared journal's checkout hints as the loop's reader hands them to its
 * book (src/delivery/loop/shared-hints.ts, #47; #46 point 2), on their own: which rows are
 * one hint read again, which are apart, which are gone. A user meets this bookkeeping only
 * through its effects (loop-shared-hints.test.ts); here the book is a list of what was
 * handed, on fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, type DeliveryJournal, type SharedCheckoutHint } from '../../src/index.js';
import { platformTimers } from '../../src/delivery/loop/call-budget.js';
import type { HeldHint } from '../../src/delivery/loop/hints.js';
import { SHARED_HINTS_POLL_MS, SharedHints } from '../../src/delivery/loop/shared-hints.js';

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** A reader over a journal whose rows are `rows()` at each read, handing them to a book that holds every hint. */
function reader(rows: () => SharedCheckoutHint[]) {
  const inner = new MemoryJournal();
  const journal: DeliveryJournal = {
    append: (entries) => inner.append(entries),
    pending: (playerName) => inner.pending(playerName),
    acknowledge: (ids) => inner.acknowledge(ids),
    liveCheckoutHints: async () => rows(),
  };
  const held: Array<[string, HeldHint]> = [];
  const dropped: Array<[string, string | undefined]> = [];
  const hints = SharedHints.start(
    journal,
    platformTimers,
    (name, hint) => (held.push([name, hint]), 'held'),
    (name, transactionId) => dropped.push([name, transactionId]),
    () => {},
  );
  // A journal with liveCheckoutHints always has a reader.
  return { hints: hints!, held, dropped };
}

describe('rows of a shared journal', () => {
  it("for two players, for two transactions of one, and for one player's transaction and their hint naming none, are apart: each handed once, each dropped when its row is gone", async () => {
    const rows: Array<Omit<SharedCheckoutHint, 'ageMs'>> = [
      { playerName: 'Abe', transactionId: 't1', remainingMs: 600_000 },
      { playerName: 'Abe', transactionId: 't2', remainingMs: 600_000 },
      { playerName: 'Abe', remainingMs: 600_000 },
      { playerName: 'Bob', transactionId: 't1', remainingMs: 600_000 },
    ];
    // Written at 0 on the journal's clock: read later, older by as much.
    const { hints, held, dropped } = reader(() => rows.map((row) => ({ ...row, ageMs: performance.now() })));
    await vi.advanceTimersByTimeAsync(0);
    expect(held.map(([name, hint]) => [name, hint.transactionIds, hint.any])).toEqual([
      ['Abe', ['t1'], false],
      ['Abe', ['t2'], false],
      ['Abe', [], true],
      ['Bob', ['t1'], false],
    ]);
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(held).toHaveLength(4);
    rows.splice(2, 1);
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(dropped).toEqual([['Abe', undefined]]);
    rows.splice(0, 1);
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(dropped).toEqual([
      ['Abe', undefined],
      ['Abe', 't1'],
    ]);
    expect(held).toHaveLength(4);
    hints.stop();
  });

  it('whose start moved by 2 s or more between reads is a hint written anew, handed again; by less, the same hint read again', async () => {
    let writtenAt = 0;
    const { hints, held } = reader(() => [{ playerName: 'Abe', transactionId: 't1', ageMs: performance.now() - writtenAt, remainingMs: 600_000 }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(held.map(([, hint]) => hint.since)).toEqual([0]);
    // The reads' round trips differ: the row seems to start 1,999 ms later.
    writtenAt = 1_999;
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(held.map(([, hint]) => hint.since)).toEqual([0]);
    writtenAt = 2_000;
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(held.map(([, hint]) => hint.since)).toEqual([0, 2_000]);
    hints.stop();
  });
});
