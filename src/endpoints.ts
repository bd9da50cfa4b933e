/**
 * The six endpoints as data. They differ only in path, credential scheme, body encoding
 * and retry class; one transport function does the HTTP work for all of them.
 *
 * Each endpoint has one name everywhere: the client method that calls it (`getCatalog`,
 * `checkout`, `claim`, `claimLegacy`, `claimStoreTransactions`, `claimVoteReward`). It
 * keys this table, is the `operation` its errors and events name, and names the mock's
 * operations and fault rules (the mock keeps a table of its own, so that it stays an
 * independent check of the wire format).
 *
 * @module
 */
import type { AuthScheme } from './auth.js';
import type { Operation } from './errors.js';

/** How the request body is encoded. */
export type BodyEncoding = 'json' | 'form';

/** One row of the endpoint table. @internal */
export interface Endpoint {
  /** The SDK method it serves, also its key in {@link ENDPOINTS} (used in error messages and events). */
  readonly operation: Operation;
  /** Path relative to the base URL, without a leading slash (ky's `prefixUrl` rule). */
  readonly path: string;
  readonly auth: AuthScheme;
  readonly body: BodyEncoding;
  /** Exact `Content-Type` to send. */
  readonly contentType: string;
  /**
   * Reads are retried on network errors and 5xx. Everything else changes state on the
   * service (a checkout, a delivery, spent vote points) and is sent exactly once.
   */
  readonly retryable: boolean;
  /** The HTTP status with which the service refuses a payload it could not parse, if it has one. */
  readonly rejectedStatus?: number;
}

const JSON_TYPE = 'application/json';

/**
 * The endpoint table, keyed by the client method's name (the type checks that each key
 * and its row's `operation` agree). Adding an endpoint is one row here plus one client
 * method. @internal
 */
export const ENDPOINTS = {
  getCatalog: {
    operation: 'getCatalog',
    path: 'api/v2/client/global/products',
    auth: 'base64-authorization',
    body: 'json',
    contentType: JSON_TYPE,
    retryable: true,
  },
  checkout: {
    operation: 'checkout',
    path: 'api/v2/client/global/checkout/complete',
    auth: 'base64-authorization',
    body: 'json',
    contentType: JSON_TYPE,
    retryable: false,
    // The checkout answers 404 for a cart it cannot parse: RequestRejectedError.
    rejectedStatus: 404,
  },
  claim: {
    operation: 'claim',
    path: 'api/v4/store/transaction/update',
    auth: 'base64-authorization',
    body: 'json',
    contentType: JSON_TYPE,
    retryable: false,
  },
  claimLegacy: {
    operation: 'claimLegacy',
    path: 'api/v3/store/transaction/update',
    auth: 'api-key-header',
    body: 'json',
    contentType: JSON_TYPE,
    retryable: false,
  },
  claimStoreTransactions: {
    operation: 'claimStoreTransactions',
    // No `/api` prefix on this one and on the vote claim: that is the service's layout.
    path: 'v3/store/transaction/claim',
    auth: 'api-key-header',
    body: 'form',
    contentType: 'application/x-www-form-urlencoded',
    retryable: false,
  },
  claimVoteReward: {
    operation: 'claimVoteReward',
    path: 'v3/vote/reward/claim',
    auth: 'api-key-header',
    body: 'form',
    contentType: 'application/x-www-form-urlencoded; charset=UTF-8',
    retryable: false,
  },
} as const satisfies { readonly [Name in Operation]?: Endpoint & { readonly operation: Name } };
