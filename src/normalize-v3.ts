/**
 * From v3 answers to the SDK's values: legacy claim arrays into the v4 {@link ClaimResult},
 * vote rows into a {@link VoteRewardResult}. Loaded by the client on the first v3 call,
 * before its request is sent: most bridges only use v4, and the main entry stays small.
 *
 * @module
 */
import { CLAIM_WINDOW_MS, SUCCESS_MESSAGE, WireProblem, parse, parseTransactions } from './normalize.js';
import { TRANSACTION_KEYS, VOTE_REWARD_KEYS, legacyResponseSchema, messageRowSchema, toVoteReward, voteRewardSchema } from './schemas-v3.js';
import type { VoteRewardResult } from './types.js';
import type { ClaimResult } from './wire/claim.js';

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
  ['the game server could not be found', 'auth'],
  ['invalid player name', 'INVALID_PLAYER'],
  ['the product could not be found', 'PRODUCT_NOT_FOUND'],
];
type LegacyCode = 'NO_ITEMS' | 'RATE_LIMIT' | 'INVALID_PLAYER' | 'PRODUCT_NOT_FOUND' | 'auth';

/**
 * Splits a v3 answer (an array of rows, or one bare object) into item rows, the rows that
 * carry one of `keys`, and message-only rows, which are never items.
 */
function splitRows<T>(
  body: unknown,
  names: { answer: string; row: string; item: string },
  keys: readonly string[],
  read: (row: Record<string, unknown>, index: number) => T,
): { items: T[]; messages: string[] } {
  const wire = parse(legacyResponseSchema, body, `the ${names.answer} answer is neither an array nor an object`);
  const items: T[] = [];
  const messages: string[] = [];
  (Array.isArray(wire) ? wire : [wire]).forEach((row, index) => {
    if (keys.some((key) => key in row)) items.push(read(row, index));
    else messages.push(parse(messageRowSchema, row, `a ${names.row} row is neither a ${names.item} nor a message`, [index]).message);
  });
  return { items, messages };
}

/**
 * v3 answers: a bare array of purchases, or one message-only row (`[{"message": …}]`),
 * or a bare `{message}` object, or `[]` (no items). A message row is never a purchase.
 * @internal
 */
export function claimFromLegacy(body: unknown): ClaimResult {
  const { items: purchases, messages } = splitRows(body, { answer: 'v3 claim', row: 'v3', item: 'purchase' }, TRANSACTION_KEYS, (row) => row);
  // Purchases present means the service marked them delivered: they win over any message.
  if (purchases.length > 0) {
    return { code: 'SUCCESS', status: 'SUCCESS', message: SUCCESS_MESSAGE, claims: parseTransactions(purchases, []) };
  }
  const message = messages[0];
  if (message === undefined) return { code: 'NO_ITEMS', status: 'ERROR', message: NO_ITEMS_MESSAGE, claims: [] };
  const code = legacyCodeOf(message);
  if (code === 'auth') throw new WireProblem('auth', 'the game server could not be found');
  if (code === undefined) return { code: 'UNKNOWN', status: 'ERROR', message, serverCode: '', claims: [] };
  if (code === 'RATE_LIMIT') return { code, status: 'ERROR', message, claims: [], retryAfterMs: CLAIM_WINDOW_MS, source: 'server' };
  return { code, status: 'ERROR', message, claims: [] };
}

function legacyCodeOf(message: string): LegacyCode | undefined {
  const text = message.trim().toLowerCase();
  return LEGACY_MESSAGES.find(([prefix]) => text.startsWith(prefix))?.[1];
}

/** @internal */
export function voteFromWire(body: unknown): VoteRewardResult {
  const { items: rewards, messages } = splitRows(body, { answer: 'vote', row: 'vote', item: 'reward' }, VOTE_REWARD_KEYS, (row, index) =>
    toVoteReward(parse(voteRewardSchema, row, 'a vote reward row does not match the schema', [index])),
  );
  if (rewards.length === 0 && messages.some((m) => legacyCodeOf(m) === 'auth')) {
    throw new WireProblem('auth', 'the game server could not be found');
  }
  return { rewards, messages, insufficientPoints: messages.some((m) => /^\s*insufficient points/i.test(m)) };
}
