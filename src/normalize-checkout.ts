/**
 * The checkout answer: its schema and its reading into a {@link CheckoutResult}. Loaded
 * on the first checkout, before its request is sent: bridges that only claim never need it.
 *
 * @module
 */
import { z } from 'zod';
import { WireProblem, parse } from './normalize.js';
import { compiled, optional } from './schemas.js';
import type { CheckoutResult } from './types.js';

/** A checkout answer: outcome indicators, all optional. */
export const checkoutResponseSchema = compiled(
  z.looseObject({
    status: optional(z.string()),
    statusCode: optional(z.union([z.string(), z.number()]).transform(String)),
    isFree: optional(z.boolean()),
    redirect: optional(z.string()),
    transactionId: optional(z.union([z.string(), z.number()]).transform(String)),
    message: optional(z.string()),
    error: optional(z.string()),
    productsAffected: optional(z.array(z.unknown())),
  }),
);

type Defined<T> = { [K in keyof T]?: Exclude<T[K], undefined> };

/** Copies `source` without the keys whose value is `undefined`. */
function defined<T extends object>(source: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined) out[key] = value;
  return out as Defined<T>;
}

/**
 * Checkout indicators, checked in the documented order: `error` → `statusCode "400"`
 * → `status`. A success also carries `statusCode "200"`, hence the order.
 * @internal
 */
export function checkoutFromWire(body: unknown): CheckoutResult {
  const wire = defined(parse(checkoutResponseSchema, body, 'the checkout answer does not match the schema'));
  if (wire.error !== undefined) return { ...wire, outcome: 'COUPON_REJECTED', error: wire.error };
  if (wire.statusCode === '400') return { ...wire, outcome: 'BASKET_REJECTED' };
  switch (wire.status) {
    case 'SUCCESS': {
      if (wire.transactionId === undefined) throw new WireProblem('invalid', 'a successful checkout carries no transactionId');
      if (wire.isFree === true) return { ...wire, outcome: 'FREE', transactionId: wire.transactionId, isFree: true };
      if (wire.redirect === undefined) throw new WireProblem('invalid', 'a checkout to pay carries no redirect');
      return { ...wire, outcome: 'PAYMENT_REQUIRED', transactionId: wire.transactionId, redirect: wire.redirect, isFree: false };
    }
    case 'INVALID_STOCK':
      return { ...wire, outcome: 'INVALID_STOCK', productsAffected: wire.productsAffected ?? [] };
    case 'ERROR':
      return { ...wire, outcome: 'GATEWAY_ERROR', message: wire.message ?? '' };
    default:
      throw new WireProblem('invalid', `unrecognized checkout status ${JSON.stringify(wire.status ?? null)}`);
  }
}

