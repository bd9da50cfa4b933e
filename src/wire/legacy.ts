/**
 * The v3 endpoints: the legacy claims (read into the v4 {@link ClaimResult}) and the vote
 * reward claim, with their public types, wire schemas and readers.
 *
 * @module
 */
import * as z from 'zod/mini';
import { CLAIM_WINDOW_MS, SUCCESS_MESSAGE, parseTransactions, type ClaimResult } from './claim.js';
import { WireProblem, compiled, given, parse, scalars, schemasOnFirstUse, type Wire } from './parse.js';

/** The input of {@link StorefrontClient.claimVoteReward}. */
export interface VoteRewardInput {
  /** The voter's in-game name. */
  player: string;
  /** The reward id configured on the dashboard (sent as text). */
  reward: string | number;
  /** Units to buy with points: a positive integer, or `'all'` for as many as the points pay for. */
  amount: number | 'all';
}

/** A reward row, in wire names. */
export interface VoteReward {
  /** A text attached to the row, if any. */
  message?: string;
  /** Points ever earned; a string on the wire, kept as one. */
  total_points: string;
  /** Points left to spend. */
  vote_points: number;
  /** Votes this month. */
  votes_month: number;
  /** Units to give in game. */
  give_amount: number;
  /** Integrators use it as the in-game item id. */
  reward_id: number;
  /** The reward's display name. */
  reward_name: string;
}

/** What {@link StorefrontClient.claimVoteReward} resolves to. */
export interface VoteRewardResult {
  /** The rewards to give, one row each. */
  rewards: VoteReward[];
  /** Texts of the message-only rows (e.g. "You have not voted yet."). */
  messages: string[];
  /** True when a message starts with `Insufficient Points`. */
  insufficientPoints: boolean;
}

// ---------------------------------------------------------------------------
// The wire

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

/** Keys that make a vote row a reward rather than a message-only row. */
export const VOTE_REWARD_KEYS = ['reward_id', 'reward_name', 'give_amount', 'vote_points', 'votes_month', 'total_points'] as const;

/** The v3 schemas, built on the first v3 answer. @internal */
export const legacySchemas = schemasOnFirstUse(() => {
  const { intLike, playerText } = scalars();
  return {
    /** A v3 answer: the documented array, or the bare `{message}` object some deployments send. */
    legacyResponse: compiled(z.union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())])),
    /** A message-only row. */
    messageRow: compiled(z.looseObject({ message: playerText })),
    /** A vote reward row; {@link toVoteReward} keeps `total_points` a string. */
    voteReward: compiled(
      z.looseObject({
        message: z.nullish(playerText),
        total_points: z.union([z.string(), z.number()]),
        vote_points: intLike,
        votes_month: intLike,
        give_amount: intLike,
        reward_id: intLike,
        reward_name: z.string(),
      }),
    ),
  };
});

/** The v3 schemas. @internal */
export type LegacySchemas = ReturnType<typeof legacySchemas>;

/** A validated vote reward row as a {@link VoteReward}. */
export function toVoteReward(row: Wire<LegacySchemas['voteReward']>): VoteReward {
  const { message, ...rest } = row;
  const out: VoteReward = {
    ...rest,
    total_points: String(row.total_points),
    vote_points: Number(row.vote_points),
    votes_month: Number(row.votes_month),
    give_amount: Number(row.give_amount),
    reward_id: Number(row.reward_id),
  };
  if (given(message)) out.message = message;
  return out;
}

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
  const wire = parse(legacySchemas().legacyResponse, body, `the ${names.answer} answer is neither an array nor an object`);
  const items: T[] = [];
  const messages: string[] = [];
  (Array.isArray(wire) ? wire : [wire]).forEach((row, index) => {
    if (keys.some((key) => key in row)) items.push(read(row, index));
    else messages.push(parse(legacySchemas().messageRow, row, `a ${names.row} row is neither a ${names.item} nor a message`, [index]).message);
  });
  return { items, messages };
}

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

/** Reads a vote reward answer. @internal */
export function readVoteReward(body: unknown): VoteRewardResult {
  const { items: rewards, messages } = splitRows(body, { answer: 'vote', row: 'vote', item: 'reward' }, VOTE_REWARD_KEYS, (row, index) =>
    toVoteReward(parse(legacySchemas().voteReward, row, 'a vote reward row does not match the schema', [index])),
  );
  if (rewards.length === 0 && messages.some((m) => legacyCodeOf(m) === 'auth')) {
    throw new WireProblem('auth', 'the game server could not be found');
  }
  return { rewards, messages, insufficientPoints: messages.some((m) => /^\s*insufficient points/i.test(m)) };
}
