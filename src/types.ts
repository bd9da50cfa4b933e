/**
 * The client's options and the events it reports. The types of each endpoint family
 * live with its reader under `src/wire/`, delivery's under `src/delivery/`.
 *
 * @module
 */
import type { JournalError, Operation } from './errors.js';
import type { DeliveryJournal } from './journals/contract.js';
import type { DeliveredItem, DeliveryCode, DeliveryReport, UnverifiedWindow } from './delivery/core/index.js';

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

/** An event emitted through {@link StorefrontClientOptions.onEvent}. Credential headers read `<redacted>`. */
export type StorefrontEvent =
  | {
      /** An attempt is about to be sent. */
      type: 'request';
      /** The SDK method that sent it. */
      operation: Operation;
      /** Always `POST`. */
      method: string;
      /** The full URL. */
      url: string;
      /** Request headers, credential values replaced by `<redacted>`. */
      headers: Record<string, string>;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
    }
  | {
      /** An attempt got its response headers. */
      type: 'response';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The HTTP status. */
      status: number;
      /** 0 for the first attempt, then 1, 2 … */
      attempt: number;
      /** Time from sending this attempt to its response headers. */
      durationMs: number;
    }
  | {
      /** A read is about to be retried. */
      type: 'retry';
      /** The SDK method that sent it. */
      operation: Operation;
      /** The full URL. */
      url: string;
      /** The attempt about to start (1 for the first retry). */
      attempt: number;
      /** Why the previous attempt failed: an HTTP status or a network reason. */
      reason: string;
    }
  | {
      /** A lost claim was reconciled: purchases in the window may have been delivered unseen. */
      type: 'unverified';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player and the window, as on the report. */
      window: UnverifiedWindow;
    }
  | {
      /** The delivery journal failed; deliveries for the player are paused or granted from memory. */
      type: 'journalError';
      /** `deliver` or `resumeDeliveries`. */
      operation: Operation;
      /** The player whose delivery met the failure. */
      playerName: string;
      /** The failure; its `cause` holds the journal's own error. */
      error: JournalError;
    }
  | {
      /** The delivery loop granted items to a player (or some grants failed and stay pending). */
      type: 'delivery';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The run's report, as `deliver` returns it. */
      report: DeliveryReport;
    }
  | {
      /**
       * A grant kept failing for one item: it reached the delivery loop's
       * `staffAfterAttempts` and is marked for staff (`teamgames journal pending` shows it
       * as stuck). It stays pending and is still given, less often, and on the player's next join.
       */
      type: 'stuck';
      /** `deliver` (the loop's runs) or `resumeDeliveries`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The item. */
      item: DeliveredItem;
      /** Failed grants so far. */
      attempts: number;
      /** What the last grant threw. */
      error: unknown;
    }
  | {
      /**
       * The delivery loop cannot deliver to an online player: their runs keep ending with
       * `code` (`PRODUCT_NOT_FOUND`, `RATE_LIMIT` for long, `INVALID_PLAYER`, `UNKNOWN`,
       * `ERROR`…). Emitted once when it starts; `playerUnblocked` when a run goes through again.
       * The player is counted in `stats().blocked` meanwhile.
       */
      type: 'playerBlocked';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
      /** The code the player's runs end with. */
      code: DeliveryCode;
      /** How many runs in a row ended so. */
      runs: number;
    }
  | {
      /** A player the loop reported as blocked was delivered to (or found nothing to deliver) again. */
      type: 'playerUnblocked';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player. */
      playerName: string;
    }
  | {
      /** A run of the delivery loop failed (network, service, journal, a refused key); the loop backs off and goes on. */
      type: 'loopError';
      /** `startDeliveryLoop`. */
      operation: Operation;
      /** The player whose run failed. */
      playerName: string;
      /** What failed. */
      error: unknown;
    };
