/**
 * Automatic delivery: {@link StorefrontClient.startDeliveryLoop}. The loop previews each
 * online player about every `pollIntervalMs` (TeamGames has no "who has purchases" call),
 * and a preview that lists items becomes an exactly-once delivery: intents journaled, the
 * claim sent when the 10 s window allows, the items granted. Every call it makes, a
 * player's `/claim` included, comes out of one budget of calls per second.
 *
 * It is `deliver` run by a scheduler: the journal, the per-player order, the reconcile of
 * lost answers and the reports are the engine's. What the loop adds is when to call, for
 * whom (only players it was told are online), and that `give` is never called for a
 * player who left.
 *
 * @module
 */
import { isStorefrontError } from '../errors.js';
import { checkIntegerInRange, checkOptionsObject, checkPlayerName, checkSignal, describe, fail } from '../internal/validate.js';
import type { StorefrontEvent } from '../types.js';
import { CLAIM_WINDOW_MS } from '../wire/claim.js';
import { CallBudget, platformTimers, type LoopTimers } from './call-budget.js';
import { DueHeap, type DueEntry } from './due-heap.js';
import type { DeliveryEngine } from './engine.js';
import type { RunVia } from './report.js';
import type { DeliveredItem, DeliveryReport, GrantFunction } from './types.js';

/** Options of {@link StorefrontClient.startDeliveryLoop}. */
export interface DeliveryLoopOptions {
  /** Gives an item in game, as the `grant` of {@link StorefrontClient.deliver}; never called for a player who is offline. */
  give: GrantFunction;
  /** How often each online player is previewed, in ms. Default `30000`; at least `10000` (the service's window). */
  pollIntervalMs?: number;
  /** The most calls the loop makes in any one second, `claim()` included. Default `10`. */
  maxCallsPerSecond?: number;
  /** Aborting it stops the loop, like {@link DeliveryLoop.stop}. */
  signal?: AbortSignal;
  /** As {@link ResumeOptions.grantTimeoutMs}. Default `60000`. */
  grantTimeoutMs?: number;
}

/** What {@link DeliveryLoop.stats} counts since the loop started. */
export interface DeliveryLoopStats {
  /** Players online on this node (joined, not left). */
  online: number;
  /** Calls sent to the service. */
  calls: number;
  /** Of which previews. */
  previews: number;
  /** Of which claims. */
  claims: number;
  /** Items granted. */
  granted: number;
  /** Items pending in the journal for online players, as last seen. */
  pending: number;
  /** Unverified windows reported (see {@link UnverifiedWindow}). */
  unverified: number;
  /** Runs that ended in an error (network, service, journal). */
  errors: number;
  /** The last of those errors. */
  lastError: unknown;
  /** The poll interval in force: `pollIntervalMs`, or longer when the budget cannot cover every player. */
  intervalMs: number;
  /** The most calls sent in one second. */
  maxCallsInOneSecond: number;
  /** True while the service refuses the key (`SERVER_NOT_FOUND`): the loop waits and tries again now and then. */
  paused: boolean;
}

/**
 * A running delivery loop; see {@link StorefrontClient.startDeliveryLoop}.
 *
 * @example
 * ```ts
 * const loop = client.startDeliveryLoop({ give });
 * game.on('join', (player) => loop.join(player));
 * game.on('quit', (player) => loop.leave(player));
 * game.onCommand('claim', async (player) => tell(player, (await loop.claim(player)).message));
 * process.on('SIGTERM', () => void loop.stop());
 * ```
 */
export interface DeliveryLoop {
  /** The player is online on this node: what is pending for them is granted, then they are previewed soon. */
  join(playerName: string): void;
  /** The player left: nothing more is granted to them here, nothing more is called for them. */
  leave(playerName: string): void;
  /**
   * A `/claim` typed by the player: delivers now with one call when the player's last call
   * is a window old, else joins the player's next scheduled delivery. Resolves to its report.
   */
  claim(playerName: string): Promise<DeliveryReport>;
  /** Counts since the start. */
  stats(): DeliveryLoopStats;
  /** Stops scheduling, aborts waits, waits (bounded) for deliveries in flight; resolves once nothing more is called or granted. */
  stop(): Promise<void>;
}

