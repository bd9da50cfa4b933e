/**
 * The delivery loop's test harness (`test/delivery/loop*.test.ts`): fake timers from
 * `T0` (the mock follows the faked `Date`, the client's guard and the loop the faked
 * `performance.now()`, so hours of virtual time pass in milliseconds), no unhandled
 * rejection left by a test, and a mock, a client that records every call and a game.
 */
import { afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryJournal, type StorefrontEvent } from '../../src/index.js';
import { createMockService, type MockSeed } from '../../src/mock/index.js';
import { KEY, seed } from './reliability.js';
// The engine loads its modes by import() on the first delivery; loaded here up front, so the
// loop's timings on fake timers measure the loop, not that first import's I/O.
import '../../src/delivery/engine/modes.js';
import { loadLoop } from '../../src/delivery/loop/start.js';

/** One call the client sent: when (faked `Date.now()`), for whom, and whether it was a preview. */
export interface LoopCall {
  at: number;
  player: string;
  preview: boolean;
}

/** Options of {@link loopHarness}'s `setup`. */
export interface LoopSetupOptions {
  journal?: DeliveryJournal;
  /** Wraps the recording fetch (slow answers, rewritten bodies). */
  fetch?: (next: typeof globalThis.fetch) => typeof globalThis.fetch;
  /** Another store than the reliability seed's (e.g. one with vote rewards), and its key. */
  store?: { seed: MockSeed; key: string };
}

/** Registers the fake timers and the unhandled-rejection check for the calling suite; returns `setup`. */
export function loopHarness() {
  const T0 = Date.parse('2026-01-01T00:00:00Z');
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  // The client's loop loads its scheduler by import() on first start: loaded here, so every
  // loop starts synchronously on fake time.
  beforeAll(() => loadLoop());

  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    unhandled.length = 0;
    process.on('unhandledRejection', onUnhandled);
  });

  afterEach(() => {
    vi.useRealTimers();
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  /** A mock on real (faked) time, a client on it that records every call, and a game. */
  function setup(options: LoopSetupOptions = {}) {
    const mock = createMockService({ seed: options.store?.seed ?? seed });
    const calls: LoopCall[] = [];
    const recording: typeof globalThis.fetch = async (input, init) => {
      const text = String(init?.body ?? '{}');
      // The vote claim's body is a form (player=…), the claims' JSON.
      const body = (text.startsWith('{') ? JSON.parse(text) : { playerName: new URLSearchParams(text).get('player') ?? '' }) as { playerName?: string; preview?: boolean };
      calls.push({ at: Date.now(), player: body.playerName ?? '', preview: body.preview === true });
      return mock.fetch(input, init);
    };
    const events: StorefrontEvent[] = [];
    const journal = options.journal ?? new MemoryJournal();
    const client = new StorefrontClient({ apiKey: options.store?.key ?? KEY, baseUrl: 'https://api.teamgames.io', fetch: options.fetch?.(recording) ?? recording, journal, retry: 0, onEvent: (e) => events.push(e) });
    const given: Array<{ at: number; item: DeliveredItem }> = [];
    const give = (item: DeliveredItem) => {
      given.push({ at: Date.now(), item });
    };
    return { mock, calls, events, journal, client, given, give };
  }

  return { setup, T0 };
}
