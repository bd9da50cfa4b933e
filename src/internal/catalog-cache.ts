/**
 * The per-client catalog cache: one entry per category (`undefined`: all), each with its own
 * lifetime, measured on `now` (a monotonic clock unless a test injected one). An entry whose age
 * reads negative (an injected clock set back) is as good as expired: a cache never lives
 * longer than its TTL, whatever the clock does.
 */
import { deepFreeze } from './freeze.js';

/** The entries, each with its own lifetime. */
export class CatalogCache<T> {
  readonly #entries = new Map<number | undefined, { storedAt: number; value: T }>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {}

  get(key: number | undefined): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const age = this.now() - entry.storedAt;
    if (!(age >= 0 && age < this.ttlMs)) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: number | undefined, value: T): void {
    this.#entries.set(key, { storedAt: this.now(), value });
  }

  clear(): void {
    this.#entries.clear();
  }
}

/**
 * A catalog answer through the client's cache (`undefined` when `catalogCacheTtlMs` is 0):
 * a live entry is returned as it is; otherwise `load` is called and its answer frozen
 * (it is shared by every caller) and kept under `key` (the category, `undefined` for all).
 */
export async function cachedCatalog<T>(cache: CatalogCache<T> | undefined, key: number | undefined, load: () => Promise<T>): Promise<T> {
  const cached = cache?.get(key);
  if (cached !== undefined) return cached;
  const catalog = await load();
  if (cache === undefined) return catalog;
  const frozen = deepFreeze(catalog);
  cache.set(key, frozen);
  return frozen;
}
