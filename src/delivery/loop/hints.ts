/**
 * The checkout hint ({@link DeliveryLoop.expect}): a web shop tells the loop that a player
 * just checked out, and the loop spends that player's 10 s window on a claim as often as
 * the service allows until the purchase arrives or the hint expires. What a hint is
 * (its public type and its check), and the book of hints the loop holds: one per player,
 * bounded in time, in number and in calls. No scheduling here: loop.ts plans the runs.
 *
 * @module
 * @internal
 */
import { checkCheckoutHint, HINT_LIMIT, HINT_MAX_MS } from '../../journals/checkout-hints.js';
import { CLAIM_WINDOW_MS, type ClaimResult } from '../../wire/claim.js';

export type { CheckoutHint } from '../../journals/checkout-hints.js';
export { HINT_DEFAULT_MS, HINT_LIMIT, HINT_MAX_MS } from '../../journals/checkout-hints.js';

/**
 * What {@link DeliveryLoop.expect} did with a hint:
 * - `held`: kept (joined to the player's hint, if any: its transaction added, its expiry the
 *   later of the two); acted on while the loop holds the player online, until it is
 *   satisfied or expires;
 * - `full`: refused, the loop already holds as many hints as it keeps (10,000);
 * - `expired`: refused, what it names already had its hint in the last hour (delivered, or
 *   its hint expired): a hint sent again and again never keeps a player claimed for ever;
 * - `stopped`: refused, the loop stopped.
 *
 * @example
 * ```ts
 * const outcome: CheckoutHintOutcome = loop.expect('Player123', { transactionId });
 * if (outcome !== 'held') log.warn(`checkout hint not held (${outcome}): the purchase comes with the routine polls`);
 * ```
 */
export type CheckoutHintOutcome = 'held' | 'full' | 'expired' | 'stopped';

/** A hint once checked: when it expires on the loop's monotonic clock. */
export interface HeldHint {
  /** The transactions still expected (the latest `TRANSACTIONS_PER_PLAYER`); empty with `any`. */
  transactionIds: string[];
  /** A hint named no transaction: any delivery satisfies it. */
  any: boolean;
  /** When it was given (the latest), monotonic ms. */
  since: number;
  /** When it expires, monotonic ms (while the player is away, as it stood when they left). */
  until: number;
  /** Since when the player has not been online here (monotonic), if they are not: the hint's life does not run meanwhile. */
  away?: number;
}

/** The transactions one player's hint waits for at most: a player checking out again and again adds, never grows memory. */
const TRANSACTIONS_PER_PLAYER = 8;

/** For the first 5 minutes a hinted player is claimed every window (10 s); then every 20 s. */
const HOT_MS = 300_000;
const COOL_CADENCE_MS = 20_000;
/**
 * Of `maxCallsPerSecond`, the share hinted claims may spend: at most
 * `floor(maxCallsPerSecond × HINT_SHARE)` (at least 1) hinted runs are planned in any one
 * second of the clock, so a flood of hints for online players waits its turn and routine
 * polls keep the rest of the budget.
 */
export const HINT_SHARE = 0.3;

/** Checks a hint given to `expect` (the rules every path of a hint shares); `now` is the loop's monotonic clock. */
export function checkHint(hint: unknown, now: number): HeldHint {
  const { transactionId, expiresInMs } = checkCheckoutHint(hint, 'startDeliveryLoop');
  return { transactionIds: transactionId === undefined ? [] : [transactionId], any: transactionId === undefined, since: now, until: now + expiresInMs };
}

