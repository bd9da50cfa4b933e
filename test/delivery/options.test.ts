/**
 * The argument checks of `deliver` and `resumeDeliveries` (src/delivery/engine/options.ts): each
 * option's default, its limits to the unit, the message naming the option and the call,
 * the options one call takes and the other does not, and how a call waits (its own
 * `sleep`, or a timer that an abort clears at once).
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { checkDeliverOptions, checkGrant, checkResumeOptions, pause, type Control } from '../../src/delivery/engine/options.js';

afterEach(() => {
  vi.useRealTimers();
});

/** What a check threw: its argument, operation and message. */
function refusal(check: () => unknown): { argument: string; operation: string | undefined; message: string } {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    const e = error as InvalidInputError;
    return { argument: e.argument, operation: e.operation, message: e.message };
  }
  throw new Error('expected the check to throw');
}

describe('checkDeliverOptions', () => {
  it('defaults: exactly-once, 3 rate-limit waits, a 60 s grant timeout, no signal', () => {
    const { player, mode, control } = checkDeliverOptions('Ann', undefined);
    expect(player).toBe('Ann');
    expect(mode).toBe('exactlyOnce');
    expect(control).toMatchObject({ signal: undefined, maxWaits: 3, grantTimeoutMs: 60_000 });
    expect(checkDeliverOptions('Ann', {}).control).toMatchObject({ maxWaits: 3, grantTimeoutMs: 60_000 });
  });

  it('takes every option it knows, as given', () => {
    const signal = new AbortController().signal;
    const sleep = async () => undefined;
    const { mode, control } = checkDeliverOptions('Ann', { mode: 'fast', signal, sleep, maxRateLimitWaits: 7, grantTimeoutMs: 1_500 });
    expect(mode).toBe('fast');
    expect(control).toEqual({ signal, sleep, maxWaits: 7, grantTimeoutMs: 1_500 });
    expect(checkDeliverOptions('Ann', { mode: 'exactlyOnce' }).mode).toBe('exactlyOnce');
  });

  it('maxRateLimitWaits from 0 to 100, grantTimeoutMs from 1 ms to 24 h, to the unit', () => {
    expect(checkDeliverOptions('Ann', { maxRateLimitWaits: 0 }).control.maxWaits).toBe(0);
    expect(checkDeliverOptions('Ann', { maxRateLimitWaits: 100 }).control.maxWaits).toBe(100);
    expect(checkDeliverOptions('Ann', { grantTimeoutMs: 1 }).control.grantTimeoutMs).toBe(1);
    expect(checkDeliverOptions('Ann', { grantTimeoutMs: 86_400_000 }).control.grantTimeoutMs).toBe(86_400_000);
    expect(refusal(() => checkDeliverOptions('Ann', { maxRateLimitWaits: -1 }))).toEqual({
      argument: 'options.maxRateLimitWaits',
      operation: 'deliver',
      message: 'deliver: invalid options.maxRateLimitWaits: must be an integer from 0 to 100, got -1',
    });
    expect(refusal(() => checkDeliverOptions('Ann', { maxRateLimitWaits: 101 })).message).toMatch(/from 0 to 100, got 101$/);
    expect(refusal(() => checkDeliverOptions('Ann', { grantTimeoutMs: 0 })).message).toBe('deliver: invalid options.grantTimeoutMs: must be an integer from 1 to 86,400,000, got 0');
    expect(refusal(() => checkDeliverOptions('Ann', { grantTimeoutMs: 86_400_001 })).argument).toBe('options.grantTimeoutMs');
  });

  it('refuses an unknown mode, a sleep that is not a function, a bad signal and an unknown option, naming each', () => {
    expect(refusal(() => checkDeliverOptions('Ann', { mode: 'twice' }))).toEqual({
      argument: 'options.mode',
      operation: 'deliver',
      message: `deliver: invalid options.mode: must be 'exactlyOnce' (the default) or 'fast', got "twice"`,
    });
    expect(refusal(() => checkDeliverOptions('Ann', { sleep: 5 }))).toEqual({
      argument: 'options.sleep',
      operation: 'deliver',
      message: 'deliver: invalid options.sleep: must be a function (ms) => Promise<void>, got 5',
    });
    expect(refusal(() => checkDeliverOptions('Ann', { signal: {} })).argument).toBe('options.signal');
    expect(refusal(() => checkDeliverOptions('Ann', { sleeep: 1 })).argument).toBe('options.sleeep');
    expect(refusal(() => checkDeliverOptions(' ', {}))).toMatchObject({ argument: 'playerName', operation: 'deliver' });
  });
});

describe('checkResumeOptions', () => {
  it('the same options and defaults but mode, named for resumeDeliveries', () => {
    const signal = new AbortController().signal;
    const sleep = async () => undefined;
    expect(checkResumeOptions(undefined)).toMatchObject({ signal: undefined, maxWaits: 3, grantTimeoutMs: 60_000 });
    expect(checkResumeOptions({ signal, sleep, maxRateLimitWaits: 0, grantTimeoutMs: 5 })).toEqual({ signal, sleep, maxWaits: 0, grantTimeoutMs: 5 });
    expect(refusal(() => checkResumeOptions({ mode: 'fast' }))).toMatchObject({ argument: 'options.mode', operation: 'resumeDeliveries' });
    expect(refusal(() => checkResumeOptions({ maxRateLimitWaits: 1.5 }))).toMatchObject({ argument: 'options.maxRateLimitWaits', operation: 'resumeDeliveries' });
    expect(refusal(() => checkResumeOptions({ sleep: 'soon' }))).toMatchObject({ argument: 'options.sleep', operation: 'resumeDeliveries' });
  });
});

describe('checkGrant', () => {
  it('takes a function; anything else is named for the call it came from', () => {
    const grant = () => undefined;
    expect(checkGrant(grant, 'deliver')).toBe(grant);
    expect(refusal(() => checkGrant('grant', 'resumeDeliveries'))).toEqual({
      argument: 'grant',
      operation: 'resumeDeliveries',
      message: 'resumeDeliveries: invalid grant: must be a function (item) => void | Promise<void>, got "grant"',
    });
  });
});

describe('pause', () => {
  const control = (sleep: Control['sleep'], signal?: AbortSignal): Control => ({ signal, sleep, maxWaits: 3, grantTimeoutMs: 1_000 });

  it("waits through the call's own sleep, for the time asked", async () => {
    const slept: number[] = [];
    await pause(control(async (ms) => void slept.push(ms)), 250);
    expect(slept).toEqual([250]);
  });

  it('rejects with signal.reason when aborted before the wait (sleep never called) or during it', async () => {
    const reason = new Error('stopped');
    let called = false;
    await expect(pause(control(async () => void (called = true), AbortSignal.abort(reason)), 10)).rejects.toBe(reason);
    expect(called).toBe(false);
    const controller = new AbortController();
    await expect(pause(control(async () => controller.abort(reason), controller.signal), 10)).rejects.toBe(reason);
  });

  it('the default sleep is a timer of exactly that long, cleared and rejected with signal.reason at once on abort, leaving no listener', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const { control: waiting } = checkDeliverOptions('Ann', { signal: controller.signal });
    let done = false;
    const slept = waiting.sleep(1_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await slept;
    expect(done).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    const reason = new Error('shutting down');
    const aborted = waiting.sleep(60_000);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    // Without a signal: a plain timer.
    const { control: plain } = checkDeliverOptions('Ann', {});
    let plainDone = false;
    const p = plain.sleep(10).then(() => (plainDone = true));
    await vi.advanceTimersByTimeAsync(10);
    await p;
    expect(plainDone).toBe(true);
  });
});
