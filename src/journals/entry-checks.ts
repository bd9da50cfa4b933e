/**
 * What every journal checks of a record it writes or reads back: {@link entryProblem} for
 * one record, {@link checkEntries} for what `append` is given. Apart from the journal's
 * contract (contract.ts) so that a program that never writes a journal does not load them:
 * the file journal imports this module on its first `append`.
 *
 * @module
 * @internal
 */
import { describe, fail } from '../internal/validate.js';
import type { JournalEntry } from './contract.js';
import { VOTE_STATES, voteEntryProblem } from './vote-entries.js';

const TRANSACTION_STRINGS = ['player_name', 'product_id_string', 'product_name'] as const;
const TRANSACTION_NUMBERS = ['product_id', 'product_price', 'quantity_to_grant', 'quantity_purchased', 'product_amount', 'amount_purchased'] as const;
const STATES: ReadonlySet<unknown> = new Set(['claimed', 'intended', 'claiming', 'unverified', 'resolved', ...VOTE_STATES]);
const CAUSES: ReadonlySet<unknown> = new Set(['lostClaim', 'claimMark', 'lostVote', 'unknownCommand']);

/**
 * What is wrong with a record read back from a journal, or `undefined` when it is a
 * {@link JournalEntry}. Every journal validates what it reads like an answer from the
 * network: a record of the wrong shape is damage, never an item to grant.
 * @internal
 */
export function entryProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `not an object (${describe(value)})`;
  const e = value as Record<string, unknown>;
  if (typeof e['deliveryId'] !== 'string' || e['deliveryId'] === '') return 'deliveryId is not a non-empty string';
  if (typeof e['playerName'] !== 'string' || e['playerName'] === '') return 'playerName is not a non-empty string';
  if (!STATES.has(e['state'])) return `state is not 'claimed', 'intended', 'claiming', 'unverified', 'resolved', 'voteClaiming', 'voteClaimed' or 'voteCounters' (${describe(e['state'])})`;
  if (!isNumber(e['recordedAt'])) return 'recordedAt is not a number';
  if (e['state'] === 'claiming') return e['since'] !== undefined && !isNumber(e['since']) ? 'since is not a number' : undefined;
  if (VOTE_STATES.has(e['state'])) return voteEntryProblem(e);
  if (e['state'] === 'unverified' || e['state'] === 'resolved') return windowProblem(e);
  const item = e['item'];
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return `item is not an object (${describe(item)})`;
  const t = item as Record<string, unknown>;
  for (const key of TRANSACTION_STRINGS) if (typeof t[key] !== 'string') return `item.${key} is not a string`;
  for (const key of TRANSACTION_NUMBERS) if (!isNumber(t[key])) return `item.${key} is not a number`;
  if (t['message'] !== undefined && typeof t['message'] !== 'string') return 'item.message is not a string';
  if (e['invoice'] !== undefined && typeof e['invoice'] !== 'string') return 'invoice is not a string';
  if (e['node'] !== undefined && typeof e['node'] !== 'string') return 'node is not a string';
  if (e['previewedAt'] !== undefined && !isNumber(e['previewedAt'])) return 'previewedAt is not a number';
  if (e['settled'] !== undefined && typeof e['settled'] !== 'boolean') return 'settled is not a boolean';
  if (e['sending'] !== undefined && !isNumber(e['sending'])) return 'sending is not a number';
  const lastError = e['lastError'] as Record<string, unknown> | undefined;
  if (lastError !== undefined && (typeof lastError !== 'object' || lastError === null || typeof lastError['message'] !== 'string' || !isNumber(lastError['at']) || !isNumber(lastError['attempts']))) return 'lastError is not { message, at, attempts }';
  if (lastError !== undefined && lastError['stuck'] !== undefined && typeof lastError['stuck'] !== 'boolean') return 'lastError.stuck is not a boolean';
  return undefined;
}

/**
 * The entries given to a journal's `append`, checked as strictly as what it reads back
 * ({@link entryProblem}): a record the next start would refuse as damage is never written.
 *
 * @throws InvalidInputError naming the entry (`entries[2]`) and what is wrong with it;
 *   nothing was recorded then.
 * @internal
 */
export function checkEntries(value: unknown): JournalEntry[] {
  if (!Array.isArray(value)) fail('entries', `must be an array of journal entries, got ${describe(value)}`);
  // By index, each read once: a hole reads as undefined and is refused (forEach and map
  // skip holes, for…of yields undefined), and the journal writes the list it checked.
  const entries: JournalEntry[] = [];
  for (let i = 0; i < value.length; i++) {
    const entry: unknown = value[i];
    const problem = entryProblem(entry);
    if (problem !== undefined) fail(`entries[${i}]`, `must be a journal entry: ${problem}`);
    entries.push(entry as JournalEntry);
  }
  return entries;
}

function windowProblem(e: Record<string, unknown>): string | undefined {
  if (!isNumber(e['from'])) return 'from is not a number';
  if (!isNumber(e['to'])) return 'to is not a number';
  if (!CAUSES.has(e['cause'])) return `cause is not 'lostClaim', 'claimMark', 'lostVote' or 'unknownCommand' (${describe(e['cause'])})`;
  if (e['node'] !== undefined && typeof e['node'] !== 'string') return 'node is not a string';
  if (e['cause'] === 'lostVote' ? typeof e['reward'] !== 'string' || e['reward'] === '' : e['reward'] !== undefined) return 'reward is not a non-empty string on a lostVote window (and absent on others)';
  if (e['points'] !== undefined && (e['cause'] !== 'lostVote' || !Number.isSafeInteger(e['points']) || (e['points'] as number) < 0)) return 'points is not a non-negative integer on a lostVote window';
  if (e['command'] !== undefined && typeof e['command'] !== 'string') return 'command is not a string';
  const r = e['resolution'] as Record<string, unknown> | undefined;
  if (e['state'] === 'resolved' && (typeof r !== 'object' || r === null || typeof r['by'] !== 'string' || !isNumber(r['at']) || typeof r['note'] !== 'string')) return 'resolution is not { by, at, note }';
  return undefined;
}

/** A finite number (`Number.isFinite` is false for anything that is not a number). */
function isNumber(value: unknown): value is number {
  return Number.isFinite(value);
}
