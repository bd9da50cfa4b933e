import { CLAIM_WINDOW_MS } from './rules.js';

/** One player's window in {@link RateWindows}' heap: it ends at `end` (= `at` + 10 s). */
interface WindowEnd {
  end: number;
  playerName: string;
  at: number;
}

/**
 * The claim rate windows of one game server (one accepted call per player per 10 s,
 * counted from the last accepted call), kept only while they can refuse a claim; see I-13
 * and I-14 in docs/testing-with-the-mock.md.
 *
 * A window refuses while `now - at < 10 s` on the mock clock, which includes a clock set
 * back before `at`. It is forgotten by the first claim on the server handled at or after its
 * end (`at` + 10 s), when it refuses nothing at that time; setting the clock back
 * afterwards does not bring it back. The ends sit in a min-heap, so each claim forgets what
 * has ended in amortized O(log n), and a window ending later (the clock was set back, then
 * forward) never holds back the ones ending sooner: memory follows the claims of the last
 * 10 s of mock time, not every player ever seen.
 */
export class RateWindows {
  /** Player → time of the last accepted claim; exactly the windows in `#ends`. */
  readonly #last = new Map<string, number>();
  /** Binary min-heap on `end`, one entry per window in `#last`. */
  readonly #ends: WindowEnd[] = [];

  /** Windows held in memory. */
  get size(): number {
    return this.#last.size;
  }

  /** Whether a claim of `playerName` at `now` is refused; forgets the windows ended by `now` first. */
  refuses(playerName: string, now: number): boolean {
    this.#forgetEnded(now);
    const at = this.#last.get(playerName);
    return at !== undefined && now - at < CLAIM_WINDOW_MS;
  }

  /** Opens (or restarts) the player's window at `now`: an accepted claim. */
  accept(playerName: string, now: number): void {
    this.#last.set(playerName, now);
    this.#push({ end: now + CLAIM_WINDOW_MS, playerName, at: now });
  }

  /** The windows that refuse a claim at `now`, as `[playerName, at]` in the order they were opened. Changes nothing. */
  open(now: number): Array<[string, number]> {
    return [...this.#last].filter(([, at]) => now - at < CLAIM_WINDOW_MS);
  }

  #forgetEnded(now: number): void {
    const heap = this.#ends;
    while (heap.length > 0 && (heap[0] as WindowEnd).end <= now) {
      const ended = this.#pop();
      // A window restarted since has its own, later entry; only the current one is dropped.
      if (this.#last.get(ended.playerName) === ended.at) {
        this.#last.delete(ended.playerName);
      }
    }
  }

  #push(entry: WindowEnd): void {
    const heap = this.#ends;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as WindowEnd).end <= entry.end) break;
      heap[i] = heap[parent] as WindowEnd;
      i = parent;
    }
    heap[i] = entry;
  }

  #pop(): WindowEnd {
    const heap = this.#ends;
    const top = heap[0] as WindowEnd;
    const last = heap.pop() as WindowEnd;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && (heap[right] as WindowEnd).end < (heap[left] as WindowEnd).end ? right : left;
        if ((heap[child] as WindowEnd).end >= last.end) break;
        heap[i] = heap[child] as WindowEnd;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