const DEFAULT_POLL_MS = 30_000;
const DEFAULT_CALLS_PER_SECOND = 10;
/** Of the budget, the share routine polls may plan on: the rest is for claims, joins and `/claim`. */
const POLL_SHARE = 0.8;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;
const REFUSED_KEY_CAP_MS = 600_000;
const STOP_BOUND_MS = 30_000;
const OPTIONS = Object.keys({ give: true, pollIntervalMs: true, maxCallsPerSecond: true, signal: true, grantTimeoutMs: true } satisfies Record<keyof DeliveryLoopOptions, true>);

/** Why a wait of the loop ended early. */
class Interrupted extends Error {
  constructor(why: 'left' | 'stopped') {
    super(why === 'left' ? 'the player left' : 'the delivery loop stopped');
    this.name = 'Interrupted';
  }
}

/** A `claim()` caller waiting for a run's report. */
interface Waiter {
  resolve: (report: DeliveryReport) => void;
  reject: (reason: unknown) => void;
}

/** What the loop knows of one online player. */
interface Player {
  readonly name: string;
  /** Aborted when the player leaves (or the loop stops): ends the player's waits. */
  readonly gone: AbortController;
  /** The delivery running now, if any. */
  running: Promise<DeliveryReport> | undefined;
  /** When the service's window for the player last opened (our last call for them), monotonic. */
  lastCallAt: number;
  /** The next run: when, and whether it is urgent (a join, a `/claim`, a follow-up). */
  due: number;
  urgent: boolean;
  /** Set when the next run is a `/claim` that may go in one call. */
  fast: boolean;
  /** Callers of `claim()` waiting for the next run. */
  waiting: Waiter[];
  /** Callers of `claim()` waiting for the run in flight. */
  joined: Waiter[];
  /** Bumped at each reschedule: stale heap entries are skipped. */
  version: number;
  /** A run is in the heap, not started yet. */
  scheduled: boolean;
  /** The running delivery's preview listed items: its claim is still to come. */
  claimAhead: boolean;
  /** The last run failed (network, service, journal): the next one comes a window later, not an interval. */
  failed: boolean;
  /** Items pending for the player, as the last report said. */
  pending: number;
}

/** @internal */
export interface LoopHost {
  engine: DeliveryEngine;
  via: () => RunVia;
}

/**
 * Starts a loop; the client checks nothing else.
 * @internal
 */
export function startDeliveryLoop(host: LoopHost, options: unknown, timers: LoopTimers = platformTimers): DeliveryLoop {
  return new Loop(host, checkLoopOptions(options), timers);
}

interface Checked {
  give: GrantFunction;
  pollIntervalMs: number;
  maxCallsPerSecond: number;
  signal: AbortSignal | undefined;
  grantTimeoutMs: number | undefined;
}

function checkLoopOptions(options: unknown): Checked {
  const op = 'startDeliveryLoop';
  if (options === undefined || options === null) fail('options', 'must be an object with at least { give }', op);
  const opts = checkOptionsObject(options as { [K in keyof DeliveryLoopOptions]?: unknown }, OPTIONS, 'options', op);
  if (typeof opts.give !== 'function') fail('options.give', `must be a function (item) => void | Promise<void>, got ${describe(opts.give)}`, op);
  return {
    give: opts.give as GrantFunction,
    pollIntervalMs: opts.pollIntervalMs === undefined ? DEFAULT_POLL_MS : checkIntegerInRange(opts.pollIntervalMs, CLAIM_WINDOW_MS, 24 * 3_600_000, 'options.pollIntervalMs', op),
    maxCallsPerSecond: opts.maxCallsPerSecond === undefined ? DEFAULT_CALLS_PER_SECOND : checkIntegerInRange(opts.maxCallsPerSecond, 1, 1_000, 'options.maxCallsPerSecond', op),
    signal: checkSignal(opts.signal, op),
    grantTimeoutMs: opts.grantTimeoutMs === undefined ? undefined : checkIntegerInRange(opts.grantTimeoutMs, 1, 24 * 3_600_000, 'options.grantTimeoutMs', op),
  };
}

