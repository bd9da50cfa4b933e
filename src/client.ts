/**
 * The public client.
 *
 * @module
 */
import { Credentials } from './auth.js';
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import { AuthenticationError, type Operation } from './errors.js';
import { DeliveryEngine, playerLocksOf } from './delivery/engine.js';
import { VoteDeliveries, type VoteVia } from './delivery/votes.js';
import type { VoteDeliveryReport, VoteResumeReport, VoteRewardDeliveryOptions, VoteRewardGiveFunction } from './delivery/vote-types.js';
import { startDeliveryLoop } from './delivery/loop.js';
import type { DeliveryLoop, DeliveryLoopOptions } from './delivery/loop-types.js';
import type { RunVia } from './delivery/report.js';
import type { DeliverOptions, DeliveryReport, GrantFunction, ResumeOptions, ResumeReport } from './delivery/types.js';
import { checkJournal } from './journals/contract.js';
import { CatalogCache } from './internal/catalog-cache.js';
import { ClaimGuard } from './internal/claim-guard.js';
import { monotonicNow } from './internal/clock.js';
import { deepFreeze } from './internal/freeze.js';
import { envDenied, readEnv, runtimeAgent } from './internal/runtime.js';
import { Transport, type SendContext } from './internal/transport.js';
import {
  checkBaseUrl,
  checkBoolean,
  checkFunction,
  checkHeaderValue,
  checkIntegerInRange,
  checkNonBlank,
  checkOptionsObject,
  checkPlayerName,
  checkPositiveInteger,
  MAX_API_KEY_LENGTH,
  checkRequiredObject,
  checkSignal,
  checkTimeout,
  fail,
} from './internal/validate.js';
import type { StorefrontClientOptions, StorefrontEvent } from './types.js';
import type { RequestOptions } from './wire/options.js';
import { VERSION } from './version.js';
import { readCatalog, type Catalog, type CatalogOptions } from './wire/catalog.js';
import { checkoutBody, readCheckout, type CheckoutInput, type CheckoutResult } from './wire/checkout.js';
import { CLAIM_WINDOW_MS, RATE_LIMIT_MESSAGE, readClaim, type ClaimOptions, type ClaimResult } from './wire/claim.js';
import { readLegacyClaim } from './wire/legacy.js';
import { readVoteReward, type VoteRewardInput, type VoteRewardResult } from './wire/vote-reward.js';

/** The production base URL. */
export const DEFAULT_BASE_URL = 'https://api.teamgames.io';

/** The environment variable read for `apiKey` when the option is absent. */
export const API_KEY_ENV = 'TEAMGAMES_API_KEY';
/** The environment variable read for `baseUrl` when the option is absent. */
export const BASE_URL_ENV = 'TEAMGAMES_BASE_URL';

// Derived from the interface: a new option cannot be left out of the allow-list.
const CLIENT_OPTIONS = Object.keys({
  apiKey: true,
  baseUrl: true,
  timeoutMs: true,
  retry: true,
  maxResponseBytes: true,
  catalogCacheTtlMs: true,
  rateLimit: true,
  now: true,
  fetch: true,
  userAgent: true,
  onEvent: true,
  journal: true,
} satisfies Record<keyof StorefrontClientOptions, true>);
// What `withOptions` may change: how calls are sent and observed, never which service and
// key they reach, nor what the derived client shares (guard, cache, journal, clock).
const DERIVABLE_OPTIONS = Object.keys({
  timeoutMs: true,
  retry: true,
  maxResponseBytes: true,
  fetch: true,
  userAgent: true,
  onEvent: true,
} satisfies Record<keyof DerivedClientOptions, true>);

/**
 * The options {@link StorefrontClient.withOptions} may change: how calls are sent and
 * observed. The rest (key, base URL, cache, guard, clock, journal) is shared.
 */
export type DerivedClientOptions = Pick<StorefrontClientOptions, 'timeoutMs' | 'retry' | 'maxResponseBytes' | 'fetch' | 'userAgent' | 'onEvent'>;

const MAX_RETRY = 10;
// Far above a catalog of thousands of products (about 0.5 kB each), far below what hurts.
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_RESPONSE_BYTES_CEILING = 256 * 1024 * 1024;

