/**
 * The checkout: its public types, its wire schema and the reading of its answer into a
 * {@link CheckoutResult}. The checks of a cart and the form body built from it are the
 * client's (`internal/checkout-body.ts`).
 *
 * @module
 */
import * as z from 'zod/mini';
import { WireProblem, compiled, optional, parse, scalars, schemasOnFirstUse } from './parse.js';

/** One line of a cart. */
export interface CartItem {
  /** The product's `id` (not its merchant `productId`); a positive integer. */
  id: number;
  /** How many units; an integer from 1 to 1,000,000. */
  quantity: number;
}

/** The input of {@link StorefrontClient.checkout}. */
export interface CheckoutInput {
  /** The player's in-game name (case matters: it is who can claim). */
  username: string;
  /** At least one line. Only `id` and `quantity` are sent. */
  items: readonly CartItem[];
  /** A coupon code, when the player entered one. */
  coupon?: string;
}

/** Wire fields a checkout answer may carry; kept on every outcome. */
export interface CheckoutWireFields {
  /** The wire `status`: `SUCCESS`, `INVALID_STOCK`, `ERROR` … */
  status?: string;
  /** The wire `statusCode`, as text: `"200"` on success, `"400"` for a rejected basket. */
  statusCode?: string;
  /** The service's error code on a failure, as text (e.g. `"PRODUCT_LIMIT"`), when it sent one. */
  code?: string;
  /** The service's text, when it sent one. */
  message?: string;
  /** The service's longer explanation, when it sent one. */
  extendedMessage?: string;
  /** Fields beyond these are kept as the service sent them. */
  [field: string]: unknown;
}

/** The player must pay at `redirect`; the purchase becomes claimable once paid. */
export interface CheckoutPaymentRequired extends CheckoutWireFields {
  /** Discriminant: the player must pay. */
  outcome: 'PAYMENT_REQUIRED';
  /** Send the player here to pay. */
  redirect: string;
  /** The checkout's id (a UUID): it identifies the payment. */
  transactionId: string;
  /** Always `false` here. */
  isFree: false;
}

/** The cart totals zero: nothing to pay; the items are claimable at once. */
export interface CheckoutFree extends CheckoutWireFields {
  /** Discriminant: nothing to pay. */
  outcome: 'FREE';
  /** The checkout's id (a UUID). */
  transactionId: string;
  /** Always `true` here. */
  isFree: true;
}

/** Availability changed: some products are gone, disabled, out of window or out of stock. Show the cart again. */
export interface CheckoutInvalidStock extends CheckoutWireFields {
  /** Discriminant: availability changed. */
  outcome: 'INVALID_STOCK';
  /** Snapshots of the products at fault, as the service sent them. */
  productsAffected: unknown[];
}

/** The coupon was refused; show `error` to the player. */
export interface CheckoutCouponRejected extends CheckoutWireFields {
  /** Discriminant: the coupon was refused. */
  outcome: 'COUPON_REJECTED';
  /** The service's text, meant for the player. */
  error: string;
}

/** The basket breaks the gateway's limits (total, number of lines) or the store's integration is incomplete. */
export interface CheckoutBasketRejected extends CheckoutWireFields {
  /** Discriminant: the basket breaks the gateway's limits. */
  outcome: 'BASKET_REJECTED';
}

/** A gateway prerequisite is unmet (minimum charge, gateway not configured). For the store owner, not the player. */
export interface CheckoutGatewayError extends CheckoutWireFields {
  /** Discriminant: the store's payment setup is incomplete. */
  outcome: 'GATEWAY_ERROR';
  /** What is missing, for the store owner (e.g. the minimum charge). */
  message: string;
}

/**
 * A `status` the SDK does not know (the service lists its statuses "for instance"): nothing
 * to pay and nothing created that the SDK can tell of. Never treated as a success: log
 * `status`, `code` and `message`, tell the player the checkout failed, and escalate.
 */
export interface CheckoutUnknown extends CheckoutWireFields {
  /** Discriminant: an answer the SDK cannot classify. */
  outcome: 'UNKNOWN';
  /** The wire `status` as sent, e.g. `"FAILED"`. */
  status: string;
  /** The wire `code` as sent, or `''` when there was none. */
  code: string;
  /** The service's text, or `''` when there was none. */
  message: string;
}

