/**
 * The delivery loop's front door: `startLoop` and the option checks (`start.ts`, `types.ts`,
 * loaded with the client), and the loop's public types. The scheduler (`scheduler.ts` and
 * the parts it imports) stays behind it: `start.ts` loads it by `import()` on the first
 * `startDeliveryLoop`.
 *
 * @module
 * @internal
 */
export { startLoop } from './start.js';
export {
  checkLoopOptions,
  type CheckedLoopOptions,
  type DeliveryLoop,
  type DeliveryLoopOptions,
  type DeliveryLoopStats,
  type LoopClaimCode,
  type LoopClaimReport,
  type LoopHost,
  type LoopPendingItem,
  type LoopVoteInput,
  type LoopVoteReport,
  type PlayerDeliveryStatus,
} from './types.js';
