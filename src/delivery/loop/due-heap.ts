/**
 * A min-heap of due times with lazy removal: the delivery loop's schedule. An entry whose
 * `version` no longer matches its owner's is stale and skipped.
 *
 * @module
 * @internal
 */

/** What an entry belongs to: its current version says whether an entry is still live. */
export interface Versioned {
  version: number;
}

/** One scheduled run. */
export interface DueEntry<T extends Versioned> {
  due: number;
  owner: T;
  version: number;
}

/** Earliest `due` first. */
export class DueHeap<T extends Versioned> {
  readonly #items: Array<DueEntry<T>> = [];

  push(due: number, owner: T): void {
    const entry: DueEntry<T> = { due, owner, version: owner.version };
    const heap = this.#items;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as DueEntry<T>).due <= due) break;
      heap[i] = heap[parent] as DueEntry<T>;
      i = parent;
    }
    heap[i] = entry;
  }

  /** The earliest live entry (stale ones above it are dropped), or `undefined`. */
  peek(isLive: (entry: DueEntry<T>) => boolean): DueEntry<T> | undefined {
    while (this.#items.length > 0) {
      const top = this.#items[0] as DueEntry<T>;
      if (top.version === top.owner.version && isLive(top)) return top;
      this.pop();
    }
    return undefined;
  }

  /** Drops every entry. */
  clear(): void {
    this.#items.length = 0;
  }

  pop(): void {
    const heap = this.#items;
    const popped = heap.pop();
    // Empty now (it held one entry, or none): nothing to move down.
    if (heap.length === 0) return;
    const last = popped as DueEntry<T>;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as DueEntry<T>).due < (heap[left] as DueEntry<T>).due ? right : left;
      if ((heap[child] as DueEntry<T>).due >= last.due) break;
      heap[i] = heap[child] as DueEntry<T>;
      i = child;
    }
    heap[i] = last;
  }
}
