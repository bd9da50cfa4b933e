/**
 * The options every call takes, extended by each endpoint family's own.
 *
 * @module
 */

/** Options every method accepts. */
export interface RequestOptions {
  /** Aborts the call. Aborted before sending: rejects with `signal.reason`. */
  signal?: AbortSignal;
}
