/**
 * The book of checkout hints on its own (src/delivery/loop/hints.ts, #47; #46 point 2):
 * the bookkeeping a loop's user meets only through its effects, one rule at a time, on
 * the loop's monotonic clock given as numbers (the joins of hints for one player, the
 * memory of the hints ended, the purchases claimed and not given yet, the hinted runs
 * planned per second and what they cost). loop-hints.test.ts proves the same rules
 * through `startDeliveryLoop`. The module is loaded afresh for each test: its key for a
 * player's hint naming none is made by a module-level function, which a module loaded once,
 * before the tests, would hide from a mutation run (stryker.config.mjs says why).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Hints from '../../src/delivery/loop/hints.js';
import type { HeldHint } from '../../src/delivery/loop/hints.js';
import type { ClaimResult, Transaction } from '../../src/wire/claim.js';

let checkHint: typeof Hints.checkHint;
let HintBook: typeof Hints.HintBook;
let HINT_LIMIT: number;
let HINT_MAX_MS: number;
beforeEach(async () => {
  vi.resetModules();
  ({ checkHint, HintBook, HINT_LIMIT, HINT_MAX_MS } = await import('../../src/delivery/loop/hints.js'));
});

const line: Transaction = { player_name: 'Abe', product_id: 1, product_id_string: '1', product_name: 'Gem', product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 };
/** A claim that delivered one line, with the raw rows of these transactions. */
const deliveredOf = (...transactionIds: string[]): ClaimResult => ({ code: 'SUCCESS', status: 'SUCCESS', message: '', claims: [line], rawTransactions: transactionIds.map((id) => ({ transactionid: id })) });
/** A claim that delivered one line, its answer without the raw rows. */
const delivered: ClaimResult = { code: 'SUCCESS', status: 'SUCCESS', message: '', claims: [line] };

/** A hint given at `since` (the loop's clock), naming `transactionId` or none, living `life` ms. */
const hint = (since: number, transactionId?: string, life = 600_000): HeldHint => checkHint(transactionId === undefined ? { expiresInMs: life } : { transactionId, expiresInMs: life }, since);

/** A book for a loop of `maxCallsPerSecond`, and what it reported satisfied. */
function newBook(maxCallsPerSecond = 10) {
  const satisfied: Array<[string, string | undefined]> = [];
  const book = new HintBook(maxCallsPerSecond, (name, transactionId) => satisfied.push([name, transactionId]));
  return { book, satisfied };
}

/** Counts the calls to a method of `Map.prototype` while `run` runs (what the book's bookkeeping costs). */
function countMapCalls(method: 'get' | 'keys' | typeof Symbol.iterator, run: () => void): number {
  const proto = Map.prototype as unknown as Record<PropertyKey, (...args: unknown[]) => unknown>;
  const original = proto[method]!;
  let count = 0;
  proto[method] = function (this: unknown, ...args: unknown[]) {
    count += 1;
    return original.apply(this, args);
  };
  try {
    run();
  } finally {
    proto[method] = original;
  }
  return count;
}

describe('a hint checked', () => {
  it('naming a transaction waits for it; naming none waits for no transaction, any delivery satisfies it', () => {
    expect(checkHint({ transactionId: 't1', expiresInMs: 60_000 }, 5)).toStrictEqual({ transactionIds: ['t1'], any: false, since: 5, until: 60_005 });
    expect(checkHint({}, 5)).toStrictEqual({ transactionIds: [], any: true, since: 5, until: 600_005 });
    expect(checkHint(undefined, 5)).toStrictEqual({ transactionIds: [], any: true, since: 5, until: 600_005 });
  });
});

describe('hints joined for one player', () => {
  it('a hint naming none, given while the hint waits for a transaction: any delivery satisfies it now', () => {
    const { book } = newBook();
    expect(book.add('Abe', hint(0, 't1'), 0, true)).toBe('held');
    expect(book.add('Abe', hint(1_000), 1_000, true)).toBe('held');
    expect(book.active('Abe', 2_000)).toMatchObject({ transactionIds: ['t1'], any: true });
    book.answered('Abe', deliveredOf('t9'), 3_000);
    expect(book.size).toBe(0);
  });

  it('a transaction given while the hint names none: it still waits for any delivery, and for the transaction', () => {
    const { book } = newBook();
    book.add('Abe', hint(0), 0, true);
    expect(book.add('Abe', hint(1_000, 't1'), 1_000, true)).toBe('held');
    expect(book.active('Abe', 2_000)).toMatchObject({ transactionIds: ['t1'], any: true });
  });

  it('a transaction given while the player is away: the joined hint still lives only while they are online here', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1'), 0, false);
    expect(book.add('Abe', hint(500_000, 't2'), 500_000, false)).toBe('held');
    // Its 10 minutes from 500 s would be over at 1,100 s had its life run while away.
    expect(book.active('Abe', 1_200_000)).toMatchObject({ transactionIds: ['t1', 't2'] });
    book.back('Abe', 1_200_000);
    expect(book.active('Abe', 1_799_999)).toBeDefined();
    expect(book.active('Abe', 1_800_000)).toBeUndefined();
  });
});

