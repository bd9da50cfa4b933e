/**
 * The delivery core's front door: what every kind of item delivered shares (the per-player
 * order, the state every client on one journal shares, the public types of a delivery).
 * Loaded at start with the client: it stays small.
 *
 * @module
 * @internal
 */
export { PlayerLocks, acrossNodes } from './locks.js';
export { SEEN_LIMIT, claimLoop, defaultJournal, journalErrorOf, loadedModes, playerLocksOf, releaseLoop, rememberedOf, sharedOf, type SeenAt, type Shared } from './shared.js';
export { DEFAULT_GRANT_TIMEOUT_MS, MAX_GRANT_TIMEOUT_MS, checkGrantTimeout, failureOf, giveWithin, notedFailure, settleGiven, type BoundedGive, type GiveFailure, type Noted } from './give.js';
export type { DeliveryEvent } from './events.js';
export {
  ERROR_MESSAGE,
  GrantTimeoutError,
  type DeliveredItem,
  type DeliverOptions,
  type DeliveryCode,
  type DeliveryFailure,
  type DeliveryMode,
  type DeliveryReport,
  type GivenVoteReward,
  type GrantFunction,
  type ResumeError,
  type ResumeOptions,
  type ResumeReport,
  type SleepFunction,
  type UnverifiedWindow,
} from './types.js';
