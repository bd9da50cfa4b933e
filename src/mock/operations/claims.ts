/**
 * The three claims: `claim` (v4, `/api/v4/store/transaction/update`), `claimLegacy` (the
 * v3 update, `/api/v3/store/transaction/update`) and `claimStoreTransactions` (the v3
 * store claim, `/v3/store/transaction/claim`).
 * One rule decides them all (key → player → rate limit → state); each endpoint only words
 * the outcome its own way.
 */
import { z } from 'zod';
import type { CredentialScheme } from '../service/auth.js';
import { isValidPlayerName, toTransaction, type TransactionKeys } from '../service/rules.js';
import { resolveServer, type MockState, type ServerState } from '../service/state.js';
import { TEXT } from '../service/texts.js';
import type { PurchaseRow } from '../service/types.js';
import {
  type BodyEncoding,
  type WireRequest,
  type WireResponse,
  badRequest,
  decodeBody,
  readFields,
} from '../service/wire.js';

/** The (v4) claim's body. The player name is checked by the claim rules, not here. */
const claimBodySchema = z.strictObject({
  playerName: z.unknown().optional(),
  preview: z.boolean().optional(),
  includeRawTransactions: z.boolean().optional(),
});

/** The legacy claims' body: JSON or form for `claimLegacy`, form only for `claimStoreTransactions`. */
const legacyClaimBodySchema = z.strictObject({ playerName: z.unknown().optional() });

type ClaimOutcome =
  | { code: 'INVALID_PLAYER' | 'RATE_LIMIT' | 'NO_ITEMS' | 'ALREADY_CLAIMED' | 'PRODUCT_NOT_FOUND' }
  | { code: 'PREVIEW' | 'SUCCESS'; rows: PurchaseRow[] };

/**
 * The claim rule after the key: player (I-13) → rate limit → state. An invalid name never
 * opens a window; a refused call does not extend one; every accepted call does.
 */
function claimRule(state: MockState, server: ServerState, playerName: unknown, preview: boolean): ClaimOutcome {
  if (!isValidPlayerName(playerName)) {
    return { code: 'INVALID_PLAYER' };
  }
  const now = state.clock.now();
  if (server.rateWindows.refuses(playerName, now)) {
    return { code: 'RATE_LIMIT' };
  }
  server.rateWindows.accept(playerName, now);

  const own = server.purchases.filter((row) => row.username === playerName && row.paymentstatus === 'Paid');
  const undelivered = own.filter((row) => row.deliverystatus === 'Undelivered');
  if (undelivered.length === 0) {
    // [interpretation I-3] Delivered rows mean "already claimed", none at all "no items".
    return { code: own.length > 0 ? 'ALREADY_CLAIMED' : 'NO_ITEMS' };
  }
  if (undelivered.some((row) => !server.products.has(row.catalogid))) {
    return { code: 'PRODUCT_NOT_FOUND' };
  }
  if (preview) {
    return { code: 'PREVIEW', rows: undelivered };
  }
  const delivered = new Date(now).toISOString();
  for (const row of undelivered) {
    row.deliverystatus = 'Delivered';
    row.delivered = delivered;
  }
  return { code: 'SUCCESS', rows: undelivered };
}

const transactions = (server: ServerState, rows: readonly PurchaseRow[], keys: TransactionKeys) =>
  rows.map((row) => toTransaction(row, keys, server.transactionMessage));

/** The v4 player-facing texts (I-20); `status` is coarse, the fine outcome is `code`. */
const V4_MESSAGES: Record<Exclude<ClaimOutcome['code'], 'PREVIEW'>, string> = {
  SUCCESS: TEXT.success,
  INVALID_PLAYER: TEXT.invalidPlayer,
  RATE_LIMIT: `${TEXT.rateLimit}.`,
  NO_ITEMS: TEXT.noItems,
  ALREADY_CLAIMED: TEXT.alreadyClaimed,
  PRODUCT_NOT_FOUND: TEXT.productNotFound,
};

function v4Envelope(code: string, message: string, claims: unknown[], raw: readonly PurchaseRow[] | undefined): WireResponse {
  const status = code === 'SUCCESS' || code === 'PREVIEW' ? code : 'ERROR';
  return {
    status: 200,
    body: { status, code, message, data: { claims, ...(raw === undefined ? {} : { rawTransactions: structuredClone(raw) }) } },
  };
}

/** `POST /api/v4/store/transaction/update` (`Authorization: base64(key)`, JSON). */
export function claim(state: MockState, request: WireRequest): WireResponse {
  const server = resolveServer(state, request, 'base64');
  if (server === undefined) {
    return v4Envelope('SERVER_NOT_FOUND', TEXT.serverNotFound, [], undefined);
  }
  const body = readFields(claimBodySchema, decodeBody(request, ['json']));
  if (!body.ok) {
    return badRequest(body.status, body.problem);
  }
  const withRaw = body.value.includeRawTransactions === true;
  const outcome = claimRule(state, server, body.value.playerName, body.value.preview === true);
  const rows = 'rows' in outcome ? outcome.rows : [];
  const message = outcome.code === 'PREVIEW' ? TEXT.preview(rows.length) : V4_MESSAGES[outcome.code];
  return v4Envelope(outcome.code, message, transactions(server, rows, 'v4'), withRaw ? rows : undefined);
}

/**
 * `POST /api/v3/store/transaction/update` (`X-API-Key`): a JSON body (the REST reference)
 * or a form (what the official Java SDK posts), I-12.
 */
export function claimLegacy(state: MockState, request: WireRequest): WireResponse {
  return legacyClaim(state, request, 'api-key', ['json', 'form']);
}

/** `POST /v3/store/transaction/claim` (`X-API-Key` or `Bearer`): a form body only, as documented (I-12). */
export function claimStoreTransactions(state: MockState, request: WireRequest): WireResponse {
  return legacyClaim(state, request, 'api-key-or-bearer', ['form']);
}

/** v3 reports every outcome but items as a message-only row; "already claimed" reads as no items. */
function legacyClaim(state: MockState, request: WireRequest, scheme: CredentialScheme, encodings: readonly BodyEncoding[]): WireResponse {
  const messageRow = (message: string): WireResponse => ({ status: 200, body: [{ message }] });
  const server = resolveServer(state, request, scheme);
  if (server === undefined) {
    return messageRow(TEXT.serverNotFound);
  }
  const body = readFields(legacyClaimBodySchema, decodeBody(request, encodings));
  if (!body.ok) {
    return badRequest(body.status, body.problem);
  }
  const outcome = claimRule(state, server, body.value.playerName, false);
  switch (outcome.code) {
    case 'SUCCESS':
    case 'PREVIEW':
      return { status: 200, body: transactions(server, outcome.rows, 'v3') };
    case 'INVALID_PLAYER':
      return messageRow(TEXT.invalidPlayer);
    case 'RATE_LIMIT':
      return messageRow(TEXT.rateLimit);
    case 'PRODUCT_NOT_FOUND':
      return messageRow(TEXT.productNotFound);
    case 'NO_ITEMS':
    case 'ALREADY_CLAIMED':
      return messageRow(TEXT.noItems);
  }
}
