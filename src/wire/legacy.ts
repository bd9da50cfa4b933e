/**
 * The legacy claims ({@link StorefrontClient.claimLegacy} and
 * {@link StorefrontClient.claimStoreTransactions}): both read a v3 answer into the v4
 * {@link ClaimResult}.
 *
 * @module
 */
import { CLAIM_WINDOW_MS, SUCCESS_MESSAGE, parseTransactions, type ClaimResult } from './claim.js';
import { WireRefusal } from './parse.js';
import { SERVER_NOT_FOUND_PREFIX, splitRows, startsWithText } from './v3-rows.js';

/** Keys that make a row a purchase rather than a message-only row. */
export const TRANSACTION_KEYS = [
  'player_name',
  'product_id',
  'product_id_string',
  'product_name',
  'product_price',
  'product_amount',
  'amount_purchased',
  'quantity_to_grant',
  'quantity_purchased',
] as const;

/** What v3 says when there is nothing to claim; also used for an empty v3 array. */
export const NO_ITEMS_MESSAGE = 'There are currently no items to claim.';

/**
 * v3 reports outcomes as a message-only row. Known texts, matched on their leading words
 * (case-insensitive) so a trailing change of punctuation does not break them. `auth` is
 * not an outcome: the key was refused.
 */
const LEGACY_MESSAGES: ReadonlyArray<readonly [prefix: string, code: LegacyCode]> = [
  ['there are currently no items to claim', 'NO_ITEMS'],
  ['please wait a few seconds', 'RATE_LIMIT'],
  [SERVER_NOT_FOUND_PREFIX, 'auth'],
  ['invalid player name', 'INVALID_PLAYER'],
  ['the product could not be found', 'PRODUCT_NOT_FOUND'],
];
type LegacyCode = 'NO_ITEMS' | 'RATE_LIMIT' | 'INVALID_PLAYER' | 'PRODUCT_NOT_FOUND' | 'auth';

/**
 * v3 answers: a bare array of purchases, or one message-only row (`[{"message": …}]`),
 * or a bare `{message}` object, or `[]` (no items). A message row is never a purchase.
 * @internal
 */
export function readLegacyClaim(body: unknown): ClaimResult {
  const { items: purchases, messages } = splitRows(body, { answer: 'v3 claim', row: 'v3', item: 'purchase' }, TRANSACTION_KEYS, (row) => row);
  // Purchases present means the service marked them delivered: they win over any message.
  if (purchases.length > 0) {
    return { code: 'SUCCESS', status: 'SUCCESS', message: SUCCESS_MESSAGE, claims: parseTransactions(purchases, []) };
  }
  const message = messages[0];
  if (message === undefined) return { code: 'NO_ITEMS', status: 'ERROR', message: NO_ITEMS_MESSAGE, claims: [] };
  const code = LEGACY_MESSAGES.find(([prefix]) => startsWithText(message, prefix))?.[1];
  if (code === 'auth') throw new WireRefusal('the game server could not be found');
  if (code === undefined) return { code: 'UNKNOWN', status: 'ERROR', message, serverCode: '', claims: [] };
  if (code === 'RATE_LIMIT') return { code, status: 'ERROR', message, claims: [], retryAfterMs: CLAIM_WINDOW_MS, source: 'server' };
  return { code, status: 'ERROR', message, claims: [] };
}
