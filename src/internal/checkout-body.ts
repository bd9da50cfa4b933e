/**
 * The checkout's form body, built from the caller's cart with every field checked before
 * anything is sent. Apart from `wire/checkout.ts` so that the wire format imports none of
 * the client's machinery.
 *
 * @module
 * @internal
 */
import type { Operation } from '../errors.js';
import type { CheckoutInput } from '../wire/checkout.js';
import { checkIntegerInRange, checkNonBlank, checkPlayerName, checkPositiveInteger, checkRequiredObject, describe, fail, MAX_QUANTITY } from './validate.js';

const op: Operation = 'checkout';

/**
 * The checkout's form body from the caller's input, every field checked before anything
 * is sent; throws an `InvalidInputError` naming the first field that breaks a rule.
 * @internal
 */
export function checkoutBody(input: CheckoutInput): { body: Record<string, string>; username: string } {
  const fields = checkRequiredObject(input, ['username', 'items', 'coupon'], 'username and items', 'input', op);
  const username = checkPlayerName(fields.username, 'input.username', op);
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
