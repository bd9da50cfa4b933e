/**
 * Who the bridge holds online: the players the game said joined (or the last whole list,
 * from the game's `PUT /v1/online` or the RCON `list` reply), kept in step with the loop.
 *
 * @module
 */
import type { DeliveryLoop } from '../index.js';

/** The bridge's online set, in step with the loop's joins and leaves. */
export class Roster {
  readonly #loop: Pick<DeliveryLoop, 'join' | 'leave'>;
  readonly #online = new Set<string>();

  constructor(loop: Pick<DeliveryLoop, 'join' | 'leave'>) {
    this.#loop = loop;
  }

  /** The player joined (again: harmless). @throws InvalidInputError for a bad name (from the loop). */
  join(player: string): void {
    this.#loop.join(player);
    this.#online.add(player);
  }

  /** The player left. */
  leave(player: string): void {
    this.#loop.leave(player);
    this.#online.delete(player);
  }

  /** The players online now (the staff page's search). */
  players(): Iterable<string> {
    return this.#online.values();
  }

  /**
   * The whole list of players online: the new ones join, the others leave. Names are
   * checked by the caller first, so the set never changes halfway.
   */
  replace(players: readonly string[]): { joined: string[]; left: string[] } {
    const now = new Set(players);
    const left: string[] = [];
    for (const player of this.#online) if (!now.has(player)) left.push(player);
    const joined: string[] = [];
    for (const player of now) if (!this.#online.has(player)) joined.push(player);
    for (const player of left) this.leave(player);
    for (const player of joined) this.join(player);
    return { joined, left };
  }
}
