/**
 * The delivery journal: where {@link StorefrontClient.deliver} records what it claimed
 * (or intends to claim) before granting anything, so a crash, a failing grant or a lost
 * answer never loses a paid item.
 *
 * @module
 */
import { describe, fail } from '../internal/validate.js';
import type { Transaction } from '../wire/claim.js';

/**
 * One record of the journal: a purchase line ({@link JournalLine}) or the mark of a claim
 * about to be sent ({@link JournalClaimMark}). Journals store them as they are (JSON).
 */
export type JournalEntry = JournalLine | JournalClaimMark;

/**
 * One purchase line in the journal.
 *
 * - `claimed`: the service marked it delivered; the game has not confirmed the grant yet.
 *   {@link StorefrontClient.deliver} and {@link StorefrontClient.resumeDeliveries} grant
 *   it and then acknowledge it.
 * - `intended` (exactly-once mode): seen in a preview and about to be claimed. If the
 *   claim's outcome is lost, the next run previews again: an intended line that is no
 *   longer pending was delivered by the lost claim and is granted from the journal.
 */
export interface JournalLine {
  /** Stable id of the purchase line; the game's dedupe key. See {@link DeliveredItem.deliveryId}. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** `claimed` (to grant) or `intended` (to reconcile); see above. */
  state: 'claimed' | 'intended';
  /** The purchase as the service listed it. */
  item: Transaction;
  /** The service's invoice of the line (exactly-once mode), as text. */
  invoice?: string;
  /** When the entry was written, in epoch ms of the client's clock. */
  recordedAt: number;
  /**
   * Intended lines: when the preview that listed them was sent, in epoch ms of the
   * client's clock. A claim whose answer is lost may also have taken purchases paid after
   * this moment, which no preview showed: the start of the {@link UnverifiedWindow}.
   */
  previewedAt?: number;
}

/**
 * The mark `mode: 'fast'` writes before it sends a claim, and removes once the claim's
 * lines are journaled (or nothing was claimed). A mark still in the journal means a claim
 * may have delivered items that no journal line records (the process died, or the answer
 * was lost): the next `deliver` for that player, or `resumeDeliveries`, reports an
 * {@link UnverifiedWindow} from `recordedAt`.
 */
export interface JournalClaimMark {
  /** `claim:<uuid>`; the claim's lines get `claim:<uuid>:<index>`. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** Always `claiming`. */
  state: 'claiming';
  /** When the claim was about to be sent, in epoch ms of the client's clock. */
  recordedAt: number;
}

/**
 * Durable storage for deliveries. Small on purpose, so it is easy to back with a shared
 * database when several game servers deliver for one key (one row per `deliveryId`:
 * `append` upserts, `acknowledge` deletes, `pending` selects).
 *
 * Contract: each method resolves only once its change is durable (it survives a crash
 * of the process). `append` with a `deliveryId` already present replaces that entry.
 * `pending` lists the entries not acknowledged, oldest first.
 *
 * Nodes sharing one journal must also run one `deliver` per player at a time across
 * nodes (a lock in the same database) and keep the game's `deliveryId` dedupe record in
 * shared storage: the client serializes calls per player only within itself.
 *
 * @example
 * ```ts
 * // Backing the journal with a table shared by every game server of one key.
 * const journal: DeliveryJournal = {
 *   async append(entries) {
 *     for (const e of entries) await db.query('INSERT INTO deliveries (id, player, entry) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET entry = $3', [e.deliveryId, e.playerName, JSON.stringify(e)]);
 *   },
 *   async pending(playerName) {
 *     const rows = await db.query('SELECT entry FROM deliveries WHERE $1::text IS NULL OR player = $1 ORDER BY seq', [playerName ?? null]);
 *     return rows.map((r) => JSON.parse(r.entry));
 *   },
 *   async acknowledge(ids) {
 *     await db.query('DELETE FROM deliveries WHERE id = ANY($1)', [ids]);
 *   },
 * };
 * const client = new StorefrontClient({ apiKey: process.env.TEAMGAMES_API_KEY!, journal });
 * ```
 * @see [Delivering purchases in game: several game servers, one key](../../docs/delivering-purchases.md#several-game-servers-one-key)
 */
export interface DeliveryJournal {
  /** Records entries durably (replacing entries with the same `deliveryId`). */
  append(entries: readonly JournalEntry[]): Promise<void>;
  /** The entries not acknowledged, oldest first; of one player (exact name) when given. */
  pending(playerName?: string): Promise<JournalEntry[]>;
  /** Removes entries for good: the game confirmed the grant (or nothing is left to do). */
  acknowledge(deliveryIds: readonly string[]): Promise<void>;
}

/** The file the default journal writes, relative to the working directory at first use. */
export const DEFAULT_JOURNAL_PATH = '.teamgames-journal.jsonl';

/**
 * Checks the `journal` client option.
 * @internal
 */
export function checkJournal(value: unknown): DeliveryJournal | undefined {
  if (value === undefined) return undefined;
  const journal = value as Partial<DeliveryJournal> | null;
  if (typeof journal !== 'object' || journal === null || typeof journal.append !== 'function' || typeof journal.pending !== 'function' || typeof journal.acknowledge !== 'function') {
    fail('options.journal', `must be a DeliveryJournal (an object with append, pending and acknowledge), got ${describe(value)}`);
  }
  return journal as DeliveryJournal;
}