describe('the memory of hints ended', () => {
  it('a transaction whose hint ended is refused for an hour from then, not a millisecond more', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.end('Abe', 't1', 1_000);
    expect(book.add('Abe', hint(1_000 + HINT_MAX_MS - 1, 't1'), 1_000 + HINT_MAX_MS - 1, true)).toBe('expired');
    expect(book.add('Abe', hint(1_000 + HINT_MAX_MS, 't1'), 1_000 + HINT_MAX_MS, true)).toBe('held');
  });

  it('a hint naming none, satisfied, refuses that player\'s next hint naming none only, not another player\'s', () => {
    const { book } = newBook();
    book.add('Abe', hint(0), 0, true);
    book.answered('Abe', delivered, 1_000);
    expect(book.add('Bob', hint(2_000), 2_000, true)).toBe('held');
    expect(book.add('Abe', hint(2_000), 2_000, true)).toBe('expired');
  });

  it('a hint naming a transaction, expired: the player\'s next hint naming none is held', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1', 10_000), 0, true);
    expect(book.active('Abe', 10_000)).toBeUndefined();
    expect(book.add('Abe', hint(10_000, 't1'), 10_000, true)).toBe('expired');
    expect(book.add('Abe', hint(10_000), 10_000, true)).toBe('held');
  });

  it('keeps the 10,000 latest: the oldest is forgotten first', () => {
    const { book } = newBook();
    for (let i = 0; i <= HINT_LIMIT; i++) {
      book.add(`P${i}`, hint(0, `t${i}`), 0, true);
      book.end(`P${i}`, `t${i}`, 0);
    }
    expect(book.add('Q', hint(1, 't1'), 1, true)).toBe('expired');
    expect(book.add('Q', hint(1, 't0'), 1, true)).toBe('held');
  });
});

describe('a hint ended in part (a row of a shared journal gone: delivered on another node)', () => {
  it('a transaction it does not name: nothing changes, and nothing is spent', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.end('Abe', 't9', 1_000);
    expect(book.active('Abe', 1_000)).toMatchObject({ transactionIds: ['t1'] });
    expect(book.add('Abe', hint(2_000, 't9'), 2_000, true)).toBe('held');
    expect(book.active('Abe', 2_000)).toMatchObject({ transactionIds: ['t1', 't9'] });
  });

  it('one transaction of two: the other still waits', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.add('Abe', hint(0, 't2'), 0, true);
    book.end('Abe', 't1', 1_000);
    expect(book.active('Abe', 1_000)).toMatchObject({ transactionIds: ['t2'] });
  });

  it('the naming of none, on a hint naming only a transaction: nothing changes, and the player\'s hint naming none is still held after', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.end('Abe', undefined, 1_000);
    expect(book.active('Abe', 1_000)).toMatchObject({ transactionIds: ['t1'], any: false });
    expect(book.add('Abe', hint(2_000), 2_000, true)).toBe('held');
  });

  it('a hint naming none ends with its naming of none', () => {
    const { book } = newBook();
    book.add('Abe', hint(0), 0, true);
    book.end('Abe', undefined, 1_000);
    expect(book.size).toBe(0);
  });

  it('a hint naming a transaction and none ends once both are ended, in either order', () => {
    const { book } = newBook();
    book.add('Abe', hint(0), 0, true);
    book.add('Abe', hint(0, 't1'), 0, true);
    book.end('Abe', 't1', 1_000);
    expect(book.size).toBe(1);
    book.end('Abe', undefined, 1_000);
    expect(book.size).toBe(0);
    book.add('Bob', hint(0), 0, true);
    book.add('Bob', hint(0, 't2'), 0, true);
    book.end('Bob', undefined, 1_000);
    expect(book.size).toBe(1);
    book.end('Bob', 't2', 1_000);
    expect(book.size).toBe(0);
  });
});

