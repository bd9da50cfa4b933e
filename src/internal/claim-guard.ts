/**
 * The local per-player claim guard: mirrors the service's rule of one claim per player
 * per 10 s so a spammed `/claim` never reaches the service, and two concurrent claims
 * for one player never both go out (the second sees the first's timestamp at once).
 *
 * Times are read from `now`, a monotonic clock unless a test injected one. Whatever that
 * clock does, no window lasts longer than `windowMs` from the moment it is looked at: a
 * start that reads in the future (an injected clock set back) is moved to now.
 */

/**
 * A granted slot; `release` undoes it when the service opened no window: the request was
 * never sent, or the service refused it before considering the player (a refused key,
 * `INVALID_PLAYER`). Releasing twice changes nothing more.
 */
export interface ClaimSlot {
  release(): void;
}

export type GuardDecision = { ok: true; slot: ClaimSlot } | { ok: false; retryAfterMs: number };

// Expired entries are swept when the map grows past this, keeping memory bounded by
// the number of players claiming within one window.
const SWEEP_AT = 1_024;

export class ClaimGuard {
  readonly #sentAt = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly windowMs: number,
  ) {}

  /** Takes the player's slot now, or says how long is left. Synchronous by design. */
  acquire(player: string): GuardDecision {
    const now = this.now();
    const previous = this.#sentAt.get(player);
    if (previous !== undefined && now < previous) {
      // The clock went back: the window ends one window from now at the latest.
      this.#sentAt.set(player, now);
      return { ok: false, retryAfterMs: this.windowMs };
    }
    if (previous !== undefined && now - previous < this.windowMs) {
      return { ok: false, retryAfterMs: this.windowMs - (now - previous) };
    }
    if (this.#sentAt.size >= SWEEP_AT) this.#sweep(now);
    this.#sentAt.set(player, now);
    return {
      ok: true,
      slot: {
        release: () => {
          if (this.#sentAt.get(player) !== now) return;
          if (previous === undefined) this.#sentAt.delete(player);
          else this.#sentAt.set(player, previous);
        },
      },
    };
  }

  #sweep(now: number): void {
    for (const [player, at] of this.#sentAt) {
      if (now - at >= this.windowMs) this.#sentAt.delete(player);
      else if (at > now) this.#sentAt.set(player, now);
    }
  }
}
