/**
 * Time for a child process, moved by the test that spawned it: loaded with
 * `node --import tsx --import ./test/support/child-clock.ts …` and spawned with an IPC
 * channel. The test sends `{ advance: ms }`; the child's clocks (`performance.now()`,
 * `Date.now()`) jump by `ms`, its long timers fire as if `ms` had passed, and it answers
 * `{ advanced: ms }`. Without a message, time runs as real time does.
 *
 * Only timers of {@link LONG_MS} or more jump: the waits of a delivery loop (the service's
 * 10 s window, the poll interval, the backoffs) are that long; a request's own timeout
 * (a webhook's 2 s) stays on real time, so a jump never times out a request in flight.
 *
 * The program under test is not changed: it reads the globals it always reads.
 */
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';

/** The shortest timer that jumps with the clock, in ms. */
const LONG_MS = 5_000;

if (process.send === undefined) throw new Error('child-clock: the process needs an IPC channel (spawn with stdio "ipc")');

const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  performanceNow: globalThis.performance.now.bind(globalThis.performance),
  dateNow: Date.now,
};
let offset = 0;
const now = (): number => real.performanceNow() + offset;
const pending = new Set<JumpingTimer>();

/** A timer due at a time on the child's clock: when the clock jumps, it is armed again for what is left. */
class JumpingTimer {
  #timer: NodeJS.Timeout | undefined;
  #due = 0;
  #ref = true;

  constructor(
    private readonly run: () => void,
    private readonly ms: number,
  ) {
    this.#arm(now() + ms);
  }

  #arm(due: number): void {
    this.#due = due;
    this.#timer = real.setTimeout(() => {
      pending.delete(this);
      this.run();
    }, Math.max(0, due - now()));
    if (!this.#ref) this.#timer.unref();
    pending.add(this);
  }

  /** The clock jumped: what is left of the wait is shorter. */
  rearm(): void {
    real.clearTimeout(this.#timer);
    this.#arm(this.#due);
  }

  close(): this {
    real.clearTimeout(this.#timer);
    pending.delete(this);
    return this;
  }

  refresh(): this {
    real.clearTimeout(this.#timer);
    this.#arm(now() + this.ms);
    return this;
  }

  ref(): this {
    this.#ref = true;
    this.#timer?.ref();
    return this;
  }

  unref(): this {
    this.#ref = false;
    this.#timer?.unref();
    return this;
  }

  hasRef(): boolean {
    return this.#ref;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

function setTimeoutOnClock(callback: unknown, ms?: number, ...args: unknown[]): unknown {
  if (typeof callback !== 'function' || ms === undefined || !(ms >= LONG_MS)) return Reflect.apply(real.setTimeout, globalThis, [callback, ms, ...args]);
  return new JumpingTimer(() => Reflect.apply(callback, globalThis, args), ms);
}

function clearTimeoutOnClock(handle: unknown): void {
  if (handle instanceof JumpingTimer) handle.close();
  else real.clearTimeout(handle as NodeJS.Timeout);
}

globalThis.setTimeout = setTimeoutOnClock as typeof globalThis.setTimeout;
globalThis.clearTimeout = clearTimeoutOnClock as typeof globalThis.clearTimeout;
// `import { setTimeout } from 'node:timers'` sees the same functions.
timers.setTimeout = globalThis.setTimeout;
timers.clearTimeout = globalThis.clearTimeout;
syncBuiltinESMExports();
globalThis.performance.now = now;
Date.now = () => real.dateNow() + offset;

process.on('message', (message: { advance?: unknown }) => {
  const ms = message.advance;
  if (typeof ms !== 'number' || !(ms >= 0)) return;
  offset += ms;
  for (const timer of [...pending]) timer.rearm();
  process.send?.({ advanced: ms });
});
// The channel never keeps the child alive: it exits when its program is done, as without it.
process.channel?.unref();