/**
 * A client for one game server's store, authenticated by its raw API key.
 *
 * Methods never throw synchronously: bad arguments reject the returned promise with
 * {@link InvalidInputError} before any request. Business outcomes (no items, rate limit,
 * out of stock …) resolve as values; failures reject with a {@link StorefrontError}.
 * Claims, checkouts and votes are sent exactly once, never retried.
 *
 * @example
 * ```ts
 * import { StorefrontClient } from 'teamgames-sdk';
 *
 * const client = new StorefrontClient(); // the raw key from TEAMGAMES_API_KEY, or { apiKey }
 * const result = await client.claim('Player123');
 * if (result.code === 'SUCCESS') {
 *   for (const item of result.claims) grant(item.player_name, item.product_id_string, item.quantity_to_grant);
 * } else {
 *   tell('Player123', result.message);
 * }
 * ```
 * @see [Getting started](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/getting-started.md)
 * @see [Delivering purchases in game](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md)
 * @see [Building a storefront](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/building-a-storefront.md)
 * @see [Errors and retries](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/errors-and-retries.md)
 */
export class StorefrontClient {
  readonly #transport: Transport;
  readonly #shared: Shared;
  readonly #settings: Settings;

  /**
   * With no `apiKey` the key comes from the `TEAMGAMES_API_KEY` environment variable, and
   * with no `baseUrl` the URL from `TEAMGAMES_BASE_URL` (else production); an option given
   * always wins. Environment variables are read once, here (under Deno only when
   * `--allow-env` grants them, never with a prompt).
   *
   * @example
   * ```ts
   * const client = new StorefrontClient(); // TEAMGAMES_API_KEY (and TEAMGAMES_BASE_URL) from the environment
   * ```
   * @throws {@link InvalidInputError} for a missing or blank key (naming `options.apiKey`
   * and `TEAMGAMES_API_KEY`), an unknown option name, or an option or variable outside its
   * rule (the message names it, never its value).
   */
  constructor(options?: StorefrontClientOptions) {
    // A client derived by withOptions: its parts, handed over under a key no caller has.
    const derived = (options as { [DERIVED]?: Derived } | undefined)?.[DERIVED];
    if (derived !== undefined) {
      this.#shared = derived.shared;
      this.#settings = derived.settings;
      this.#transport = transportOf(this.#shared, this.#settings);
      return;
    }
    const opts = checkOptionsObject(options, CLIENT_OPTIONS, 'options');
    const apiKey = resolveApiKey(opts.apiKey);
    const baseUrl = resolveBaseUrl(opts.baseUrl);
    const ttl = opts.catalogCacheTtlMs === undefined ? 60_000 : checkIntegerInRange(opts.catalogCacheTtlMs, 0, Number.MAX_SAFE_INTEGER, 'options.catalogCacheTtlMs');
    const rateLimit = checkBoolean(opts.rateLimit, 'options.rateLimit') ?? true;
    const injected = checkFunction<() => number>(opts.now, 'options.now');
    // Intervals (the guard's window, the cache's lifetime) on a monotonic clock unless a
    // test injected one; the journal's timestamps are dates, on the wall clock.
    const interval = injected ?? monotonicNow;
    const now = injected ?? Date.now;
    const journal = checkJournal(opts.journal);

    this.#settings = checkSettings(opts, DEFAULT_SETTINGS);
    const deliveries = new DeliveryEngine({ now, monotonic: interval, journal });
    this.#shared = {
      baseUrl,
      credentials: new Credentials(apiKey),
      guard: rateLimit ? new ClaimGuard(interval, CLAIM_WINDOW_MS) : undefined,
      cache: ttl > 0 ? new CatalogCache(interval, ttl) : undefined,
      deliveries,
      // Vote rewards share the purchases' journal (opened on first use) and per-player order.
      votes: new VoteDeliveries({
        get journal() {
          return deliveries.journal;
        },
        locks: playerLocksOf,
        now,
      }),
    };
    this.#transport = transportOf(this.#shared, this.#settings);
  }

  /**
   * A client that sends its calls differently (timeout, retries, `fetch`, `User-Agent`,
   * `onEvent`, size bound) and shares everything else with this one: the key and base
   * URL, the claim guard (so the 10 s window holds across both), the catalog cache, the
   * journal and the per-player order of deliveries. Options not given keep this client's
   * values. Creating a second client with `new` would split all of these.
   *
   * @example
   * ```ts
   * const client = new StorefrontClient();
   * // a web page cannot wait 15 s, nor retry; the game's /claim uses the same guard:
   * const forPages = client.withOptions({ timeoutMs: 2_000, retry: 0 });
   * ```
   * @throws {@link InvalidInputError} for an option outside its rule, and for an option
   *   that cannot differ on a derived client (`apiKey`, `baseUrl`, `catalogCacheTtlMs`,
   *   `rateLimit`, `now`, `journal`: create a new client for those).
   */
  withOptions(options: DerivedClientOptions): StorefrontClient {
    const opts: Partial<StorefrontClientOptions> = checkRequiredObject(options, CLIENT_OPTIONS, 'the options to change', 'options', 'withOptions');
    const fixed = Object.keys(opts).find((name) => !(DERIVABLE_OPTIONS as readonly string[]).includes(name));
    if (fixed !== undefined) {
      fail(
        `options.${fixed}`,
        `cannot differ on a derived client, which shares the key, base URL, claim guard, catalog cache and journal (create a new StorefrontClient); it may change ${DERIVABLE_OPTIONS.join(', ')}`,
        'withOptions',
      );
    }
    const derived: Derived = { shared: this.#shared, settings: checkSettings(opts, this.#settings, 'withOptions') };
    return new StorefrontClient({ [DERIVED]: derived } as StorefrontClientOptions);
  }

  /**
   * Lists the products on sale now (enabled, inside their window, with the sales active
   * now). Answers are cached per category for `catalogCacheTtlMs`; the cached catalog is
   * frozen and shared, so copy it before changing it. Retried on network errors and 5xx.
   *
   * @example
   * ```ts
   * const { products } = await client.getCatalog({ categoryId: 3 });
   * for (const p of products) console.log(p.name, p.priceWithSale);
   * ```
   * @throws {@link InvalidInputError} when `categoryId` is not a positive integer.
   * @throws {@link AuthenticationError} when the key is unknown (`GAME_SERVER_NOT_FOUND`).
   * @throws {@link HttpError}, {@link TimeoutError}, {@link NetworkError},
   *   {@link ResponseValidationError} after the retries.
   * @see [Building a storefront](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/building-a-storefront.md)
   */
  async getCatalog(options?: CatalogOptions): Promise<Catalog> {
    const opts = checkOptionsObject(options, ['categoryId', ...CALL_OPTIONS], 'options', 'getCatalog');
    const { signal, timeoutMs } = checkCall(opts, 'getCatalog');
    const categoryId = opts.categoryId === undefined ? undefined : checkPositiveInteger(opts.categoryId, 'options.categoryId', 'getCatalog');
    const cacheKey = categoryId === undefined ? 'all' : `category:${categoryId}`;
    signal?.throwIfAborted();
    const cached = this.#shared.cache?.get(cacheKey);
    if (cached !== undefined) return cached;

    const catalog = await this.#transport.send(ENDPOINTS.getCatalog, categoryId === undefined ? {} : { categoryId }, { signal, timeoutMs, playerName: '', delivers: false }, readCatalog);
    if (this.#shared.cache === undefined) return catalog;
    const frozen = deepFreeze(catalog);
    this.#shared.cache.set(cacheKey, frozen);
    return frozen;
  }

  /** Forgets every cached catalog answer of this client (and of the clients sharing its cache: see {@link withOptions}). */
  clearCatalogCache(): void {
    this.#shared.cache?.clear();
  }

  /**
   * Starts a checkout for a player's cart. Sent once, never retried.
   *
   * @example
   * ```ts
   * const result = await client.checkout({ username: 'Player123', items: [{ id: 12, quantity: 1 }], coupon: 'SPRING' });
   * switch (result.outcome) {
   *   case 'PAYMENT_REQUIRED': return redirectTo(result.redirect);
   *   case 'FREE': return say('Free! Type ::claim in game.');
   *   case 'INVALID_STOCK': return say('Some items are no longer available.');
   *   case 'COUPON_REJECTED': return say(result.error);
   *   case 'BASKET_REJECTED': return say('This cart cannot be paid in one go.');
   *   case 'GATEWAY_ERROR': return say('The store cannot take payments right now.');
   *   case 'UNKNOWN': return say('The store could not take this order; try again later.'); // a status this SDK does not know
   * }
   * ```
   * @throws {@link InvalidInputError} for a blank username, an empty cart, an `id` that is
   *   not a positive integer or a `quantity` outside 1…1,000,000.
   * @throws {@link AuthenticationError} (HTTP 401), {@link RequestRejectedError} (HTTP 404),
   *   {@link HttpError}, {@link TimeoutError}, {@link NetworkError}, {@link ResponseValidationError}.
   * @see [Building a storefront](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/building-a-storefront.md)
   */
  async checkout(input: CheckoutInput, options?: RequestOptions): Promise<CheckoutResult> {
    const { body, username } = checkoutBody(input);
    const call = callOf(options, 'checkout');
    return this.#transport.send(ENDPOINTS.checkout, body, { ...call, playerName: username, delivers: false }, readCheckout);
  }

  /**
   * Claims a player's paid, undelivered purchases (v4). On `SUCCESS` the service has
   * marked them delivered: grant every item now. Never retried; guarded locally to one
   * call per player per 10 s.
   *
   * @example
   * ```ts
   * const result = await client.claim('Player123');
   * if (result.code === 'SUCCESS') for (const t of result.claims) give(t.player_name, t.product_id_string, t.quantity_to_grant);
   * else if (result.code === 'RATE_LIMIT') say(`Wait ${Math.ceil(result.retryAfterMs / 1000)} s.`);
   * else say(result.message);
   * ```
   * @throws {@link InvalidInputError} for a blank player name.
   * @throws {@link ClaimOutcomeUnknownError} when the request was sent but no usable answer
   *   came back: the items may be delivered. Preview after the window to reconcile.
   * @throws {@link AuthenticationError}, {@link HttpError}, {@link NetworkError} (nothing sent).
   * @see [Delivering purchases in game](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md)
   */
  async claim(playerName: string, options?: ClaimOptions): Promise<ClaimResult> {
    const op: Operation = 'claim';
    const player = checkPlayerName(playerName, 'playerName', op);
    const opts = checkOptionsObject(options, ['preview', 'includeRawTransactions', ...CALL_OPTIONS], 'options', op);
    const { signal, timeoutMs } = checkCall(opts, op);
    const preview = checkBoolean(opts.preview, 'options.preview', op) ?? false;
    const includeRawTransactions = checkBoolean(opts.includeRawTransactions, 'options.includeRawTransactions', op) ?? false;
    return this.#guarded(player, signal, (onNotSent) =>
      this.#transport.send(
        ENDPOINTS.claim,
        { playerName: player, preview, includeRawTransactions },
        // A preview changes nothing on the service, so a lost answer costs nothing.
        { signal, timeoutMs, playerName: player, delivers: !preview, onNotSent },
        readClaim,
      ),
    );
  }

  /**
   * Lists what {@link claim} would deliver, changing nothing. Same as
   * `claim(playerName, { preview: true })`; it counts toward the 10 s window.
   *
   * @example
   * ```ts
   * const preview = await client.previewClaim('Player123');
   * if (preview.code === 'PREVIEW') say(`${preview.claims.length} item(s) waiting.`);
   * ```
   * @throws See {@link claim}; a preview never throws {@link ClaimOutcomeUnknownError}.
   * @see [Delivering purchases in game](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md)
   */
  async previewClaim(playerName: string, options?: Omit<ClaimOptions, 'preview'>): Promise<ClaimResult> {
    return this.claim(playerName, { ...options, preview: true });
  }

  /**
   * Claims through the legacy v3 update endpoint (raw key in `x-api-key`), normalized to
   * the v4 types. A message-only row becomes its code, never a purchase.
   *
   * @example
   * ```ts
   * const result = await client.claimLegacy('Player123');
   * if (result.code === 'SUCCESS') for (const t of result.claims) give(t.player_name, t.product_id_string, t.quantity_to_grant);
   * ```
   * @throws See {@link claim}.
   * @see [Migrating from the v3 claim to v4](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/migrating-v3-to-v4.md)
   */
  async claimLegacy(playerName: string, options?: RequestOptions): Promise<ClaimResult> {
    return this.#legacy(ENDPOINTS.claimLegacy, playerName, options);
  }

  /**
   * Claims through the v3 store claim endpoint (form body, raw key in `X-API-Key`),
   * normalized to the v4 types.
   *
   * @example
   * ```ts
   * const result = await client.claimStoreTransactions('Player123');
   * ```
   * @throws See {@link claim}.
   * @see [Migrating from the v3 claim to v4](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/migrating-v3-to-v4.md)
   */
  async claimStoreTransactions(playerName: string, options?: RequestOptions): Promise<ClaimResult> {
    return this.#legacy(ENDPOINTS.claimStoreTransactions, playerName, options);
  }

  /**
   * Spends a voter's points on a reward. Sent once, never retried; not covered by the
   * claim guard.
   *
   * @example
   * ```ts
   * const { rewards, messages, insufficientPoints } = await client.claimVoteReward({ player: 'Player123', reward: '1', amount: 'all' });
   * for (const r of rewards) give('Player123', r.reward_id, r.give_amount);
   * if (insufficientPoints) say('Vote more to earn this reward.');
   * ```
   * @throws {@link InvalidInputError} for a blank player or reward, or an `amount` that is
   *   neither a positive integer nor `'all'`.
   * @throws {@link ClaimOutcomeUnknownError} when sent without a usable answer (points may be spent).
   * @throws {@link AuthenticationError}, {@link HttpError}, {@link NetworkError}.
   */
  async claimVoteReward(input: VoteRewardInput, options?: RequestOptions): Promise<VoteRewardResult> {
    const op: Operation = 'claimVoteReward';
    const fields = checkRequiredObject(input, ['player', 'reward', 'amount'], 'player, reward and amount', 'input', op);
    const call = callOf(options, op);
    const player = checkPlayerName(fields.player, 'input.player', op);
    const reward = typeof fields.reward === 'number' ? String(checkPositiveInteger(fields.reward, 'input.reward', op)) : checkNonBlank(fields.reward, 'input.reward', op);
    const amount = fields.amount === 'all' ? 'all' : String(checkPositiveInteger(fields.amount, 'input.amount', op));
    return this.#transport.send(ENDPOINTS.claimVoteReward, { player, reward, amount }, { ...call, playerName: player, delivers: true }, readVoteReward);
  }

  /**
   * Claims a player's purchases and grants them without losing any. By default
   * (`mode: 'exactlyOnce'`) it previews, journals the previewed lines as intents, waits
   * out the 10 s window (through `sleep`) and claims: even a claim whose answer is lost
   * loses nothing that was previewed, and what it may have taken beyond that is reported
   * in `report.unverified`. `mode: 'fast'` is one claim call, no wait; a lost answer then
   * loses what that claim delivered (reported the same way, never silently).
   *
   * Either way the journal records what is about to be claimed before the claim, and the
   * claimed lines before the first grant; each line is acknowledged after `grant` returns.
   * A grant that throws leaves its line pending; the next `deliver` for the player (first
   * thing, before claiming) or {@link StorefrontClient.resumeDeliveries} grants it again.
   * An acknowledged line is never granted again. Calls for one player run one after the
   * other; a local or service `RATE_LIMIT` is waited out (see `maxRateLimitWaits`).
   *
   * Give `grant` a dedupe check on `item.deliveryId`: a crash between a grant and its
   * acknowledgement repeats that one call.
   *
   * @example
   * ```ts
   * const report = await client.deliver('Player123', async (item) => {
   *   if (await game.hasDelivery(item.deliveryId)) return; // repeated after a crash
   *   await game.give(item.player_name, item.product_id_string, item.quantity_to_grant, item.deliveryId);
   * });
   * tell('Player123', report.message);
   * if (report.unverified) alertStaff(report.unverified); // a lost claim may have taken more
   * if (report.journalError) alertStaff(report.journalError.message); // e.g. the disk is full
   * ```
   * @throws {@link InvalidInputError} for a blank player name, a `grant` that is not a
   *   function or a bad option; `signal.reason` when aborted. Nothing else: failures of
   *   the claim (`report.error`, code `OUTCOME_UNKNOWN` or `ERROR`) and of the journal
   *   (`report.journalError`) are reported, not thrown.
   * @see [Delivering purchases in game: never losing an item](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#never-losing-an-item)
   */
  async deliver(playerName: string, grant: GrantFunction, options?: DeliverOptions): Promise<DeliveryReport> {
    return this.#shared.deliveries.deliver(this.#via(), playerName, grant, options);
  }

  /**
   * Finishes what the journal holds, for every player: grants the claimed lines a crash or
   * a failing grant left behind and reconciles exactly-once intents (one preview per
   * player with intents). Call it at startup, before accepting claims. It claims nothing
   * new.
   *
   * @example
   * ```ts
   * const { granted, failed, pending } = await client.resumeDeliveries(grant);
   * log.info(`resumed ${granted.length} deliveries, ${failed.length} failed, ${pending} pending`);
   * ```
   * @throws {@link InvalidInputError} for a `grant` that is not a function or a bad option.
   * @throws {@link JournalError} when the journal cannot be read at all (a failure later in
   *   the run is reported in `journalError`), and `signal.reason` when aborted.
   * @see [Delivering purchases in game: never losing an item](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#never-losing-an-item)
   */
  async resumeDeliveries(grant: GrantFunction, options?: ResumeOptions): Promise<ResumeReport> {
    return this.#shared.deliveries.resume(this.#via(), grant, options);
  }

  /**
   * Starts automatic delivery: purchases reach online players without a `/claim`,
   * exactly once. Tell the loop who is online (`join` / `leave` from the game's events);
   * it previews each online player about every `pollIntervalMs` (spread with jitter),
   * and a preview that lists items becomes an exactly-once delivery (the intents
   * journaled, the claim sent when the service's 10 s window allows, the items given).
   * Every call it makes comes out of one budget, `maxCallsPerSecond`; when the budget
   * cannot cover every player at the interval, the interval stretches evenly (see
   * `stats().intervalMs`), joins and `/claim` first. `give` is never called for a player
   * the loop holds as offline: what a player who left was owed stays in the journal and
   * is given on their next join, here or on another node sharing the journal.
   *
   * Deliveries, unverified windows and the loop's errors are reported through `onEvent`
   * (`delivery`, `unverified`, `loopError`). Network trouble backs off exponentially with
   * jitter; a refused key pauses the loop (`stats().paused`) and retries now and then.
   *
   * @example
   * ```ts
   * const loop = client.startDeliveryLoop({
   *   give: async (item) => {
   *     if (await game.hasDelivery(item.deliveryId)) return; // repeated after a crash
   *     await game.give(item.player_name, item.product_id_string, item.quantity_to_grant, item.deliveryId);
   *   },
   * });
   * game.on('join', (player) => loop.join(player));
   * game.on('quit', (player) => loop.leave(player));
   * game.onCommand('claim', async (player) => game.tell(player, (await loop.claim(player)).message));
   * process.once('SIGTERM', () => void loop.stop());
   * ```
   * @throws {@link InvalidInputError} for a missing `give`, or an option out of range
   *   (`pollIntervalMs` at least 10000, `maxCallsPerSecond` 1 to 1000).
   * @see [Delivering purchases in game: automatic delivery](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#automatic-delivery)
   */
  startDeliveryLoop(options: DeliveryLoopOptions): DeliveryLoop {
    return startDeliveryLoop({ engine: this.#shared.deliveries, via: () => this.#via(), votes: { deliveries: this.#shared.votes, via: () => this.#voteVia() } }, options);
  }

  /** A safe description of the client; never the key. */
  toString(): string {
    return `StorefrontClient { baseUrl: ${this.#shared.baseUrl} }`;
  }

  /** A safe serialization of the client (`{ baseUrl }`); never the key. */
  toJSON(): Required<Pick<StorefrontClientOptions, 'baseUrl'>> {
    return { baseUrl: this.#shared.baseUrl };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  async #legacy(endpoint: Endpoint, playerName: string, options: RequestOptions | undefined): Promise<ClaimResult> {
    const player = checkPlayerName(playerName, 'playerName', endpoint.operation);
    const call = callOf(options, endpoint.operation);
    return this.#guarded(player, call.signal, (onNotSent) =>
      this.#transport.send(endpoint, { playerName: player }, { ...call, playerName: player, delivers: true, onNotSent }, readLegacyClaim),
    );
  }

  /**
   * Claims a vote reward for a player and gives its rows in game, crash-safe: the claim is
   * journaled before it is sent (the service spends the points when it answers), the rows
   * the answer grants are journaled before `give` runs, one `deliveryId` each, and
   * acknowledged after it returned. Same journal, same per-player order (across clients
   * and, with a database journal, across nodes) and same report shape as {@link deliver}.
   *
   * A `give` that throws leaves its row pending: the player's next call (first thing) or
   * {@link resumeVoteRewards} gives it again, never the SDK twice. An answer lost on the
   * way (`OUTCOME_UNKNOWN`) is worked out by the player's next answer, from the service's
   * counters (`total_points − vote_points` is what the player has spent): when they
   * identify what the lost call bought (a number of units of a reward whose price an
   * earlier answer showed), the row is given (`recovered: true`), once; otherwise the
   * report carries `unverified` (player, reward, points, time span), journaled as a window
   * for staff (`teamgames journal windows`, {@link resolveWindow}). Send a number of units
   * (e.g. `amount: 1`) rather than `'all'` to let lost answers be recovered.
   *
   * @example
   * ```ts
   * const report = await client.deliverVoteReward({ player: 'Player123', reward: 1, amount: 1 }, async (reward) => {
   *   if (await game.hasDelivery(reward.deliveryId)) return; // repeated after a crash
   *   await game.give(reward.playerName, reward.reward_id, reward.give_amount, reward.deliveryId);
   * });
   * player.sendMessage(report.message); // "You have not voted yet.", "Insufficient Points: …", the reward's text …
   * ```
   * @throws {@link InvalidInputError} for a blank player or reward, an `amount` that is
   *   neither a positive integer nor `'all'`, a `give` that is not a function, or a call
   *   from inside a give (or grant) for the same player.
   * @see [Delivering purchases in game: vote rewards](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#vote-rewards)
   */
  async deliverVoteReward(input: VoteRewardInput, give: VoteRewardGiveFunction, options?: VoteRewardDeliveryOptions): Promise<VoteDeliveryReport> {
    return this.#shared.votes.deliver(this.#voteVia(), input, give, options);
  }

  /**
   * Gives every vote reward row left pending in the journal (a `give` that threw, a crash
   * after the rows were journaled): call it at startup, next to {@link resumeDeliveries}.
   * A lost answer needs the player's next {@link deliverVoteReward} to be worked out, so
   * it stays pending (counted in `pending`).
   *
   * @example
   * ```ts
   * const { granted, failed, pending } = await client.resumeVoteRewards(give);
   * ```
   * @throws {@link JournalError} when the journal cannot be read.
   */
  async resumeVoteRewards(give: VoteRewardGiveFunction, options?: VoteRewardDeliveryOptions): Promise<VoteResumeReport> {
    return this.#shared.votes.resume(this.#voteVia(), give, options);
  }

  /** This client as the vote engine's caller: its vote claim, its `onEvent`, its key's redaction. */
  #voteVia(): VoteVia {
    const credentials = this.#shared.credentials;
    return { claimVoteReward: (input, options) => this.claimVoteReward(input, options), onEvent: this.#settings.onEvent, redact: (text) => credentials.redact(text) };
  }

  /** This client as the delivery engine's caller: its own claim and `onEvent`. */
  #via(): RunVia {
    const { credentials } = this.#shared;
    return { claim: (player, claimOptions) => this.claim(player, claimOptions), onEvent: this.#settings.onEvent, redact: (text) => credentials.redact(text) };
  }

  /**
   * Runs a claim under the local guard; refused calls resolve RATE_LIMIT without a request.
   * The player's window is shut while the claim is in flight and runs 10 s from when it
   * settled. The slot is given back when the request was never sent, and when the service refused
   * the call before considering the player (a refused key, `INVALID_PLAYER`): the service
   * opened no window then, so neither does the guard.
   */
  async #guarded(player: string, signal: AbortSignal | undefined, run: (onNotSent: () => void) => Promise<ClaimResult>): Promise<ClaimResult> {
    // An aborted call rejects at once, even when the guard could answer without a request.
    signal?.throwIfAborted();
    const { guard } = this.#shared;
    if (guard === undefined) return run(() => {});
    const decision = guard.acquire(player);
    if (!decision.ok) {
      return { code: 'RATE_LIMIT', status: 'ERROR', message: RATE_LIMIT_MESSAGE, claims: [], retryAfterMs: decision.retryAfterMs, source: 'local' };
    }
    // Otherwise the window starts when the call settles, never at the send: the service
    // times its window from the request's arrival, which lies somewhere in between.
    const { slot } = decision;
    let result: ClaimResult;
    try {
      result = await run(() => slot.release());
    } catch (error) {
      if (error instanceof AuthenticationError) slot.release();
      else slot.settle();
      throw error;
    }
    if (result.code === 'INVALID_PLAYER') slot.release();
    else slot.settle();
    return result;
  }
}

