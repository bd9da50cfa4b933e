/**
 * Combining abort signals by hand, with nothing left behind.
 *
 * Node 20's `AbortSignal.any([longLived, perCall])` records every combined signal on its
 * sources, and a combined signal with an abort listener is held by Node until its
 * listeners go; ky calls it on each request it is given a signal for. A signal a bridge
 * keeps for months (its shutdown signal, passed to every call) then carries one more
 * record per call. Here the per-call side listens to the long-lived side, and `dispose`
 * removes that listener when the call is over: the long-lived signal ends each call as
 * it began.
 *
 * @module
 * @internal
 */

/** A signal that aborts when any source aborts; `dispose` detaches it from the sources. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * A fresh signal that aborts with the reason of the first of `sources` to abort (at once
 * when one already has). Call `dispose` when the work it guards is over, in a `finally`.
 */
export function linkSignals(...sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const aborted = sources.find((source) => source.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = (): void => {
      dispose();
      controller.abort(source.reason);
    };
    // No `once`: a signal aborts once, and `onAbort` removes itself through `dispose`.
    source.addEventListener('abort', onAbort);
    return [source, onAbort] as const;
  });
  const dispose = (): void => {
    for (const [source, onAbort] of listeners) source.removeEventListener('abort', onAbort);
    listeners.length = 0;
  };
  return { signal: controller.signal, dispose };
}

/**
 * `work`, or a rejection with `signal.reason` as soon as `signal` aborts, whichever comes
 * first; the listener is removed either way. What `work` does after an abort is its own
 * affair (its rejection is handled here, never left unhandled).
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
