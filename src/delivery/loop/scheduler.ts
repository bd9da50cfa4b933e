/**
 * Automatic delivery ({@link StorefrontClient.startDeliveryLoop}): `deliver` run by a
 * scheduler. The loop previews each online player about every `pollIntervalMs` (TeamGames
 * has no "who has purchases" call); a preview that lists items becomes an exactly-once
 * delivery on the engine (journal, per-player order, reconcile and reports are the
 * engine's). The loop adds when to call, for whom (only players it was told are online),
 * and one budget of calls per second for everything it sends. What it knows of each
 * player is player.ts; `claimVote` is votes.ts.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isStorefrontError, LoopRunningError } from '../../errors.js';
import { checkPlayerName, fail } from '../../internal/validate.js';
import { CLAIM_WINDOW_MS } from '../../wire/claim.js';
import { CallBudget, platformTimers, sleepOn, type CallPriority, type LoopTimers } from './call-budget.js';
import { DueHeap, type DueEntry } from './due-heap.js';
import { checkLoopOptions, type CheckedLoopOptions, type LoopHost, type DeliveryLoop, type DeliveryLoopStats, type LoopClaimReport, type LoopVoteInput, type LoopVoteReport, type PlayerDeliveryStatus } from './types.js';
import { claimVoteInLoop, resumeVotesInLoop } from './votes.js';
import { checkHint, HintBook, type CheckoutHint, type CheckoutHintOutcome, type HeldHint } from './hints.js';
import { SharedHints } from './shared-hints.js';
import type { RunVia } from '../engine/index.js';
import { backingOff, blockingAfter, giveBackingOff, heldBack, Interrupted, newPlayer, statusOf, totalsOf, undelivered, type Player } from './player.js';
import { ERROR_MESSAGE, type DeliveredItem, type DeliveryCode, type DeliveryEvent, type DeliveryReport } from '../core/index.js';

export type { DeliveryLoop, DeliveryLoopOptions, LoopHost } from './types.js';

/** Of the budget, the share routine polls may plan on: the rest is for claims, joins and `/claim`. */
const POLL_SHARE = 0.8;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;
const REFUSED_KEY_CAP_MS = 600_000;
const STOP_BOUND_MS = 30_000;
/** The run the current async context belongs to: `stop()` from inside a `give` does not wait for it. */
const insideRun = new AsyncLocalStorage<object>();

/** Starts a loop on given timers (the simulation's virtual time), its options checked here. @internal */
export function startDeliveryLoop(host: LoopHost, options: unknown, timers: LoopTimers = platformTimers): DeliveryLoop {
  return new Loop(host, checkLoopOptions(options), timers);
}
/** Starts a loop on options checked already (start.ts checked them where they entered), for `owner`, the client's handle. @internal */
export function startCheckedLoop(host: LoopHost, options: CheckedLoopOptions, owner: object): DeliveryLoop {
  return new Loop(host, options, platformTimers, owner);
}

class Loop implements DeliveryLoop {
  readonly #host: LoopHost;
  readonly #options: CheckedLoopOptions;
  readonly #timers: LoopTimers;
  readonly #budget: CallBudget;
  readonly #hints: HintBook;
  /** The hints of a shared journal (written by a shop elsewhere with expectCheckout), read into #hints. */
  readonly #sharedHints: SharedHints | undefined;
  readonly #players = new Map<string, Player>();
  /** Due runs, a queue per priority: hinted players'; joins, `/claim` and follow-ups (urgent); routine polls. Entries may be stale. */
  readonly #due: Readonly<Record<CallPriority, DueHeap<Player>>> = { hinted: new DueHeap(), urgent: new DueHeap(), routine: new DueHeap() };
  /** Runs in flight, by the token their async context carries. */
  readonly #running = new Map<object, Promise<unknown>>();
  /** Runs started that have not asked the budget for their first call yet. */
  #starting = 0;
  readonly #stats = { calls: 0, previews: 0, claims: 0, granted: 0, unverified: 0, errors: 0, lastError: undefined as unknown };
  #timer: unknown;
  #timerAt = Number.POSITIVE_INFINITY;
  #stopping: Promise<void> | undefined;
  /** No routine run starts before this (network trouble, a refused key). */
  #holdUntil = 0;
  #failures = 0;
  #paused = false;

  /** What holds the journal's one-loop registration: this loop, or the client's handle on it. */
  readonly #owner: object;

