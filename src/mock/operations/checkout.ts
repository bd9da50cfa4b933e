/**
 * The checkout operation: `POST /api/v2/client/global/checkout/complete`. Every failure
 * answer carries a `code` (I-7); the checks run in the order of I-16.
 */
import { z } from 'zod';
import { describeIssues } from '../service/issues.js';
import type { MockSeedCoupon, MockSeedProduct } from '../service/seed.js';
import {
  JAVA_INT_MAX,
  MAX_CART_QUANTITY,
  PAY_PAGE_PATH,
  bestSale,
  insideWindow,
  money,
  priceWithSale,
  roundCents,
  unitsToGrant,
} from '../service/rules.js';
import { isoNow, newPurchaseRow, resolveServer, type CheckoutState, type MockState, type ServerState } from '../service/state.js';
import { CHECKOUT_CODE, TEXT } from '../service/texts.js';
import type { CheckoutLine } from '../service/types.js';
import { type WireRequest, type WireResponse, decodeBody, positiveInt, readFields } from '../service/wire.js';
import { playerNameProblem } from '../../common/player-name.js';

/** Checkout body; `cartItems` is the JSON text of the array, decoded by {@link cartItemsSchema}. */
const checkoutBodySchema = z.strictObject({
  // [interpretation I-13] The buyer is the player who claims: a name no claim would accept is refused here.
  username: z.string().superRefine((name, ctx) => {
    const problem = playerNameProblem(name);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `expected a valid player name (${problem})` });
  }),
  cartItems: z.string(),
  // [interpretation I-1] The real field name is undocumented; change it here.
  coupon: z.string().optional(),
});

/**
 * The decoded `cartItems` array: non-empty, only `id` and `quantity`, both positive
 * integers, a quantity at most 1,000,000 (I-11).
 */
const cartItemsSchema = z
  .array(
    z.strictObject({
      id: positiveInt,
      quantity: positiveInt.max(MAX_CART_QUANTITY, { error: `expected at most ${MAX_CART_QUANTITY} units` }),
    }),
  )
  .min(1, { error: 'expected at least one cart item' });

type CartItem = { id: number; quantity: number };

const answer = (body: Record<string, unknown>, status = 200): WireResponse => ({ status, body });
const unparseable = (problem: string): WireResponse =>
  answer({ code: CHECKOUT_CODE.unparseable, message: TEXT.checkoutUnparseable(problem) }, 404);
const basketRejected = (code: string, message: string): WireResponse => answer({ statusCode: '400', code, message });
const gatewayError = (code: string, message: string): WireResponse => answer({ status: 'ERROR', code, message });

/**
 * Checks, in order: key (401) → body and cart (404) → availability (`INVALID_STOCK`) →
 * coupon (`error`) → units to grant (`statusCode "400"`) → total: zero is free; above zero
 * the gateway decides (`status "ERROR"` or `statusCode "400"`), else the player pays at
 * the mock's pay page.
 */
