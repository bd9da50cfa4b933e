/**
 * How a delivery becomes its report (src/delivery/engine/report.ts): the code and the player's
 * text for each outcome, one window per player, and when a claim answer's lines can be
 * tracked by invoice (never when two lines share one, or one has none).
 */
import { describe, expect, it, vi } from 'vitest';
import { deliveryReport, failed, linesOf, mergedWindows, newRun, outcomeOf, type Run } from '../../src/delivery/engine/report.js';
import { JournalError, TimeoutError } from '../../src/errors.js';
import type { ClaimResult, Transaction } from '../../src/wire/claim.js';

const item = (id: number): Transaction => ({ player_name: 'Ann', product_id: id, product_id_string: String(id), product_name: `P${id}`, product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 });
const delivered = (id: number) => ({ ...item(id), deliveryId: `invoice:${id}` });
const run = (changes: Partial<Run> = {}): Run => ({ ...newRun('deliver', { claim: async () => ({}) as ClaimResult, onEvent: undefined }), ...changes });
const claimAnswer = (invoices: unknown[], extra: Record<string, unknown> = {}): ClaimResult =>
  ({ status: 'SUCCESS', code: 'SUCCESS', message: 'ok', claims: invoices.map((_, i) => item(i + 1)), rawTransactions: invoices.map((invoice) => (invoice === undefined ? {} : { invoice })), ...extra }) as ClaimResult;

describe('deliveryReport', () => {
  const noItems = { code: 'NO_ITEMS' as const, message: 'You have no items to claim.' };

  it('nothing granted, nothing failed: the outcome as it is', () => {
    expect(deliveryReport(run(), noItems, 0)).toEqual({ code: 'NO_ITEMS', granted: [], failed: [], pending: 0, message: noItems.message });
  });

  it('something granted: SUCCESS, with the success text when the outcome was not a success itself', () => {
    const report = deliveryReport(run({ granted: [delivered(1)] }), noItems, 0);
    expect(report.code).toBe('SUCCESS');
    expect(report.message).toBe('Transaction has been completed. Thank you for the purchase!');
    expect(deliveryReport(run({ granted: [delivered(1)] }), { code: 'SUCCESS', message: 'Enjoy!' }, 0).message).toBe('Enjoy!');
  });

  it('something failed: PARTIAL, whatever was granted, and the player told the rest comes next time', () => {
    const report = deliveryReport(run({ granted: [delivered(1)], failed: [{ item: delivered(2), error: new Error('x') }] }), { code: 'SUCCESS', message: 'Enjoy!' }, 1);
    expect(report.code).toBe('PARTIAL');
    expect(report.message).toBe('Some items could not be delivered yet; they will be delivered on your next claim.');
    expect(report.pending).toBe(1);
  });

  it('a window found now or known from before: never "already claimed"; staff can check, after the partial text when something failed', () => {
    const window = { playerName: 'Ann', from: 1, to: 2 };
    const staff = 'We could not confirm the delivery of every recent purchase. If something you bought is missing, staff can check it for you.';
    expect(deliveryReport(run({ unverified: [window] }), { code: 'ALREADY_CLAIMED', message: 'already' }, 0)).toMatchObject({ message: staff, unverified: window });
    expect(deliveryReport(run(), { code: 'ALREADY_CLAIMED', message: 'already' }, 0, true)).toMatchObject({ message: staff });
    expect(deliveryReport(run(), { code: 'ALREADY_CLAIMED', message: 'already' }, 0, true)).not.toHaveProperty('unverified');
    expect(deliveryReport(run({ failed: [{ item: delivered(2), error: new Error('x') }] }), noItems, 1, true).message).toBe(`Some items could not be delivered yet; they will be delivered on your next claim. ${staff}`);
  });

  it("carries the outcome's error, else the run's; and the journal's failure when there was one", () => {
    const outcomeError = new TimeoutError({ operation: 'claim', endpoint: '/x', host: 'h', basePath: '', attempts: 1 }, 10);
    const runError = new JournalError('odd answer');
    const journalError = new JournalError('disk full');
    expect(deliveryReport(run({ error: runError }), { code: 'ERROR', message: 'm', error: outcomeError }, 0).error).toBe(outcomeError);
    expect(deliveryReport(run({ error: runError }), noItems, 0).error).toBe(runError);
    expect(deliveryReport(run({ journalError }), noItems, 0).journalError).toBe(journalError);
    expect(deliveryReport(run(), noItems, 0)).not.toHaveProperty('journalError');
    expect(deliveryReport(run(), noItems, 0)).not.toHaveProperty('error');
  });
});

