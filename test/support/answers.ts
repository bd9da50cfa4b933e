/**
 * What the delivery suites share around the store's answers: a promise settled from
 * outside, a fetch that counts the calls it passes on, and proxies that rewrite the
 * store's claim answers (raw rows dropped, a store's own success text) the way a
 * misbehaving proxy or another store would.
 */

/** A promise and the functions that settle it (Node 20 has no `Promise.withResolvers`). */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A fetch that counts the calls it passes to `fetch`. */
export function counting(fetch: typeof globalThis.fetch): { fetch: typeof globalThis.fetch; calls: () => number } {
  let calls = 0;
  return {
    fetch: async (input, init) => {
      calls += 1;
      return fetch(input, init);
    },
    calls: () => calls,
  };
}

const isPreview = (init: RequestInit | undefined) => String(init?.body ?? '').includes('"preview":true');

/** Rewrites the JSON answers `fetch` gives to the requests `which` picks. */
function rewriting(fetch: typeof globalThis.fetch, which: (init: RequestInit | undefined) => boolean, change: (body: { code?: string; message?: string; data?: Record<string, unknown> }) => void): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!which(init)) return response;
    const body = (await response.json()) as { data?: Record<string, unknown> };
    change(body);
    return new Response(JSON.stringify(body), { status: response.status, headers: { 'content-type': 'application/json' } });
  };
}

/** Drops `rawTransactions` from the answers of real claims (`'claims'`, previews keep theirs) or of previews. */
export const withoutRawRows = (fetch: typeof globalThis.fetch, of: 'claims' | 'previews' = 'claims'): typeof globalThis.fetch =>
  rewriting(fetch, (init) => isPreview(init) === (of === 'previews'), (body) => delete body.data?.['rawTransactions']);

/** Replaces the message of every SUCCESS answer with `text`: a store with a text of its own. */
export const withSuccessText = (fetch: typeof globalThis.fetch, text: string): typeof globalThis.fetch =>
  rewriting(fetch, () => true, (body) => {
    if (body.code === 'SUCCESS') body.message = text;
  });