export function checkout(state: MockState, request: WireRequest): WireResponse {
  const server = resolveServer(state, request, 'base64');
  if (server === undefined) {
    return answer({ status: 'UNAUTHORIZED', code: CHECKOUT_CODE.unauthorized, message: TEXT.checkoutUnauthorized }, 401);
  }
  const body = readFields(checkoutBodySchema, decodeBody(request, ['json']));
  if (!body.ok) {
    return unparseable(body.problem);
  }
  const items = readCart(body.value.cartItems);
  if (typeof items === 'string') {
    return unparseable(items);
  }

  const now = state.clock.now();
  const unavailable = unavailableItems(server, items, now);
  if (unavailable !== undefined) {
    return answer(unavailable);
  }

  let coupon: MockSeedCoupon | undefined;
  if (body.value.coupon !== undefined) {
    const code = body.value.coupon;
    // [interpretation I-2] Coupon codes match ignoring letter case, as shop front-ends do.
    coupon = server.coupons.find((c) => c.code.toLowerCase() === code.toLowerCase());
    if (coupon === undefined) {
      return answer({ error: TEXT.couponUnknown(code), code: CHECKOUT_CODE.couponUnknown });
    }
    if (coupon.expiresAt !== undefined && now >= Date.parse(coupon.expiresAt)) {
      return answer({ error: TEXT.couponExpired(code), code: CHECKOUT_CODE.couponExpired });
    }
  }

  // [interpretation I-11] A purchase row's units to grant must fit a Java int.
  for (const { id, quantity } of items) {
    const units = unitsToGrant(server.products.get(id) as MockSeedProduct, quantity);
    if (units > JAVA_INT_MAX) {
      return basketRejected(CHECKOUT_CODE.quantityLimit, TEXT.grantTooLarge(id, units, JAVA_INT_MAX));
    }
  }

  const lines: CheckoutLine[] = items.map(({ id, quantity }) => {
    const unitPrice = priceWithSale(server.products.get(id) as MockSeedProduct, now);
    return { id, quantity, unitPrice, lineTotal: roundCents(unitPrice * quantity) };
  });
  const subtotal = roundCents(lines.reduce((sum, line) => sum + line.lineTotal, 0));
  const afterPercent = subtotal * (1 - (coupon?.percentOff ?? 0) / 100);
  const total = Math.max(0, roundCents(afterPercent - (coupon?.amountOff ?? 0)));
  const totals = { subtotal, coupon, total };

  if (total === 0) {
    const created = createCheckout(state, server, body.value.username, lines, totals, 'paid');
    return answer({ status: 'SUCCESS', statusCode: '200', isFree: true, transactionId: created.transactionId, message: TEXT.free, total });
  }
  const refusal = gatewayRefusal(server, lines.length, total);
  if (refusal !== undefined) {
    return refusal;
  }
  const created = createCheckout(state, server, body.value.username, lines, totals, 'pending');
  return answer({
    status: 'SUCCESS',
    statusCode: '200',
    isFree: false,
    redirect: `${request.origin}${PAY_PAGE_PATH}${created.transactionId}`,
    transactionId: created.transactionId,
    total,
  });
}

/** The cart lines from the `cartItems` text, or the problem that makes it unparseable. */
function readCart(cartItems: string): CartItem[] | string {
  let cartJson: unknown;
  try {
    cartJson = JSON.parse(cartItems);
  } catch {
    return 'cartItems is not the JSON text of an array';
  }
  const cart = cartItemsSchema.safeParse(cartJson);
  if (!cart.success) {
    return describeIssues('cartItems', cart.error.issues).join('; ');
  }
  // [interpretation I-11] A product's lines together obey the bound of one line.
  for (const [id, units] of unitsPerProduct(cart.data)) {
    if (units > MAX_CART_QUANTITY) {
      return TEXT.tooManyUnits(id, units, MAX_CART_QUANTITY);
    }
  }
  return cart.data;
}

/** Units asked per product, over all its lines, in the order products first appear. */
function unitsPerProduct(items: readonly CartItem[]): Map<number, number> {
  const requested = new Map<number, number>();
  for (const { id, quantity } of items) {
    requested.set(id, (requested.get(id) ?? 0) + quantity);
  }
  return requested;
}

/** Store setup first (not configured, integration incomplete), then the basket against the gateway's limits (I-10). */
function gatewayRefusal(server: ServerState, lineCount: number, total: number): WireResponse | undefined {
  const { gateway } = server;
  if (!gateway.configured) {
    return gatewayError(CHECKOUT_CODE.gatewayNotConfigured, TEXT.gatewayNotConfigured);
  }
  if (!gateway.integrationComplete) {
    return basketRejected(CHECKOUT_CODE.integrationIncomplete, TEXT.integrationIncomplete);
  }
  if (total < gateway.minimumCharge) {
    return gatewayError(CHECKOUT_CODE.belowMinimum, TEXT.belowMinimum(money(total), money(gateway.minimumCharge)));
  }
  if (gateway.maximumTotal !== undefined && total > gateway.maximumTotal) {
    return basketRejected(CHECKOUT_CODE.aboveMaximumTotal, TEXT.aboveMaximumTotal(money(total), money(gateway.maximumTotal)));
  }
  if (gateway.maximumItems !== undefined && lineCount > gateway.maximumItems) {
    return basketRejected(CHECKOUT_CODE.tooManyItems, TEXT.tooManyItems(lineCount, gateway.maximumItems));
  }
  return undefined;
}

