/**
 * The client's options and the events it reports. The types of each endpoint family
 * live with its reader under `src/wire/`, delivery's under `src/delivery/`.
 *
 * @module
 */
import type { DeliveryEvent } from './delivery/core/index.js';
import type { StorefrontRequestEvent } from './internal/request-events.js';
import type { DeliveryJournal } from './journals/contract.js';

// ---------------------------------------------------------------------------
// Client options

/**
 * Options of {@link StorefrontClient}, all optional: `apiKey` defaults to the
 * `TEAMGAMES_API_KEY` environment variable and must come from one of the two. Unknown
 * option names are rejected, so a typo fails loudly.
 * @see [Getting started](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/getting-started.md)
 */
export interface StorefrontClientOptions {
  /**
   * The raw API key of one game server, from the TeamGames dashboard. Never pre-encode it.
   * Default: the `TEAMGAMES_API_KEY` environment variable; one of the two is required.
   */
  apiKey?: string;
  /**
   * Base URL of the service. Default: the `TEAMGAMES_BASE_URL` environment variable, else
   * `https://api.teamgames.io`. Plain `http:` is only accepted for loopback hosts
   * (`localhost`, `127.0.0.0/8`, `[::1]`), e.g. the mock.
   */
  baseUrl?: string;
  /** Timeout of each attempt, from sending it to the last byte of its answer, in milliseconds. Default `15000`. */
  timeoutMs?: number;
  /**
   * Retries for reads (the catalog) on network errors, timeouts, 429 and 5xx, with
   * backoff and `Retry-After` honoured up to 30 s; `0` disables. Default `2`. Claims,
   * checkouts and votes are never retried.
   */
  retry?: number;
  /**
   * The largest answer the client reads, in bytes, counted on the decoded body as it
   * arrives (a compressed bomb is stopped at the bound, not after inflating). Over it the
   * read stops: {@link ResponseTooLargeError}, never retried (for a claim or vote,
   * {@link ClaimOutcomeUnknownError}). From 1,024 to 268,435,456; default 16 MiB
   * (16,777,216), far above a catalog of thousands of products.
   */
  maxResponseBytes?: number;
  /** How long a catalog answer is reused, per category, in milliseconds; `0` disables. Default `60000`. */
  catalogCacheTtlMs?: number;
  /** The local per-player claim guard (10 s). Default `true`. */
  rateLimit?: boolean;
  /**
   * A clock for tests, in milliseconds: the claim guard's window and the catalog cache's
   * lifetime are measured on it, and the journal's timestamps read it. Default: intervals
   * on a monotonic clock (`performance.now()`), which a wall clock set back or forward
   * does not move, and timestamps from `Date.now`. Whatever this clock does, the guard
   * never answers a `retryAfterMs` above 10 s and a cached catalog never outlives its TTL.
   */
  now?: () => number;
  /** A custom `fetch`. Default: `globalThis.fetch`, looked up at each request (so msw and test doubles work). */
  fetch?: typeof globalThis.fetch;
  /** Prepended to the SDK's own `User-Agent` (`teamgames-sdk/<version> node/<version>`). */
  userAgent?: string;
  /**
   * Called for each request, response and retry, with credentials masked. A listener
   * that throws is ignored.
   */
  onEvent?: (event: StorefrontEvent) => void;
  /**
   * Where {@link StorefrontClient.deliver} records deliveries before granting them.
   * Default: a {@link FileJournal} at `./.teamgames-journal.jsonl` (relative to the
   * working directory), opened on the first `deliver` or `resumeDeliveries`, never by the
   * constructor. Pass your own in production (one per API key: a file next to the game's
   * data, or a database shared by the game servers of one key) and a
   * {@link MemoryJournal} in tests.
   */
  journal?: DeliveryJournal;
}

/**
 * An event emitted through {@link StorefrontClientOptions.onEvent}: one of a call's
 * ({@link StorefrontRequestEvent}: a request, its response, a retry) or one of delivery's
 * ({@link DeliveryEvent}). Switch on `type`. Credential headers read `<redacted>`.
 */
export type StorefrontEvent = StorefrontRequestEvent | DeliveryEvent;