class Loop implements DeliveryLoop {
  readonly #host: LoopHost;
  readonly #options: Checked;
  readonly #timers: LoopTimers;
  readonly #budget: CallBudget;
  readonly #players = new Map<string, Player>();
  /** Due runs: joins, `/claim` and follow-ups; routine polls. Entries may be stale. */
  readonly #urgent = new DueHeap<Player>();
  readonly #routine = new DueHeap<Player>();
  readonly #running = new Set<Promise<unknown>>();
  /** Runs started that have not asked the budget for their first call yet. */
  #starting = 0;
  readonly #stats = { calls: 0, previews: 0, claims: 0, granted: 0, unverified: 0, errors: 0, lastError: undefined as unknown };
  #timer: unknown;
  #timerAt = Number.POSITIVE_INFINITY;
  #stopping: Promise<void> | undefined;
  #stopped = false;
  /** No routine run starts before this (network trouble, a refused key). */
  #holdUntil = 0;
  #failures = 0;
  #paused = false;

  constructor(host: LoopHost, options: Checked, timers: LoopTimers) {
    this.#host = host;
    this.#options = options;
    this.#timers = timers;
    this.#budget = new CallBudget(options.maxCallsPerSecond, timers);
    const { signal } = options;
    if (signal?.aborted) void this.stop();
    else signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  join(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#stopping !== undefined || this.#players.has(name)) return;
    const player: Player = { name, gone: new AbortController(), running: undefined, lastCallAt: Number.NEGATIVE_INFINITY, due: 0, urgent: false, fast: false, waiting: [], joined: [], version: 0, scheduled: false, claimAhead: false, failed: false, pending: 0 };
    this.#players.set(name, player);
    this.#schedule(player, this.#timers.now(), true);
  }

  leave(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    const player = this.#players.get(name);
    if (player === undefined) return;
    this.#players.delete(name);
    player.version += 1;
    player.gone.abort(new Interrupted('left'));
    for (const waiter of [...player.waiting.splice(0), ...player.joined.splice(0)]) waiter.reject(new Interrupted('left'));
  }

  async claim(playerName: string): Promise<DeliveryReport> {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#stopping !== undefined) throw new Interrupted('stopped');
    if (!this.#players.has(name)) this.join(name);
    const player = this.#players.get(name) as Player;
    // A delivery whose claim is still to come is the player's: join it rather than start a second one.
    if (player.running !== undefined && player.claimAhead) return new Promise<DeliveryReport>((resolve, reject) => player.joined.push({ resolve, reject }));
    // Otherwise the next run (after the one in flight, if any) is this /claim's.
    const report = new Promise<DeliveryReport>((resolve, reject) => player.waiting.push({ resolve, reject }));
    // One call when the service's window is open again; else at its edge.
    player.fast = true;
    this.#schedule(player, Math.max(this.#timers.now(), player.lastCallAt + CLAIM_WINDOW_MS), true);
    return report;
  }

  stats(): DeliveryLoopStats {
    let pending = 0;
    for (const player of this.#players.values()) pending += player.pending;
    const { calls, previews, claims, granted, unverified, errors, lastError } = this.#stats;
    return { online: this.#players.size, calls, previews, claims, granted, pending, unverified, errors, lastError, intervalMs: this.#interval(), maxCallsInOneSecond: this.#budget.maxInOneSecond, paused: this.#paused };
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const stopped = new Interrupted('stopped');
    this.#budget.rejectAll(stopped);
    for (const player of this.#players.values()) {
      player.gone.abort(stopped);
      // Callers of the runs in flight get their reports; those waiting for a next run, the stop.
      for (const waiter of player.waiting.splice(0)) waiter.reject(stopped);
    }
    // Deliveries in flight finish their grants (each bounded by grantTimeoutMs); the wait is bounded too.
    let bound: unknown;
    await Promise.race([Promise.allSettled([...this.#running]), new Promise<void>((resolve) => (bound = this.#timers.setTimeout(resolve, STOP_BOUND_MS)))]);
    this.#timers.clearTimeout(bound);
    this.#stopped = true;
    this.#players.clear();
    this.#urgent.clear();
    this.#routine.clear();
  }

  /** The poll interval in force: stretched evenly when the budget cannot cover every player. */
  #interval(): number {
    const needed = Math.ceil((this.#players.size * 1_000) / (this.#options.maxCallsPerSecond * POLL_SHARE));
    return Math.max(this.#options.pollIntervalMs, needed);
  }

  #schedule(player: Player, at: number, urgent: boolean): void {
    if (this.#stopping !== undefined) return;
    // A run already planned stays when it is more urgent, or as urgent and no later.
    if (player.scheduled && ((player.urgent && !urgent) || (player.urgent === urgent && player.due <= at))) return;
    player.version += 1;
    player.due = at;
    player.urgent = urgent;
    player.scheduled = true;
    (urgent ? this.#urgent : this.#routine).push(at, player);
    this.#arm(urgent ? at : Math.max(at, this.#holdUntil));
  }

  /** Wakes the scheduler at `at` (or sooner, if it is already set sooner). */
  #arm(at: number): void {
    if (this.#stopping !== undefined || at >= this.#timerAt) return;
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#tick();
    }, Math.max(0, at - this.#timers.now()));
  }

  /** Starts the runs that are due (urgent ones first), as the budget allows, and sleeps until the next. */
  #tick(): void {
    const live = (entry: DueEntry<Player>) => this.#players.get(entry.owner.name) === entry.owner;
    while (this.#stopping === undefined) {
      const now = this.#timers.now();
      const urgent = this.#urgent.peek(live);
      const routine = this.#routine.peek(live);
      const routineAt = routine === undefined ? Number.POSITIVE_INFINITY : Math.max(routine.due, this.#holdUntil);
      let next: DueEntry<Player> | undefined;
      if (urgent !== undefined && urgent.due <= now) next = urgent;
      else if (routine !== undefined && routineAt <= now) {
        // In trouble, one routine run at a time probes the service; the others wait for its outcome.
        if (this.#failures > 0 && this.#running.size > 0) return this.#arm(Math.min(urgent?.due ?? Number.POSITIVE_INFINITY, now + BACKOFF_BASE_MS));
        next = routine;
      }
      if (next === undefined) {
        const at = Math.min(urgent?.due ?? Number.POSITIVE_INFINITY, routineAt);
        if (at !== Number.POSITIVE_INFINITY) this.#arm(at);
        return;
      }
      // Runs queue for the budget inside their calls: a second's worth waiting (or about to) is enough.
      if (this.#budget.waiting + this.#starting >= this.#options.maxCallsPerSecond) return this.#arm(now + 1_000 / this.#options.maxCallsPerSecond);
      (next === urgent ? this.#urgent : this.#routine).pop();
      const player = next.owner;
      player.scheduled = false;
      // With a run in flight, the next is planned when it is done.
      if (player.running === undefined) this.#start(player);
    }
  }

  #start(player: Player): void {
    const fast = player.fast;
    const urgent = player.urgent;
    player.fast = false;
    player.urgent = false;
    player.joined = player.waiting.splice(0);
    const run = this.#run(player, fast, urgent);
    player.running = run;
    const settled = run.then(
      (report) => {
        for (const waiter of player.joined.splice(0)) waiter.resolve(report);
      },
      (error: unknown) => {
        for (const waiter of player.joined.splice(0)) waiter.reject(error);
      },
    );
    this.#running.add(settled);
    void settled.finally(() => {
      this.#running.delete(settled);
      if (player.running === run) player.running = undefined;
      if (this.#players.get(player.name) === player) this.#afterRun(player);
    });
  }

  /** One delivery for the player, on the engine, through the budget. */
  async #run(player: Player, fast: boolean, urgent: boolean): Promise<DeliveryReport> {
    const base = this.#host.via();
    // Until its first call asks the budget, this run counts as starting (the scheduler's gate).
    let starting = true;
    const asked = () => {
      if (starting) this.#starting -= 1;
      starting = false;
    };
    this.#starting += 1;
    const via: RunVia = {
      onEvent: base.onEvent,
      claim: async (name, options) => {
        const preview = options.preview === true;
        const turn = this.#budget.take(urgent || !preview, player.gone.signal);
        asked();
        await turn;
        if (this.#players.get(name) !== player) throw new Interrupted('left');
        this.#stats.calls += 1;
        if (preview) this.#stats.previews += 1;
        else this.#stats.claims += 1;
        player.lastCallAt = this.#timers.now();
        player.claimAhead = false;
        const result = await base.claim(name, options);
        // A preview that lists items: this run's claim follows one window later, and the
        // /claim typed meanwhile is answered by it rather than by a second run.
        if (preview && result.code === 'PREVIEW' && result.claims.length > 0) {
          player.claimAhead = true;
          player.joined.push(...player.waiting.splice(0));
          player.fast = false;
        }
        return result;
      },
    };
    const give = (item: DeliveredItem): unknown => {
      // Offline (or stopped) means no grant: the item stays pending for the next join, here or elsewhere.
      if (this.#players.get(player.name) !== player || this.#stopped) throw new Interrupted('left');
      return this.#options.give(item);
    };
    const sleep = (ms: number) => this.#sleep(ms, player.gone.signal);
    const options = { mode: fast ? 'fast' : 'exactlyOnce', sleep, maxRateLimitWaits: 1, ...(this.#options.grantTimeoutMs === undefined ? {} : { grantTimeoutMs: this.#options.grantTimeoutMs }) };
    let report: DeliveryReport;
    try {
      report = await this.#host.engine.deliver(via, player.name, give, options);
    } catch (error) {
      if (error instanceof Interrupted) throw error;
      this.#failed(player, error);
      throw error;
    } finally {
      asked();
      player.claimAhead = false;
    }
    this.#account(player, report);
    return report;
  }

  /** Counts a report, emits it, and sets the backoff from its error. */
  #account(player: Player, report: DeliveryReport): void {
    this.#stats.granted += report.granted.length;
    if (report.unverified !== undefined) this.#stats.unverified += 1;
    player.pending = report.pending;
    if (report.granted.length > 0 || report.failed.length > 0) this.#emit({ type: 'delivery', operation: 'startDeliveryLoop', playerName: player.name, report });
    const error = report.error ?? report.journalError;
    if (error !== undefined && (report.code === 'ERROR' || report.code === 'OUTCOME_UNKNOWN')) this.#failed(player, error);
    else if (report.code !== 'RATE_LIMIT') {
      this.#failures = 0;
      this.#paused = false;
    }
  }

  #failed(player: Player, error: unknown): void {
    player.failed = true;
    this.#stats.errors += 1;
    this.#stats.lastError = error;
    this.#failures += 1;
    const refused = isStorefrontError(error, 'AUTHENTICATION_FAILED');
    this.#paused = refused;
    // Full jitter, capped: a refused key waits much longer (it will not fix itself soon).
    const cap = refused ? REFUSED_KEY_CAP_MS : BACKOFF_CAP_MS;
    const ceiling = Math.min(cap, BACKOFF_BASE_MS * 2 ** Math.min(this.#failures, 20));
    this.#holdUntil = this.#timers.now() + (refused ? ceiling / 2 + (Math.random() * ceiling) / 2 : Math.random() * ceiling);
    this.#emit({ type: 'loopError', operation: 'startDeliveryLoop', playerName: player.name, error });
  }

  /** After a run: a follow-up soon when something is left to do, else the next routine poll. */
  #afterRun(player: Player): void {
    const now = this.#timers.now();
    if (player.waiting.length > 0 || player.fast) return this.#schedule(player, Math.max(now, player.lastCallAt + CLAIM_WINDOW_MS), true);
    const interval = this.#interval();
    const next = now + interval * (0.9 + 0.2 * Math.random());
    // Intents or lines left (a lost answer, a failed grant), or a run that failed: try again
    // once the window allows (routine: the backoff still holds it while the service is in trouble).
    const again = player.pending > 0 || player.failed;
    player.failed = false;
    const soon = again ? Math.max(now, player.lastCallAt) + CLAIM_WINDOW_MS : next;
    this.#schedule(player, Math.min(soon, next), false);
  }

  /** Waits `ms` on the loop's timers; the player's leaving or the loop's stop ends it. */
  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#timers.clearTimeout(handle);
        reject(signal.reason);
      };
      const handle = this.#timers.setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #emit(event: StorefrontEvent): void {
    try {
      this.#host.via().onEvent?.(event);
    } catch {
      // A listener's failure must not stop the loop.
    }
  }
}
