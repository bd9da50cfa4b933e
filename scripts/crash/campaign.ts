/**
 * One mode's crash campaign: its temp dir, its mock, its purchases, its counters. The
 * kills themselves are played by one of lone.ts (one worker), shared.ts (two workers on
 * one journal file) or cluster.ts (nodes on a database journal), the workers come from
 * workers.ts, and count.ts drains and counts (main.ts runs them in that order).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeliveryMode } from '../../src/index.js';
import { seededRandom } from '../../src/mock/service/random.js';
import { MOCK_BANNER, bannerUrl, mockAdmin } from '../common/mock-admin.js';
import type { Bundles } from './bundle.js';
import { pause, start, waitForLine, type Child } from './children.js';
import type { AdminDb, Tables } from './database.js';
import { API_KEY, BUY_EVERY_MS, CLUSTER, DURING_RUNS, JOURNAL, KILLS, LOOP, NODES, P_DROP_AFTER, PLAYERS, PLAYER_NAMES, PRODUCTS, SHARED } from './options.js';
import { between, pick } from './draws.js';
import { FastClock, Presence } from './presence.js';
import { WorkerPool } from './workers.js';

/** The database of a `--journal postgres|mysql` campaign: its admin, and this mode's tables. */
export interface Db {
  admin: AdminDb;
  tables: Tables;
}


/** One mode's campaign: what its loops share. */
export class Campaign {
  readonly startedAt = performance.now();
  readonly dir: string;
  readonly paths: { journalPath: string; inventoryPath: string; unverifiedPath: string; logPath: string };
  /** The mock clock's offset from real time, as the nodes know it (see worker/clock.ts). */
  readonly clockPath: string;
  /** The mode's label in the stderr lines. */
  readonly tag = CLUSTER ? ` nodes=${NODES} journal=${JOURNAL}` : SHARED ? ' shared' : '';
  /** The campaign's name in the lines: its mode, or `loop` (--loop). */
  readonly name: string;
  readonly base: number;
  readonly killRandom: () => number;
  readonly buyRandom: () => number;
  readonly problems: string[] = [];
  readonly notes: string[] = [];
  readonly workers: WorkerPool;
  /** --loop: who is online where, and the mock's fast clock (presence.ts). */
  readonly presence: Presence | undefined;
  readonly clock: FastClock | undefined;
  purchases = 0;
  kills = 0;
  refused = 0;
  stopping = false;
  url = '';
  mock: Child | undefined;
  /** Closed while purchases are added between runs: no worker starts meanwhile. */
  gate: Promise<void> = Promise.resolve();
  #reported = 0;

  constructor(
    readonly mode: DeliveryMode,
    readonly bundles: Bundles,
    root: string,
    modeIndex: number,
    readonly seed: number,
    readonly db?: Db,
  ) {
    this.name = LOOP ? 'loop' : mode;
    this.dir = join(root, `${this.name}${SHARED ? '-shared' : ''}${CLUSTER ? `-${JOURNAL}` : ''}`);
    this.paths = {
      // The default journal's name: a two-clients run may use the default journal (cwd = dir).
      journalPath: join(this.dir, '.teamgames-journal.jsonl'),
      inventoryPath: join(this.dir, 'inventory.jsonl'),
      unverifiedPath: join(this.dir, 'unverified.jsonl'),
      logPath: join(this.dir, 'worker.log'),
    };
    this.clockPath = join(this.dir, 'clock.bin');
    this.base = (seed ^ Math.imul(modeIndex + 1, 0x9e3779b9)) >>> 0;
    this.killRandom = seededRandom(this.base ^ 0x6b1115);
    this.buyRandom = seededRandom(this.base ^ 0xb0b);
    this.workers = new WorkerPool(this);
    this.presence = LOOP ? new Presence(this) : undefined;
    this.clock = LOOP ? new FastClock() : undefined;
  }

  /** --loop: the players online on a node when it starts. */
  online(node: number): string[] {
    return this.presence?.online(node) ?? [];
  }

  /** Database nodes: a log and an unverified-windows file per node. */
  nodePaths(node: number): { unverifiedPath: string; logPath: string } {
    return CLUSTER ? { unverifiedPath: join(this.dir, `unverified-n${node}.jsonl`), logPath: join(this.dir, `worker-n${node}.log`) } : { unverifiedPath: this.paths.unverifiedPath, logPath: this.paths.logPath };
  }

