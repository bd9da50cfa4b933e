/**
 * Loads a module on first use. The main entry stays small: code only some programs run
 * (the delivery engine, the file journal's store, the v3 readers, the checkout's cart
 * checks and reader, the event hooks) is imported when first needed, always before the
 * request that needs it is sent, so a failed load never leaves a sent request unread.
 *
 * @module
 * @internal
 */

/** A loader that imports once and shares the result; a failed import is tried again next time. */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}
