/**
 * Soak: random players buy random carts, pay, and claim while the mock injects faults
 * (lost answers, 5xx pages, connection resets, malformed bodies), the game's grants throw
 * and the process "crashes" (the client is dropped and rebuilt from the journal). Runs in
 * process on the mock's clock, so the 10 s claim windows cost nothing.
 *
 *   npm run soak -- --cycles 10000 --seed 42 [--players 50] [--journal memory|file]
 *
 * Ends with one line per mode:
 *   soak <mode>: cycles=… paid_units=… granted_units=… lost=… duplicated=… regrants=…
 * `claim` is the plain claim loop; `fast` and `exactlyOnce` go through client.deliver.
 * The simulated game dedupes on deliveryId: `duplicated` counts units applied twice,
 * `regrants` the repeated calls the game deduped. Exits 1 unless exactly-once shows
 * lost=0 duplicated=0 (and fast mode duplicated=0). Deterministic for a seed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournal, MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryJournal, type DeliveryMode } from '../src/index.js';
import { createMockService, type MockService } from '../src/mock/index.js';
import { seededRandom } from '../src/mock/service/random.js';
import { BASE_URL, Crash, CrashingJournal, Game, KEY, T0, clockSleep, compare, paidUnits, processView, seed, type UnitCounts } from '../test/support/reliability.js';
import { commandLine } from './common/command-line.js';

type Mode = 'claim' | DeliveryMode;

const cli = commandLine('soak', 'usage: npm run soak -- --cycles <n> --seed <n> [--players <n>] [--journal memory|file]', {
  cycles: { type: 'string', default: '1000' },
  seed: { type: 'string', default: '42' },
  players: { type: 'string', default: '50' },
  journal: { type: 'string', default: 'memory' },
});
const cycles = cli.integer('cycles', 1, Number.MAX_SAFE_INTEGER);
const baseSeed = cli.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
const playerCount = cli.integer('players', 1, Number.MAX_SAFE_INTEGER);
const journalKind = cli.oneOf('journal', ['memory', 'file']);

// How often each trouble strikes.
const P_BUY = 0.55;
const P_PAY = 0.9;
const P_GRANT_FAILS = 0.03;
const P_CRASH = 0.01; // at each journal write or acknowledgement (and after a plain claim)

interface Figures extends UnitCounts {
  mode: Mode;
  regrants: number;
  crashes: number;
  grantFailures: number;
  faults: number;
}

/** Claim faults: the lost answer (after the state change) in three forms, and two that change nothing; checkout faults. */
function injectFaults(mock: MockService): void {
  mock.faults.seed(baseSeed);
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', probability: 0.03 });
  mock.faults.add({ operation: 'claim', kind: 'status', status: 502, phase: 'after', probability: 0.01 });
  mock.faults.add({ operation: 'claim', kind: 'malformed', probability: 0.01 });
  mock.faults.add({ operation: 'claim', kind: 'dropBefore', probability: 0.02 });
  mock.faults.add({ operation: 'claim', kind: 'status', status: 503, probability: 0.02 });
  mock.faults.add({ operation: 'checkout', kind: 'status', status: 500, probability: 0.02 });
  mock.faults.add({ operation: 'checkout', kind: 'dropAfter', probability: 0.01 });
}

/** One mode's soak: the mock, the journal that crashes the process, the client of the process alive, the game. */
class Soak {
  readonly mock = createMockService({ seed, now: T0 });
  readonly random = seededRandom(baseSeed ^ 0x5eed);
  readonly chaos = seededRandom(baseSeed ^ 0xc4a05);
  readonly sleep = clockSleep(this.mock.clock);
  readonly dir = journalKind === 'file' ? mkdtempSync(join(tmpdir(), 'teamgames-soak-')) : undefined;
  readonly disk: DeliveryJournal;
  readonly journal: CrashingJournal;
  readonly game = new Game();
  readonly grant: (item: DeliveredItem) => void;
  readonly players = Array.from({ length: playerCount }, (_, i) => `Player${i + 1}`);
  readonly products = seed.servers[0]?.products ?? [];
  client: StorefrontClient;
  troubles = true;
  crashes = 0;
  grantFailures = 0;
  plainIds = 0;

  constructor(readonly mode: Mode) {
    injectFaults(this.mock);
    this.disk = this.dir === undefined ? new MemoryJournal() : new FileJournal(join(this.dir, `${mode}.jsonl`));
    this.journal = new CrashingJournal(this.disk, () => this.troubles && this.chaos() < P_CRASH);
    this.client = this.make();
    this.grant = this.game.grant(() => {
      if (!this.troubles || this.chaos() >= P_GRANT_FAILS) return false;
      this.grantFailures += 1;
      return true;
    });
  }

