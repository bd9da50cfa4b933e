/**
 * What staff see of a journal's entries: the lines still to do (with their age and last
 * failure) and the windows, open and resolved. Read by {@link inspectJournal}, the
 * `teamgames journal` command and the delivery loop's `status(player)`; apart from
 * staff.ts so that the loop, loaded on first use, does not bring the staff tools into
 * every program's start.
 *
 * @module
 * @internal
 */
import type { GrantFailureNote, JournalEntry, JournalLine, JournalWindow } from '../../journals/contract.js';
import type { VoteReward } from '../../wire/vote-reward.js';

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
  /**
   * When a command giving it was about to be sent ({@link JournalLine.sending}): its
   * outcome is unknown until the next give turns it into an `unknownCommand` window.
   */
  sending?: number;
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
 * What staff see of entries already read ({@link inspectJournal} reads them; the CLI reads
 * a file without its lock).
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
      else pending.push({ ...base, state: 'voteClaimed', reward: entry.reward, ...(entry.lastError === undefined ? {} : { lastError: entry.lastError }), ...(entry.sending === undefined ? {} : { sending: entry.sending }) });
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
        ...(line.sending === undefined ? {} : { sending: line.sending }),
      });
    }
  }
  const oldestPendingMs = pending.reduce((max, p) => Math.max(max, p.ageMs), 0);
  return { pending, openWindows, resolvedWindows, oldestPendingMs };
}
