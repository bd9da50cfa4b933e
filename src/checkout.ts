/**
 * What only a checkout needs: the checks of its cart and the form body built from it, and
 * the reading of its answer into a {@link CheckoutResult}. Loaded on the first checkout,
 * before anything is checked or sent: bridges that only claim never need it.
 *
 * @module
 */
import { z } from 'zod';
import type { Operation } from './errors.js';
import { checkIntegerInRange, checkNonBlank, checkPositiveInteger, checkRequiredObject, describe, fail, MAX_QUANTITY } from './internal/validate.js';
import { WireProblem, parse } from './normalize.js';
import { compiled, optional } from './schemas.js';
import type { CheckoutInput, CheckoutResult } from './types.js';

const op: Operation = 'checkout';

/**
 * The checkout's form body from the caller's input, every field checked before anything
 * is sent; throws an `InvalidInputError` naming the first field that breaks a rule.
 * @internal
 */
export function checkoutBody(input: CheckoutInput): { body: Record<string, string>; username: string } {
  const fields = checkRequiredObject(input, ['username', 'items', 'coupon'], 'username and items', 'input', op);
  const username = checkNonBlank(fields.username, 'input.username', op);
  const items = fields.items;
  if (!Array.isArray(items)) fail('input.items', `must be an array of { id, quantity }, got ${describe(items)}`, op);
  if (items.length === 0) fail('input.items', 'must not be empty', op);
  // Only id and quantity go on the wire, whatever else the caller's objects carry.
  // Array.from visits holes too: a sparse cart must fail here, not go out as `null`.
  const cart = Array.from(items as readonly unknown[], (item, i) => {
    if (typeof item !== 'object' || item === null) fail(`input.items[${i}]`, `must be an object, got ${describe(item)}`, op);
    const { id, quantity } = item as Record<string, unknown>;
    return {
      id: checkPositiveInteger(id, `input.items[${i}].id`, op),
      quantity: checkIntegerInRange(quantity, 1, MAX_QUANTITY, `input.items[${i}].quantity`, op),
    };
  });
  const body: Record<string, string> = { username, cartItems: JSON.stringify(cart) };
  if (fields.coupon !== undefined) body['coupon'] = checkNonBlank(fields.coupon, 'input.coupon', op);
  return { body, username };
}

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

