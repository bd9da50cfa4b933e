import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClock } from '../../src/mock/service/clock.js';
import { T0 } from '../support/fixtures.js';

describe('mock clock', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('with a start time, is frozen and moves only by advance and set', () => {
    const clock = createClock(T0);
    expect(clock.now()).toBe(T0);
    expect(clock.advance(1_500)).toBe(T0 + 1_500);
    expect(clock.now()).toBe(T0 + 1_500);
    expect(clock.set('2026-06-01T12:00:00Z')).toBe(Date.parse('2026-06-01T12:00:00Z'));
    expect(clock.set(new Date(T0 - 1))).toBe(T0 - 1);
    clock.reset();
    expect(clock.now()).toBe(T0);
  });

  it('accepts a Date or an ISO string as the start', () => {
    expect(createClock(new Date(T0)).now()).toBe(T0);
    expect(createClock('2026-01-01T00:00:00Z').now()).toBe(T0);
  });

  it('without a start time, follows real time shifted by advance and set', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(T0);
    const clock = createClock();
    expect(clock.now()).toBe(T0);
    now.mockReturnValue(T0 + 100);
    expect(clock.now()).toBe(T0 + 100);
    clock.advance(10_000);
    expect(clock.now()).toBe(T0 + 10_100);
    now.mockReturnValue(T0 + 200);
    expect(clock.now()).toBe(T0 + 10_200);
    clock.set(0);
    expect(clock.now()).toBe(0);
    clock.reset();
    expect(clock.now()).toBe(T0 + 200);
  });

  it('refuses a negative or non-finite advance and an unparseable time', () => {
    const clock = createClock(T0);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
    expect(() => clock.set('soon')).toThrow(RangeError);
    expect(() => createClock('soon')).toThrow(RangeError);
    expect(clock.now()).toBe(T0);
  });
});
