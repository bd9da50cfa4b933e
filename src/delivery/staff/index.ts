/**
 * Staff's front door: `inspectJournal`, `resolveWindow` and their checks (`staff.ts`).
 * What staff see of entries is the room `inspect/`, which `staff.ts` loads by `import()`
 * on first use: this door exports only its types, so a program that never inspects does
 * not load it.
 *
 * @module
 * @internal
 */
export { MAX_RESOLUTION_NOTE_LENGTH, MAX_RESOLVED_BY_LENGTH, checkResolveInput, inspectJournal, resolveWindow, type ResolveWindowInput } from './staff.js';
export type { JournalInspection, PendingDelivery } from '../inspect/index.js';
