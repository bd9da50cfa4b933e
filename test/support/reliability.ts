/**
 * The reliability harness, shared by the tests (`test/delivery/`, `test/journals/`) and the
 * scripts (`scripts/soak.ts`, the crash campaign, the simulation): a seed, the mock reached in process through
 * `mock.fetch` (no network, no msw), a sleep that moves the
 * mock clock, a journal that "crashes" the process, and a simulated game that dedupes on
 * `deliveryId`.
 */
import { StorefrontClient, type DeliveredItem, type DeliveryJournal, type JournalEntry, type StorefrontClientOptions } from '../../src/index.js';
import { createMockService, type MockClock, type MockSeed } from '../../src/mock/index.js';
import { PRODUCTS } from './products.js';

/** The mock's frozen start, 2026-01-01T00:00:00Z, for every test and script (time moves only by `mock.clock`). */
export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const KEY = 'reliability-key';
export const BASE_URL = 'https://api.teamgames.io';

/**
 * The delivery seed: one store with five plain products and no gateway limits, so random
 * carts always check out (the storefront rules have their own seed in `test/support/fixtures.ts`).
 */
export const seed: MockSeed = {
  servers: [
    {
      apiKey: KEY,
      name: 'Reliability store',
      products: PRODUCTS,
    },
  ],
};

/** A sleep that costs nothing: it moves the mock clock. */
export const clockSleep =
  (clock: MockClock) =>
  async (ms: number): Promise<void> => {
    clock.advance(Math.max(0, ms));
  };

/**
 * A fetch to `mock` whose clock keeps step with vitest's fake monotonic clock (`performance`
 * faked, `shouldAdvanceTime` on: a bridge's loop times the service's 10 s window on it): at
 * each request the mock's time is set to {@link T0} plus the fake clock's time since this
 * was made. Moving the two clocks side by side instead (`mock.clock.advance` with
 * `vi.advanceTimersByTimeAsync`) lets the fake clock run ahead by the real time that passes,
 * and on a loaded machine a claim timed a window after its preview on the loop's clock
 * reached the mock less than a window after it (`RATE_LIMIT`). Make it once fake timers are on.
 */
export function fetchInStep(mock: { clock: MockClock; fetch: typeof globalThis.fetch }): typeof globalThis.fetch {
  const start = performance.now();
  return (input, init) => {
    mock.clock.set(T0 + (performance.now() - start));
    return mock.fetch(input, init);
  };
}

/**
 * A mock on the delivery {@link seed} at {@link T0}, reached in process through
 * `mock.fetch`: its clock-moving `sleep`, a `client` per journal (no retries, on
 * the mock's clock) and the `outcome` of a {@link Game} against what was paid.
 */
export function inProcessStore() {
  const mock = createMockService({ seed, now: T0 });
  const sleep = clockSleep(mock.clock);
  const { fetch } = mock;
  const client = (journal: DeliveryJournal, options: Partial<StorefrontClientOptions> = {}): StorefrontClient =>
    new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch, now: mock.clock.now, journal, retry: 0, ...options });
  const outcome = (game: Game) => compare(paidUnits(mock.purchases(KEY)), game.applied);
  return { mock, sleep, fetch, client, outcome };
}

/** Thrown by a {@link CrashingJournal} or a game to simulate the process dying. */
export class Crash extends Error {
  constructor(where: string) {
    super(`simulated crash ${where}`);
    this.name = 'Crash';
  }
}

/**
 * A journal decorator that "crashes" the simulated process at chosen points:
 * `decide(point)` returning true kills it there (`appendAfter` writes first). A dead
 * process does nothing more: the call that died, and every later call of that process,
 * never settles, as after `kill -9`; {@link CrashingJournal.run} turns the death into a
 * {@link Crash} rejection for the caller, and {@link CrashingJournal.revive} starts the
 * next process over the same storage.
 */
export class CrashingJournal implements DeliveryJournal {
  #dead = false;
  #died!: Promise<Crash>;
  #die!: (crash: Crash) => void;

  constructor(
    readonly inner: DeliveryJournal,
    readonly decide: (point: 'appendBefore' | 'appendAfter' | 'ackBefore', entries: readonly JournalEntry[] | readonly string[]) => boolean,
  ) {
    this.revive();
  }

