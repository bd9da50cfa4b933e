import type { Operation, StorefrontClient } from '../../src/index.js';

/** One public operation, called the way a user would, with an optional signal. */
export interface OperationCase {
  operation: Operation;
  /** The path the operation POSTs to (as errors report it in `endpoint`). */
  endpoint: string;
  /** A claim or vote: once sent, a missing answer leaves the outcome unknown. */
  delivers: boolean;
  call(client: StorefrontClient, signal?: AbortSignal): Promise<unknown>;
}

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : undefined);

export const getCatalogOp: OperationCase = {
  operation: 'getCatalog',
  endpoint: '/api/v2/client/global/products',
  delivers: false,
  call: (client, signal) => client.getCatalog(withSignal(signal)),
};

export const checkoutOp: OperationCase = {
  operation: 'checkout',
  endpoint: '/api/v2/client/global/checkout/complete',
  delivers: false,
  call: (client, signal) => client.checkout({ username: 'Player123', items: [{ id: 12, quantity: 1 }] }, withSignal(signal)),
};

export const claimOp: OperationCase = {
  operation: 'claim',
  endpoint: '/api/v4/store/transaction/update',
  delivers: true,
  call: (client, signal) => client.claim('Player123', withSignal(signal)),
};

/** A preview changes nothing on the service, so it fails like a read. */
export const previewOp: OperationCase = {
  operation: 'claim',
  endpoint: '/api/v4/store/transaction/update',
  delivers: false,
  call: (client, signal) => client.previewClaim('Player123', withSignal(signal)),
};

export const claimLegacyOp: OperationCase = {
  operation: 'claimLegacy',
  endpoint: '/api/v3/store/transaction/update',
  delivers: true,
  call: (client, signal) => client.claimLegacy('Player123', withSignal(signal)),
};

export const claimStoreTransactionsOp: OperationCase = {
  operation: 'claimStoreTransactions',
  endpoint: '/v3/store/transaction/claim',
  delivers: true,
  call: (client, signal) => client.claimStoreTransactions('Player123', withSignal(signal)),
};

export const claimVoteRewardOp: OperationCase = {
  operation: 'claimVoteReward',
  endpoint: '/v3/vote/reward/claim',
  delivers: true,
  call: (client, signal) => client.claimVoteReward({ player: 'Player123', reward: '1', amount: 'all' }, withSignal(signal)),
};

/** The six operations (and the preview), for `it.each` tables. */
export const ALL_OPS: readonly OperationCase[] = [getCatalogOp, checkoutOp, claimOp, previewOp, claimLegacyOp, claimStoreTransactionsOp, claimVoteRewardOp];
/** Sent exactly once, never retried. */
export const WRITE_OPS: readonly OperationCase[] = ALL_OPS.filter((op) => op !== getCatalogOp);
/** A sent request without an answer throws ClaimOutcomeUnknownError. */
export const DELIVERING_OPS: readonly OperationCase[] = ALL_OPS.filter((op) => op.delivers);
/** A sent request without an answer fails plainly (nothing at stake). */
export const NON_DELIVERING_OPS: readonly OperationCase[] = ALL_OPS.filter((op) => !op.delivers);

/** A readable name for `it.each`. */
export const label = (op: OperationCase) => (op === previewOp ? 'previewClaim' : op.operation);