  /** The mock's clock when the campaign began (worker/flaky-journal.ts draws its stretches from it). */
  clockStart = 0;

  problem(text: string): void {
    this.problems.push(text);
    process.stderr.write(`crash ${this.name}: PROBLEM ${text}\n`);
  }

  /** The files, the tables, the mock with its fault rule, the first purchases. */
  async setUp(): Promise<void> {
    mkdirSync(this.dir);
    const seedPath = join(this.dir, 'seed.json');
    writeFileSync(seedPath, JSON.stringify({ servers: [{ apiKey: API_KEY, name: 'Crash campaign store', products: PRODUCTS }] }));
    writeFileSync(this.paths.inventoryPath, '');
    writeFileSync(this.paths.unverifiedPath, '');
    if (CLUSTER) for (let node = 0; node < NODES; node++) writeFileSync(this.nodePaths(node).unverifiedPath, '');
    // 0 at first: the mock follows real time.
    if (CLUSTER || LOOP) writeFileSync(this.clockPath, Buffer.alloc(8));
    if (CLUSTER && this.db === undefined) throw new Error('crash: a database journal without a database');
    if (this.db !== undefined) await this.db.admin.create(this.db.tables);

    const mock = start(this.bundles.mock, ['--port', '0', '--host', '127.0.0.1', '--seed', seedPath], `${this.mode} mock`);
    this.mock = mock;
    const banner = await waitForLine(mock, (l) => l.startsWith(MOCK_BANNER), 20_000);
    const url = banner === undefined ? undefined : bannerUrl(banner);
    if (url === undefined) throw new Error(`crash: the mock did not start: ${mock.stderr}`);
    this.url = url;
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(this.url)) throw new Error(`crash: the mock is not on loopback: ${this.url}`);
    await this.admin('POST', '/__mock/faults', { seed: this.base, rules: [{ kind: 'dropAfter', operation: 'claim', probability: P_DROP_AFTER }] });
    // --flaky-journal: the stretches of trouble are drawn from the campaign's clock at its start.
    this.clockStart = (await this.admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 })).now;
    this.clock?.start(this);
    for (let i = 0; i < Math.ceil(PLAYERS / 2); i++) await this.buy();
  }

  admin<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return mockAdmin(this.url, 'crash')<T>(method, path, body);
  }

  async buy(): Promise<void> {
    const product = pick(this.buyRandom, PRODUCTS);
    await this.admin('POST', '/__mock/purchases', { apiKey: API_KEY, playerName: pick(this.buyRandom, PLAYER_NAMES), id: product.id, quantity: between(this.buyRandom, [1, 3]) });
    this.purchases += 1;
  }

  progress(): void {
    if (this.kills > this.#reported && this.kills % 25 === 0) {
      this.#reported = this.kills;
      process.stderr.write(
        `crash ${this.name}${this.tag}: ${this.kills}/${KILLS} kills, ${this.purchases} purchases${SHARED ? `, ${this.refused} refused` : ''}, ${((performance.now() - this.startedAt) / 1000).toFixed(0)} s\n`,
      );
    }
  }

  /** Purchases while a worker runs (unless --purchases-during-runs false), until the campaign stops. */
  async ticker(): Promise<void> {
    const tickRandom = seededRandom(this.base ^ 0x71c4);
    while (!this.stopping) {
      await pause(between(tickRandom, BUY_EVERY_MS));
      if (!this.stopping && DURING_RUNS && this.workers.anyAlive()) await this.buy();
    }
  }

  /** Purchases between two runs, with the gate closed (no worker starts meanwhile). */
  async betweenRuns(): Promise<void> {
    const previous = this.gate;
    let open!: () => void;
    this.gate = new Promise((resolve) => (open = resolve));
    await previous;
    try {
      // A request the dead worker sent just before the kill may still be in the mock's
      // hands: let it finish, so that a purchase added now is really added between runs.
      await pause(20);
      await this.admin('GET', '/__mock/faults');
      // Shared: the other worker may be running; then these would be purchases during a run.
      if (!DURING_RUNS && this.workers.anyAlive()) return;
      const n = between(this.buyRandom, [0, 2]);
      for (let i = 0; i < n; i++) await this.buy();
    } finally {
      open();
    }
  }
}
