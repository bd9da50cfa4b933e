/**
 * The options every call takes, extended by each endpoint family's own.
 *
 * @module
 */

/** Options every method accepts. */
export interface RequestOptions {
  /** Aborts the call. Aborted before sending: rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * This call's timeout, per attempt, in milliseconds: from sending the request to the
   * last byte of its answer. Overrides the client's `timeoutMs` for this call only. A read
   * (the catalog) then rejects with {@link TimeoutError} after its retries; a checkout
   * with {@link TimeoutError}; a claim or vote, whose request was sent, with
   * {@link ClaimOutcomeUnknownError} (`reason: 'timeout'`), since it may have been applied.
   *
   * @example
   * ```ts
   * const catalog = await client.getCatalog({ timeoutMs: 2_000 }); // a page render cannot wait 15 s
   * ```
   */
  timeoutMs?: number;
}
