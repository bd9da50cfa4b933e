/**
 * What a client is made of: the parts a client and the clients derived from it share
 * (key, base URL, claim guard, catalog cache, delivery engine, vote deliveries), built
 * from a new client's options checked, and the settings `withOptions` may change.
 *
 * @module
 * @internal
 */
import { Credentials } from './auth.js';
import { DeliveryEngine } from './delivery/engine/index.js';
import { playerLocksOf } from './delivery/core/index.js';
import type { RunVia } from './delivery/engine/index.js';
import type { VoteDeliveries, VoteVia } from './delivery/votes/index.js';
import { checkJournal } from './journals/contract.js';
import type { StorefrontClientOptions } from './types.js';
import type { Catalog } from './wire/catalog.js';
import { CLAIM_WINDOW_MS } from './wire/claim.js';
import { CatalogCache } from './internal/catalog-cache.js';
import { ClaimGuard } from './internal/claim-guard.js';
import { CLIENT_OPTIONS, DEFAULT_SETTINGS, DERIVABLE_OPTIONS, checkSettings, resolveApiKey, resolveBaseUrl, type DerivedClientOptions, type Settings } from './client-options.js';
import { monotonicNow } from './internal/clock.js';
import { checkBoolean, checkFunction, checkIntegerInRange, checkOptionsObject, checkRequiredObject, fail } from './internal/validate.js';

/** What a client and the clients derived from it share. */
export interface Shared {
  readonly baseUrl: string;
  readonly credentials: Credentials;
  readonly guard: ClaimGuard | undefined;
  readonly cache: CatalogCache<Catalog> | undefined;
  readonly deliveries: DeliveryEngine;
  /**
   * The vote rewards' deliveries (`deliverVoteReward`, `resumeVoteRewards`): themselves once
   * loaded, so a call takes its place in the player's order in the caller's turn, as
   * `deliver` does; a promise of them until `import()` has loaded them on first use.
   */
  readonly votes: () => VoteDeliveries | Promise<VoteDeliveries>;
}

/** What `withOptions` hands the constructor of a derived client instead of options. */
export interface Derived {
  shared: Shared;
  settings: Settings;
}

/**
 * The key of a derived client's parts in the constructor's argument: a symbol of this
 * module (not `Symbol.for`), so no caller can forge one and no state lives between calls.
 */
export const DERIVED = Symbol('teamgames-sdk.derived');

/** A new client's parts, from its options checked (in the order the constructor documents its errors). */
export function partsOf(options: StorefrontClientOptions | undefined): Derived {
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

  const settings = checkSettings(opts, DEFAULT_SETTINGS);
  const deliveries = new DeliveryEngine({ now, monotonic: interval, journal });
  const shared: Shared = {
    baseUrl,
    credentials: new Credentials(apiKey),
    guard: rateLimit ? new ClaimGuard(interval, CLAIM_WINDOW_MS) : undefined,
    cache: ttl > 0 ? new CatalogCache(interval, ttl) : undefined,
    deliveries,
    // Vote rewards share the purchases' journal (opened on first use) and per-player order.
    votes: lazyVotes(deliveries, now),
  };
  return { shared, settings };
}

/** `withOptions`' argument checked: only what a derived client may change, over `base`. */
export function derivedSettings(options: DerivedClientOptions, base: Settings): Settings {
  const opts: Partial<StorefrontClientOptions> = checkRequiredObject(options, CLIENT_OPTIONS, 'the options to change', 'options', 'withOptions');
  const fixed = Object.keys(opts).find((name) => !(DERIVABLE_OPTIONS as readonly string[]).includes(name));
  if (fixed !== undefined) {
    fail(
      `options.${fixed}`,
      `cannot differ on a derived client, which shares the key, base URL, claim guard, catalog cache and journal (create a new StorefrontClient); it may change ${DERIVABLE_OPTIONS.join(', ')}`,
      'withOptions',
    );
  }
  return checkSettings(opts, base, 'withOptions');
}

/** A client as the delivery and vote engines' caller: its own claims, its `onEvent`, its key's redaction. */
export function viaOf(client: Pick<RunVia, 'claim'> & Pick<VoteVia, 'claimVoteReward'>, credentials: Credentials, onEvent: RunVia['onEvent']): RunVia & VoteVia {
  return {
    claim: (player, options) => client.claim(player, options),
    claimVoteReward: (input, options) => client.claimVoteReward(input, options),
    onEvent,
    redact: (text) => credentials.redact(text),
  };
}

/** The vote rewards' deliveries of a client, loaded by `import()` on first use and kept. */
function lazyVotes(deliveries: DeliveryEngine, now: () => number): () => VoteDeliveries | Promise<VoteDeliveries> {
  let votes: VoteDeliveries | undefined;
  let loading: Promise<VoteDeliveries> | undefined;
  return () =>
    votes ??
    (loading ??= import('./delivery/votes/index.js').then(
      ({ VoteDeliveries }) =>
        (votes = new VoteDeliveries({
          get journal() {
            return deliveries.journal;
          },
          locks: playerLocksOf,
          now,
        })),
    ));
}