describe('a claim answered', () => {
  it('a preview, or a success that delivered nothing, satisfies nothing', () => {
    const { book, satisfied } = newBook();
    book.add('Abe', hint(0), 0, true);
    book.answered('Abe', { code: 'PREVIEW', status: 'PREVIEW', message: '', claims: [line], rawTransactions: [{ transactionid: 't1' }] }, 1_000);
    book.answered('Abe', { code: 'SUCCESS', status: 'SUCCESS', message: '', claims: [] }, 1_000);
    expect(book.size).toBe(1);
    expect(satisfied).toEqual([]);
    expect(book.giving('Abe', 1_000)).toBe(false);
  });

  it('any delivery satisfies a hint naming none, its raw rows whatever they are', () => {
    const { book, satisfied } = newBook();
    book.add('Abe', hint(0), 0, true);
    book.answered('Abe', deliveredOf('t9'), 1_000);
    expect(book.size).toBe(0);
    expect(satisfied).toEqual([['Abe', undefined]]);
  });

  it('without raw rows, a delivery satisfies every transaction the hint names (and the naming of none only when it named none)', () => {
    const { book, satisfied } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.add('Abe', hint(0, 't2'), 0, true);
    book.answered('Abe', delivered, 1_000);
    expect(book.size).toBe(0);
    expect(satisfied).toEqual([
      ['Abe', 't1'],
      ['Abe', 't2'],
    ]);
  });

  it('with raw rows, only the transactions delivered are satisfied and spent; the others still wait', () => {
    const { book, satisfied } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.add('Abe', hint(0, 't2'), 0, true);
    book.answered('Abe', deliveredOf('t1'), 1_000);
    expect(satisfied).toEqual([['Abe', 't1']]);
    expect(book.active('Abe', 1_000)).toMatchObject({ transactionIds: ['t2'] });
    expect(book.add('Abe', hint(2_000, 't2'), 2_000, true)).toBe('held');
    expect(book.add('Abe', hint(2_000, 't1'), 2_000, true)).toBe('expired');
  });

  it('a delivery of nothing the hint names: no purchase of it to give, the player\'s runs are as before', () => {
    const { book, satisfied } = newBook();
    book.add('Abe', hint(0, 't1'), 0, true);
    book.answered('Abe', deliveredOf('t9'), 1_000);
    expect(satisfied).toEqual([]);
    expect(book.giving('Abe', 1_000)).toBe(false);
    expect(book.size).toBe(1);
  });
});

describe('a hinted purchase claimed, not given yet', () => {
  it('keeps the player\'s runs hinted until the hint would have expired, and no longer', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1', 60_000), 0, true);
    book.answered('Abe', delivered, 1_000);
    expect(book.giving('Abe', 30_000)).toBe(true);
    expect(book.giving('Abe', 59_999)).toBe(true);
    expect(book.giving('Abe', 60_000)).toBe(false);
  });

  it('its give planned: planned in the hints\' share, and the player\'s runs stay hinted', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1', 60_000), 0, true);
    book.answered('Abe', delivered, 1_000);
    expect(book.planGive('Abe', 11_000, 1_000)).toBe(11_000);
    expect(book.giving('Abe', 2_000)).toBe(true);
    expect(book.planGive('Abe', 21_000, 11_000)).toBe(21_000);
  });

  it('its give due once the hint would have expired: not planned, and forgotten', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1', 60_000), 0, true);
    book.answered('Abe', delivered, 1_000);
    expect(book.planGive('Abe', 60_000, 50_000)).toBeUndefined();
    expect(book.giving('Abe', 50_001)).toBe(false);
  });

  it('given: forgotten', () => {
    const { book } = newBook();
    book.add('Abe', hint(0, 't1', 60_000), 0, true);
    book.answered('Abe', delivered, 1_000);
    book.given('Abe');
    expect(book.giving('Abe', 2_000)).toBe(false);
  });

  it('at most 10,000 are kept, the oldest forgotten first; one over, once asked, frees its place', () => {
    const { book } = newBook();
    const claimed = (name: string, life: number) => {
      book.add(name, hint(0, undefined, life), 0, true);
      book.answered(name, delivered, 0);
    };
    claimed('Old', HINT_MAX_MS);
    claimed('Brief', 10_000);
    for (let i = 2; i < HINT_LIMIT; i++) claimed(`P${i}`, HINT_MAX_MS);
    // 10,000 kept; the brief one, over and asked, is forgotten: the next takes its place.
    expect(book.giving('Brief', 10_000)).toBe(false);
    claimed('New', HINT_MAX_MS);
    expect(book.giving('Old', 20_000)).toBe(true);
    // One more: the oldest is forgotten, the others kept.
    claimed('Newer', HINT_MAX_MS);
    expect(book.giving('Old', 20_000)).toBe(false);
    expect(book.giving('P2', 20_000)).toBe(true);
    expect(book.giving('Newer', 20_000)).toBe(true);
  });
});

