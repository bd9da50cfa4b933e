/**
 * The simulated world of scripts/simulate.ts: the in-process mock on virtual time, the
 * client and the engine the loop runs on, the players (sessions, purchases, `/claim`),
 * the game's grant, and the client's fetch (every call counted, answered by the mock after
 * a virtual latency).
 */
import { MemoryJournal, StorefrontClient, type DeliveredItem, type StorefrontEvent, type UnverifiedWindow } from '../../src/index.js';
import { createMockService, type MockService, type PurchaseRow } from '../../src/mock/index.js';
import { DeliveryEngine } from '../../src/delivery/engine/engine.js';
// The engine loads its modes by import() on the first delivery; loaded up front so that
// virtual time does not run on while that import reads files (a seed replays exactly).
import '../../src/delivery/engine/modes.js';
import { entryChecks } from '../../src/journals/lazy-checks.js';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/delivery/loop/scheduler.js';
import { BASE_URL, Game, KEY, T0, seed } from '../../test/support/reliability.js';
import { VirtualTime } from './virtual-time.js';

// The memory journal loads its entry checks by import() on its first use, which goes through
// the module loader's own thread (tsx's hooks) and takes real time: whether the first delivery
// reached its call before the next event ran varied from run to run. Loaded and awaited here,
// every later use is a resolved promise.
await entryChecks();

export interface SimConfig {
  players: number;
  /** Absent: the loop's default. */
  pollIntervalMs: number | undefined;
  /** Absent: the loop's default. */
  maxCallsPerSecond: number | undefined;
  purchasesPerHour: number;
  /** Of the purchases made online, the share followed by a `/claim` typed 5–60 s later. */
  typedClaims: number;
  seed: number;
  random: () => number;
  /** The loop's `claimMode` for `/claim` (`loop.claim`): the engine's default, or the one-call form. */
  claimMode: 'exactlyOnce' | 'fast';
  /** The loop's `hintClaimMode`: how a hinted player is claimed each window. */
  hintClaimMode: 'exactlyOnce' | 'fast';
  /** Of the purchases, the share made through a checkout that sends the loop a hint (`loop.expect`), paid after a delay. */
  hints: number;
  /** The median of the payment delay (log-normal, see PAYMENT_SIGMA), ms. */
  paymentMedianMs: number;
  /** Of the hinted checkouts, the share never paid (cancelled once their hint has expired). */
  abandoned: number;
}

/**
 * The spread of the payment delay, log-normal around its median: with a median of 60 s,
 * 10 % of payments take over 2.8 minutes and 1 % over 6.4 (a card's 3-D Secure check, a
 * PayPal login, a second card).
 */
const PAYMENT_SIGMA = 0.8;
/** An abandoned checkout is cancelled this long after it was made (after its hint's default life). */
const ABANDONED_AFTER_MS = 15 * 60_000;

export const SESSION_MEAN_MS = 45 * 60_000;
export const OFFLINE_MEAN_MS = 5 * 60_000;
const P_LEAVE_AFTER_GIVE = 0.05;
const P_GIVE_THROWS = 0.01;
const P_SLOW_ANSWER = 0.03;

export interface PlayerState {
  name: string;
  online: boolean;
  /** Invoices bought and not granted yet. */
  open: Set<number>;
}

export interface Purchase {
  invoice: number;
  player: string;
  /** The row's `productid`, to tell which purchase a grant naming no invoice (a one-call claim's) gave. */
  product: string;
  units: number;
  boughtAt: number;
  /** Start of the current online stretch of the player while it waits (undefined while offline). */
  since: number | undefined;
  /** Time it already waited with the player online, in earlier stretches. */
  waited: number;
  /** Online waiting time when first granted (purchase → grant, the player's offline time left out). */
  latency: number | undefined;
  grantedAt: number | undefined;
  /** A loopError was reported for the player between the purchase and its grant. */
  errorBefore: boolean;
  /** What else happened before the grant: a /claim typed, a grant of it that threw, the player leaving. */
  typedClaim: boolean;
  /** Bought through a checkout that sent the loop a hint (`boughtAt` is then when it was paid). */
  hinted: boolean;
  threw: boolean;
  leaves: number;
}

