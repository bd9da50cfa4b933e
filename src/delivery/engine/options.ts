/**
 * The argument checks of `deliver` and `resumeDeliveries`, and how they wait.
 *
 * @module
 * @internal
 */
import type { Operation } from '../../errors.js';
import { checkIntegerInRange, checkOptionsObject, checkPlayerName, checkSignal, describe, fail } from '../../internal/validate.js';
import type { DeliverOptions, DeliveryMode, GrantFunction, ResumeOptions, SleepFunction } from '../core/index.js';

const DEFAULT_RATE_LIMIT_WAITS = 3;
const MAX_RATE_LIMIT_WAITS = 100;
const DEFAULT_GRANT_TIMEOUT_MS = 60_000;
const MAX_GRANT_TIMEOUT_MS = 86_400_000; // 24 h

// The option names, derived from the interfaces: a new option cannot be left out of the
// allow-lists. Built per call (a few names), so each mutant of them is seen by the tests.
function resumeKeys(): Record<keyof ResumeOptions, 0> {
  return { signal: 0, sleep: 0, maxRateLimitWaits: 0, grantTimeoutMs: 0 };
}

function deliverKeys(): Record<keyof DeliverOptions, 0> {
  return { ...resumeKeys(), mode: 0 };
}

/** How a call waits and gives up. */
export interface Control {
  signal: AbortSignal | undefined;
  sleep: SleepFunction;
  maxWaits: number;
  grantTimeoutMs: number;
}

type RawOptions = { [K in keyof DeliverOptions]?: unknown };

/** Checks the arguments of `deliver`. */
export function checkDeliverOptions(playerName: unknown, options: unknown): { player: string; mode: DeliveryMode; control: Control } {
  const op: Operation = 'deliver';
  const player = checkPlayerName(playerName, 'playerName', op);
  const opts = checkOptionsObject(options as RawOptions | undefined, Object.keys(deliverKeys()), 'options', op);
  const mode = (opts.mode ?? 'exactlyOnce') as DeliveryMode;
  if (mode !== 'exactlyOnce' && mode !== 'fast') fail('options.mode', `must be 'exactlyOnce' (the default) or 'fast', got ${describe(opts.mode)}`, op);
  return { player, mode, control: controlOf(opts, op) };
}

/** Checks the options of `resumeDeliveries`. */
export function checkResumeOptions(options: unknown): Control {
  const op: Operation = 'resumeDeliveries';
  return controlOf(checkOptionsObject(options as RawOptions | undefined, Object.keys(resumeKeys()), 'options', op), op);
}

/** Checks the `grant` argument. */
export function checkGrant(value: unknown, op: Operation): GrantFunction {
  if (typeof value !== 'function') fail('grant', `must be a function (item) => void | Promise<void>, got ${describe(value)}`, op);
  return value as GrantFunction;
}

/** Waits through the call's `sleep`, rejecting with the signal's reason once aborted. */
export async function pause(control: Control, ms: number): Promise<void> {
  control.signal?.throwIfAborted();
  await control.sleep(ms);
  control.signal?.throwIfAborted();
}

function controlOf(opts: RawOptions, op: Operation): Control {
  const signal = checkSignal(opts.signal, op);
  if (opts.sleep !== undefined && typeof opts.sleep !== 'function') fail('options.sleep', `must be a function (ms) => Promise<void>, got ${describe(opts.sleep)}`, op);
  const maxWaits = opts.maxRateLimitWaits === undefined ? DEFAULT_RATE_LIMIT_WAITS : checkIntegerInRange(opts.maxRateLimitWaits, 0, MAX_RATE_LIMIT_WAITS, 'options.maxRateLimitWaits', op);
  const grantTimeoutMs = opts.grantTimeoutMs === undefined ? DEFAULT_GRANT_TIMEOUT_MS : checkIntegerInRange(opts.grantTimeoutMs, 1, MAX_GRANT_TIMEOUT_MS, 'options.grantTimeoutMs', op);
  return { signal, sleep: (opts.sleep as SleepFunction | undefined) ?? ((ms) => realSleep(ms, signal)), maxWaits, grantTimeoutMs };
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    // Only the signal calls it.
    const onAbort = () => {
      clearTimeout(timer);
      reject((signal as AbortSignal).reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
