/**
 * The delivery loop's budget of calls (src/delivery/loop/call-budget.ts), on a clock of its own:
 * never more than `perSecond` calls in any one-second window, a waiter let through exactly
 * when the oldest call leaves the window (one timer, for exactly that long), urgent callers
 * first, and every wait abortable, leaving no listener and no timer behind.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CallBudget, platformTimers, sleepOn, type CallPriority, type LoopTimers } from '../../src/delivery/loop/call-budget.js';

/** A clock and timers moved by hand: `advance` runs each timer at its own time. */
function manualTimers() {
  let now = 0;
  let ids = 0;
  const timers = new Map<number, { at: number; ms: number; run: () => void }>();
  const loop: LoopTimers = {
    now: () => now,
    setTimeout: (run, ms) => {
      timers.set(++ids, { at: now + ms, ms, run });
      return ids;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
  };
  return {
    loop,
    /** The delays of the timers set and not yet run. */
    delays: () => [...timers.values()].map((t) => t.ms),
    set: (ms: number) => void (now = ms),
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].run();
        await Promise.resolve();
      }
      now = end;
      await Promise.resolve();
    },
  };
}

/** Takes a call and records when (on the manual clock) it was let through, by name. */
function taker(budget: CallBudget, clock: ReturnType<typeof manualTimers>, log: Array<[string, number]>) {
  return (name: string, priority: CallPriority = 'routine', signal?: AbortSignal) =>
    budget.take(priority, signal).then(() => void log.push([name, clock.loop.now()]));
}

/** A budget of `perSecond` calls on a manual clock, with a taker that logs who went through when. */
function budgetOf(perSecond: number) {
  const clock = manualTimers();
  const budget = new CallBudget(perSecond, clock.loop);
  const log: Array<[string, number]> = [];
  return { clock, budget, log, take: taker(budget, clock, log) };
}

