/**
 * The simulation's discrete-event clock (see scripts/simulate.ts): one min-heap of timers,
 * the loop's and the simulation's. Once the process is idle (setImmediate rounds until
 * nothing new happened) virtual time jumps to the next timer. The CPU of each event,
 * up to the process being idle again, is charged to the event's tag.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LoopTimers } from '../../src/delivery/loop/call-budget.js';

/** Who an event's CPU is charged to: the SDK (loop, engine, client, give), the mock answering, or the simulation. */
export type Tag = 'loop' | 'mock' | 'sim';

export interface TimerEvent {
  at: number;
  seq: number;
  tag: Tag;
  run: () => unknown;
  cancelled: boolean;
}

export class VirtualTime {
  /** Virtual milliseconds since the start. */
  now = 0;
  /** CPU ms (user + system) per tag. */
  readonly cpu: Record<Tag, number> = { loop: 0, mock: 0, sim: 0 };
  /** Events run per tag. */
  readonly events: Record<Tag, number> = { loop: 0, mock: 0, sim: 0 };
  /** Bumped by anything the SDK does (a call, an answer, a grant, a timer): settling waits until it stops moving. */
  activity = 0;
  /** Called whenever time moves (the mock's clock follows). */
  onAdvance: (now: number) => void = () => {};
  readonly #heap: TimerEvent[] = [];
  #seq = 0;

  schedule(at: number, tag: Tag, run: () => unknown): TimerEvent {
    const event: TimerEvent = { at: Math.max(at, this.now), seq: this.#seq++, tag, run, cancelled: false };
    const heap = this.#heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent] as TimerEvent)) break;
      heap[i] = heap[parent] as TimerEvent;
      i = parent;
    }
    heap[i] = event;
    return event;
  }

  /** The loop's timers, on this clock (what `startDeliveryLoop(host, options, timers)` takes). */
  timers(): LoopTimers {
    return {
      now: () => this.now,
      setTimeout: (run, ms) => {
        this.activity += 1;
        return this.schedule(this.now + Math.max(0, ms), 'loop', run);
      },
      clearTimeout: (handle) => {
        if (handle !== undefined) (handle as TimerEvent).cancelled = true;
      },
    };
  }

  /** Runs events in order until `done()` or time `until`; false when nothing was left to run. */
  async run(until: number, done: () => boolean = () => false): Promise<boolean> {
    while (!done()) {
      const next = this.#peek();
      if (next === undefined) return false;
      if (next.at > until) {
        this.now = until;
        this.onAdvance(until);
        return true;
      }
      this.#pop();
      if (next.at !== this.now) this.onAdvance((this.now = next.at));
      const start = process.cpuUsage();
      await next.run();
      await this.settle();
      const used = process.cpuUsage(start);
      this.cpu[next.tag] += (used.user + used.system) / 1_000;
      this.events[next.tag] += 1;
    }
    return true;
  }

  /** Waits until the promise chains started by the last event have run out. */
  async settle(): Promise<void> {
    for (let seen = -1; seen !== this.activity; ) {
      seen = this.activity;
      await nextTurn();
      await nextTurn();
    }
  }

  #peek(): TimerEvent | undefined {
    while (this.#heap.length > 0 && (this.#heap[0] as TimerEvent).cancelled) this.#pop();
    return this.#heap[0];
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right] as TimerEvent, heap[left] as TimerEvent) ? right : left;
      if (!before(heap[child] as TimerEvent, last)) break;
      heap[i] = heap[child] as TimerEvent;
      i = child;
    }
    heap[i] = last;
  }
}

function before(a: TimerEvent, b: TimerEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