/** The hints a loop holds, one per player, and the pace of hinted claims. */
export class HintBook {
  readonly #held = new Map<string, HeldHint>();
  /**
   * What hints ended (a transaction, or a player's hint naming none), and when (monotonic):
   * a hint for them is refused for an hour after, so that the same hint sent again and
   * again never keeps a player claimed past a hint's life. At most `HINT_LIMIT`, oldest first.
   */
  readonly #spent = new Map<string, number>();
  /**
   * The players whose hinted purchase a claim delivered (their hint ended) while it may not be
   * in their hands yet (its give failed, they left mid-delivery): until when (the hint's
   * expiry, monotonic) the run that gives it is a hinted one. At most `HINT_LIMIT`, oldest first.
   */
  readonly #giving = new Map<string, { until: number; since: number; away?: number | undefined }>();
  /** Hinted runs planned per second of the clock (`floor(ms / 1000)`), for the seconds to come. */
  readonly #planned = new Map<number, number>();
  /** Every second from the current one up to this one (excluded) is full: plans start here at the earliest. */
  #cursor = Number.NEGATIVE_INFINITY;
  /** The seconds before this one are dropped from `#planned`. */
  #swept = Number.NEGATIVE_INFINITY;
  readonly #perSecond: number;
  /**
   * While the book is full: no held hint expires before this (the earliest expiry the last
   * sweep saw), so a flood of hints refused as full costs no sweep of all 10,000 each.
   * Reset whenever a hint is held anew.
   */
  #noSweepBefore = Number.NEGATIVE_INFINITY;

  /** Told of what a delivery satisfied: the player, and the transaction (`undefined`: the hint naming none). */
  readonly #onSatisfied: (name: string, transactionId: string | undefined) => void;

  constructor(maxCallsPerSecond: number, onSatisfied: (name: string, transactionId: string | undefined) => void) {
    this.#perSecond = Math.max(1, Math.floor(maxCallsPerSecond * HINT_SHARE));
    this.#onSatisfied = onSatisfied;
  }

  /** How many hints are held. */
  get size(): number {
    return this.#held.size;
  }

  /** How many seconds have hinted runs planned (used by tests only: the seconds gone by are forgotten). */
  get plannedSeconds(): number {
    return this.#planned.size;
  }

