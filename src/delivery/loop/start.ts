/**
 * The delivery loop as {@link StorefrontClient.startDeliveryLoop} starts it: the options
 * checked and the one-loop-per-journal rule applied at once (both throw synchronously),
 * the scheduler itself (scheduler.ts and its parts) loaded by `import()` on first use, so that a
 * program that never starts a loop (a web shop) does not load it. Until it has loaded (well
 * under a millisecond, once per process), `join` and `leave` are queued in order, the
 * async methods wait for it, and `stats()` counts the players queued.
 *
 * @module
 * @internal
 */
import { LoopRunningError } from '../../errors.js';
import { checkPlayerName } from '../../internal/validate.js';
import { checkHint, type CheckoutHint, type CheckoutHintOutcome } from './hints.js';
import { checkLoopOptions, type CheckedLoopOptions, type DeliveryLoop, type DeliveryLoopStats, type LoopClaimReport, type LoopHost, type LoopVoteInput, type LoopVoteReport, type PlayerDeliveryStatus } from './types.js';

export type { DeliveryLoop, DeliveryLoopOptions } from './types.js';

type LoopModule = typeof import('./scheduler.js');

/** The scheduler's module once loaded: later loops start synchronously. */
let loaded: LoopModule | undefined;
let loading: Promise<LoopModule> | undefined;

/** Loads the scheduler now (tests on fake time, the simulation); later loops start without waiting. */
export function loadLoop(): Promise<LoopModule> {
  loading ??= import('./scheduler.js').then((module) => (loaded = module));
  return loading;
}

/** Starts a loop for the client. @internal */
export function startLoop(host: LoopHost, options: unknown): DeliveryLoop {
  const checked = checkLoopOptions(options);
  const handle = new LoopHandle(host, checked);
  // One loop per journal in a process: two would poll every player twice, on two budgets.
  if (host.engine.claimLoop(handle) !== undefined) throw new LoopRunningError();
  handle.begin();
  return handle;
}

/** A loop whose scheduler may still be loading. */
class LoopHandle implements DeliveryLoop {
  readonly #host: LoopHost;
  readonly #options: CheckedLoopOptions;
  #loop: DeliveryLoop | undefined;
  #ready: Promise<DeliveryLoop> | undefined;
  /** `join` / `leave` / `expect` calls made before the scheduler loaded, in order (an `expect` is its hint, no `join`). */
  readonly #queued: Array<{ join?: boolean; name: string; hint?: CheckoutHint }> = [];

  constructor(host: LoopHost, options: CheckedLoopOptions) {
    this.#host = host;
    this.#options = options;
  }

  begin(): void {
    if (loaded !== undefined) {
      this.#loop = loaded.startCheckedLoop(this.#host, this.#options, this);
      return;
    }
    this.#ready = loadLoop().then((module) => {
      const loop = module.startCheckedLoop(this.#host, this.#options, this);
      for (const { join, name, hint } of this.#queued.splice(0)) {
        if (hint !== undefined) loop.expect(name, hint);
        else if (join) loop.join(name);
        else loop.leave(name);
      }
      this.#loop = loop;
      return loop;
    });
  }

  join(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#loop !== undefined) this.#loop.join(name);
    else this.#queued.push({ join: true, name });
  }

  leave(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#loop !== undefined) this.#loop.leave(name);
    else this.#queued.push({ join: false, name });
  }

  expect(playerName: string, hint?: CheckoutHint): CheckoutHintOutcome {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#loop !== undefined) return this.#loop.expect(name, hint);
    // Checked now (a bad hint throws here too); held once the scheduler has loaded, within its bounds.
    checkHint(hint, 0);
    this.#queued.push({ name, hint: hint ?? {} });
    return 'held';
  }

  async claim(playerName: string): Promise<LoopClaimReport> {
    return (await this.#scheduler()).claim(playerName);
  }

  async claimVote(playerName: string, input: LoopVoteInput): Promise<LoopVoteReport> {
    return (await this.#scheduler()).claimVote(playerName, input);
  }

  async status(playerName: string): Promise<PlayerDeliveryStatus> {
    return (await this.#scheduler()).status(playerName);
  }

  stats(): DeliveryLoopStats {
    if (this.#loop !== undefined) return this.#loop.stats();
    const online = new Set<string>();
    for (const { join, name, hint } of this.#queued) {
      if (hint !== undefined) continue;
      if (join) online.add(name);
      else online.delete(name);
    }
    const { pollIntervalMs: intervalMs } = this.#options;
    const hints = new Set(this.#queued.filter((q) => q.hint !== undefined).map((q) => q.name)).size;
    return { online: online.size, hints, calls: 0, previews: 0, claims: 0, granted: 0, pending: 0, unverified: 0, errors: 0, lastError: undefined, intervalMs, maxCallsInOneSecond: 0, paused: false, blocked: 0, backingOff: 0 };
  }

  async stop(): Promise<void> {
    return (await this.#scheduler()).stop();
  }

  #scheduler(): Promise<DeliveryLoop> {
    return this.#loop !== undefined ? Promise.resolve(this.#loop) : (this.#ready as Promise<DeliveryLoop>);
  }
}