/**
 * What {@link StorefrontClient.checkout} resolves to, discriminated on `outcome`:
 * - `PAYMENT_REQUIRED`: send the player to `redirect`.
 * - `FREE`: nothing to pay; tell the player to claim in game.
 * - `INVALID_STOCK`: refresh the catalog and show the cart again.
 * - `COUPON_REJECTED`: show `error`; let the player remove the coupon.
 * - `BASKET_REJECTED`: the cart is too large or expensive for the gateway; split it.
 * - `GATEWAY_ERROR`: the store's payment setup is incomplete; escalate to the owner.
 * - `UNKNOWN`: a `status` the SDK does not know; log `status` and `code`, never redirect.
 *
 * Every failure keeps the service's `code` when it sent one.
 * @see [Building a storefront](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/building-a-storefront.md)
 */
export type CheckoutResult =
  | CheckoutPaymentRequired
  | CheckoutFree
  | CheckoutInvalidStock
  | CheckoutCouponRejected
  | CheckoutBasketRejected
  | CheckoutGatewayError
  | CheckoutUnknown;

/** The `outcome` values of {@link CheckoutResult}. */
export type CheckoutOutcome = CheckoutResult['outcome'];

// ---------------------------------------------------------------------------
// The wire

/** The checkout's schema, built on the first checkout answer. @internal */
export const checkoutSchemas = schemasOnFirstUse(() => {
  const { playerText } = scalars();
  return {
  /** A checkout answer: outcome indicators, all optional. */
  checkoutResponse: compiled(
    z.looseObject({
      status: optional(z.string()),
      statusCode: optional(z.pipe(z.union([z.string(), z.number()]), z.transform(String))),
      code: optional(z.pipe(z.union([z.string(), z.number()]), z.transform(String))),
      isFree: optional(z.boolean()),
      redirect: optional(z.string()),
      transactionId: optional(z.pipe(z.union([z.string(), z.number()]), z.transform(String))),
      message: optional(playerText),
      error: optional(playerText),
      productsAffected: optional(z.array(z.unknown())),
    }),
  ),
  };
});

type Defined<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/** Copies `source` without the keys whose value is `undefined`. */
function defined<T extends object>(source: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}

/**
 * Checkout indicators, checked in the documented order: `error` → `statusCode "400"`
 * → `status`. A success also carries `statusCode "200"`, hence the order. A `status` it
 * does not know is `UNKNOWN`, so a new status of the service never breaks a checkout; an
 * answer with no indicator at all is not a checkout answer.
 * @internal
 */
export function readCheckout(body: unknown): CheckoutResult {
  const wire = defined(parse(checkoutSchemas().checkoutResponse, body, 'the checkout answer does not match the schema'));
  if (wire.error !== undefined) return { ...wire, outcome: 'COUPON_REJECTED', error: wire.error };
  if (wire.statusCode === '400') return { ...wire, outcome: 'BASKET_REJECTED' };
  switch (wire.status) {
    case 'SUCCESS': {
      if (wire.transactionId === undefined) throw new WireProblem('a successful checkout carries no transactionId');
      if (wire.isFree === true) return { ...wire, outcome: 'FREE', transactionId: wire.transactionId, isFree: true };
      if (wire.redirect === undefined) throw new WireProblem('a checkout to pay carries no redirect');
      return { ...wire, outcome: 'PAYMENT_REQUIRED', transactionId: wire.transactionId, redirect: wire.redirect, isFree: false };
    }
    case 'INVALID_STOCK':
      return { ...wire, outcome: 'INVALID_STOCK', productsAffected: wire.productsAffected ?? [] };
    case 'ERROR':
      return { ...wire, outcome: 'GATEWAY_ERROR', message: wire.message ?? '' };
    case undefined:
      throw new WireProblem('the checkout answer carries no status, error or statusCode "400"');
    default:
      return { ...wire, outcome: 'UNKNOWN', status: wire.status, code: wire.code ?? '', message: wire.message ?? '' };
  }
}