  /** Settles like `call`, or rejects with the {@link Crash} when the process dies first. */
  run<T>(call: Promise<T>): Promise<T> {
    return Promise.race([call, this.#died.then((crash) => Promise.reject(crash))]);
  }

  /** A new process over the same storage: calls go through again. */
  revive(): void {
    this.#dead = false;
    this.#died = new Promise((resolve) => (this.#die = resolve));
  }

  async append(entries: readonly JournalEntry[]): Promise<void> {
    if (this.#dead || this.decide('appendBefore', entries)) return this.#crash('before a journal write');
    await this.inner.append(entries);
    if (this.decide('appendAfter', entries)) return this.#crash('after a journal write');
  }

  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.#dead ? this.#crash('') : this.inner.pending(playerName);
  }

  async acknowledge(ids: readonly string[]): Promise<void> {
    if (this.#dead || this.decide('ackBefore', ids)) return this.#crash('before an acknowledgement');
    await this.inner.acknowledge(ids);
  }

  #crash(where: string): Promise<never> {
    if (!this.#dead) this.#die(new Crash(where));
    this.#dead = true;
    return new Promise<never>(() => {});
  }
}

/**
 * The journal as one simulated process sees it: a new object over the same storage. The
 * SDK keeps what the clients of one journal share (the per-player order, lines the journal
 * failed to record) per journal object, as a real process keeps them in its memory; a
 * process that died takes them with it, so each new process needs its own object.
 */
export function processView(journal: DeliveryJournal): DeliveryJournal {
  return {
    append: (entries) => journal.append(entries),
    pending: (playerName) => journal.pending(playerName),
    acknowledge: (ids) => journal.acknowledge(ids),
  };
}

/** The simulated game: applies each delivery once per `deliveryId`, counts repeats. */
export class Game {
  /** Units applied, by player and product. */
  readonly applied = new Map<string, number>();
  readonly seen = new Set<string>();
  regrants = 0;
  calls = 0;

  /** The grant function; `fail()` returning true makes this call throw before applying. */
  grant = (fail: () => boolean = () => false) =>
    (item: DeliveredItem): void => {
      this.calls += 1;
      if (fail()) throw new Error(`the game could not grant ${item.deliveryId}`);
      if (this.seen.has(item.deliveryId)) {
        this.regrants += 1;
        return;
      }
      this.seen.add(item.deliveryId);
      this.apply(item.player_name, item.product_id_string, item.quantity_to_grant);
    };

  apply(player: string, product: string, units: number): void {
    const key = `${player}\u0000${product}`;
    this.applied.set(key, (this.applied.get(key) ?? 0) + units);
  }

  units(): number {
    let total = 0;
    for (const units of this.applied.values()) total += units;
    return total;
  }
}

/** Paid units by player and product, from the mock's rows (the ground truth). */
export function paidUnits(rows: ReadonlyArray<{ username: string; productid: string; givequantity: number; paymentstatus: string }>): Map<string, number> {
  const paid = new Map<string, number>();
  for (const row of rows) {
    if (row.paymentstatus !== 'Paid') continue;
    const key = `${row.username}\u0000${row.productid}`;
    paid.set(key, (paid.get(key) ?? 0) + row.givequantity);
  }
  return paid;
}

/** Units paid and granted, and the difference either way: the figures every campaign prints. */
export interface UnitCounts {
  paid: number;
  granted: number;
  /** Paid units never granted. */
  lost: number;
  /** Units granted beyond what was paid. */
  duplicated: number;
}

/** Compares what was paid with what the game applied: units lost and units applied twice. */
export function compare(paid: ReadonlyMap<string, number>, applied: ReadonlyMap<string, number>): UnitCounts {
  let lost = 0;
  let duplicated = 0;
  let paidTotal = 0;
  let granted = 0;
  for (const key of new Set([...paid.keys(), ...applied.keys()])) {
    const p = paid.get(key) ?? 0;
    const a = applied.get(key) ?? 0;
    paidTotal += p;
    granted += a;
    if (a < p) lost += p - a;
    if (a > p) duplicated += a - p;
  }
  return { paid: paidTotal, granted, lost, duplicated };
}
