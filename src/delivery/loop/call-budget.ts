/**
 * The delivery loop's budget of calls: at most `perSecond` calls in any one-second
 * window (a sliding window over the last `perSecond` calls, not a bucket that could let
 * twice as many through across a second's edge), the most pressing callers served first.
 *
 * @module
 * @internal
 */
import { TIMER_MARGIN_MS } from '../../internal/claim-guard.js';

/** The clock and timers the loop runs on (the platform's, or a simulation's). */
export interface LoopTimers {
  /** Monotonic milliseconds. */
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The platform's timers (a class, not an object literal, so its methods' mutants run in tests, not at import). */
class PlatformTimers implements LoopTimers {
  now(): number {
    return performance.now();
  }

  setTimeout(run: () => void, ms: number): unknown {
    return setTimeout(run, ms);
  }

  clearTimeout(handle: unknown): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  }
}

/** The platform's: `performance.now()` and real timers (a running loop keeps the process alive until `stop()`). */
export const platformTimers: LoopTimers = new PlatformTimers();

/**
 * Waits `ms` on `timers`, never less on their clock: Node starts a timer at the millisecond
 * its clock read, rounded down, so a timer may fire up to 1 ms early, and a claim at the
 * edge of the service's window would then be refused (`RATE_LIMIT`, nothing given). A wait
 * that woke early sleeps again for what is left plus `TIMER_MARGIN_MS` (1 ms, as the
 * client's claim guard adds to its `retryAfterMs`). Rejects with
 * `signal.reason` at once when it aborts (the timer cleared).
 */
export function sleepOn(timers: LoopTimers, ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const until = timers.now() + ms;
  return new Promise((resolve, reject) => {
    let handle: unknown;
    const onAbort = () => {
      timers.clearTimeout(handle);
      reject(signal.reason);
    };
    const arm = (wait: number): void => {
      handle = timers.setTimeout(() => {
        const left = until - timers.now();
        if (left > 0) return arm(left + TIMER_MARGIN_MS);
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, wait);
    };
    arm(ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Who asks for a call, most pressing first: a hinted player's run (a player who just paid:
 * the hint book plans at most its share of the budget for them, so they cannot starve the
 * others), then a join, a `/claim` or a claim following its preview, then a routine poll.
 */
export type CallPriority = 'hinted' | 'urgent' | 'routine';

interface Waiter {
  priority: CallPriority;
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** A sliding-window budget of calls shared by everything the loop sends. */
export class CallBudget {
  readonly perSecond: number;
  readonly #timers: LoopTimers;
  /** When each of the last `perSecond` calls went out, oldest first (a ring). */
  readonly #sent: number[];
  #next = 0;
  /** The callers waiting, a queue per priority, most pressing first. */
  readonly #queues: Readonly<Record<CallPriority, Waiter[]>> = { hinted: [], urgent: [], routine: [] };
  #timer: unknown;
  /** The most calls seen in one second (for stats). */
  maxInOneSecond = 0;

  constructor(perSecond: number, timers: LoopTimers) {
    this.perSecond = perSecond;
    this.#timers = timers;
    this.#sent = new Array<number>(perSecond).fill(Number.NEGATIVE_INFINITY);
  }

  /** How many callers wait for a call (for the scheduler: a full queue waits). */
  get waiting(): number {
    return this.#queues.hinted.length + this.#queues.urgent.length + this.#queues.routine.length;
  }

  /** Resolves when a call may go out now (it is counted then); rejects with `signal.reason` on abort. */
  take(priority: CallPriority, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.waiting === 0 && this.#free()) {
      this.#count();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      // Only the signal calls onAbort; the listener goes when the waiter leaves the queue, either way.
      const waiter: Waiter = { priority, resolve, reject, signal, onAbort: () => this.#drop(waiter, (signal as AbortSignal).reason) };
      signal?.addEventListener('abort', waiter.onAbort);
      this.#queues[priority].push(waiter);
      this.#wake();
    });
  }

  /** Rejects every waiting caller (the loop stops). */
  rejectAll(reason: unknown): void {
    for (const waiter of Object.values(this.#queues).flat()) this.#drop(waiter, reason);
    // Clearing no timer (undefined) does nothing, on the platform's timers as on a simulation's.
    this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** True when one more call would keep the window at `perSecond` calls or fewer. */
  #free(): boolean {
    return this.#timers.now() - (this.#sent[this.#next] as number) >= 1_000;
  }

  #count(): void {
    const now = this.#timers.now();
    this.#sent[this.#next] = now;
    this.#next = (this.#next + 1) % this.perSecond;
    // The calls of the last second, for the figure the simulation prints.
    let inWindow = 0;
    for (const at of this.#sent) if (now - at < 1_000) inWindow += 1;
    this.maxInOneSecond = Math.max(this.maxInOneSecond, inWindow);
  }

  #drop(waiter: Waiter, reason: unknown): void {
    const queue = this.#queues[waiter.priority];
    const index = queue.indexOf(waiter);
    if (index === -1) return;
    queue.splice(index, 1);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.reject(reason);
  }

  /** Lets waiters through while the window allows, then sleeps until the oldest call leaves it. */
  #wake(): void {
    if (this.#timer !== undefined) return;
    while (this.waiting > 0 && this.#free()) {
      const { hinted, urgent, routine } = this.#queues;
      const waiter = (hinted.length > 0 ? hinted : urgent.length > 0 ? urgent : routine).shift() as Waiter;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#count();
      waiter.resolve();
    }
    if (this.waiting === 0) return;
    const wait = Math.max(1, 1_000 - (this.#timers.now() - (this.#sent[this.#next] as number)));
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#wake();
    }, wait);
  }
}