export class World {
  readonly time = new VirtualTime();
  readonly mock: MockService = createMockService({ seed, now: T0 });
  readonly journal = new MemoryJournal();
  readonly players: PlayerState[] = [];
  readonly byName = new Map<string, PlayerState>();
  readonly purchases = new Map<number, Purchase>();
  readonly game = new Game();
  /** deliveryIds granted per invoice (distinct ids; the game dedupes repeats of one id). */
  readonly idsByInvoice = new Map<number, Set<string>>();
  /** Grants whose deliveryId names no invoice: units by player and product. */
  readonly unmapped = new Map<string, number>();
  /**
   * The invoices of the rows each claim answer that reached the client delivered, by player,
   * product and units, in order: a one-call claim's grants name no invoice (`claim:<uuid>:<i>`),
   * and this tells which row each gave (its raw rows name the invoices).
   */
  readonly #claimedRows = new Map<string, number[]>();
  readonly windows: UnverifiedWindow[] = [];
  readonly events = { loopError: 0, delivery: 0, unverified: 0 };
  readonly client: StorefrontClient;
  readonly engine: DeliveryEngine;
  loop: DeliveryLoop | undefined;
  /** main: purchases arrive; drain: none arrive, players still come and go; ending: the loop stops; final: everybody joined. */
  phase: 'main' | 'drain' | 'ending' | 'final' = 'main';
  grantsOffline = 0;
  giveThrew = 0;
  leftMidDelivery = 0;
  claimsTyped = 0;
  /** What the typed claims resolved to, by code (`OFFLINE`, `STOPPED`, a delivery code). */
  readonly claimOutcomes = new Map<string, number>();
  claimRejected = 0;
  /** Hinted checkouts made, and what `loop.expect` answered (held, full, stopped). */
  readonly hintOutcomes = new Map<string, number>();
  abandonedCheckouts = 0;
  calls = 0;
  maxCallsIn1s = 0;
  /** The last second's call times, for the sliding maximum. */
  readonly #window: number[] = [];
  readonly #config: SimConfig;
  readonly #random: () => number;

