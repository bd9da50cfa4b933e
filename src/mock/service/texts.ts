/**
 * Every player-facing text the mock sends. The SDK (and every official plugin) matches
 * v3 message rows on their leading words, so the documented texts are kept verbatim; the
 * others are the mock's own (I-20 in docs/testing-with-the-mock.md).
 */
export const TEXT = {
  success: 'Transaction has been completed. Thank you for the purchase!',
  noItems: 'There are currently no items to claim.',
  rateLimit: 'Please wait a few seconds before trying again',
  serverNotFound: 'The game server could not be found. This could be that the Api Key is incorrect.',
  invalidPlayer: 'Invalid player name.',
  productNotFound: 'The product could not be found.',
  alreadyClaimed: 'Your purchases have already been claimed.',
  preview: (count: number) => `You have ${count} ${count === 1 ? 'purchase' : 'purchases'} waiting to be claimed.`,
  catalogServerNotFound: 'No game server matches this API key. Send the Base64 of the raw key in Authorization.',
  checkoutUnauthorized: 'The API key is missing or incorrect.',
  checkoutUnparseable: (problem: string) => `The checkout payload could not be parsed: ${problem}`,
  invalidStock: 'Some items in the cart are unavailable or out of stock.',
  couponUnknown: (code: string) => `The coupon code "${code}" is not valid.`,
  couponExpired: (code: string) => `The coupon code "${code}" has expired.`,
  free: 'The order is free: nothing to pay.',
  gatewayNotConfigured: 'The payment gateway of this store is not configured.',
  belowMinimum: (total: string, minimum: string) => `The total ${total} is below the minimum charge of ${minimum}.`,
  aboveMaximumTotal: (total: string, maximum: string) => `The basket total ${total} exceeds the gateway maximum of ${maximum}.`,
  tooManyItems: (lines: number, maximum: number) => `The basket has ${lines} items; the gateway accepts at most ${maximum}.`,
  integrationIncomplete: 'The payment integration of this store is incomplete.',
  tooManyUnits: (id: number, units: number, maximum: number) =>
    `cartItems: product ${id} is asked for ${units} units over its lines; at most ${maximum} per product`,
  grantTooLarge: (id: number, units: number, maximum: number) =>
    `The cart line for product ${id} would grant ${units} units; at most ${maximum} fit one purchase.`,
  notVoted: 'You have not voted yet.',
  rewardNotFound: 'The reward could not be found.',
  invalidAmount: 'Invalid amount. Send a positive whole number or "all".',
  insufficientPoints: (points: number, rewardName: string, cost: number) =>
    `Insufficient Points: you have ${points} vote ${points === 1 ? 'point' : 'points'} and ${rewardName} costs ${cost} per unit.`,
  rewardClaimed: (units: number, rewardName: string) => `You have claimed ${units} x ${rewardName}.`,
} as const;

/**
 * The `code` of every checkout failure. The description documents a `code` field ("Error
 * code on failure") but no values: these are the mock's (I-7), kept here so they change
 * in one place.
 */
export const CHECKOUT_CODE = {
  /** HTTP 401: no game server has this key (the catalog's word for the same refusal). */
  unauthorized: 'GAME_SERVER_NOT_FOUND',
  /** HTTP 404: the payload could not be parsed (a cart line over 1,000,000 units included). */
  unparseable: 'INVALID_PAYLOAD',
  /** `status: "INVALID_STOCK"`: a product is unknown, disabled, out of its window or of stock. */
  invalidStock: 'INVALID_STOCK',
  /** `error`: the coupon code is unknown. */
  couponUnknown: 'COUPON_INVALID',
  /** `error`: the coupon code has expired. */
  couponExpired: 'COUPON_EXPIRED',
  /** `status: "ERROR"`: the payment gateway is not configured. */
  gatewayNotConfigured: 'GATEWAY_NOT_CONFIGURED',
  /** `status: "ERROR"`: the total is below the gateway's minimum charge. */
  belowMinimum: 'BELOW_MINIMUM_CHARGE',
  /** `statusCode: "400"`: the store's payment integration is incomplete. */
  integrationIncomplete: 'INTEGRATION_INCOMPLETE',
  /** `statusCode: "400"`: the total is above the gateway's maximum. */
  aboveMaximumTotal: 'MAXIMUM_TOTAL_EXCEEDED',
  /** `statusCode: "400"`: more cart lines than the gateway accepts. */
  tooManyItems: 'TOO_MANY_ITEMS',
  /** `statusCode: "400"`: a line would grant more units than a Java `int` holds. */
  quantityLimit: 'QUANTITY_LIMIT',
} as const;
