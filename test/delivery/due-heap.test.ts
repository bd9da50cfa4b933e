/**
 * The delivery loop's schedule (src/delivery/loop/due-heap.ts): entries come out earliest due
 * first whatever order they went in, an entry whose owner moved on (a newer version) or
 * that the caller no longer wants is dropped on the way, and `clear` empties it.
 */
import { describe, expect, it } from 'vitest';
import { DueHeap, type DueEntry } from '../../src/delivery/loop/due-heap.js';

interface Owner {
  name: string;
  version: number;
}

const live = () => true;

/** Every due, in the order the heap hands them out (peek, then pop). */
function drain(heap: DueHeap<Owner>, isLive: (entry: DueEntry<Owner>) => boolean = live): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let entry = heap.peek(isLive); entry !== undefined; entry = heap.peek(isLive)) {
    out.push([entry.due, entry.owner.name]);
    heap.pop();
  }
  return out;
}

describe('DueHeap', () => {
  it('hands out the earliest due first, for any order of pushes (1,000 pseudo-random dues, ties included)', () => {
    const heap = new DueHeap<Owner>();
    let seed = 7;
    const dues: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      const due = seed % 300;
      dues.push(due);
      heap.push(due, { name: `p${i}`, version: 0 });
    }
    expect(drain(heap).map(([due]) => due)).toEqual([...dues].sort((a, b) => a - b));
  });

  it('sorts small heaps of every shape: ascending, descending, and each single misplaced entry', () => {
    for (let n = 1; n <= 9; n++) {
      const orders = [Array.from({ length: n }, (_, i) => i), Array.from({ length: n }, (_, i) => n - 1 - i)];
      for (let k = 0; k < n; k++) orders.push([k, ...Array.from({ length: n }, (_, i) => i).filter((i) => i !== k)]);
      for (const order of orders) {
        const heap = new DueHeap<Owner>();
        for (const due of order) heap.push(due * 10, { name: String(due), version: 0 });
        expect(drain(heap).map(([due]) => due)).toEqual(Array.from({ length: n }, (_, i) => i * 10));
      }
    }
  });

  it('keeps the order of pushes among entries due at the same time, in a small heap', () => {
    const heap = new DueHeap<Owner>();
    heap.push(5, { name: 'first', version: 0 });
    heap.push(5, { name: 'second', version: 0 });
    heap.push(9, { name: 'later', version: 0 });
    expect(drain(heap)).toEqual([
      [5, 'first'],
      [5, 'second'],
      [9, 'later'],
    ]);
  });

  it('skips and drops an entry whose owner has a newer version, and one the caller says is no longer live', () => {
    const heap = new DueHeap<Owner>();
    const moved = { name: 'moved', version: 0 };
    const gone = { name: 'gone', version: 0 };
    heap.push(1, moved);
    heap.push(2, gone);
    heap.push(3, { name: 'kept', version: 0 });
    moved.version = 1; // rescheduled: its entry at 1 is stale
    heap.push(4, moved);
    expect(heap.peek((entry) => entry.owner !== gone)).toMatchObject({ due: 3, owner: { name: 'kept' }, version: 0 });
    heap.pop();
    expect(drain(heap)).toEqual([[4, 'moved']]);
    expect(heap.peek(live)).toBeUndefined();
  });

  it('an entry records its owner\'s version when pushed; peek leaves a live top in place', () => {
    const heap = new DueHeap<Owner>();
    const owner = { name: 'a', version: 3 };
    heap.push(10, owner);
    expect(heap.peek(live)).toEqual({ due: 10, owner, version: 3 });
    expect(heap.peek(live)).toEqual({ due: 10, owner, version: 3 });
  });

  it('clear() drops every entry; pop() on an empty heap does nothing', () => {
    const heap = new DueHeap<Owner>();
    heap.pop();
    heap.push(2, { name: 'a', version: 0 });
    heap.push(1, { name: 'b', version: 0 });
    heap.clear();
    expect(heap.peek(live)).toBeUndefined();
    heap.pop();
    heap.push(3, { name: 'c', version: 0 });
    expect(drain(heap)).toEqual([[3, 'c']]);
  });
});
