/**
 * What the staff page knows that the journal does not keep: the last gives (the journal
 * forgets a line once it is acknowledged), what the store and the journal last answered
 * (from the client's events), and pending items and open windows sampled over time for the
 * health chart. Fed by the bridge (its gives and its client's events), bounded, with one
 * timer (unref'd, cleared by `stop()`).
 *
 * @module
 * @internal
 */
import type { DeliveredItem, DeliveryLoopStats, GivenVoteReward, StorefrontEvent } from '../../index.js';

/** One give to the game, as the page lists it. */
export interface RecentGive {
  kind: 'purchase' | 'vote';
  player: string;
  deliveryId: string;
  /** Product or reward name. */
  what: string;
  /** Units (`quantity_to_grant`) or the reward's `give_amount`. */
  units: number;
  outcome: 'given' | 'failed';
  /** The failure's message. */
  error?: string;
  /** Wall clock, epoch ms (for display). */
  at: number;
}

/** The bridge's give functions, as the desk wraps them. */
export interface Gives {
  give(item: DeliveredItem): Promise<void>;
  giveVoteReward(reward: GivenVoteReward): Promise<void>;
}

/** One point of the chart. */
export interface Sample {
  at: number;
  pending: number;
  openWindows: number;
}

/** The last thing a dependency answered. */
export interface Signal {
  /** Wall clock of the last good answer, epoch ms. */
  okAt?: number;
  /** Wall clock and message of the last failure. */
  failedAt?: number;
  failure?: string;
}

const MAX_RECENT = 1_000;
const MAX_BLOCKED = 10_000;
/** A day of samples, one a minute. */
const MAX_SAMPLES = 24 * 60;
const SAMPLE_EVERY_MS = 60_000;
/** The open windows are counted from the journal every 5 samples (5 minutes): a big journal is not read every minute. */
export const COUNT_EVERY = 5;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The page's memory; see the module. */
export class StaffDesk {
  readonly recent: RecentGive[] = [];
  readonly samples: Sample[] = [];
  readonly store: Signal = {};
  readonly journal: Signal = {};
  readonly game: Signal = {};
  /** Players the loop reported blocked and not unblocked since, with the code and when (wall clock); at most 10,000. */
  readonly blocked = new Map<string, { code: string; runs: number; at: number }>();
  /** Open windows as last counted (by the page or the sampler). */
  openWindows = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #counting = false;

  constructor(readonly now: () => number = Date.now) {}

  /** The client's events: the store answered, a call failed, the journal failed. */
  event(event: StorefrontEvent): void {
    const at = this.now();
    if (event.type === 'response') {
      if (event.status < 500) this.store.okAt = at;
      else Object.assign(this.store, { failedAt: at, failure: `HTTP ${event.status}` });
    } else if (event.type === 'retry') Object.assign(this.store, { failedAt: at, failure: String(event.reason) });
    else if (event.type === 'journalError') Object.assign(this.journal, { failedAt: at, failure: message(event.error) });
    else if (event.type === 'playerBlocked') {
      this.blocked.delete(event.playerName);
      if (this.blocked.size >= MAX_BLOCKED) this.blocked.delete(this.blocked.keys().next().value as string);
      this.blocked.set(event.playerName, { code: event.code, runs: event.runs, at });
    } else if (event.type === 'playerUnblocked') this.blocked.delete(event.playerName);
  }

  /** A read or write of the journal went through. */
  journalOk(): void {
    this.journal.okAt = this.now();
  }

  #push(give: RecentGive): void {
    if (this.recent.length >= MAX_RECENT) this.recent.shift();
    this.recent.push(give);
    if (give.outcome === 'given') this.game.okAt = give.at;
    else Object.assign(this.game, { failedAt: give.at, failure: give.error });
  }

  /** The bridge's give functions, each give recorded (its outcome and error passed on as they were). */
  recording(gives: Gives): Gives {
    const track = async <T>(run: () => Promise<void>, base: Omit<RecentGive, 'outcome' | 'at' | 'error'>) => {
      try {
        await run();
        this.#push({ ...base, outcome: 'given', at: this.now() });
      } catch (error) {
        this.#push({ ...base, outcome: 'failed', error: message(error), at: this.now() });
        throw error;
      }
    };
    return {
      give: (item: DeliveredItem) => track(() => gives.give(item), { kind: 'purchase', player: item.player_name, deliveryId: item.deliveryId, what: item.product_name, units: item.quantity_to_grant }),
      giveVoteReward: (reward: GivenVoteReward) => track(() => gives.giveVoteReward(reward), { kind: 'vote', player: reward.playerName, deliveryId: reward.deliveryId, what: reward.reward_name, units: reward.give_amount }),
    };
  }

  /** One sample now. */
  sample(stats: DeliveryLoopStats): void {
    if (this.samples.length >= MAX_SAMPLES) this.samples.shift();
    this.samples.push({ at: this.now(), pending: stats.pending, openWindows: this.openWindows });
  }

  /**
   * Samples once a minute (and once now); `countOpenWindows`, when given, reads the journal
   * for the open windows every {@link COUNT_EVERY} samples (a failed count keeps the last).
   */
  start(stats: () => DeliveryLoopStats, countOpenWindows?: () => Promise<number>): void {
    let turn = 0;
    const tick = () => {
      if (countOpenWindows !== undefined && turn++ % COUNT_EVERY === 0 && !this.#counting) {
        this.#counting = true;
        countOpenWindows().then(
          (count) => {
            this.openWindows = count;
            this.#counting = false;
          },
          () => {
            this.#counting = false;
          },
        );
      }
      this.sample(stats());
    };
    tick();
    this.#timer = setInterval(tick, SAMPLE_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
