/**
 * What staff see and close: the open unverified windows and the lines still pending in a
 * journal, and the resolution of a window (who, when, what was found). The same calls
 * serve an in-game admin command and the support CLI (`teamgames journal`).
 *
 * @module
 */
import { JournalError } from '../errors.js';
import { checkNonBlank, checkOptionsObject, checkPlayerName, describe, fail } from '../internal/validate.js';
import { entryProblem, type DeliveryJournal, type GrantFailureNote, type JournalEntry, type JournalLine, type JournalWindow } from '../journals/contract.js';
import type { VoteReward } from '../wire/vote-reward.js';

/** A line of the journal still to do, as staff see it. */
export interface PendingDelivery {
  /** The line's id (the game's dedupe key) or, for a claim mark, the mark's. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /**
   * `claimed`: delivered by the service, not yet granted in game (a grant failed or the
   * process stopped); `intended`: previewed, its claim not settled yet; `claiming`: a fast
   * claim was sent and its lines are not journaled yet; `voteClaimed`: a vote reward row
   * not yet given in game; `voteClaiming`: a vote reward claim whose answer never reached
   * the journal (the player's next vote reward claim works it out).
   */
  state: 'claimed' | 'intended' | 'claiming' | 'voteClaimed' | 'voteClaiming';
  /** The purchase, for lines. */
  item?: JournalLine['item'];
  /** The vote reward row, for `voteClaimed`. */
  reward?: VoteReward;
  /** When the line was written, epoch ms. */
  recordedAt: number;
  /** How long it has been pending, in ms (at the time of the call). */
  ageMs: number;
  /** The last grant failure, when a grant of it failed. */
  lastError?: GrantFailureNote;
}

/** What {@link inspectJournal} reads. */
export interface JournalInspection {
  /** Lines still to do, oldest first. */
  pending: PendingDelivery[];
  /** Windows staff have not resolved yet, oldest first. */
  openWindows: JournalWindow[];
  /** Windows resolved (the audit trail), oldest first. */
  resolvedWindows: JournalWindow[];
  /** Age of the oldest pending line, in ms; `0` when nothing is pending. */
  oldestPendingMs: number;
}

/**
 * Reads what a journal holds for staff: the open unverified windows, the lines still
 * pending (with their age and last grant failure) and the windows already resolved.
 * Works on any {@link DeliveryJournal}: the one your bridge delivers with (for an in-game
 * admin command), or a `PostgresJournal` / `MySqlJournal` opened by a support tool. For a
 * file journal held by a running bridge, use `teamgames journal status --file <path>`,
 * which reads the file without taking its lock.
 *
 * @example
 * ```ts
 * const { openWindows, pending } = await inspectJournal(journal);
 * for (const w of openWindows) {
 *   staffChannel.send(`${w.playerName}: check ${new Date(w.from).toISOString()} to ${new Date(w.to).toISOString()} (${w.deliveryId})`);
 * }
 * ```
 * @throws {@link JournalError} when the journal cannot be read or holds a record that is not an entry.
 */
export async function inspectJournal(journal: DeliveryJournal, options: { playerName?: string; now?: number } = {}): Promise<JournalInspection> {
  const { playerName, now } = checkOptionsObject(options, ['playerName', 'now'], 'options');
  const player = playerName === undefined ? undefined : checkPlayerName(playerName, 'options.playerName');
  const at = now === undefined ? Date.now() : (now as number);
  const entries = await read(journal, player);
  return inspectEntries(entries, at);
}

/**
 * The same reading over entries already loaded (the CLI reads a file without its lock).
 * @internal
 */
