/**
 * The claim guard's slots and its memory, on the guard itself with an injected clock
 * (src/internal/claim-guard.ts, issue #46): a slot acts once (a second `settle` or
 * `release`, or one after the other, changes nothing), `release` gives the player back
 * the window they had, and expired windows are swept once 1,024 players have one, never
 * before.
 */
import { describe, expect, it } from 'vitest';
import { ClaimGuard } from '../../src/internal/claim-guard.js';

const WINDOW = 10_000;

function guard() {
  const clock = { t: 0 };
  return { clock, guard: new ClaimGuard(() => clock.t, WINDOW) };
}

function slotOf(decision: ReturnType<ClaimGuard['acquire']>) {
  if (!decision.ok) throw new Error(`refused for ${decision.retryAfterMs} ms`);
  return decision.slot;
}

describe('a slot acts once', () => {
  it('a second settle does not move the window', () => {
    const { clock, guard: g } = guard();
    const slot = slotOf(g.acquire('p'));
    slot.settle();
    clock.t = 6_000;
    slot.settle();
    clock.t = WINDOW;
    expect(g.acquire('p').ok).toBe(true);
  });

  it('a release after settle does not open the window', () => {
    const { clock, guard: g } = guard();
    const slot = slotOf(g.acquire('p'));
    slot.settle();
    slot.release();
    clock.t = 4_000;
    expect(g.acquire('p')).toEqual({ ok: false, retryAfterMs: 6_000 });
  });

  it("a second release does not take the slot of the player's next claim", () => {
    const { guard: g } = guard();
    const first = slotOf(g.acquire('p'));
    first.release();
    slotOf(g.acquire('p'));
    first.release();
    expect(g.acquire('p')).toEqual({ ok: false, retryAfterMs: WINDOW });
  });

  it('release gives the player back the window they had (seen when an injected clock is set back)', () => {
    const { clock, guard: g } = guard();
    slotOf(g.acquire('p')).settle();
    clock.t = WINDOW;
    slotOf(g.acquire('p')).release();
    clock.t = 4_000;
    expect(g.acquire('p')).toEqual({ ok: false, retryAfterMs: 6_000 });
  });

  it('a clock set back shuts the window for one window at most', () => {
    const { clock, guard: g } = guard();
    clock.t = 50_000;
    slotOf(g.acquire('p')).settle();
    clock.t = 20_000;
    expect(g.acquire('p')).toEqual({ ok: false, retryAfterMs: WINDOW });
    clock.t = 20_000 + WINDOW;
    expect(g.acquire('p').ok).toBe(true);
  });
});

describe('memory', () => {
  /** `count` players, each with a settled window at time 0. */
  function settledPlayers(g: ClaimGuard, count: number) {
    for (let i = 0; i < count; i++) slotOf(g.acquire(`p${i}`)).settle();
  }

  it('below 1,024 players nothing is swept', () => {
    const { clock, guard: g } = guard();
    settledPlayers(g, 1_000);
    clock.t = WINDOW;
    slotOf(g.acquire('late'));
    expect(g.size).toBe(1_001);
  });

  it('at 1,024 the expired windows are swept; windows still running or in flight stay', () => {
    const { clock, guard: g } = guard();
    settledPlayers(g, 1_022);
    clock.t = 5_000;
    slotOf(g.acquire('running')).settle();
    slotOf(g.acquire('in-flight'));
    expect(g.size).toBe(1_024);
    clock.t = WINDOW;
    slotOf(g.acquire('late'));
    expect(g.size).toBe(3);
    expect(g.acquire('running')).toEqual({ ok: false, retryAfterMs: 5_000 });
    expect(g.acquire('in-flight')).toEqual({ ok: false, retryAfterMs: WINDOW });
  });
});
