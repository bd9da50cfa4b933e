/** The per-client catalog cache: one entry per category key, each with its own expiry. */
export class CatalogCache<T> {
  readonly #entries = new Map<string, { expiresAt: number; value: T }>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {}

  get(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T): void {
    this.#entries.set(key, { expiresAt: this.now() + this.ttlMs, value });
  }

  clear(): void {
    this.#entries.clear();
  }
}
