/**
 * `teamgames-sdk/mock`: a stateful mock of the whole TeamGames service, with one injectable
 * clock, reached three ways: `mock.fetch` in process (no network, no msw), `mock.listen()`
 * over real HTTP (no msw), or `mock.handlers` for msw (the optional peer, loaded only then).
 *
 * @module teamgames-sdk/mock
 */
import type { HttpHandler } from 'msw';
import * as admin from './operations/admin.js';
import { createClock, type MockClock, type MockTime } from './service/clock.js';
import { FaultInjector, type MockFaults } from './adapters/faults.js';
import { createMockFetch } from './adapters/fetch.js';
import { toMswHandlers } from './adapters/msw-handlers.js';
import { cancelPayment, completePayment } from './operations/payment.js';
import { parseMockSeed, type MockProductPatch, type MockRewardPatch, type MockSeed, type MockSeedProduct, type MockSeedReward } from './service/seed.js';
import { createRouter, createRoutes } from './adapters/router.js';
import { serveRouter, type MockListenOptions, type MockServerHandle } from './adapters/server.js';
import { createState, resetState } from './service/state.js';
import type { AddPurchaseInput, CheckoutRecord, MockStateSnapshot, PurchaseRow, VoteRecord } from './service/types.js';

export { exampleSeed } from './service/example-seed.js';
export { MockAdminError } from './service/errors.js';
export { parseMockSeed } from './service/seed.js';
export type { MockClock, MockTime } from './service/clock.js';
export type {
  DeprecatedMockOperationName,
  MockFaultKind,
  MockFaultRule,
  MockFaultRuleWithDeprecatedNames,
  MockFaultState,
  MockFaults,
  MockOperationName,
} from './adapters/faults.js';
export type {
  MockProductPatch,
  MockRewardPatch,
  MockSeed,
  MockSeedCategory,
  MockSeedCoupon,
  MockSeedGateway,
  MockSeedProduct,
  MockSeedReward,
  MockSeedSale,
  MockSeedServer,
} from './service/seed.js';
export type { MockListenOptions, MockServerHandle } from './adapters/server.js';
export type {
  AddPurchaseInput,
  CheckoutLine,
  CheckoutRecord,
  MockProductState,
  MockServerState,
  MockStateSnapshot,
  PurchaseRow,
  VoteClaimRecord,
  VoteRecord,
} from './service/types.js';

/** Options of {@link createMockService}. */
export interface MockServiceOptions {
  /** The starting state; validated strictly (see {@link parseMockSeed}). */
  seed: MockSeed;
  /** Freezes the clock at this time; it then moves only by `clock.advance`/`clock.set`. Absent: real time. */
  now?: MockTime;
}