describe('CallBudget', () => {
  it('lets perSecond calls through at once, then each next one exactly when the oldest leaves the window', async () => {
    const { clock, budget, log, take } = budgetOf(3);
    await take('a');
    clock.set(100);
    await take('b');
    await take('c');
    expect(log).toEqual([
      ['a', 0],
      ['b', 100],
      ['c', 100],
    ]);
    void take('d');
    void take('e');
    expect(budget.waiting).toBe(2);
    // One timer, for as long as the oldest call ('a', at 0) stays in the window.
    expect(clock.delays()).toEqual([900]);
    await clock.advance(899);
    expect(log).toHaveLength(3);
    await clock.advance(1);
    expect(log.slice(3)).toEqual([['d', 1_000]]);
    expect(clock.delays()).toEqual([100]);
    await clock.advance(100);
    expect(log.slice(4)).toEqual([['e', 1_100]]);
    expect(budget.waiting).toBe(0);
    expect(clock.delays()).toEqual([]);
    expect(budget.maxInOneSecond).toBe(3);
  });

  it('a call is free again at exactly 1,000 ms after the one it replaces, not before', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('a');
    clock.set(999);
    void take('b');
    await clock.advance(0);
    expect(log).toEqual([['a', 0]]);
    expect(clock.delays()).toEqual([1]);
    await clock.advance(1);
    expect(log).toEqual([
      ['a', 0],
      ['b', 1_000],
    ]);
    clock.set(2_000);
    await take('c');
    expect(log.at(-1)).toEqual(['c', 2_000]);
  });

  it('waits at least 1 ms, however little of the window is left (a fraction of a millisecond)', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(1, clock.loop);
    await budget.take('routine');
    clock.set(999.5);
    void budget.take('routine');
    expect(clock.delays()).toEqual([1]);
  });

  it('serves urgent callers before routine ones that waited longer; each kind in its order', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('first');
    void take('routine 1');
    void take('routine 2');
    void take('urgent 1', 'urgent');
    void take('urgent 2', 'urgent');
    for (let i = 0; i < 4; i++) await clock.advance(1_000);
    expect(log.map(([name]) => name)).toEqual(['first', 'urgent 1', 'urgent 2', 'routine 1', 'routine 2']);
  });

  it("serves a hinted player's calls before urgent and routine ones that waited longer; each kind in its order", async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('first');
    void take('routine');
    void take('urgent 1', 'urgent');
    void take('hinted 1', 'hinted');
    void take('urgent 2', 'urgent');
    void take('hinted 2', 'hinted');
    expect(budget.waiting).toBe(5);
    for (let i = 0; i < 5; i++) await clock.advance(1_000);
    expect(log.map(([name]) => name)).toEqual(['first', 'hinted 1', 'hinted 2', 'urgent 1', 'urgent 2', 'routine']);
  });

  it('a hinted caller aborted leaves the queue and its listener; stopping rejects every queue', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('a');
    const controller = new AbortController();
    const hinted = take('h', 'hinted', controller.signal);
    controller.abort(new Error('left'));
    await expect(hinted).rejects.toThrow('left');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(budget.waiting).toBe(0);
    const waits = [take('h2', 'hinted'), take('u', 'urgent'), take('r', 'routine')];
    budget.rejectAll(new Error('stopped'));
    for (const wait of waits) await expect(wait).rejects.toThrow('stopped');
    expect(budget.waiting).toBe(0);
  });

  it('a new caller queues behind those already waiting, even once the window has room', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('a');
    void take('b');
    clock.set(1_000); // room now, but 'b' has not been let through yet (its timer has not run)
    void take('c');
    await clock.advance(0);
    expect(log.map(([name]) => name)).toEqual(['a', 'b']);
    await clock.advance(1_000);
    expect(log.map(([name]) => name)).toEqual(['a', 'b', 'c']);
  });

  it('a caller finds the window free when the waiters before it were aborted: no wait for their timer', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(1, clock.loop);
    await budget.take('routine');
    const controller = new AbortController();
    const aborted = budget.take('routine', controller.signal);
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    expect(clock.delays()).toEqual([1_000]); // the timer set for the aborted waiter is still there
    clock.set(1_000); // the window has room; that timer has not run yet
    let through = false;
    void budget.take('routine').then(() => (through = true));
    await Promise.resolve();
    expect(through).toBe(true);
  });

  it('counts the most calls seen in one second', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(5, clock.loop);
    await budget.take('routine');
    await budget.take('routine');
    expect(budget.maxInOneSecond).toBe(2);
    clock.set(1_000); // both have left the window
    await budget.take('routine');
    expect(budget.maxInOneSecond).toBe(2);
    clock.set(1_500);
    await budget.take('routine');
    await budget.take('routine');
    expect(budget.maxInOneSecond).toBe(3);
  });

  it('a wait aborted rejects with signal.reason, leaves the queue and its listener; the others go on', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('a');
    const controller = new AbortController();
    const reason = new Error('stopped');
    const aborted = take('b', 'routine', controller.signal);
    const urgent = new AbortController();
    const abortedUrgent = take('u', 'urgent', urgent.signal);
    void take('c');
    expect(budget.waiting).toBe(3);
    controller.abort(reason);
    urgent.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    await expect(abortedUrgent).rejects.toBe(reason);
    expect(budget.waiting).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    await clock.advance(1_000);
    expect(log.map(([name]) => name)).toEqual(['a', 'c']);
  });

  it('any waiter of a queue can be aborted, not only the first: the others keep their order', async () => {
    const { clock, budget, log, take } = budgetOf(1);
    await take('a');
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const waits = ['b', 'c', 'd'].map((name, i) => take(name, 'routine', controllers[i]?.signal));
    controllers[1]?.abort(new Error('c left'));
    await expect(waits[1]).rejects.toThrow('c left');
    expect(budget.waiting).toBe(2);
    for (let i = 0; i < 2; i++) await clock.advance(1_000);
    expect(log.map(([name]) => name)).toEqual(['a', 'b', 'd']);
  });

  it('a wait let through leaves no listener on its signal; an aborted signal is refused before anything is counted', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(1, clock.loop);
    const controller = new AbortController();
    await budget.take('routine', controller.signal);
    const waiting = budget.take('routine', controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await clock.advance(1_000);
    await waiting;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const reason = new Error('already stopped');
    expect(() => budget.take('routine', AbortSignal.abort(reason))).toThrow(reason);
    clock.set(5_000);
    await budget.take('routine');
    expect(budget.maxInOneSecond).toBe(1);
  });

  it('an abort after the wait was let through changes nothing', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(1, clock.loop);
    await budget.take('routine');
    const controller = new AbortController();
    const waiting = budget.take('routine', controller.signal);
    await clock.advance(1_000);
    controller.abort(new Error('late'));
    await expect(waiting).resolves.toBeUndefined();
  });

  it('rejectAll rejects every waiter, urgent and routine, and clears its timer; the budget works after it', async () => {
    const clock = manualTimers();
    const budget = new CallBudget(1, clock.loop);
    await budget.take('routine');
    const controller = new AbortController();
    const routine = budget.take('routine', controller.signal);
    const urgent = budget.take('urgent');
    expect(clock.delays()).toEqual([1_000]);
    const reason = new Error('the loop stopped');
    budget.rejectAll(reason);
    await expect(routine).rejects.toBe(reason);
    await expect(urgent).rejects.toBe(reason);
    expect(budget.waiting).toBe(0);
    expect(clock.delays()).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    budget.rejectAll(reason); // nothing waits: nothing happens
    clock.set(1_000);
    const next = budget.take('routine');
    await expect(next).resolves.toBeUndefined();
    const after = budget.take('routine');
    expect(clock.delays()).toEqual([1_000]);
    await clock.advance(1_000);
    await expect(after).resolves.toBeUndefined();
  });

  it('platformTimers: performance.now() and the real timers', async () => {
    const before = performance.now();
    expect(platformTimers.now()).toBeGreaterThanOrEqual(before);
    const ran = await new Promise<boolean>((resolve) => {
      const cancelled = platformTimers.setTimeout(() => resolve(false), 0);
      platformTimers.clearTimeout(cancelled);
      platformTimers.setTimeout(() => resolve(true), 0);
    });
    expect(ran).toBe(true);
  });
});

