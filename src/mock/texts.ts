/**
 * Every player-facing text the mock sends. The SDK (and every official plugin) matches
 * v3 message rows on their leading words, so the SPEC §2.1 texts are kept verbatim.
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
  notVoted: 'You have not voted yet.',
  rewardNotFound: 'The reward could not be found.',
  invalidAmount: 'Invalid amount. Send a positive whole number or "all".',
  insufficientPoints: (points: number, rewardName: string, cost: number) =>
    `Insufficient Points: you have ${points} vote ${points === 1 ? 'point' : 'points'} and ${rewardName} costs ${cost} per unit.`,
  rewardClaimed: (units: number, rewardName: string) => `You have claimed ${units} x ${rewardName}.`,
} as const;
