/**
 * The purchases' engine's front door: the small `DeliveryEngine` a client holds. Its modes
 * (`modes.ts`, with the records, grants, reports and argument checks) stay behind it:
 * `engine.ts` loads them by `import()` on the first delivery, so nothing here exports them.
 *
 * @module
 * @internal
 */
export { DeliveryEngine } from './engine.js';
export type { DeliveryEngineConfig } from './records.js';
export type { RunExtras, RunVia } from './report.js';