export function inspectEntries(entries: readonly JournalEntry[], now: number): JournalInspection {
  const pending: PendingDelivery[] = [];
  const openWindows: JournalWindow[] = [];
  const resolvedWindows: JournalWindow[] = [];
  for (const entry of entries) {
    if (entry.state === 'unverified' || entry.state === 'resolved') (entry.state === 'unverified' ? openWindows : resolvedWindows).push(entry);
    else if (entry.state === 'claiming') pending.push({ deliveryId: entry.deliveryId, playerName: entry.playerName, state: 'claiming', recordedAt: entry.recordedAt, ageMs: Math.max(0, now - entry.recordedAt) });
    else if (entry.state === 'voteCounters' || (entry.state === 'voteClaiming' && entry.settled === true)) continue;
    else if (entry.state === 'voteClaiming' || entry.state === 'voteClaimed') {
      const base = { deliveryId: entry.deliveryId, playerName: entry.playerName, recordedAt: entry.recordedAt, ageMs: Math.max(0, now - entry.recordedAt) };
      if (entry.state === 'voteClaiming') pending.push({ ...base, state: 'voteClaiming' });
      else pending.push({ ...base, state: 'voteClaimed', reward: entry.reward, ...(entry.lastError === undefined ? {} : { lastError: entry.lastError }) });
    } else if (!(entry.state === 'intended' && entry.settled === true)) {
      // What is left is a purchase line (claimed, or an open intent).
      const line = entry as JournalLine;
      pending.push({
        deliveryId: entry.deliveryId,
        playerName: entry.playerName,
        state: line.state,
        item: line.item,
        recordedAt: line.recordedAt,
        ageMs: Math.max(0, now - line.recordedAt),
        ...(line.lastError === undefined ? {} : { lastError: line.lastError }),
      });
    }
  }
  const oldestPendingMs = pending.reduce((max, p) => Math.max(max, p.ageMs), 0);
  return { pending, openWindows, resolvedWindows, oldestPendingMs };
}

/** What {@link resolveWindow} takes. */
export interface ResolveWindowInput {
  /** The player whose window it is (exact name). */
  playerName: string;
  /** The window's id (`window:…`); needed only when the player has several open windows. */
  windowId?: string;
  /** Who handled it (a staff name, a Discord id). */
  by: string;
  /** What was found and done. */
  note: string;
}

/**
 * Closes an unverified window once staff have checked it: the record stays in the
 * journal as `resolved` with who, when and the note (an audit trail, not a deletion),
 * and the player's texts stop saying staff are checking once no window of theirs is open.
 *
 * @example
 * ```ts
 * await resolveWindow(journal, { playerName: 'Player123', by: 'mod:alice', note: 'granted VIP rank by hand (invoice 1043)' });
 * ```
 * @throws {@link InvalidInputError} for a blank player, `by` or `note`, when the player
 *   has no open window, or several and no `windowId` says which.
 * @throws {@link JournalError} when the journal cannot be read or written.
 */
export async function resolveWindow(journal: DeliveryJournal, input: ResolveWindowInput, options: { now?: number } = {}): Promise<JournalWindow> {
  const fields = checkOptionsObject(input, ['playerName', 'windowId', 'by', 'note'], 'input');
  const player = checkPlayerName(fields.playerName, 'input.playerName');
  const by = checkNonBlank(fields.by, 'input.by');
  const note = checkNonBlank(fields.note, 'input.note');
  const windowId = fields.windowId === undefined ? undefined : checkNonBlank(fields.windowId, 'input.windowId');
  const open = (await read(journal, player)).filter((e): e is JournalWindow => e.state === 'unverified');
  const chosen = windowId === undefined ? open : open.filter((w) => w.deliveryId === windowId);
  if (chosen.length === 0) {
    fail(windowId === undefined ? 'input.playerName' : 'input.windowId', `must name an open window; ${describe(player)} has ${open.length === 0 ? 'none' : open.map((w) => w.deliveryId).join(', ')}`);
  }
  if (chosen.length > 1) fail('input.windowId', `is needed: ${describe(player)} has ${chosen.length} open windows (${chosen.map((w) => w.deliveryId).join(', ')})`);
  const window = chosen[0] as JournalWindow;
  const resolved: JournalWindow = { ...window, state: 'resolved', resolution: { by, at: options.now ?? Date.now(), note } };
  try {
    await journal.append([resolved]);
  } catch (error) {
    throw error instanceof JournalError ? error : new JournalError(`resolveWindow: the journal could not record the resolution (${(error as Error).message})`, { cause: error });
  }
  return resolved;
}

async function read(journal: DeliveryJournal, player: string | undefined): Promise<JournalEntry[]> {
  let entries: JournalEntry[];
  try {
    entries = await journal.pending(player);
  } catch (error) {
    throw error instanceof JournalError ? error : new JournalError(`the journal could not be read (${(error as Error).message})`, { cause: error });
  }
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new JournalError(`the journal holds a record that is not a journal entry (${problem}); it is damaged or was changed outside the SDK`);
  }
  return entries;
}
