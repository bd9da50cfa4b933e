/**
 * The local per-player claim guard: mirrors the service's rule of one claim per player
 * per 10 s so a spammed `/claim` never reaches the service, and two concurrent claims
 * for one player never both go out (the second sees the first's slot at once).
 *
 * The service times its window from when a request *arrives*; the guard cannot see that
 * moment, only that it lies between sending and the answer. So a player's window is held
 * shut while the claim is in flight and then timed from when the call settled (the
 * answer came back, or the call failed): a retry at the guard's edge arrives at the
 * service at least 10 s after the service's window opened, whatever the latency of
 * either request. (Timed from the send, a retry at the edge is refused by the service
 * whenever the first request took longer to arrive than the retry.)
 *
 * Times are read from `now`, a monotonic clock unless a test injected one. Whatever that
 * clock does, no `retryAfterMs` exceeds `windowMs`: a start that reads in the future (an
 * injected clock set back) is moved to now.
 *
 * `retryAfterMs` is the time left, rounded up to the millisecond: what the contract calls
 * the time left in the local window, so a player told "wait 6 s" after 4 s is told the truth.
 * A platform timer may fire up to 1 ms early ({@link TIMER_MARGIN_MS}); a retry that comes
 * that early is answered locally again, with nothing sent. The delivery loop times the
 * window the same way, from the answer (src/delivery/loop/scheduler.ts), and its own waits add the
 * margin when a timer woke them early (call-budget.ts `sleepOn`), so it is never refused.
 */
import { AuthenticationError } from '../errors.js';
import { RATE_LIMIT_MESSAGE, type ClaimResult } from '../wire/claim.js';

/**
 * A granted slot. `settle` starts the player's window when the call is over and the
 * service may have opened its own; `release` undoes the slot when the service opened no
 * window: the request was never sent, or the service refused it before considering the
 * player (a refused key, `INVALID_PLAYER`). Once either was called, both do nothing more.
 */
export interface ClaimSlot {
  settle(): void;
  release(): void;
}

export type GuardDecision = { ok: true; slot: ClaimSlot } | { ok: false; retryAfterMs: number };

/** A player's window: from `at` on, or shut with no end yet while its claim is in flight. */
interface Window {
  at: number;
  inFlight: boolean;
}

// Expired entries are swept when the map grows past this, keeping memory bounded by
// the number of players claiming within one window.
const SWEEP_AT = 1_024;

/** Added to a wait for a window's end: a platform timer may fire up to 1 ms early. */
export const TIMER_MARGIN_MS = 1;

export class ClaimGuard {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly now: () => number,
    private readonly windowMs: number,
  ) {}

  /** How many players have a window: what the sweep keeps bounded (read by its test). */
  get size(): number {
    return this.#windows.size;
  }

  /** Takes the player's slot now, or says how long is left. Synchronous by design. */
  acquire(player: string): GuardDecision {
    const now = this.now();
    const previous = this.#windows.get(player);
    if (previous !== undefined) {
      const left = this.#left(previous, now);
      if (left > 0) return { ok: false, retryAfterMs: Math.min(this.windowMs, Math.ceil(left)) };
    }
    if (this.#windows.size >= SWEEP_AT) this.#sweep(now);
    const window: Window = { at: now, inFlight: true };
    this.#windows.set(player, window);
    // A window in flight is the player's current one: nothing replaces it until the slot
    // is settled or released (acquire refuses meanwhile, the sweep keeps it).
    return {
      ok: true,
      slot: {
        settle: () => {
          if (!window.inFlight) return;
          window.at = this.now();
          window.inFlight = false;
        },
        release: () => {
          if (!window.inFlight) return;
          window.inFlight = false;
          if (previous === undefined) this.#windows.delete(player);
          else this.#windows.set(player, previous);
        },
      },
    };
  }

  /** Milliseconds left in a window at `now` (0: over); never more than one window. */
  #left(window: Window, now: number): number {
    if (window.inFlight) return this.windowMs;
    // The clock went back: the window ends one window from now at the latest.
    window.at = Math.min(window.at, now);
    return Math.max(0, this.windowMs - (now - window.at));
  }

  #sweep(now: number): void {
    for (const [player, window] of this.#windows) if (this.#left(window, now) === 0) this.#windows.delete(player);
  }
}

/**
 * Runs a claim under the local guard (`undefined` when the client has `rateLimit: false`); refused calls resolve RATE_LIMIT without a request.
 * The player's window is shut while the claim is in flight and runs 10 s from when it
 * settled. The slot is given back when the request was never sent, and when the service refused
 * the call before considering the player (a refused key, `INVALID_PLAYER`): the service
 * opened no window then, so neither does the guard.
 */
export async function guardedClaim(guard: ClaimGuard | undefined, player: string, signal: AbortSignal | undefined, run: (onNotSent: () => void) => Promise<ClaimResult>): Promise<ClaimResult> {
  // An aborted call rejects at once, even when the guard could answer without a request.
  signal?.throwIfAborted();
  if (guard === undefined) return run(() => {});
  const decision = guard.acquire(player);
  if (!decision.ok) {
    return { code: 'RATE_LIMIT', status: 'ERROR', message: RATE_LIMIT_MESSAGE, claims: [], retryAfterMs: decision.retryAfterMs, source: 'local' };
  }
  // Otherwise the window starts when the call settles, never at the send: the service
  // times its window from the request's arrival, which lies somewhere in between.
  const { slot } = decision;
  let result: ClaimResult;
  try {
    result = await run(() => slot.release());
  } catch (error) {
    if (error instanceof AuthenticationError) slot.release();
    else slot.settle();
    throw error;
  }
  if (result.code === 'INVALID_PLAYER') slot.release();
  else slot.settle();
  return result;
}
