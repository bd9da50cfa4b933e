/**
 * The check of what a journal returns, for every user of it (the engine, the vote rewards,
 * a give that reads the journal): every record read back is validated like an answer from
 * the network.
 *
 * @module
 * @internal
 */
import type { JournalEntry } from '../../journals/contract.js';
import { entryProblem } from '../../journals/entry-checks.js';

/** Every record a journal returns is validated like an answer from the network. */
export function checked(entries: JournalEntry[]): JournalEntry[] {
  if (!Array.isArray(entries)) throw new Error(`pending() did not return an array (${typeof entries})`);
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new Error(`the journal holds a record that is not a journal entry (${problem}); it is damaged or was changed outside the SDK`);
  }
  return entries;
}