/** The mock service: its three transports, the clock and the admin operations. */
export interface MockService {
  /**
   * A `fetch` answered by the mock in process, with no network and no msw: pass it as the
   * client's `fetch` option (any base URL works; routes are matched by path). Unknown
   * routes answer JSON 404; a dropped connection (fault injection) rejects with
   * `TypeError('fetch failed')`; an aborted signal rejects with its reason.
   *
   * @example
   * ```ts
   * const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
   * const client = new StorefrontClient({ apiKey: 'test-key', fetch: mock.fetch, now: mock.clock.now });
   * ```
   */
  fetch: typeof globalThis.fetch;
  /**
   * msw request handlers for the six operations, the pay page and the `/__mock/…` admin
   * routes, for `setupServer(...mock.handlers)`. msw is an optional peer dependency, loaded
   * on the first read of this property (never by `import 'teamgames-sdk/mock'`).
   *
   * @throws Error `… needs msw, an optional peer dependency: npm i -D msw …` when msw is
   *   not installed.
   */
  readonly handlers: HttpHandler[];
  /**
   * Serves the mock over HTTP with `node:http`, no msw (default `127.0.0.1`, a free port).
   * Request bodies above `maxBodyBytes` (default 1 MiB) are refused with HTTP 413 and the
   * connection closed; slow clients are cut off by timeouts (headers 10 s, whole request 30 s, idle
   * keep-alive 5 s, a silent socket 11 min).
   *
   * @example
   * ```ts
   * const { url, close } = await mock.listen({ port: 0 });
   * ```
   * @throws RangeError when `maxBodyBytes` is not a positive safe integer.
   */
  listen(options?: MockListenOptions): Promise<MockServerHandle>;
  /** The clock every time-dependent rule reads. */
  clock: MockClock;
  /**
   * Completes a pending checkout (as the pay page does): its rows become `Paid`, hence claimable.
   *
   * @throws MockAdminError 404 unknown id, 409 cancelled.
   */
  completePayment(transactionId: string): CheckoutRecord;
  /**
   * Cancels a pending checkout: its rows are removed and its stock released.
   *
   * @throws MockAdminError 404 unknown id, 409 already paid.
   */
  cancelPayment(transactionId: string): CheckoutRecord;
  /**
   * Adds a paid, undelivered purchase row for the catalog product `id`; returns the row.
   *
   * @example
   * ```ts
   * mock.addPurchase('test-key', { playerName: 'Player123', id: 101, quantity: 2 });
   * ```
   * @throws MockAdminError 404 unknown key or product, 400 bad player name or quantity
   *   (1 to 1,000,000 units, units to grant within a Java `int`).
   */
  addPurchase(apiKey: string, input: AddPurchaseInput): PurchaseRow;
  /**
   * Changes fields of a product (stock, price, `disabled`, sales …); returns the product.
   *
   * @throws MockAdminError 404 unknown key or product, 400 invalid patch.
   */
  updateProduct(apiKey: string, id: number, patch: MockProductPatch): MockSeedProduct;
  /**
   * Changes a vote reward as the owner does on the dashboard (its price `cost`,
   * `giveAmount`, `name`); claims from then on pay and give the new figures. Returns the reward.
   *
   * @example
   * ```ts
   * mock.updateReward('test-key', 2, { cost: 3 }); // a price cut between two vote claims
   * ```
   * @throws MockAdminError 404 unknown key or reward, 400 invalid patch.
   */
  updateReward(apiKey: string, id: number, patch: MockRewardPatch): MockSeedReward;
  /**
   * Removes a product; undelivered rows that reference it then claim as `PRODUCT_NOT_FOUND`.
   *
   * @throws MockAdminError 404 unknown key or product.
   */
  removeProduct(apiKey: string, id: number): void;
  /**
   * The purchase rows of a game server (of one player when given, exact name).
   *
   * @throws MockAdminError 404 unknown key.
   */
  purchases(apiKey: string, playerName?: string): PurchaseRow[];
  /**
   * Records a vote worth `points` for a player; returns the player's vote record.
   *
   * @throws MockAdminError 404 unknown key, 400 bad player name or points (the player's
   *   total within a Java `int`).
   */
  recordVote(apiKey: string, playerName: string, points: number): VoteRecord;
  /**
   * Fault injection: delays, 5xx pages, dropped connections before or after the state
   * change, malformed bodies, per operation (also `POST /__mock/faults` over HTTP).
   *
   * @example
   * ```ts
   * mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 }); // the next claim's answer is lost
   * ```
   */
  faults: MockFaults;
  /** Returns everything to the seed: products, stock, checkouts, rows, votes, rate windows, faults and the clock. */
  reset(): void;
  /** A deep copy of the whole state (also `GET /__mock/state`). */
  state(): MockStateSnapshot;
}

/**
 * Creates a mock of the TeamGames service from a seed.
 *
 * @example
 * ```ts
 * import { StorefrontClient } from 'teamgames-sdk';
 * import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
 *
 * const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
 * // in process, no network:
 * const client = new StorefrontClient({ apiKey: 'test-key', fetch: mock.fetch, now: mock.clock.now });
 * // or over HTTP, for plugins in any language:
 * const { url, close } = await mock.listen({ port: 0 });
 * // or with msw (an optional peer): setupServer(...mock.handlers).listen()
 * ```
 * @throws Error when the seed is invalid; the message names the field, e.g.
 *   `Invalid mock seed: seed.servers[0].products[2].price: expected a number >= 0`.
 * @see [Testing your plugin with the mock](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/testing-with-the-mock.md)
 */
export function createMockService(options: MockServiceOptions): MockService {
  const clock = createClock(options.now);
  const state = createState(parseMockSeed(options.seed), clock);
  const faults = new FaultInjector();
  const routes = createRoutes(state, faults);
  const router = createRouter(routes);
  let handlers: HttpHandler[] | undefined;
  return {
    fetch: createMockFetch(router),
    get handlers() {
      handlers ??= toMswHandlers(routes);
      return handlers;
    },
    listen: (listenOptions) => serveRouter(router, listenOptions),
    clock,
    completePayment: (transactionId) => completePayment(state, transactionId),
    cancelPayment: (transactionId) => cancelPayment(state, transactionId),
    addPurchase: (apiKey, input) => admin.addPurchase(state, apiKey, input),
    updateProduct: (apiKey, id, patch) => admin.updateProduct(state, apiKey, id, patch),
    updateReward: (apiKey, id, patch) => admin.updateReward(state, apiKey, id, patch),
    removeProduct: (apiKey, id) => admin.removeProduct(state, apiKey, id),
    purchases: (apiKey, playerName) => admin.purchases(state, apiKey, playerName),
    recordVote: (apiKey, playerName, points) => admin.recordVote(state, apiKey, playerName, points),
    faults,
    reset: () => {
      faults.reset();
      resetState(state);
    },
    state: () => admin.snapshot(state),
  };
}
