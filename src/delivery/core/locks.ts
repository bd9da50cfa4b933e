/**
 * The lock per player that every user of one journal shares: calls for one player run one
 * after the other, in the order they came, so two calls never grant the same line at
 * once, whichever client (or derived client) made them. Journals shared by several
 * processes add their own lock across nodes (`withPlayerLock`).
 *
 * @module
 * @internal
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { JournalError } from '../../errors.js';
import { untilAborted } from '../../internal/signals.js';
import type { DeliveryJournal } from '../../journals/contract.js';

/** A turn taken: `held` until its work settles. */
interface Turn {
  locks: PlayerLocks;
  player: string;
  held: boolean;
}

// The turns the current async context runs inside: a grant that calls deliver for its own
// player would wait for itself forever, so it is refused instead.
const inside = new AsyncLocalStorage<readonly Turn[]>();

/** One queue per player; a player's entry is dropped once its queue is empty. */
export class PlayerLocks {
  readonly #tails = new Map<string, Promise<void>>();

  /** How many players have a call running or queued (for tests and metrics). */
  get size(): number {
    return this.#tails.size;
  }

  /** True when the calling code runs inside a turn of `player` (a grant, an `onEvent`). */
  holds(player: string): boolean {
    return inside.getStore()?.some((turn) => turn.held && turn.locks === this && turn.player === player) === true;
  }

  /**
   * Runs `work` once every earlier call for `player` has finished. A call still waiting
   * when `signal` aborts rejects at once with `signal.reason` and leaves the queue as if it
   * had never joined it.
   */
  async run<T>(player: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    signal?.throwIfAborted();
    const previous = this.#tails.get(player) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => done);
    this.#tails.set(player, tail);
    const leave = () => {
      release();
      if (this.#tails.get(player) === tail) this.#tails.delete(player);
    };
    try {
      await untilAborted(previous, signal);
    } catch (error) {
      // Not our turn yet: the queue moves on once the call before us is done.
      void previous.then(leave);
      throw error;
    }
    const turn: Turn = { locks: this, player, held: true };
    try {
      const outer = inside.getStore();
      return await inside.run(outer === undefined ? [turn] : [...outer, turn], work);
    } finally {
      turn.held = false;
      leave();
    }
  }
}

/**
 * Runs `work` under the journal's cross-node lock on the player, when it has one. A lock
 * that cannot be had is reported on the run and returned: nothing was done. Waiting for
 * the lock is abortable: a call aborted before its work starts (before the lock is asked
 * for, while it waits, or as it answers) rejects with `signal.reason`, and the lock, once
 * it answers, is released without running the work. Once the work has started, it
 * settles on its own.
 */
export async function acrossNodes<T>(
journal: DeliveryJournal,
player: string,
control: { signal: AbortSignal | undefined },
work: () => Promise<T>,
failed: (error: unknown) => JournalError,
): Promise<{ ok: true; value: T } | { ok: false; error: JournalError }> {
  const withPlayerLock = journal.withPlayerLock?.bind(journal);
  if (withPlayerLock === undefined) return { ok: true, value: await work() };
  // Aborted between the player's turn and here (a microtask apart): the lock is not asked for.
  control.signal?.throwIfAborted();
  // Without a signal of the call's own, one that never aborts: the same path, no `?.`.
  const signal = control.signal ?? new AbortController().signal;
  // `aborted` only once the abort listener has rejected: the work then never starts.
  let state: 'waiting' | 'started' | 'aborted' = 'waiting';
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      if (state !== 'waiting') return;
      state = 'aborted';
      reject(signal.reason);
    };
    // Listening before the lock is asked for: an abort from inside that call is seen too.
    signal.addEventListener('abort', onAbort, { once: true });
    // A lock that throws synchronously, or returns no promise, is taken as one that answered so.
    const locked = new Promise<T | undefined>((settle) =>
      settle(
        withPlayerLock<T | undefined>(player, async () => {
          // The call has rejected already: the lock is given back unused.
          if (state === 'aborted') return undefined;
          state = 'started';
          return work();
        }),
      ),
    );
    locked.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        // After an abort the promise has rejected already, and this changes nothing.
        resolve({ ok: true, value: value as T });
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (state === 'started') reject(error);
        // Waiting still: the lock could not be had (after an abort, nothing is reported).
        else if (state === 'waiting') resolve({ ok: false, error: failed(error) });
      },
    );
  });
}
