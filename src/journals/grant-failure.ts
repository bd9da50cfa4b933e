/**
 * The note a failed grant (or give) leaves on its journal record, for staff.
 *
 * @module
 */

/** The last failed grant of a {@link JournalLine}, kept on the line for staff. */
export interface GrantFailureNote {
  /** What the grant threw (its message, at most 300 characters). */
  message: string;
  /** When it failed, epoch ms. */
  at: number;
  /** How many grants of this line have failed so far. */
  attempts: number;
  /**
   * Set once `attempts` reached the delivery loop's `staffAfterAttempts`: the item is
   * marked for staff (`teamgames journal pending` shows it as stuck). It is never dropped:
   * the loop keeps giving it, less and less often, and at once on the player's next join.
   */
  stuck?: boolean;
}
