/**
 * What staff see of a journal's entries, the front door: `inspectEntries` (pending lines,
 * open and resolved windows), shared by staff's `inspectJournal`, the loop's `status()` and
 * the CLI. Loaded on first use: `staff.ts` imports it by `import()`, the loop's scheduler
 * is itself loaded so, and the entry point exports its types only.
 *
 * @module
 * @internal
 */
export { inspectEntries, type JournalInspection, type PendingDelivery } from './inspect.js';