// ---------------------------------------------------------------------------
// What a client is made of

/** What a client and the clients derived from it share. */
interface Shared {
  readonly baseUrl: string;
  readonly credentials: Credentials;
  readonly guard: ClaimGuard | undefined;
  readonly cache: CatalogCache<Catalog> | undefined;
  readonly deliveries: DeliveryEngine;
  readonly votes: VoteDeliveries;
}

/** How a client sends its calls: what `withOptions` may change. */
interface Settings {
  readonly timeoutMs: number;
  readonly retry: number;
  readonly maxResponseBytes: number;
  readonly fetch: typeof globalThis.fetch | undefined;
  /** The caller's own part of the User-Agent, before the SDK's. */
  readonly userAgent: string | undefined;
  readonly onEvent: ((event: StorefrontEvent) => void) | undefined;
}

const DEFAULT_SETTINGS: Settings = {
  timeoutMs: 15_000,
  retry: 2,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  fetch: undefined,
  userAgent: undefined,
  onEvent: undefined,
};

/** What `withOptions` hands the constructor of a derived client instead of options. */
interface Derived {
  shared: Shared;
  settings: Settings;
}

/**
 * The key of a derived client's parts in the constructor's argument: a symbol of this
 * module (not `Symbol.for`), so no caller can forge one and no state lives between calls.
 */