  constructor(config: SimConfig) {
    this.#config = config;
    this.#random = config.random;
    const epoch = () => T0 + this.time.now;
    // The client's `now` drives its 10 s guard; the engine's, the journal's stamps and its intervals.
    this.client = new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: this.fetch, now: epoch, journal: this.journal });
    this.engine = new DeliveryEngine({ now: epoch, monotonic: epoch, journal: this.journal });
    this.time.onAdvance = (now) => void this.mock.clock.set(T0 + now);
    this.mock.faults.seed(config.seed);
    for (let i = 0; i < config.players; i++) {
      const player: PlayerState = { name: `P${i}`, online: false, open: new Set() };
      this.players.push(player);
      this.byName.set(player.name, player);
    }
  }

  /** Lost answers, 5xx before the operation, slow answers (the mock's delay is real ms: no virtual time). */
  faultsOn(): void {
    this.mock.faults.add({ operation: 'claim', kind: 'dropAfter', probability: 0.02 });
    this.mock.faults.add({ operation: 'claim', kind: 'status', status: 503, probability: 0.02 });
    this.mock.faults.add({ operation: 'claim', kind: 'delay', delayMs: 2, probability: 0.02 });
  }

  /** A loop on virtual time, as `client.startDeliveryLoop` would start it (its engine, its claim, its onEvent). */
  startLoop(): DeliveryLoop {
    const onEvent = (event: StorefrontEvent) => this.#onEvent(event);
    const host = { engine: this.engine, via: () => ({ claim: this.client.claim.bind(this.client), onEvent }) };
    const { pollIntervalMs, maxCallsPerSecond, claimMode, hintClaimMode } = this.#config;
    const options = { give: this.give, claimMode, hintClaimMode, ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }), ...(maxCallsPerSecond === undefined ? {} : { maxCallsPerSecond }) };
    this.loop = startDeliveryLoop(host, options, this.time.timers());
    return this.loop;
  }

  /** Players connect over the first minute (a restart); about one in ten is offline at first. */
  start(): void {
    const time = this.time;
    for (const player of this.players) {
      const offline = this.#random() < OFFLINE_MEAN_MS / (SESSION_MEAN_MS + OFFLINE_MEAN_MS);
      time.schedule(offline ? this.#exponential(OFFLINE_MEAN_MS) : this.#uniform(0, 60_000), 'loop', () => this.#session(player));
    }
    time.schedule(this.#exponential(this.#purchaseGap()), 'sim', () => this.#purchase());
  }

  /** The client's fetch: counts the call, answers it through the mock after a virtual latency. */
  readonly fetch: typeof globalThis.fetch = (input, init) => {
    const time = this.time;
    time.activity += 1;
    this.#countCall(time.now);
    const request = new Request(input, init);
    const { signal } = request;
    const latency = this.#random() < P_SLOW_ANSWER ? this.#uniform(2_000, 12_000) : this.#uniform(30, 150);
    let answer: { text: string; status: number; headers: Headers } | { error: unknown } | undefined;
    return new Promise<Response>((resolve, reject) => {
      const onAbort = () => {
        served.cancelled = true;
        delivered.cancelled = true;
        reject(signal.reason);
      };
      // The service handles the request halfway through the latency (its CPU is the mock's).
      const served = time.schedule(time.now + latency / 2, 'mock', async () => {
        try {
          const response = await this.mock.fetch(request);
          answer = { text: await response.text(), status: response.status, headers: response.headers };
        } catch (error) {
          answer = { error };
        }
      });
      const delivered = time.schedule(time.now + latency, 'loop', () => {
        time.activity += 1;
        signal.removeEventListener('abort', onAbort);
        if (answer === undefined || 'error' in answer) reject(answer?.error ?? new TypeError('fetch failed'));
        else {
          this.#noteClaimed(answer.text);
          resolve(new Response(answer.text, { status: answer.status, headers: answer.headers }));
        }
      });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  };

  /** The game's grant: records when, to whom, online or not; sometimes throws, sometimes the player leaves right after. */
  readonly give = (item: DeliveredItem): void => {
    this.time.activity += 1;
    const player = this.byName.get(item.player_name);
    if (player === undefined || !player.online) this.grantsOffline += 1;
    if (this.#live() && this.#random() < P_GIVE_THROWS) {
      this.giveThrew += 1;
      // A one-call claim's line names no invoice: the row its answer delivered does (see #record).
      const invoice = /^invoice:(\d+)$/.exec(item.deliveryId)?.[1] ?? this.#claimedRows.get(`${item.player_name}\u0000${item.product_id_string}\u0000${item.quantity_to_grant}`)?.[0];
      const threw = this.purchases.get(Number(invoice));
      if (threw !== undefined) threw.threw = true;
      throw new Error('inventory full');
    }
    if (!this.game.seen.has(item.deliveryId)) this.#record(item, player);
    this.game.grant()(item);
    if (this.#live() && player?.online === true && this.#random() < P_LEAVE_AFTER_GIVE) {
      // The player logs out right after this item: the rest of the delivery must wait for the next join.
      this.leftMidDelivery += 1;
      this.setOnline(player, false);
      this.time.schedule(this.time.now + this.#exponential(OFFLINE_MEAN_MS), 'loop', () => this.#session(player));
    }
  };

  setOnline(player: PlayerState, online: boolean): void {
    if (player.online === online) return;
    player.online = online;
    const now = this.time.now;
    for (const invoice of player.open) {
      const purchase = this.purchases.get(invoice) as Purchase;
      if (online) purchase.since = now;
      else if (purchase.since !== undefined) {
        purchase.leaves += 1;
        purchase.waited += now - purchase.since;
        purchase.since = undefined;
      }
    }
    if (online) this.loop?.join(player.name);
    else this.loop?.leave(player.name);
  }

  /** A claim answer that reached the client: the rows it delivered, for #record. */
  #noteClaimed(text: string): void {
    if (!text.includes('"code":"SUCCESS"')) return;
    const body = JSON.parse(text) as { data?: { rawTransactions?: Array<{ invoice: number; username: string; productid: string; givequantity: number }> } };
    for (const row of body.data?.rawTransactions ?? []) {
      const key = `${row.username}\u0000${row.productid}\u0000${row.givequantity}`;
      this.#claimedRows.set(key, [...(this.#claimedRows.get(key) ?? []), row.invoice]);
    }
  }

  #record(item: DeliveredItem, player: PlayerState | undefined): void {
    let invoice = /^invoice:(\d+)$/.exec(item.deliveryId)?.[1];
    const rows = this.#claimedRows.get(`${item.player_name}\u0000${item.product_id_string}\u0000${item.quantity_to_grant}`);
    // A one-call claim's line: the row its answer delivered (the oldest of that player, product
    // and units not granted under its invoice).
    if (invoice === undefined) invoice = rows?.shift()?.toString();
    else if (rows !== undefined && rows.includes(Number(invoice))) rows.splice(rows.indexOf(Number(invoice)), 1);
    let purchase: Purchase | undefined;
    if (invoice === undefined) {
      const key = `${item.player_name}\u0000${item.product_id_string}`;
      this.unmapped.set(key, (this.unmapped.get(key) ?? 0) + item.quantity_to_grant);
      // For the latency: the player's oldest open purchase of that product and units.
      const open = [...(player?.open ?? [])].map((n) => this.purchases.get(n) as Purchase);
      purchase = open.find((p) => p.product === item.product_id_string && p.units === item.quantity_to_grant);
    } else {
      const number = Number(invoice);
      const ids = this.idsByInvoice.get(number) ?? new Set<string>();
      ids.add(item.deliveryId);
      this.idsByInvoice.set(number, ids);
      purchase = this.purchases.get(number);
    }
    if (purchase === undefined || purchase.grantedAt !== undefined) return;
    const now = this.time.now;
    purchase.grantedAt = now;
    purchase.latency = purchase.waited + (purchase.since === undefined ? 0 : now - purchase.since);
    player?.open.delete(purchase.invoice);
  }

  #onEvent(event: StorefrontEvent): void {
    this.time.activity += 1;
    if (event.type === 'unverified') {
      this.windows.push(event.window);
      this.events.unverified += 1;
    } else if (event.type === 'loopError') {
      this.events.loopError += 1;
      for (const invoice of this.byName.get(event.playerName)?.open ?? []) (this.purchases.get(invoice) as Purchase).errorBefore = true;
    }
    else if (event.type === 'delivery') this.events.delivery += 1;
  }

  #countCall(at: number): void {
    this.calls += 1;
    const window = this.#window;
    window.push(at);
    while ((window[0] as number) <= at - 1_000) window.shift();
    if (window.length > this.maxCallsIn1s) this.maxCallsIn1s = window.length;
  }

  /** A session boundary: online players leave, offline ones join; the next one is drawn. */
  #session(player: PlayerState): void {
    if (!this.#live()) return;
    this.setOnline(player, !player.online);
    this.time.schedule(this.time.now + this.#exponential(player.online ? SESSION_MEAN_MS : OFFLINE_MEAN_MS), 'loop', () => this.#session(player));
  }

  /** A purchase by a random player, online or not; the next one is drawn (Poisson over all players). */
  #purchase(): Promise<void> | undefined {
    if (this.phase !== 'main') return undefined;
    const player = this.players[Math.floor(this.#random() * this.players.length)] as PlayerState;
    const line = { id: 1 + Math.floor(this.#random() * 5), quantity: 1 + Math.floor(this.#random() * 3) };
    // Drawn only with hints on, so that a run without them replays the same purchases.
    if (this.#config.hints > 0 && this.#random() < this.#config.hints) {
      this.time.schedule(this.time.now + this.#exponential(this.#purchaseGap()), 'sim', () => this.#purchase());
      // Awaited by the event: virtual time does not move on before the hint is given.
      return this.#checkout(player, line);
    }
    const row = this.mock.addPurchase(KEY, { playerName: player.name, ...line });
    const now = this.time.now;
    this.#bought(row, player, false);
    player.open.add(row.invoice);
    if (player.online && this.#random() < this.#config.typedClaims) {
      (this.purchases.get(row.invoice) as Purchase).typedClaim = true;
      this.time.schedule(now + this.#uniform(5_000, 60_000), 'loop', () => this.#typeClaim(player));
    }
    this.time.schedule(now + this.#exponential(this.#purchaseGap()), 'sim', () => this.#purchase());
    return undefined;
  }

  /**
   * A checkout through the web shop: the checkout (the mock's own, not a call of the loop's
   * budget), the hint (`loop.expect` with its transactionId), then the payment after a
   * log-normal delay, or, for an abandoned one, its cancellation once the hint has expired.
   */
  #checkout(player: PlayerState, line: { id: number; quantity: number }): Promise<void> {
    const body = JSON.stringify({ username: player.name, cartItems: JSON.stringify([line]) });
    const request = new Request(`${BASE_URL}/api/v2/client/global/checkout/complete`, { method: 'POST', body, headers: { authorization: Buffer.from(KEY).toString('base64'), 'content-type': 'application/json' } });
    return this.mock.fetch(request).then(async (response) => {
      const { transactionId } = (await response.json()) as { transactionId: string };
      const outcome = this.loop?.expect(player.name, { transactionId }) ?? 'no loop';
      this.hintOutcomes.set(outcome, (this.hintOutcomes.get(outcome) ?? 0) + 1);
      const now = this.time.now;
      if (this.#random() < this.#config.abandoned) {
        this.abandonedCheckouts += 1;
        this.time.schedule(now + ABANDONED_AFTER_MS, 'sim', () => this.mock.cancelPayment(transactionId));
        return;
      }
      const delay = this.#config.paymentMedianMs * Math.exp(PAYMENT_SIGMA * this.#normal());
      this.time.schedule(now + delay, 'sim', () => {
        this.mock.completePayment(transactionId);
        for (const row of this.mock.purchases(KEY, player.name)) {
          if (row.transactionid !== transactionId) continue;
          this.#bought(row, player, true);
          player.open.add(row.invoice);
        }
      });
    });
  }

  /** Records a paid row (`boughtAt`: now, when it was paid). */
  #bought(row: PurchaseRow, player: PlayerState, hinted: boolean): void {
    const now = this.time.now;
    this.purchases.set(row.invoice, { invoice: row.invoice, player: player.name, product: String(row.productid), units: row.givequantity, boughtAt: now, since: player.online ? now : undefined, waited: 0, latency: undefined, grantedAt: undefined, errorBefore: false, typedClaim: false, hinted, threw: false, leaves: 0 });
  }

  /** A standard normal draw (Box–Muller). */
  #normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.#random())) * Math.cos(2 * Math.PI * this.#random());
  }

  #typeClaim(player: PlayerState): void {
    if (!this.#live() || !player.online || this.loop === undefined) return;
    this.claimsTyped += 1;
    this.loop.claim(player.name).then(
      (report) => {
        this.claimOutcomes.set(report.code, (this.claimOutcomes.get(report.code) ?? 0) + 1);
      },
      () => {
        this.claimRejected += 1; // the loop promises none (#33 point 3): counted, shown in --verbose
      },
    );
  }

  /** Players come and go, grants fail now and then. */
  #live(): boolean {
    return this.phase === 'main' || this.phase === 'drain';
  }

  #purchaseGap(): number {
    return 3_600_000 / (this.#config.purchasesPerHour * this.#config.players);
  }

  #uniform(a: number, b: number): number {
    return a + (b - a) * this.#random();
  }

  #exponential(mean: number): number {
    return -mean * Math.log(1 - this.#random());
  }
}
