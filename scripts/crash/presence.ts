/**
 * What a `--loop` campaign adds to the orchestrator: the mock's clock, run fast, and who is
 * online on which node.
 *
 * - The clock: about every CLOCK_EVERY_MS of real time the mock's clock moves so that it
 *   runs CLOCK_SPEED times real time (`POST /__mock/clock/advance`, at most CLOCK_STEP_MS
 *   at once), and the mock's offset is
 *   written to the clock file every node reads (worker/clock.ts); the loops' timers follow
 *   it (worker/loop.ts). It runs until the drain is over.
 * - Presence: the orchestrator holds, for each player, the nodes that hold them online,
 *   and changes it every PRESENCE_EVERY_MS: an offline player joins a node; an online one
 *   leaves, relogs (leaves and joins again at once), stays, or, with several nodes, moves (to
 *   another node, leaving first or joining first: two proxies for a moment) or sits on a
 *   second node for a while; a player on two nodes leaves one. Each change is sent to the
 *   node's live worker as a line on stdin (in order, after its config); a node that
 *   (re)starts gets its players in its config. A dead node's players are not moved: they
 *   wait, offline for every node, until it is back.
 *
 * @module
 */
import { openSync, writeSync, closeSync } from 'node:fs';
import { seededRandom } from '../../src/mock/service/random.js';
import { between, pick } from './draws.js';
import { pause } from './children.js';
import { CLOCK_EVERY_MS, CLOCK_SPEED, CLOCK_STEP_MS, NODES, PLAYER_NAMES, PRESENCE_EVERY_MS, P_ONLINE_AT_START } from './options.js';
import type { PresenceCommand } from './worker/config.js';
import type { WorkerPool } from './workers.js';

/** What presence needs of its campaign (campaign.ts), which owns it. */
export interface PresenceHost {
  readonly clockPath: string;
  readonly base: number;
  readonly stopping: boolean;
  readonly workers: Pick<WorkerPool, 'current'>;
  admin<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

/** The mock's clock, moved fast until stop() (the drain's end). */
export class FastClock {
  #stopped = false;
  #running: Promise<void> | undefined;
  advances = 0;

  start(c: PresenceHost): void {
    const fd = openSync(c.clockPath, 'r+');
    const buffer = Buffer.alloc(8);
    this.#running = (async () => {
      try {
        let last = performance.now();
        while (!this.#stopped) {
          await pause(CLOCK_EVERY_MS);
          // The real time since the last step, sped up (a busy machine takes longer per round
          // trip: the step grows with it, up to CLOCK_STEP_MS, the nodes' margin).
          const at = performance.now();
          const step = Math.min(CLOCK_STEP_MS, Math.round((at - last) * (CLOCK_SPEED - 1)));
          last = at;
          const { now } = await c.admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: step });
          // What the nodes read: the mock's time as it answered (never ahead of it).
          buffer.writeDoubleLE(now - Date.now(), 0);
          writeSync(fd, buffer, 0, 8, 0);
          this.advances += 1;
        }
      } finally {
        closeSync(fd);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }
}

/** Who is online on which node, changed at random and sent to the nodes. */
export class Presence {
  readonly #on = new Map<string, Set<number>>();
  readonly #random: () => number;
  readonly counts = { joins: 0, leaves: 0, moves: 0, relogs: 0, secondProxies: 0 };

  constructor(private readonly c: PresenceHost) {
    this.#random = seededRandom(c.base ^ 0x9e5e);
    for (const player of PLAYER_NAMES) this.#on.set(player, new Set(this.#random() < P_ONLINE_AT_START ? [Math.floor(this.#random() * NODES)] : []));
  }

  /** The players online on a node (a node's config when it starts). */
  online(node: number): string[] {
    return PLAYER_NAMES.filter((p) => this.#on.get(p)?.has(node) === true);
  }

  /** Presence changes until the campaign stops. */
  async run(): Promise<void> {
    while (!this.c.stopping) {
      await pause(between(this.#random, PRESENCE_EVERY_MS));
      if (!this.c.stopping) this.#change();
    }
  }

  #change(): void {
    const r = this.#random;
    const player = pick(r, PLAYER_NAMES);
    const nodes = this.#on.get(player) as Set<number>;
    const [first, second] = [...nodes];
    const other = (than: number): number => (than + 1 + Math.floor(r() * (NODES - 1))) % NODES;
    if (first === undefined) return this.#join(player, Math.floor(r() * NODES));
    if (second !== undefined) return this.#leave(player, r() < 0.5 ? first : second);
    const x = r();
    if (x < 0.3) return this.#leave(player, first);
    if (x < 0.45) {
      this.counts.relogs += 1;
      this.#leave(player, first);
      return this.#join(player, first);
    }
    if (NODES === 1) return; // one node: the player stays
    const to = other(first);
    if (x < 0.85) {
      // A move: half of the time the new proxy sees the player before the old one lets go.
      this.counts.moves += 1;
      if (r() < 0.5) {
        this.#join(player, to);
        this.#leave(player, first);
      } else {
        this.#leave(player, first);
        this.#join(player, to);
      }
      return;
    }
    this.counts.secondProxies += 1;
    this.#join(player, to);
  }

  #join(player: string, node: number): void {
    (this.#on.get(player) as Set<number>).add(node);
    this.counts.joins += 1;
    this.#send(node, { join: player });
  }

  #leave(player: string, node: number): void {
    (this.#on.get(player) as Set<number>).delete(node);
    this.counts.leaves += 1;
    this.#send(node, { leave: player });
  }

  #send(node: number, command: PresenceCommand): void {
    const w = this.c.workers.current[node];
    if (w !== undefined && w.alive) w.proc.stdin?.write(`${JSON.stringify(command)}\n`);
  }
}
