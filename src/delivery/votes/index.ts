/**
 * The vote rewards' front door, loaded by `import()` on the first vote delivery (the
 * client's `deliverVoteReward`, `resumeVoteRewards`, the loop's `claimVote`); static
 * importers take its types only.
 *
 * @module
 * @internal
 */
export { VoteDeliveries, type VoteHost, type VoteVia } from './votes.js';
export type {
  GivenVoteReward,
  VoteDeliveryCode,
  VoteDeliveryReport,
  VoteResumeReport,
  VoteRewardDeliveryOptions,
  VoteRewardFailure,
  VoteRewardGiveFunction,
  VoteUnverifiedWindow,
} from './types.js';
