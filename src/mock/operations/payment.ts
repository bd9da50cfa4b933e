/**
 * Payment: the pay page a checkout's `redirect` points at, and the admin calls that pay
 * or cancel a checkout (I-19 in docs/testing-with-the-mock.md).
 */
import { MockAdminError } from '../service/errors.js';
import { JAVA_INT_MAX, money } from '../service/rules.js';
import { checkoutRecord, isoNow, type CheckoutState, type MockState } from '../service/state.js';
import type { CheckoutRecord } from '../service/types.js';
import type { WireResponse } from '../service/wire.js';

function checkoutFor(state: MockState, transactionId: string): CheckoutState {
  const checkout = state.checkouts.get(transactionId);
  if (checkout === undefined) {
    throw new MockAdminError(404, `No checkout has the transaction id "${transactionId}".`);
  }
  return checkout;
}

/**
 * Completes a pending checkout: its rows become `Paid`, hence claimable. Completing a
 * paid checkout again changes nothing.
 *
 * @throws MockAdminError 404 for an unknown id, 409 for a cancelled checkout.
 */
export function completePayment(state: MockState, transactionId: string): CheckoutRecord {
  const checkout = checkoutFor(state, transactionId);
  if (checkout.status === 'cancelled') {
    throw new MockAdminError(409, `The checkout "${transactionId}" was cancelled; it cannot be paid.`);
  }
  if (checkout.status === 'pending') {
    checkout.status = 'paid';
    checkout.paid = isoNow(state);
    for (const row of checkout.server.purchases) {
      if (row.transactionid === transactionId) {
        row.paymentstatus = 'Paid';
      }
    }
  }
  return checkoutRecord(checkout);
}

/**
 * Cancels a pending checkout: it becomes `cancelled`, its rows are removed and its stock
 * released. Cancelling a cancelled checkout again changes nothing.
 *
 * @throws MockAdminError 404 for an unknown id, 409 for a paid checkout.
 */
export function cancelPayment(state: MockState, transactionId: string): CheckoutRecord {
  const checkout = checkoutFor(state, transactionId);
  if (checkout.status === 'paid') {
    throw new MockAdminError(409, `The checkout "${transactionId}" is already paid; it cannot be cancelled.`);
  }
  if (checkout.status === 'pending') {
    checkout.status = 'cancelled';
    const { server } = checkout;
    for (const line of checkout.lines) {
      const product = server.products.get(line.id);
      // A product removed or made unlimited since has no stock to give back; a stock raised
      // since stays within a Java int.
      if (product !== undefined && product.stock != null) {
        product.stock = Math.min(JAVA_INT_MAX, product.stock + line.quantity);
      }
    }
    server.purchases = server.purchases.filter((row) => row.transactionid !== transactionId);
  }
  return checkoutRecord(checkout);
}

/** `GET /__mock/pay/:transactionId`: the player "pays"; answers a small HTML page. */
export function payPage(state: MockState, transactionId: string): WireResponse {
  const checkout = state.checkouts.get(transactionId);
  if (checkout === undefined) {
    return { status: 404, kind: 'html', body: page('Unknown checkout', 'No checkout has this transaction id.') };
  }
  if (checkout.status === 'cancelled') {
    return { status: 409, kind: 'html', body: page('Checkout cancelled', 'This checkout was cancelled and cannot be paid.') };
  }
  const wasPaid = checkout.status === 'paid';
  completePayment(state, transactionId);
  const units = checkout.lines.reduce((sum, line) => sum + line.quantity, 0);
  const text = wasPaid
    ? 'This checkout is already paid.'
    : `Paid ${money(checkout.total)} for ${units} ${units === 1 ? 'item' : 'items'}.`;
  return {
    status: 200,
    kind: 'html',
    body: page('Payment complete', `${text} ${checkout.username} can now claim the purchase in game.`),
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, text: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · TeamGames mock</title></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>` +
    '<p><small>TeamGames mock service: no real payment was made.</small></p></body></html>'
  );
}