  /**
   * Holds the hint (joined to the player's live one); refused when the book is full of live
   * hints, or when all it names has had its hint. `now` is the loop's clock (a hint read from
   * a shared journal was given before it: its `since`).
   */
  add(name: string, given: HeldHint, now: number, online: boolean): CheckoutHintOutcome {
    const ids = given.transactionIds.filter((id) => !this.#wasSpent(id, now));
    if (ids.length === 0 && (!given.any || this.#wasSpent(anyKey(name), now))) return 'expired';
    const older = this.active(name, now);
    if (older === undefined && this.#held.size >= HINT_LIMIT) {
      if (now >= this.#noSweepBefore) this.#sweep(now);
      if (this.#held.size >= HINT_LIMIT) return 'full';
    }
    let hint: HeldHint = { ...given, transactionIds: ids, ...(online ? {} : { away: now }) };
    if (older !== undefined) {
      // Only what the hint does not hold yet extends it: the same hint sent again and again
      // (a retrying shop, a loop in its code) never keeps a player claimed past its life.
      const fresh = ids.filter((id) => !older.transactionIds.includes(id));
      if (fresh.length === 0 && (older.any || !given.any)) return 'held';
      // Joined into the live hint (its time away, if the player is away, kept).
      older.transactionIds = [...older.transactionIds, ...fresh].slice(-TRANSACTIONS_PER_PLAYER);
      older.any ||= given.any;
      older.since = now;
      older.until = Math.max(older.until, given.until);
      hint = older;
    }
    // Deleted first: the map's order stays the order hints were given in.
    this.#held.delete(name);
    this.#held.set(name, hint);
    this.#noSweepBefore = Number.NEGATIVE_INFINITY;
    return 'held';
  }

  /** The player's live hint at `now`; an expired one is dropped. */
  active(name: string, now: number): HeldHint | undefined {
    const hint = this.#held.get(name);
    if (hint === undefined) return undefined;
    resume(hint, now, hint.since);
    if (hint.until > now) return hint;
    this.#end(name, hint, now);
    return undefined;
  }

  /**
   * The player left: their hint's life (and that of a hinted purchase claimed, not given yet)
   * stops running until they are back. A checkout on the website while away, paid while
   * away, still finds its hint at the join, however long that takes (within the hour).
   */
  left(name: string, now: number): void {
    const hint = this.active(name, now);
    if (hint !== undefined) hint.away = now;
    // One already over stays over (resume() never moves an end that came before the absence).
    const giving = this.#giving.get(name);
    if (giving !== undefined) giving.away = now;
  }

  /** The player is online here again: their hint's life runs on from where it stood when they left. */
  back(name: string, now: number): void {
    const hint = this.#held.get(name);
    if (hint !== undefined) {
      resume(hint, now, hint.since);
      delete hint.away;
    }
    const giving = this.#giving.get(name);
    if (giving !== undefined) {
      resume(giving, now, giving.since);
      delete giving.away;
    }
  }

  /**
   * When the hinted player's next claim should start (monotonic), or `undefined` without a
   * live hint: a window after the last call's answer (20 s once the hint is 5 minutes old),
   * in the first second from then that the hint share leaves room in.
   */
  planAt(name: string, lastCallAt: number, now: number): number | undefined {
    const hint = this.active(name, now);
    if (hint === undefined) return undefined;
    const cadence = now - hint.since < HOT_MS ? CLAIM_WINDOW_MS : COOL_CADENCE_MS;
    const at = this.#book(Math.max(now, lastCallAt + cadence), hint.until, now);
    // Past its expiry: no more claims for it.
    if (at === undefined) this.#end(name, hint, now);
    return at;
  }

  /**
   * When the run that gives the player's hinted purchase (claimed, not in their hands yet)
   * should start, from `earliest` (its give's backoff, a window after the last call), in the
   * hint share; `undefined` when no such purchase is known, or once the hint's life is over.
   */
  planGive(name: string, earliest: number, now: number): number | undefined {
    const until = this.#giving.get(name)?.until;
    const at = until === undefined ? undefined : this.#book(Math.max(now, earliest), until, now);
    if (at === undefined) this.#giving.delete(name);
    return at;
  }

  /** Whether the player has a hinted purchase claimed and not given yet (their join's run is then hinted). */
  giving(name: string, now: number): boolean {
    const giving = this.#giving.get(name);
    if (giving === undefined) return false;
    if (giving.until > now) return true;
    this.#giving.delete(name);
    return false;
  }

  /** The player has nothing pending any more: their hinted purchase is in their hands. */
  given(name: string): void {
    this.#giving.delete(name);
  }

  /** Books a hinted run in the first second from `at` the share leaves room in: that moment, or `undefined` (nothing booked) when it is `until` or later. */
  #book(at: number, until: number, now: number): number | undefined {
    this.#sweepPlanned(Math.floor(now / 1_000));
    // The first second from `at` with room; the full ones before the cursor are skipped at once.
    let second = Math.max(Math.floor(at / 1_000), this.#cursor);
    while (this.#full(second)) second += 1;
    if (second > Math.floor(at / 1_000)) at = second * 1_000;
    if (at >= until) return undefined;
    this.#planned.set(second, (this.#planned.get(second) ?? 0) + 1);
    while (this.#full(this.#cursor)) this.#cursor += 1;
    return at;
  }

  #full(second: number): boolean {
    return (this.#planned.get(second) ?? 0) >= this.#perSecond;
  }

  /** Forgets the seconds gone by (one by one, or the whole map after a long idle time). */
  #sweepPlanned(current: number): void {
    if (current - this.#swept > this.#planned.size) {
      for (const second of this.#planned.keys()) if (second < current) this.#planned.delete(second);
    } else {
      for (let second = this.#swept; second < current; second++) this.#planned.delete(second);
    }
    this.#swept = Math.max(this.#swept, current);
    this.#cursor = Math.max(this.#cursor, current);
  }

  /** A claim for the player was answered (`now` monotonic): the hint is satisfied once every purchase it names (or, naming none, any) is delivered. */
  answered(name: string, result: ClaimResult, now: number): void {
    const hint = this.#held.get(name);
    if (hint === undefined || result.code !== 'SUCCESS' || result.claims.length === 0) return;
    const rows = result.rawTransactions;
    // Without the raw rows (an answer that left them out) the transactions cannot be told apart: the delivery ends the hint.
    if (hint.any || rows === undefined) {
      this.#claimed(name, hint);
      this.#end(name, hint, now);
      for (const id of hint.transactionIds) this.#onSatisfied(name, id);
      if (hint.any) this.#onSatisfied(name, undefined);
      return;
    }
    const delivered = new Set(rows.map((row) => String(row.transactionid)));
    const done = hint.transactionIds.filter((id) => delivered.has(id));
    if (done.length === 0) return;
    this.#claimed(name, hint);
    for (const id of done) this.#spend(id, now);
    hint.transactionIds = hint.transactionIds.filter((id) => !delivered.has(id));
    if (hint.transactionIds.length === 0) this.#held.delete(name);
    for (const id of done) this.#onSatisfied(name, id);
  }

  /**
   * Ends what a player's hint names, satisfied elsewhere (its row gone from a shared
   * journal: another node delivered it): the transaction, or (`undefined`) the naming of
   * none. What it named is spent, as if delivered here.
   */
  end(name: string, transactionId: string | undefined, now: number): void {
    const hint = this.#held.get(name);
    if (hint === undefined) return;
    if (transactionId === undefined) {
      if (!hint.any) return;
      hint.any = false;
      this.#spend(anyKey(name), now);
    } else {
      if (!hint.transactionIds.includes(transactionId)) return;
      hint.transactionIds = hint.transactionIds.filter((id) => id !== transactionId);
      this.#spend(transactionId, now);
    }
    if (!hint.any && hint.transactionIds.length === 0) this.#held.delete(name);
  }

  /** A claim delivered (some of) what the hint named: until it is given, the player's runs stay hinted, within the hint's life. */
  #claimed(name: string, hint: HeldHint): void {
    this.#giving.delete(name);
    // A claim answered once the player left (it was in flight): its life waits for them too.
    this.#giving.set(name, { until: hint.until, since: hint.since, away: hint.away });
    if (this.#giving.size > HINT_LIMIT) this.#giving.delete(this.#giving.keys().next().value as string);
  }

  /** Drops every hint (the loop stops). */
  clear(): void {
    this.#held.clear();
    this.#giving.clear();
    this.#spent.clear();
    this.#planned.clear();
  }

  /** Drops the expired hints (when the book is full): those of players away too, once their life as given is over. */
  #sweep(now: number): void {
    let next = Number.POSITIVE_INFINITY;
    for (const [name, hint] of this.#held) {
      if (hint.until <= now) this.#end(name, hint, now);
      else next = Math.min(next, hint.until);
    }
    this.#noSweepBefore = next;
  }

  /** A hint ends (expired or satisfied): what it named is spent. */
  #end(name: string, hint: HeldHint, now: number): void {
    this.#held.delete(name);
    for (const id of hint.transactionIds) this.#spend(id, now);
    if (hint.any) this.#spend(anyKey(name), now);
  }

  #spend(key: string, now: number): void {
    this.#spent.delete(key);
    this.#spent.set(key, now);
    if (this.#spent.size > HINT_LIMIT) this.#spent.delete(this.#spent.keys().next().value as string);
  }

  #wasSpent(key: string, now: number): boolean {
    const at = this.#spent.get(key);
    return at !== undefined && now - at < HINT_MAX_MS;
  }
}

/**
 * A hint (or a claimed purchase's) whose player is away: its expiry moves on by the time
 * away, to `away` now (so that it moves by each stretch once), never past an hour after
 * `given`. A hint read from a shared journal still ends when its row does (shared-hints.ts).
 */
function resume(life: { until: number; away?: number | undefined }, now: number, given: number): void {
  // A life over when the player left (`away` at or after `until`) moves to `now` at most: still over.
  if (life.away === undefined) return;
  life.until = Math.min(life.until + (now - life.away), Math.max(life.until, given + HINT_MAX_MS));
  life.away = now;
}

/** The key of a player's hint that named no transaction ('\u0000' is in no transaction id nor player name). */
const anyKey = (name: string): string => `\u0000${name}`;