const DERIVED = Symbol('teamgames-sdk.derived');

/** The settings given in `opts`, checked, over `base` for those not given. */
function checkSettings(opts: Partial<StorefrontClientOptions>, base: Settings, operation?: Operation): Settings {
  const userAgent = opts.userAgent === undefined ? undefined : checkHeaderValue(opts.userAgent, 'options.userAgent');
  return {
    timeoutMs: opts.timeoutMs === undefined ? base.timeoutMs : checkTimeout(opts.timeoutMs, 'options.timeoutMs', operation),
    retry: opts.retry === undefined ? base.retry : checkIntegerInRange(opts.retry, 0, MAX_RETRY, 'options.retry', operation),
    maxResponseBytes:
      opts.maxResponseBytes === undefined
        ? base.maxResponseBytes
        : checkIntegerInRange(opts.maxResponseBytes, 1_024, MAX_RESPONSE_BYTES_CEILING, 'options.maxResponseBytes', operation),
    fetch: checkFunction<typeof globalThis.fetch>(opts.fetch, 'options.fetch') ?? base.fetch,
    userAgent: userAgent ?? base.userAgent,
    onEvent: checkFunction<NonNullable<StorefrontClientOptions['onEvent']>>(opts.onEvent, 'options.onEvent') ?? base.onEvent,
  };
}