describe('sleepOn', () => {
  it('resolves after its time and rejects with the reason on abort, leaving no listener on the signal either way (and no timer)', async () => {
    const clock = manualTimers();
    const controller = new AbortController();
    const slept = sleepOn(clock.loop, 1_000, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await clock.advance(1_000);
    await slept;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    const cut = sleepOn(clock.loop, 1_000, controller.signal);
    controller.abort(new Error('left'));
    await expect(cut).rejects.toThrow('left');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(clock.delays()).toEqual([]);
    // Already aborted: throws at once (its callers await it inside async functions).
    expect(() => sleepOn(clock.loop, 1_000, controller.signal)).toThrow('left');
  });

  it('never ends before its time on the clock: a timer that fires early is set again for what is left, plus a millisecond', async () => {
    const clock = manualTimers();
    const asked: number[] = [];
    // A platform timer started mid-millisecond: it fires when the clock reads 1 ms less than asked.
    const early: LoopTimers = { ...clock.loop, setTimeout: (run, ms) => (asked.push(ms), clock.loop.setTimeout(run, ms >= 2 ? ms - 1 : ms)) };
    let done = false;
    const slept = sleepOn(early, 10_000, new AbortController().signal).then(() => (done = true));
    await clock.advance(9_999);
    expect(done).toBe(false);
    // Woke 1 ms early: set again for the 1 ms left and the margin (and that one fires early too).
    expect(asked).toEqual([10_000, 2]);
    await clock.advance(1);
    await slept;
    expect(clock.loop.now()).toBe(10_000);
    expect(clock.delays()).toEqual([]);
  });

  it('aborted after a timer woke it early: rejects with the reason, and the timer set again is cleared', async () => {
    const clock = manualTimers();
    const early: LoopTimers = { ...clock.loop, setTimeout: (run, ms) => clock.loop.setTimeout(run, ms >= 2 ? ms - 1 : ms) };
    const controller = new AbortController();
    const slept = sleepOn(early, 10_000, controller.signal);
    await clock.advance(9_999);
    expect(clock.delays()).toEqual([1]); // set again
    controller.abort(new Error('left'));
    await expect(slept).rejects.toThrow('left');
    expect(clock.delays()).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