  constructor(host: LoopHost, options: CheckedLoopOptions, timers: LoopTimers, owner?: object) {
    // One loop per journal in a process: two would poll every player twice, on two budgets.
    if (owner === undefined && host.engine.claimLoop(this) !== undefined) throw new LoopRunningError();
    this.#owner = owner ?? this;
    this.#host = host;
    this.#options = options;
    this.#timers = timers;
    this.#budget = new CallBudget(options.maxCallsPerSecond, timers);
    this.#hints = new HintBook(options.maxCallsPerSecond, (name, transactionId) => this.#sharedHints?.satisfied(name, transactionId));
    this.#sharedHints = SharedHints.start(
      host.engine.journal,
      timers,
      (name, hint, now) => this.#hold(name, hint, now),
      (name, transactionId, now) => this.#hints.end(name, transactionId, now),
      (error) => this.#emit({ type: 'sharedHintsError', operation: 'startDeliveryLoop', error }),
    );
    const { signal } = options;
    if (signal?.aborted) void this.stop();
    // A signal aborts once: its listener needs no `once`.
    else signal?.addEventListener('abort', () => void this.stop());
  }

  join(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    if (this.#stopping !== undefined || this.#players.has(name)) return;
    const player = newPlayer(name);
    this.#players.set(name, player);
    // A hinted player's first run, in the fast hint claim mode, is one claim call: their purchase
    // may be paid already, or claimed and not given yet (they left mid-delivery): it goes first.
    const now = this.#timers.now();
    this.#hints.back(name, now);
    const hinted = this.#hints.active(name, now) !== undefined || this.#hints.giving(name, now);
    player.fast = this.#options.hintClaimMode === 'fast' && hinted;
    this.#schedule(player, now, hinted ? 'hinted' : 'urgent');
  }

  leave(playerName: string): void {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    const player = this.#players.get(name);
    if (player === undefined) return;
    // Its planned runs are stale now: the scheduler skips entries of a player not in #players.
    this.#players.delete(name);
    this.#hints.left(name, this.#timers.now());
    player.gone.abort(new Interrupted('left'));
    // Whoever waits for this player's delivery learns at once that it will not come here.
    const report = undelivered('OFFLINE', player);
    for (const resolve of [...player.waiting.splice(0), ...player.joined.splice(0)]) resolve(report);
  }

  expect(playerName: string, hint?: CheckoutHint): CheckoutHintOutcome {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    return this.#hold(name, checkHint(hint, this.#timers.now()));
  }

  /** Holds a hint (given to expect, or read from a shared journal) and acts on it for a player held online here. */
  #hold(name: string, held: HeldHint, now = held.since): CheckoutHintOutcome {
    const player = this.#players.get(name);
    const outcome = this.#stopping === undefined ? this.#hints.add(name, held, now, player !== undefined) : 'stopped';
    // Acted on only for a player held online here; with a run in flight, once it is over. A run
    // planned already (a /claim's, queued behind others) becomes the hinted one; a hinted run
    // planned already stands: planning again would take a second place in the hints' share (a
    // hint read again at each poll of a shared journal, or sent again).
    if (outcome === 'held' && player !== undefined && player.running === undefined && !(player.scheduled && player.hinted)) this.#hinted(player, now);
    return outcome;
  }

  async claim(playerName: string): Promise<LoopClaimReport> {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    // A give (or onEvent) of this player's delivery waiting for the next one would wait for itself.
    if (this.#host.engine.holds(name)) {
      fail('playerName', `must not be the player of a delivery this call runs inside (a give calling loop.claim for ${JSON.stringify(name)} would wait for itself); give the item and return`, 'startDeliveryLoop');
    }
    if (this.#stopping !== undefined) return undelivered('STOPPED', undefined);
    const player = this.#players.get(name);
    // Only who is here: a claim never joins a player the game did not say is online.
    if (player === undefined) return undelivered('OFFLINE', undefined);
    // A delivery whose claim is still to come (a run in flight whose preview listed items) is the player's: join it.
    if (player.claimAhead) return new Promise<LoopClaimReport>((resolve) => player.joined.push(resolve));
    // Otherwise the next run (after the one in flight, if any) is this /claim's.
    const report = new Promise<LoopClaimReport>((resolve) => player.waiting.push(resolve));
    // Fast: one call when the service's window is open again. Exactly once: a preview then.
    player.fast = this.#options.claimMode === 'fast';
    this.#schedule(player, Math.max(this.#timers.now(), player.lastCallAt + CLAIM_WINDOW_MS), 'urgent');
    return report;
  }

  async claimVote(playerName: string, input: LoopVoteInput): Promise<LoopVoteReport> {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    const giveVote = this.#options.giveVoteReward;
    const votes = this.#host.votes;
    if (giveVote === undefined || votes === undefined) fail('options.giveVoteReward', 'must be given to startDeliveryLoop to use claimVote: (reward) => void | Promise<void>', 'startDeliveryLoop');
    if (this.#host.engine.holds(name)) {
      fail('playerName', `must not be the player of a delivery this call runs inside (a give calling loop.claimVote for ${JSON.stringify(name)} would wait for itself); give the item and return`, 'startDeliveryLoop');
    }
    if (this.#stopping !== undefined) return undelivered('STOPPED', undefined);
    const player = this.#players.get(name);
    if (player === undefined) return undelivered('OFFLINE', undefined);
    // Stopped: the players are cleared once the runs in flight are done.
    const here = () => this.#players.get(name) === player;
    const call = async () => {
      await this.#budget.take('urgent', player.gone.signal);
      this.#stats.calls += 1;
    };
    return claimVoteInLoop({ player, here, call, plan: (at) => this.#schedule(player, at, 'routine'), votes, give: giveVote, grantTimeoutMs: this.#options.grantTimeoutMs, staffAfterAttempts: this.#options.staffAfterAttempts, now: () => this.#timers.now() }, input);
  }

  stats(): DeliveryLoopStats {
    const { pending, blocked, backingOff } = totalsOf(this.#players.values(), this.#timers.now());
    const { calls, previews, claims, granted, unverified, errors, lastError } = this.#stats;
    return { online: this.#players.size, hints: this.#hints.size, sharedHintsError: this.#sharedHints?.lastError, calls, previews, claims, granted, pending, unverified, errors, lastError, intervalMs: this.#interval(), maxCallsInOneSecond: this.#budget.maxInOneSecond, paused: this.#paused, blocked, backingOff };
  }

  async status(playerName: string): Promise<PlayerDeliveryStatus> {
    const name = checkPlayerName(playerName, 'playerName', 'startDeliveryLoop');
    const { engine } = this.#host;
    let entries;
    let journalError: PlayerDeliveryStatus['journalError'];
    try {
      entries = await engine.entriesOf(name);
    } catch (error) {
      journalError = this.#host.engine.journalErrorOf(error, this.#host.via().redact);
      entries = engine.remembered(name);
    }
    // Read after the journal: the player may have joined or left meanwhile.
    const player = this.#players.get(name);
    const startAt = player?.scheduled === true && player.running === undefined ? this.#startAt(player) : undefined;
    return statusOf(name, player, entries, { wall: engine.wallNow(), mono: this.#timers.now(), startAt }, journalError);
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    // Every LoopTimers takes an undefined handle; nothing arms the timer again once stopping.
    this.#timers.clearTimeout(this.#timer);
    this.#sharedHints?.stop();
    const stopped = new Interrupted('stopped');
    this.#budget.rejectAll(stopped);
    for (const player of this.#players.values()) {
      player.gone.abort(stopped);
      // Callers of the runs in flight get their reports; those waiting for a next run, STOPPED.
      const report = undelivered('STOPPED', player);
      for (const resolve of player.waiting.splice(0)) resolve(report);
    }
    // Deliveries in flight finish their grants (each bounded by grantTimeoutMs); the wait is
    // bounded too, and never waits for the delivery stop() was called from (a give).
    const self = insideRun.getStore();
    const others = [...this.#running].filter(([token]) => token !== self).map(([, settled]) => settled);
    let bound: unknown;
    await Promise.race([Promise.allSettled(others), new Promise<void>((resolve) => (bound = this.#timers.setTimeout(resolve, STOP_BOUND_MS)))]);
    this.#timers.clearTimeout(bound);
    for (const player of this.#players.values()) {
      const report = undelivered('STOPPED', player);
      for (const resolve of player.joined.splice(0)) resolve(report);
    }
    this.#players.clear();
    this.#hints.clear();
    for (const heap of Object.values(this.#due)) heap.clear();
    this.#host.engine.releaseLoop(this.#owner);
  }

  /** The poll interval in force: stretched evenly when the budget cannot cover every player. */
  #interval(): number {
    const needed = Math.ceil((this.#players.size * 1_000) / (this.#options.maxCallsPerSecond * POLL_SHARE));
    return Math.max(this.#options.pollIntervalMs, needed);
  }

  /** When the player's planned run may start (a routine one waits out the loop's backoff). */
  #startAt(player: Player): number {
    return player.urgent ? player.due : Math.max(player.due, this.#holdUntil);
  }

  /** Plans the player's next run at `at`, in the budget's queue of its priority (a hinted run is urgent too). */
  #schedule(player: Player, at: number, priority: CallPriority): void {
    if (this.#stopping !== undefined) return;
    const hinted = priority === 'hinted';
    // An urgent run already planned stays: it is never later than a new one (the clock and
    // lastCallAt only move forward), and a routine plan is only made by #afterRun, when no
    // plan but an urgent one (a /claim during the run) can exist. A hint makes it hinted, at
    // its time.
    if (player.scheduled && player.urgent) {
      if (player.hinted || !hinted) return;
      at = Math.min(at, player.due);
    }
    // Stryker disable next-line AssignmentOperator: any new value marks the older entries stale; counting down does too
    player.version += 1;
    player.due = at;
    player.urgent = priority !== 'routine';
    player.hinted = hinted;
    player.scheduled = true;
    this.#due[priority].push(at, player);
    this.#arm(this.#startAt(player));
  }

  /** Wakes the scheduler at `at` (or sooner, if it is already set sooner). Never called once stopping: #schedule returns then, and #tick loops only before. */
  #arm(at: number): void {
    if (at >= this.#timerAt) return;
    this.#timers.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#tick();
    }, Math.max(0, at - this.#timers.now()));
  }

  /**
   * Starts the runs that are due (hinted players' first, then urgent ones), as the budget
   * allows, and sleeps until the next. A hinted run is not held back by the budget's queue:
   * the hint book plans no more of them in a second than their share of the budget, and the
   * budget serves them first.
   */
  #tick(): void {
    const live = (entry: DueEntry<Player>) => this.#players.get(entry.owner.name) === entry.owner;
    while (this.#stopping === undefined) {
      const now = this.#timers.now();
      const hinted = this.#due.hinted.peek(live);
      if (hinted !== undefined && hinted.due <= now) {
        this.#due.hinted.pop();
        this.#startPlanned(hinted.owner);
        continue;
      }
      const urgent = this.#due.urgent.peek(live);
      const routine = this.#due.routine.peek(live);
      const routineAt = routine === undefined ? Number.POSITIVE_INFINITY : Math.max(routine.due, this.#holdUntil);
      let next: DueEntry<Player> | undefined;
      if (urgent !== undefined && urgent.due <= now) next = urgent;
      // routineAt is finite only for a routine entry.
      else if (routineAt <= now) {
        // In trouble, one routine run at a time probes the service; the others wait for its outcome.
        if (this.#failures > 0 && this.#running.size > 0) return this.#arm(Math.min(urgent?.due ?? Number.POSITIVE_INFINITY, now + BACKOFF_BASE_MS));
        next = routine;
      }
      // Nothing due: sleep until the next (#arm leaves the timer as it is when there is none).
      if (next === undefined) return this.#arm(Math.min(hinted?.due ?? Number.POSITIVE_INFINITY, urgent?.due ?? Number.POSITIVE_INFINITY, routineAt));
      // Runs queue for the budget inside their calls: a second's worth waiting (or about to) is enough.
      if (this.#budget.waiting + this.#starting >= this.#options.maxCallsPerSecond) return this.#arm(Math.min(hinted?.due ?? Number.POSITIVE_INFINITY, now + 1_000 / this.#options.maxCallsPerSecond));
      (next === urgent ? this.#due.urgent : this.#due.routine).pop();
      this.#startPlanned(next.owner);
    }
  }

  /** A planned run is due: it starts, unless a run is in flight (the next is planned when that one is done). */
  #startPlanned(player: Player): void {
    player.scheduled = false;
    if (player.running === undefined) this.#start(player);
  }

  #start(player: Player): void {
    const fast = player.fast;
    const priority: CallPriority = player.hinted ? 'hinted' : player.urgent ? 'urgent' : 'routine';
    player.fast = false;
    player.joined = player.waiting.splice(0);
    const token = {};
    // Never rejects: every way a run ends is a report (OFFLINE, STOPPED and ERROR included).
    const run = insideRun.run(token, () => this.#run(player, fast, priority));
    player.running = run;
    const settled = run.then((report) => {
      for (const resolve of player.joined.splice(0)) resolve(report);
    });
    this.#running.set(token, settled);
    void settled.finally(() => {
      this.#running.delete(token);
      // A player's next run starts only once this one is over (#tick): the run in flight is this one.
      player.running = undefined;
      if (this.#players.get(player.name) === player) this.#afterRun(player);
    });
  }

  /** One delivery for the player, on the engine, through the budget; always a report. */
  async #run(player: Player, fast: boolean, priority: CallPriority): Promise<LoopClaimReport> {
    const base = this.#host.via();
    // Until its first call asks the budget, this run counts as starting (the scheduler's gate).
    let starting = true;
    const asked = () => {
      if (starting) this.#starting -= 1;
      starting = false;
    };
    this.#starting += 1;
    const via: RunVia = {
      ...base,
      claim: async (name, options) => {
        const preview = options.preview === true;
        // A claim (the second call of a preview and a claim, or a one-call claim) is at least urgent.
        const turn = this.#budget.take(preview || priority === 'hinted' ? priority : 'urgent', player.gone.signal);
        asked();
        await turn;
        // Stryker disable next-line StringLiteral: the run of a player who left reports to no one (leave() answered its callers OFFLINE)
        if (this.#players.get(name) !== player) throw new Interrupted('left');
        this.#stats.calls += 1;
        if (preview) this.#stats.previews += 1;
        else this.#stats.claims += 1;
        player.claimAhead = false;
        // Timed from the answer (or failure), as the client's guard does: the service's window opened before, so a call at its edge is never early.
        const result = await base.claim(name, options).finally(() => (player.lastCallAt = this.#timers.now()));
        this.#hints.answered(name, result, this.#timers.now());
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
    const sleep = (ms: number) => sleepOn(this.#timers, ms, player.gone.signal);
    // Checked when the loop started: carried to the engine as they are.
    const control = { signal: undefined, sleep, maxWaits: 1, grantTimeoutMs: this.#options.grantTimeoutMs };
    // A line is left for later, untouched (no give, no failure noted), while its backoff
    // holds or once the player is gone.
    const defer = (line: { deliveryId: string }) => this.#players.get(player.name) !== player || backingOff(player, line.deliveryId, this.#timers.now());
    const extras = { defer, staffAfterAttempts: this.#options.staffAfterAttempts, retriedByLoop: true };
    let report: DeliveryReport;
    try {
      report = await this.#host.engine.deliverChecked(via, player.name, (item: DeliveredItem) => this.#give(player, item), fast ? 'fast' : 'exactlyOnce', control, extras);
      // After the purchases: the vote reward rows a crash or a failed give left (at the join; then as their give backoff allows).
      player.votesResumed = await resumeVotesInLoop({ player, here: () => this.#players.get(player.name) === player, give: this.#options.giveVoteReward, votes: this.#host.votes, grantTimeoutMs: this.#options.grantTimeoutMs, staffAfterAttempts: this.#options.staffAfterAttempts, now: () => this.#timers.now() });
    } catch (error) {
      // Left or stopped: only stop()'s callers read this report (leave() answered a player's callers OFFLINE).
      if (error instanceof Interrupted) return undelivered('STOPPED', player);
      this.#failed(player, error);
      return { code: 'ERROR', granted: [], failed: [], pending: player.pending, message: ERROR_MESSAGE, ...(isStorefrontError(error) ? { error } : {}) };
    } finally {
      asked();
      player.claimAhead = false;
    }
    this.#account(player, report);
    return report;
  }

  /**
   * The game's `give`, for a player still here; its failures back the item off. Offline (or
   * stopped) means no grant: the engine asks `defer` in the same turn, right before each give,
   * so a player gone has the item left pending for the next join, here or elsewhere.
   */
  #give(player: Player, item: DeliveredItem): unknown {
    return giveBackingOff(player, this.#options.give, item, () => this.#timers.now());
  }

  /** Counts a report, emits it, tracks a blocked player, and sets the backoff from its error. */
  #account(player: Player, report: DeliveryReport): void {
    this.#stats.granted += report.granted.length;
    if (report.unverified !== undefined) this.#stats.unverified += 1;
    player.pending = report.pending;
    if (report.granted.length > 0 || report.failed.length > 0) this.#emit({ type: 'delivery', operation: 'startDeliveryLoop', playerName: player.name, report });
    this.#blocking(player, report.code);
    // The engine's ERROR report carries its error (or the journal's), its OUTCOME_UNKNOWN one the error.
    if (report.code === 'ERROR' || report.code === 'OUTCOME_UNKNOWN') this.#failed(player, report.error ?? report.journalError);
    else if (report.code !== 'RATE_LIMIT') {
      player.lastError = undefined;
      this.#failures = 0;
      this.#paused = false;
    }
  }

  /** A player whose runs keep delivering nothing for a blocking code is reported once, and again once it clears. */
  #blocking(player: Player, code: DeliveryCode): void {
    const change = blockingAfter(player, code, this.#host.engine.wallNow());
    if (change === 'unblocked') this.#emit({ type: 'playerUnblocked', operation: 'startDeliveryLoop', playerName: player.name });
    else if (change === 'blocked') this.#emit({ type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: player.name, code, runs: player.blockedRuns });
  }

  #failed(player: Player, error: unknown): void {
    player.failed = true;
    player.lastError = error;
    this.#stats.errors += 1;
    this.#stats.lastError = error;
    this.#failures += 1;
    const refused = isStorefrontError(error, 'AUTHENTICATION_FAILED');
    this.#paused = refused;
    // Full jitter, capped: a refused key waits much longer (it will not fix itself soon).
    const cap = refused ? REFUSED_KEY_CAP_MS : BACKOFF_CAP_MS;
    // 2 ** failures grows to Infinity, and the cap holds.
    const ceiling = Math.min(cap, BACKOFF_BASE_MS * 2 ** this.#failures);
    this.#holdUntil = this.#timers.now() + (refused ? ceiling / 2 + (Math.random() * ceiling) / 2 : Math.random() * ceiling);
    this.#emit({ type: 'loopError', operation: 'startDeliveryLoop', playerName: player.name, error });
  }

  /** After a run: a follow-up soon when something is left to do, else the next routine poll. */
  #afterRun(player: Player): void {
    const now = this.#timers.now();
    if (player.waiting.length > 0 || player.fast) {
      this.#schedule(player, Math.max(now, player.lastCallAt + CLAIM_WINDOW_MS), 'urgent');
      // A live hint makes it the hinted run: a /claim's run queued behind others goes first then.
      this.#hinted(player, now);
      return;
    }
    if (this.#hinted(player, now)) return;
    const interval = this.#interval();
    const next = now + interval * (0.9 + 0.2 * Math.random());
    // Items whose give failed wait for their own time; the run that gives them again comes then.
    const { held, retry } = heldBack(player, now);
    // Intents or lines left (a lost answer, a journal in trouble), or a run that failed: try
    // again once the window allows (routine: the backoff still holds it while the service is in trouble).
    const again = player.pending > held || player.failed;
    player.failed = false;
    const soon = again ? Math.max(now, player.lastCallAt) + CLAIM_WINDOW_MS : next;
    // A hinted purchase claimed and not given yet (its give failed): the run that gives it is
    // a hinted one, at its time, while the hint would have lived. Nothing pending: it was given,
    // and no give is planned.
    if (player.pending === 0) this.#hints.given(player.name);
    const giveAt = this.#hints.planGive(player.name, Math.min(soon, retry), now);
    if (giveAt !== undefined) {
      player.fast = this.#options.hintClaimMode === 'fast';
      return this.#schedule(player, giveAt, 'hinted');
    }
    this.#schedule(player, Math.min(soon, next, retry), 'routine');
  }

  /**
   * A hinted player: a run each window, in the loop's hint claim mode (exactly once: a preview, and
   * the claim a window later once it lists items; fast: one claim call), until the purchase
   * arrives or the hint expires.
   */
  #hinted(player: Player, now: number): boolean {
    const at = this.#hints.planAt(player.name, player.lastCallAt, now);
    if (at === undefined) return false;
    player.fast = this.#options.hintClaimMode === 'fast';
    this.#schedule(player, at, 'hinted');
    return true;
  }

  #emit(event: DeliveryEvent): void {
    try {
      // Stryker disable next-line OptionalChaining: without a listener the call throws a TypeError, which the catch below ignores as it ignores a listener's own
      this.#host.via().onEvent?.(event);
    } catch {
      // A listener's failure must not stop the loop.
    }
  }
}