function transportOf(shared: Shared, settings: Settings): Transport {
  const sdkAgent = `teamgames-sdk/${VERSION} ${runtimeAgent()}`;
  return new Transport({
    baseUrl: shared.baseUrl,
    timeoutMs: settings.timeoutMs,
    retry: settings.retry,
    maxResponseBytes: settings.maxResponseBytes,
    fetch: settings.fetch,
    userAgent: settings.userAgent === undefined ? sdkAgent : `${settings.userAgent} ${sdkAgent}`,
    onEvent: settings.onEvent,
    credentials: shared.credentials,
  });
}

/** `options.apiKey`, else `TEAMGAMES_API_KEY`; the error names whichever was read. */
function resolveApiKey(option: unknown): string {
  // v3 endpoints carry the raw key in a header: refuse here what fetch would refuse mid-claim.
  if (option !== undefined) return checkHeaderValue(option, 'options.apiKey', MAX_API_KEY_LENGTH);
  const fromEnv = readEnv(API_KEY_ENV);
  if (fromEnv === undefined && envDenied(API_KEY_ENV)) {
    // Deno without --allow-env: the variable may well be set; saying "set it" misleads.
    fail('options.apiKey', `is required, and the runtime denies reading the ${API_KEY_ENV} environment variable (set or not): run Deno with --allow-env (or --allow-env=${API_KEY_ENV},${BASE_URL_ENV}), or pass { apiKey }`);
  }
  if (fromEnv === undefined) {
    fail('options.apiKey', `is required: pass { apiKey } (the raw key from the TeamGames dashboard) or set the ${API_KEY_ENV} environment variable`);
  }
  return checkHeaderValue(fromEnv, `${API_KEY_ENV} (environment variable)`, MAX_API_KEY_LENGTH);
}

/** `options.baseUrl`, else `TEAMGAMES_BASE_URL`, else production. */
function resolveBaseUrl(option: unknown): string {
  if (option !== undefined) return checkBaseUrl(option);
  const fromEnv = readEnv(BASE_URL_ENV);
  return fromEnv === undefined ? DEFAULT_BASE_URL : checkBaseUrl(fromEnv, `${BASE_URL_ENV} (environment variable)`);
}

const CALL_OPTIONS = ['signal', 'timeoutMs'] as const;

/** The options every call takes, checked. */
function checkCall(opts: Partial<RequestOptions>, op: Operation): Pick<SendContext, 'signal' | 'timeoutMs'> {
  return {
    signal: checkSignal(opts.signal, op),
    timeoutMs: opts.timeoutMs === undefined ? undefined : checkTimeout(opts.timeoutMs, 'options.timeoutMs', op),
  };
}

/** A call's `RequestOptions`, checked (no other option names allowed). */
function callOf(options: RequestOptions | undefined, op: Operation): Pick<SendContext, 'signal' | 'timeoutMs'> {
  return checkCall(checkOptionsObject(options, CALL_OPTIONS, 'options', op), op);
}
