/**
 * The public client.
 *
 * @module
 */
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import type { VoteDeliveryReport, VoteResumeReport, VoteRewardDeliveryOptions, VoteRewardGiveFunction } from './delivery/votes/index.js';
import { startLoop, type DeliveryLoop, type DeliveryLoopOptions } from './delivery/loop/index.js';
import type { DeliverOptions, DeliveryReport, GrantFunction, ResumeOptions, ResumeReport } from './delivery/core/index.js';
import { guardedClaim } from './internal/claim-guard.js';
import { API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL, callOf, checkCatalog, checkClaim, checkVoteReward, transportOf, type DerivedClientOptions, type Settings } from './client-options.js';
import { DERIVED, derivedSettings, partsOf, viaOf, type Derived, type Shared } from './client-parts.js';
import { cachedCatalog } from './internal/catalog-cache.js';
import { checkoutBody } from './internal/checkout-body.js';
import type { Transport } from './internal/transport.js';
import { checkPlayerName } from './internal/validate.js';
import type { StorefrontClientOptions } from './types.js';
import type { RequestOptions } from './wire/options.js';
import { readCatalog, type Catalog, type CatalogOptions } from './wire/catalog.js';
import { readCheckout, type CheckoutInput, type CheckoutResult } from './wire/checkout.js';
import { readClaim, type ClaimOptions, type ClaimResult } from './wire/claim.js';
import { readLegacyClaim } from './wire/legacy.js';
import { readVoteReward, type VoteRewardInput, type VoteRewardResult } from './wire/vote-reward.js';

export { API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL, type DerivedClientOptions };

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
  /** This client as the delivery and vote engines' caller: its own claims, its `onEvent`, its key's redaction. */
  readonly #via: ReturnType<typeof viaOf>;

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
    const parts = (options as { [DERIVED]?: Derived } | undefined)?.[DERIVED] ?? partsOf(options);
    this.#shared = parts.shared;
    this.#settings = parts.settings;
    this.#transport = transportOf(this.#shared, this.#settings);
    this.#via = viaOf(this, this.#shared.credentials, this.#settings.onEvent);
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
    const derived: Derived = { shared: this.#shared, settings: derivedSettings(options, this.#settings) };
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
    const { categoryId, signal, timeoutMs } = checkCatalog(options);
    signal?.throwIfAborted();
    // JSON leaves an undefined categoryId out: the whole catalog is asked for.
    return cachedCatalog(this.#shared.cache, categoryId, () =>
      this.#transport.send(ENDPOINTS.getCatalog, { categoryId }, { signal, timeoutMs, playerName: '', delivers: false }, readCatalog),
    );
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
    const { player, signal, timeoutMs, preview, includeRawTransactions } = checkClaim(playerName, options);
    // A preview changes nothing on the service, so a lost answer costs nothing.
    const ctx = { signal, timeoutMs, playerName: player, delivers: !preview };
    return guardedClaim(this.#shared.guard, player, signal, (onNotSent) =>
      this.#transport.send(ENDPOINTS.claim, { playerName: player, preview, includeRawTransactions }, { ...ctx, onNotSent }, readClaim),
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
    const { body, call } = checkVoteReward(input, options);
    return this.#transport.send(ENDPOINTS.claimVoteReward, body, { ...call, playerName: body.player, delivers: true }, readVoteReward);
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
    return this.#shared.deliveries.deliver(this.#via, playerName, grant, options);
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
    return this.#shared.deliveries.resume(this.#via, grant, options);
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
    return startLoop({ engine: this.#shared.deliveries, via: () => this.#via, votes: { deliveries: this.#shared.votes, via: () => this.#via } }, options);
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
    const [player, call] = [checkPlayerName(playerName, 'playerName', endpoint.operation), callOf(options, endpoint.operation)];
    return guardedClaim(this.#shared.guard, player, call.signal, (onNotSent) =>
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
   * way or unreadable (`OUTCOME_UNKNOWN`) is worked out by the player's next answer from
   * the service's counters, never from a price an earlier answer showed (the dashboard may
   * have changed it): a lost call they prove carried out is given (`recovered: true`), once;
   * one they prove spent nothing stays open until it can no longer land (10 minutes); any
   * other is in the report's `unverified` (player, reward, the most points at stake, span),
   * a window for staff (`teamgames journal windows`, {@link resolveWindow}). The exact rule:
   * docs/delivering-purchases.md.
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
    const votes = this.#shared.votes();
    // Loaded already: no turn waited, so the call queues for its player before any call made after it.
    return (votes instanceof Promise ? await votes : votes).deliver(this.#via, input, give, options);
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
    return (await this.#shared.votes()).resume(this.#via, give, options);
  }
}
