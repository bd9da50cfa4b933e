/**
 * The mock's pure rules: no state, no clock of their own (the time is an argument), no
 * transport. Every other module of the mock applies them; the tests pin them directly.
 *
 * Where a rule is an interpretation (the service's description is silent), its comment
 * names the entry of "Interpretations" in docs/testing-with-the-mock.md, where the choice
 * and its evidence are written down.
 */
import { playerNameProblem } from '../../common/player-name.js';
import type { MockSeedProduct, MockSeedSale } from './seed-types.js';
import type { PurchaseRow } from './types.js';

/** One accepted claim per player per game server in this many milliseconds. */
export const CLAIM_WINDOW_MS = 10_000;

/** Longest valid player name, in characters (code points). */
export { MAX_PLAYER_NAME_LENGTH } from '../../common/player-name.js';

/**
 * The most units one cart line (and one product over all its lines) may ask for: the bound
 * of the official Java SDK's `StoreCheckout.addItem` and of this SDK's checks (I-11).
 */
export const MAX_CART_QUANTITY = 1_000_000;

/**
 * The largest Java `int`. Every integer in the mock's answers fits one, because the
 * official Java SDK reads them into `int` fields (I-11).
 */
export const JAVA_INT_MAX = 2_147_483_647;

/** The smallest Java `int`. */
export const JAVA_INT_MIN = -2_147_483_648;

/** Where a checkout's `redirect` points, under the request's own origin. */
export const PAY_PAGE_PATH = '/__mock/pay/';

/** Rounds money to cents; the epsilon keeps 1.005 from rounding down. */
export function roundCents(amount: number): number {
  return Math.round((amount + Number.EPSILON) * 100) / 100;
}

/** Money as the texts show it: `12.50`. */
export const money = (amount: number): string => amount.toFixed(2);

/**
 * Player names (I-13): non-blank, at most 64 characters (code points), no control or
 * bidi-override characters, no lone surrogate. Spaces, underscores and 17-digit Steam ids
 * are all fine; letter case is kept. The rule is the SDK's own (one module for both), so a
 * name the mock takes a purchase for is one the SDK claims for.
 */
export function isValidPlayerName(name: unknown): name is string {
  return typeof name === 'string' && playerNameProblem(name) === undefined;
}

/**
 * The v4 `product_id` (I-4): the merchant id as an int when it is an integer string that
 * fits a Java `int`, else 0; `product_id_string` always carries the merchant id.
 */
export function productIdAsInt(productId: string): number {
  if (!/^-?\d+$/.test(productId)) {
    return 0;
  }
  const value = Number(productId);
  return value >= JAVA_INT_MIN && value <= JAVA_INT_MAX ? value : 0;
}

/** Windows include their start and exclude their end (I-14). */
export function insideWindow(item: { startDate?: string; endDate?: string }, now: number): boolean {
  return (
    (item.startDate === undefined || now >= Date.parse(item.startDate)) &&
    (item.endDate === undefined || now < Date.parse(item.endDate))
  );
}

/** The product's sales active at `now`. */
export function activeSales(product: MockSeedProduct, now: number): MockSeedSale[] {
  return (product.sales ?? []).filter((sale) => insideWindow(sale, now));
}

/** The price a sale gives, before rounding; may be below 0. */
function salePrice(product: MockSeedProduct, sale: MockSeedSale): number {
  return sale.saleType === 'percentage'
    ? product.price * (1 - (sale.discountPercentage ?? 0) / 100)
    : product.price - (sale.discountAmount ?? 0);
}

/** The active sale that gives the lowest price (the first of equals), if any lowers it. */
export function bestSale(product: MockSeedProduct, now: number): MockSeedSale | undefined {
  let best: MockSeedSale | undefined;
  let lowest = product.price;
  for (const sale of activeSales(product, now)) {
    const price = salePrice(product, sale);
    if (price < lowest) {
      best = sale;
      lowest = price;
    }
  }
  return best;
}

/** The price with the best active sale, never below 0, rounded to cents. */
export function priceWithSale(product: MockSeedProduct, now: number): number {
  const sale = bestSale(product, now);
  return roundCents(Math.max(0, sale === undefined ? product.price : salePrice(product, sale)));
}

/** Enabled and inside its listing window: listed in the catalog, sold at checkout. */
export function isAvailable(product: MockSeedProduct, now: number): boolean {
  return product.disabled !== true && insideWindow(product, now);
}

/** Units to grant for `quantity` units bought: the product's units per purchase times it. */
export function unitsToGrant(product: MockSeedProduct, quantity: number): number {
  return quantity * (product.quantity ?? 1);
}

/** Which transaction keys an endpoint sends: v4 both pairs, v3 the legacy pair only. */
export type TransactionKeys = 'v4' | 'v3';

/**
 * A purchase row as the claims send it. v4 sends both quantity pairs, v3 only the legacy
 * one (`product_amount`, `amount_purchased`). `message` is sent only when the seed's
 * `transactionMessage` switch is set (I-9).
 */
export function toTransaction(row: PurchaseRow, keys: TransactionKeys, message: string | undefined): Record<string, unknown> {
  return {
    player_name: row.username,
    product_id: productIdAsInt(row.productid),
    product_id_string: row.productid,
    product_name: row.productname,
    // The unit price the player paid before any coupon (I-5).
    product_price: row.pricewithdiscount,
    ...(keys === 'v4' ? { quantity_to_grant: row.givequantity, quantity_purchased: row.quantity } : {}),
    product_amount: row.givequantity,
    amount_purchased: row.quantity,
    ...(message === undefined ? {} : { message }),
  };
}