describe('mergedWindows', () => {
  it('one window per player, from the earliest start to the latest end, in the order players first appear', () => {
    expect(
      mergedWindows([
        { playerName: 'Ann', from: 5, to: 9 },
        { playerName: 'Bo', from: 1, to: 2 },
        { playerName: 'Ann', from: 3, to: 7 },
        { playerName: 'Ann', from: 4, to: 12 },
      ]),
    ).toEqual([
      { playerName: 'Ann', from: 3, to: 12 },
      { playerName: 'Bo', from: 1, to: 2 },
    ]);
  });

  it('never changes the windows it was given', () => {
    const first = { playerName: 'Ann', from: 5, to: 9 };
    mergedWindows([first, { playerName: 'Ann', from: 1, to: 20 }]);
    expect(first).toEqual({ playerName: 'Ann', from: 5, to: 9 });
  });
});

describe('linesOf: the lines of a claim answer by invoice', () => {
  it('pairs each claim with its raw row, numeric invoices as text', () => {
    expect(linesOf(claimAnswer(['a1', 7]))).toEqual(new Map([['a1', item(1)], ['7', item(2)]]));
  });

  it.each<[string, ClaimResult]>([
    ['no raw rows', claimAnswer(['a'], { rawTransactions: undefined })],
    ['fewer raw rows than claims', claimAnswer(['a', 'b'], { rawTransactions: [{ invoice: 'a' }] })],
    ['a row without an invoice', claimAnswer(['a', undefined])],
    ['an empty invoice', claimAnswer(['a', ''])],
    ['an invoice that is neither text nor a number', claimAnswer(['a', { id: 1 }])],
    ['two lines with one invoice', claimAnswer(['a', 'a'])],
    ['two lines whose invoices read the same as text', claimAnswer([7, '7'])],
  ])('%s: untrackable (undefined)', (_name, answer) => {
    expect(linesOf(answer)).toBeUndefined();
  });
});

describe('outcomes', () => {
  it('a preview reads as NO_ITEMS when empty, SUCCESS otherwise; other answers keep their code and text', () => {
    expect(outcomeOf({ status: 'PREVIEW', code: 'PREVIEW', message: 'p', claims: [] } as ClaimResult)).toEqual({ code: 'NO_ITEMS', message: 'p' });
    expect(outcomeOf({ status: 'PREVIEW', code: 'PREVIEW', message: 'p', claims: [item(1)] } as ClaimResult)).toEqual({ code: 'SUCCESS', message: 'p' });
    expect(outcomeOf({ status: 'ERROR', code: 'ALREADY_CLAIMED', message: 'a', claims: [] } as ClaimResult)).toEqual({ code: 'ALREADY_CLAIMED', message: 'a' });
  });

  it("a failure that is not the SDK's own is rethrown, never reported as an outcome", () => {
    const bug = new TypeError('a bug');
    expect(() => failed(bug)).toThrow(bug);
    expect(failed(new JournalError('x'))).toMatchObject({ code: 'ERROR', message: 'The store is unavailable right now. Your purchase is safe; try again later.' });
  });
});

describe("the player's texts, word for word", () => {
  // The modules are loaded inside the test: the texts are set when report.ts loads.
  it('partial, unknown outcome, unavailable store, unverified purchases', async () => {
    vi.resetModules();
    const fresh = await import('../../src/delivery/engine/report.js');
    const errors = await import('../../src/errors.js');
    const details = { operation: 'claim' as const, endpoint: '/x', host: 'h', basePath: '', attempts: 1 };
    const noItems = { code: 'NO_ITEMS' as const, message: 'You have no items to claim.' };
    expect(fresh.deliveryReport(run({ failed: [{ item: delivered(1), error: new Error('full') }] }), noItems, 1).message).toBe('Some items could not be delivered yet; they will be delivered on your next claim.');
    expect(fresh.failed(new errors.ClaimOutcomeUnknownError(details, 'Ann', 'timeout', 'no answer')).message).toBe('The store did not answer in time. Your purchase is safe; try again in a few seconds.');
    expect(fresh.failed(new errors.JournalError('disk full')).message).toBe('The store is unavailable right now. Your purchase is safe; try again later.');
    expect(fresh.deliveryReport(run({ unverified: [{ playerName: 'Ann', from: 1, to: 2 }] }), noItems, 0).message).toBe(
      'We could not confirm the delivery of every recent purchase. If something you bought is missing, staff can check it for you.',
    );
  });
});
