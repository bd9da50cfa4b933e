/**
 * `teamgames-sdk`: a typed client for the TeamGames storefront and vote API.
 *
 * Start with {@link StorefrontClient}. Outcomes are values ({@link ClaimResult},
 * {@link CheckoutResult}, {@link VoteRewardResult}); failures are {@link StorefrontError}s.
 * The stateful mock of the service lives in the `teamgames-sdk/mock` entry point.
 *
 * @module teamgames-sdk
 */
export { StorefrontClient, DEFAULT_BASE_URL, API_KEY_ENV, BASE_URL_ENV, type DerivedClientOptions } from './client.js';
export { encodeApiKey, type AuthScheme } from './auth.js';
export {
  StorefrontError,
  InvalidInputError,
  AuthenticationError,
  RequestRejectedError,
  HttpError,
  ResponseValidationError,
  TimeoutError,
  NetworkError,
  ClaimOutcomeUnknownError,
  JournalError,
  NotReconciledError,
  LoopRunningError,
  ResponseTooLargeError,
  WindowAlreadyResolvedError,
  isStorefrontError,
  type StorefrontErrorCode,
  type StorefrontErrorByCode,
  type Operation,
  type RequestErrorDetails,
  type ValidationIssue,
  type OutcomeUnknownReason,
} from './errors.js';
export type { StorefrontClientOptions, StorefrontEvent } from './types.js';
export type { StorefrontRequestEvent } from './internal/request-events.js';
export type { RequestOptions } from './wire/options.js';
export type { Catalog, CatalogOptions, Product, Sale } from './wire/catalog.js';
export type {
  CartItem,
  CheckoutInput,
  CheckoutWireFields,
  CheckoutPaymentRequired,
  CheckoutFree,
  CheckoutInvalidStock,
  CheckoutCouponRejected,
  CheckoutBasketRejected,
  CheckoutGatewayError,
  CheckoutUnknown,
  CheckoutResult,
  CheckoutOutcome,
} from './wire/checkout.js';
export type {
  Transaction,
  RawTransaction,
  ClaimOptions,
  ClaimResultBase,
  ClaimSuccess,
  ClaimPreview,
  ClaimNoItems,
  ClaimRateLimited,
  ClaimAlreadyClaimed,
  ClaimProductNotFound,
  ClaimInvalidPlayer,
  ClaimUnknown,
  ClaimResult,
  ClaimCode,
} from './wire/claim.js';
export type { VoteRewardInput, VoteReward, VoteRewardResult } from './wire/vote-reward.js';
export type {
  DeliveredItem,
  DeliverOptions,
  DeliveryCode,
  DeliveryEvent,
  DeliveryFailure,
  DeliveryMode,
  DeliveryReport,
  GrantFunction,
  ResumeError,
  ResumeOptions,
  ResumeReport,
  SleepFunction,
  UnverifiedWindow,
} from './delivery/core/index.js';
export { GrantTimeoutError } from './delivery/core/index.js';
export type { CheckoutHint, CheckoutHintOutcome, DeliveryLoop, DeliveryLoopOptions, DeliveryLoopSettings, DeliveryLoopStats, LoopClaimCode, LoopClaimReport, LoopPendingItem, LoopVoteInput, LoopVoteReport, PlayerDeliveryStatus } from './delivery/loop/index.js';
export { checkDeliveryLoopSettings } from './delivery/loop/index.js';
export type {
  GivenVoteReward,
  VoteDeliveryCode,
  VoteDeliveryReport,
  VoteResumeReport,
  VoteRewardDeliveryOptions,
  VoteRewardFailure,
  VoteRewardGiveFunction,
  VoteUnverifiedWindow,
} from './delivery/votes/index.js';
export type { JournalVoteEntry, JournalVoteClaim, JournalVoteReward, JournalVoteCounters, VoteRewardPrice } from './journals/vote-entries.js';
export {
  DEFAULT_JOURNAL_PATH,
  type DeliveryJournal,
  type JournalEntry,
  type JournalLine,
  type JournalClaimMark,
  type JournalWindow,
  type GrantFailureNote,
  type WindowCause,
  type WindowResolution,
  type WindowResolveOutcome,
} from './journals/contract.js';
export { inspectJournal, resolveWindow, MAX_RESOLVED_BY_LENGTH, MAX_RESOLUTION_NOTE_LENGTH, type JournalInspection, type PendingDelivery, type ResolveWindowInput } from './delivery/staff/index.js';
export { expectCheckout } from './journals/expect-checkout.js';
export type { SharedCheckoutHint } from './journals/checkout-hints.js';
export { MemoryJournal } from './journals/memory.js';
export { FileJournal, type FileJournalOptions } from './journals/file/journal.js';
export { VERSION } from './version.js';