/** Why a product cannot be sold now for `quantity` units, or `undefined` when it can. */
function unavailableReason(product: MockSeedProduct | undefined, quantity: number, now: number): string | undefined {
  if (product === undefined) return 'NOT_FOUND';
  if (product.disabled === true) return 'DISABLED';
  if (!insideWindow(product, now)) return 'NOT_AVAILABLE';
  if (product.stock != null && product.stock < quantity) return 'OUT_OF_STOCK';
  return undefined;
}

/**
 * The INVALID_STOCK answer, or `undefined` when every line can be sold now. Its rows carry
 * the mock's fields and the official Java SDK's names side by side (I-8).
 */
function unavailableItems(server: ServerState, items: readonly CartItem[], now: number): Record<string, unknown> | undefined {
  // A product listed on several lines must have stock for all of them together (I-15).
  const requested = unitsPerProduct(items);
  const reasons = new Map<number, string>();
  for (const [id, quantity] of requested) {
    const reason = unavailableReason(server.products.get(id), quantity, now);
    if (reason !== undefined) reasons.set(id, reason);
  }
  if (reasons.size === 0) {
    return undefined;
  }
  return {
    status: 'INVALID_STOCK',
    code: CHECKOUT_CODE.invalidStock,
    message: TEXT.invalidStock,
    productsAffected: [...reasons].map(([id, reason]) => ({
      id,
      reason,
      requested: requested.get(id),
      ...productSnapshot(server.products.get(id), now),
    })),
    cartItems: items.map(({ id, quantity }) => {
      const reason = reasons.get(id);
      return {
        id,
        quantity,
        valid: reason === undefined,
        ...(reason === undefined ? {} : { reason }),
        // The Java SDK's CartValidationItem names: the mock has no cart, owner or pay-what-you-want price.
        product: id,
        cart: 0,
        gameServer: server.id,
        owner: 0,
        payWhatYouWantPrice: 0,
      };
    }),
  };
}

/** The product as the Java SDK's ProductSnapshot names it; only the stock flags for an unknown product. */
function productSnapshot(product: MockSeedProduct | undefined, now: number): Record<string, unknown> {
  if (product === undefined) {
    return { hasStock: false, unlimitedStock: false };
  }
  const unlimited = product.stock == null;
  const sale = bestSale(product, now);
  return {
    productId: product.productId,
    name: product.name,
    price: product.price,
    stock: product.stock ?? null,
    hasStock: unlimited || (product.stock as number) > 0,
    unlimitedStock: unlimited,
    disabled: product.disabled === true,
    saleType: sale?.saleType ?? null,
    discountAmount: sale?.discountAmount ?? 0,
    discountPercentage: sale?.discountPercentage ?? 0,
  };
}

/** Records a checkout with its rows; stock is taken (free) or reserved (to pay) at once (I-15). */
function createCheckout(
  state: MockState,
  server: ServerState,
  username: string,
  lines: CheckoutLine[],
  totals: { subtotal: number; coupon: MockSeedCoupon | undefined; total: number },
  status: 'pending' | 'paid',
): CheckoutState {
  const created = isoNow(state);
  const record: CheckoutState = {
    server,
    transactionId: globalThis.crypto.randomUUID(),
    serverName: server.name,
    username,
    lines,
    subtotal: totals.subtotal,
    coupon: totals.coupon?.code ?? null,
    total: totals.total,
    isFree: status === 'paid',
    status,
    created,
    paid: status === 'paid' ? created : null,
  };
  state.checkouts.set(record.transactionId, record);
  for (const line of lines) {
    const product = server.products.get(line.id) as MockSeedProduct;
    if (product.stock != null) {
      product.stock -= line.quantity;
    }
    server.purchases.push(
      newPurchaseRow(state, product, username, line.quantity, line.unitPrice, {
        transactionid: record.transactionId,
        paymenttype: status === 'paid' ? 'Free' : 'Gateway',
        paymentstatus: status === 'paid' ? 'Paid' : 'Pending',
      }),
    );
  }
  return record;
}