describe('a book full of live hints (10,000)', () => {
  /** A book holding 10,000 hints for online players, the first living 10 s, the others 10 minutes. */
  function fullBook() {
    const { book } = newBook();
    for (let i = 0; i < HINT_LIMIT; i++) book.add(`P${i}`, hint(0, undefined, i === 0 ? 10_000 : 600_000), 0, true);
    return book;
  }

  it('refuses a hint for another player as full until a hint expires, and holds it in the very millisecond one does', () => {
    const book = fullBook();
    expect(book.add('X', hint(5_000), 5_000, true)).toBe('full');
    expect(book.add('X', hint(9_999), 9_999, true)).toBe('full');
    expect(book.add('X', hint(10_000), 10_000, true)).toBe('held');
    expect(book.size).toBe(HINT_LIMIT);
  });

  it('refuses a flood of hints at the cost of one look at the book, not one per hint refused', () => {
    const book = fullBook();
    const outcomes: string[] = [];
    const walks = countMapCalls(Symbol.iterator, () => {
      for (let i = 0; i < 100; i++) outcomes.push(book.add(`X${i}`, hint(5_000), 5_000, true));
    });
    expect(outcomes).toEqual(Array.from({ length: 100 }, () => 'full'));
    expect(walks).toBe(1);
  });
});

describe('the hinted runs planned', () => {
  it('a window after the last call for the first 5 minutes of the hint, then every 20 s, on a clock that does not start at 0', () => {
    const { book } = newBook();
    const since = 1_000_000;
    book.add('Abe', hint(since, undefined, HINT_MAX_MS), since, true);
    expect(book.planAt('Abe', since + 1_000, since + 1_000)).toBe(since + 11_000);
    expect(book.planAt('Abe', since + 299_999, since + 299_999)).toBe(since + 309_999);
    expect(book.planAt('Abe', since + 300_000, since + 300_000)).toBe(since + 320_000);
  });

  it('at the very millisecond a window after the last call, not at the start of its second', () => {
    const { book } = newBook();
    book.add('Abe', hint(0), 0, true);
    expect(book.planAt('Abe', 500, 1_000)).toBe(10_500);
  });

  it('at most 30 % of maxCallsPerSecond in one second: the next in the first second with room, at its start', () => {
    const { book } = newBook(10);
    for (const name of ['A', 'B', 'C', 'D']) book.add(name, hint(0), 0, true);
    expect(['A', 'B', 'C', 'D'].map((name) => book.planAt(name, 500, 1_000))).toEqual([10_500, 10_500, 10_500, 11_000]);
  });

  it('the seconds booked ahead stay booked through an idle time: a share is never spent twice', () => {
    const { book } = newBook(10);
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F', 'G']) book.add(name, hint(0, undefined, HINT_MAX_MS), 0, true);
    // Three runs in second 100, three in second 50.
    expect(['A', 'B', 'C'].map((name) => book.planAt(name, 90_500, 0))).toEqual([100_500, 100_500, 100_500]);
    expect(['D', 'E', 'F'].map((name) => book.planAt(name, 40_000, 0))).toEqual([50_000, 50_000, 50_000]);
    // At second 50, after 50 s without a plan: both seconds are still full.
    expect(book.planAt('G', 90_500, 50_000)).toBe(101_000);
    expect(book.planAt('A', 40_000, 50_000)).toBe(51_000);
  });

  it('the seconds gone by are forgotten, one by one or all at once after an idle time', () => {
    const { book } = newBook(1);
    const names = Array.from({ length: 7 }, (_, i) => `P${i}`);
    for (const name of names) book.add(name, hint(0, undefined, HINT_MAX_MS), 0, true);
    // One run a second: seconds 0 to 4.
    expect(names.slice(0, 5).map((name) => book.planAt(name, -10_000, 0))).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(book.plannedSeconds).toBe(5);
    // A second later: second 0 is gone, second 5 booked.
    expect(book.planAt('P5', -10_000, 1_000)).toBe(5_000);
    expect(book.plannedSeconds).toBe(5);
    // Long after: only the second booked now is kept.
    expect(book.planAt('P6', 1_000_000, 1_000_000)).toBe(1_020_000);
    expect(book.plannedSeconds).toBe(1);
  });

  it('a flood of hinted runs costs a few look-ups each, not one for each second full already', () => {
    const { book } = newBook(1);
    const names = Array.from({ length: 1_000 }, (_, i) => `P${i}`);
    for (const name of names) book.add(name, hint(0, undefined, HINT_MAX_MS), 0, true);
    let last: number | undefined;
    const lookups = countMapCalls('get', () => {
      for (const name of names) last = book.planAt(name, -10_000, 0);
    });
    expect(last).toBe(999_000);
    expect(lookups).toBeLessThan(names.length * 10);
    // And the seconds gone by are looked over once each, not at every plan.
    const scans = countMapCalls('keys', () => {
      for (const name of names) book.planAt(name, 0, 500);
    });
    expect(scans).toBeLessThanOrEqual(1);
  });
});
