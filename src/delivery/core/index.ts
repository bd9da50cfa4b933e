/**
 * The delivery core's front door: what every kind of item delivered shares (the per-player
 * order, the state every client on one journal shares, the public types of a delivery).
 * Loaded at start with the client: it stays small.
 *
 * @module
 * @internal
 */
export { PlayerLocks, acrossNodes } from './locks.js';
export { SEEN_LIMIT, claimLoop, defaultJournal, journalErrorOf, loadedModes, playerLocksOf, releaseLoop, sharedOf, type SeenAt, type Shared } from './shared.js';
export {
  ERROR_MESSAGE,
  GrantTimeoutError,
  windowOfGive,
  type DeliveredItem,
  type DeliverOptions,
  type DeliveryCode,
  type DeliveryFailure,
  type DeliveryMode,
  type DeliveryReport,
  type GrantFunction,
  type ResumeError,
  type ResumeOptions,
  type ResumeReport,
  type SleepFunction,
  type UnverifiedWindow,
} from './types.js';
