/**
 * The in-process lock per player: calls for one player run one after the other, in the
 * order they came, so two calls never grant the same line at once. Journals shared by
 * several processes add their own lock across nodes (`withPlayerLock`).
 *
 * @module
 * @internal
 */

/** One queue per player; a player's entry is dropped once its queue is empty. */
export class PlayerLocks {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `work` once every earlier call for `player` has finished. */
  async run<T>(player: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(player) ?? Promise.resolve();
    let release!: () => void;
    const mine = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.#tails.set(player, mine);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.#tails.get(player) === mine) this.#tails.delete(player);
    }
  }
}
