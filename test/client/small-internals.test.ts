/**
 * The client's small internals, one decision at a time (issue #46): what `deepFreeze` walks,
 * what the runtime gives for the `User-Agent` and the environment defaults (a browser with
 * no `process`, Deno with and without `--allow-env`), and `untilAborted` on a signal that
 * has already aborted. The runtime's globals are swapped synchronously around each call and
 * put back at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/internal/freeze.js';
import { envDenied, readEnv, runtimeAgent } from '../../src/internal/runtime.js';
import { untilAborted } from '../../src/internal/signals.js';

/** Runs `run` with `globalThis[name]` replaced (deleted when `value` is undefined), then restores it. */
function withGlobal<T>(name: 'process' | 'Deno', value: unknown, run: () => T): T {
  const saved = Object.getOwnPropertyDescriptor(globalThis, name);
  if (value === undefined) Reflect.deleteProperty(globalThis, name);
  else Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  try {
    return run();
  } finally {
    if (saved === undefined) Reflect.deleteProperty(globalThis, name);
    else Object.defineProperty(globalThis, name, saved);
  }
}

const VAR = 'TEAMGAMES_SDK_TEST_SMALL_INTERNALS';
afterEach(() => {
  Reflect.deleteProperty(process.env, VAR);
});

describe('deepFreeze', () => {
  it('freezes a value all the way down and returns it', () => {
    const value = { a: [{ b: 1 }], c: null, d: 'x' };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value) && Object.isFrozen(value.a) && Object.isFrozen(value.a[0])).toBe(true);
  });

  it('takes a part frozen already as walked: it does not walk into it again (so a value that contains itself ends)', () => {
    const inner = { deeper: {} };
    deepFreeze({ part: Object.freeze(inner) });
    expect(Object.isFrozen(inner.deeper)).toBe(false);
  });
});

describe('the runtime', () => {
  it("is 'unknown-runtime' for the User-Agent with no process (a browser), node/<version> with one", () => {
    expect(withGlobal('process', undefined, runtimeAgent)).toBe('unknown-runtime');
    expect(withGlobal('process', { versions: {} }, runtimeAgent)).toBe('unknown-runtime');
    expect(withGlobal('process', {}, runtimeAgent)).toBe('unknown-runtime');
    expect(withGlobal('process', { versions: { node: '20.1.0' } }, runtimeAgent)).toBe('node/20.1.0');
    // A Deno that reports no version of its own is not named Deno.
    expect(withGlobal('Deno', {}, () => withGlobal('process', { versions: { node: '20.1.0' } }, runtimeAgent))).toBe('node/20.1.0');
  });

  it('reads a set variable; an empty or unset one, or one with no process at all, is undefined', () => {
    expect(readEnv(VAR)).toBeUndefined();
    process.env[VAR] = '';
    expect(readEnv(VAR)).toBeUndefined();
    process.env[VAR] = 'value';
    expect(readEnv(VAR)).toBe('value');
    expect(withGlobal('process', undefined, () => readEnv(VAR))).toBeUndefined();
  });

  it('Node lets every variable be read: envDenied is false', () => {
    expect(envDenied(VAR)).toBe(false);
  });

  it('Deno without --allow-env for the variable: denied, and reading it gives undefined without touching process.env', () => {
    process.env[VAR] = 'value';
    const asked: unknown[] = [];
    const deno = (state: string) => ({ permissions: { querySync: (descriptor: unknown) => (asked.push(descriptor), { state }) } });
    expect(withGlobal('Deno', deno('prompt'), () => [envDenied(VAR), readEnv(VAR)])).toEqual([true, undefined]);
    expect(asked).toEqual([{ name: 'env', variable: VAR }, { name: 'env', variable: VAR }]);
    expect(withGlobal('Deno', deno('granted'), () => [envDenied(VAR), readEnv(VAR)])).toEqual([false, 'value']);
  });

  it('a permission query that throws, or a Deno without one, refuses nothing', () => {
    const throwing = { permissions: { querySync: () => { throw new Error('not supported'); } } };
    expect(withGlobal('Deno', throwing, () => envDenied(VAR))).toBe(false);
    expect(withGlobal('Deno', {}, () => envDenied(VAR))).toBe(false);
    expect(withGlobal('Deno', { permissions: {} }, () => envDenied(VAR))).toBe(false);
  });
});

describe('untilAborted', () => {
  it('rejects at once with the reason of a signal that has already aborted, even when the work succeeds', async () => {
    const reason = new Error('stopping');
    await expect(untilAborted(Promise.resolve(1), AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it("handles the work's own rejection after an abort (nothing left unhandled)", async () => {
    const reason = new Error('stopping');
    let handled = false;
    const work = Promise.reject(new Error('work failed'));
    const original = work.catch.bind(work);
    work.catch = ((onRejected: (error: unknown) => unknown) => ((handled = true), original(onRejected))) as typeof work.catch;
    await expect(untilAborted(work, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(handled).toBe(true);
  });
});
