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
import { untilAborted } from '../internal/signals.js';

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
