/**
 * Loads a module on first use. Everything else is imported statically; the one part
 * loaded this way is the file journal's store (file handling most programs that import
 * the SDK never run), imported on the journal's first call.
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