  /**
   * A client as one simulated process has it, with its own view of the journal: what the
   * SDK keeps per journal object (the per-player order, unwritten lines) dies with the process.
   */
  make(): StorefrontClient {
    return new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: this.mock.fetch, now: this.mock.clock.now, journal: processView(this.journal), retry: 0 });
  }

  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  /** One cycle: time passes, a random player buys (and mostly pays) or claims. */
  async cycle(): Promise<void> {
    this.mock.clock.advance(this.int(3_000));
    const player = this.players[this.int(this.players.length)] as string;
    if (this.random() < P_BUY) return this.buy(player);
    if (this.mode === 'claim') return this.plainClaim(player);
    try {
      await this.journal.run(this.client.deliver(player, this.grant, { mode: this.mode, sleep: this.sleep }));
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      await this.restart();
    }
  }

  async buy(player: string): Promise<void> {
    const lines = 1 + this.int(3);
    const items = Array.from({ length: lines }, () => ({ id: (this.products[this.int(this.products.length)] as { id: number }).id, quantity: 1 + this.int(3) }));
    const pays = this.random() < P_PAY;
    try {
      const result = await this.client.checkout({ username: player, items });
      if (result.outcome === 'PAYMENT_REQUIRED' && pays) this.mock.completePayment(result.transactionId);
    } catch {
      // A failed checkout leaves at most an unpaid cart: nothing to deliver.
    }
  }

  /** The plain loop most plugins run: claim, then grant each item. */
  async plainClaim(player: string): Promise<void> {
    try {
      const result = await this.client.claim(player);
      if (result.code !== 'SUCCESS') return;
      if (this.chaos() < P_CRASH) {
        this.crashes += 1; // died before granting: these items are gone
        this.client = this.make();
        return;
      }
      for (const item of result.claims) {
        try {
          this.grant({ ...item, deliveryId: `plain:${this.plainIds++}` });
        } catch {
          // The game failed; the plain loop has nothing to retry from.
        }
      }
    } catch {
      // ClaimOutcomeUnknownError and friends: the plain loop shrugs.
    }
  }

  /** The process died: a new client over the same journal finishes what it left. */
  async restart(): Promise<void> {
    this.crashes += 1;
    for (;;) {
      this.client = this.make();
      this.journal.revive();
      try {
        await this.journal.run(this.client.resumeDeliveries(this.grant, { sleep: this.sleep }));
        return;
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
        this.crashes += 1;
      }
    }
  }

  /** The troubles stop, the process restarts once, every player claims again. */
  async drain(): Promise<void> {
    this.troubles = false;
    this.mock.faults.clear();
    this.mock.clock.advance(10_000);
    this.client = this.make();
    this.journal.revive();
    if (this.mode === 'claim') {
      for (const player of this.players) {
        const result = await this.client.claim(player);
        if (result.code === 'SUCCESS') for (const item of result.claims) this.grant({ ...item, deliveryId: `plain:${this.plainIds++}` });
      }
    } else {
      await this.client.resumeDeliveries(this.grant, { sleep: this.sleep });
      for (const player of this.players) await this.client.deliver(player, this.grant, { mode: this.mode, sleep: this.sleep });
      // The windows found are kept for staff (until resolved); anything else left is work undone.
      const left = (await this.disk.pending()).filter((e) => e.state !== 'unverified');
      if (left.length > 0) throw new Error(`soak ${this.mode}: ${left.length} journal entries still pending after the drain`);
    }
    if (this.disk instanceof FileJournal) await this.disk.close();
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
  }

  figures(): Figures {
    const totals = compare(paidUnits(this.mock.purchases(KEY)), this.game.applied);
    const faults = this.mock.faults.list().reduce((sum, f) => sum + f.fired, 0);
    return { mode: this.mode, ...totals, regrants: this.game.regrants, crashes: this.crashes, grantFailures: this.grantFailures, faults };
  }
}

async function run(mode: Mode): Promise<Figures> {
  const soak = new Soak(mode);
  for (let cycle = 0; cycle < cycles; cycle++) await soak.cycle();
  await soak.drain();
  return soak.figures();
}

const started = performance.now();
const results: Figures[] = [];
for (const mode of ['claim', 'fast', 'exactlyOnce'] as const) {
  const figures = await run(mode);
  results.push(figures);
  console.log(`  ${mode}: crashes=${figures.crashes} grant_failures=${figures.grantFailures} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
for (const r of results) {
  console.log(`soak ${r.mode}: cycles=${cycles} paid_units=${r.paid} granted_units=${r.granted} lost=${r.lost} duplicated=${r.duplicated} regrants=${r.regrants}`);
}
const exact = results.find((r) => r.mode === 'exactlyOnce') as Figures;
const plain = results.find((r) => r.mode === 'fast') as Figures;
if (exact.lost !== 0 || exact.duplicated !== 0 || plain.duplicated !== 0) {
  console.error('soak: FAILED (exactly-once must lose and duplicate nothing; fast mode must duplicate nothing)');
  process.exit(1);
}
