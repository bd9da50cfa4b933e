/**
 * The crash campaign's workers: started ahead of time (node and the SDK take ~0.25 s to
 * load on a small machine), each given its config on stdin when its run begins, with the
 * run's scenario; and how each run ended (a kill, a refusal, or a problem).
 *
 * @module
 */
import type { DeliveryMode } from '../../src/index.js';
import { seededRandom } from '../../src/mock/service/random.js';
import type { Bundles } from './bundle.js';
import { kill, pause, start, waitForLine, type Child } from './children.js';
import {
  API_KEY,
  CLAIM_EVERY_MS,
  CLAIM_MODE,
  HINTS,
  CLOCK_SPEED,
  CLOCK_STEP_MS,
  CLUSTER,
  FLAKY_JOURNAL,
  JOURNAL,
  LANES,
  LOCK_TIMEOUT_MS,
  LOOP,
  LOOP_CALLS_PER_SECOND,
  LOOP_POLL_MS,
  NODES,
  P_GRANT_FAILS,
  P_GRANT_FAILS_DB,
  PLAYER_NAMES,
  PROCESSES,
  SCENARIO,
  SHARED,
} from './options.js';
import { scenarioFor, type Scenario, type ScenarioConfig } from './scenario.js';
import type { WorkerConfig } from './worker/config.js';
import type { AdminDb, Tables } from './database.js';

/** What the pool needs of its campaign (campaign.ts). */
export interface PoolHost {
  readonly mode: DeliveryMode;
  readonly bundles: Bundles;
  readonly base: number;
  readonly url: string;
  readonly stopping: boolean;
  readonly paths: { journalPath: string; inventoryPath: string; unverifiedPath: string; logPath: string };
  readonly clockPath: string;
  /** The mock's clock when the campaign began (--flaky-journal). */
  readonly clockStart: number;
  /** --loop: the players online on a node when it starts (presence.ts). */
  online?(node: number): string[];
  readonly db?: { admin: AdminDb; tables: Tables } | undefined;
  nodePaths(node: number): { unverifiedPath: string; logPath: string };
  problem(text: string): void;
}

export type Ending = 'killed' | 'refused' | 'other';

export class WorkerPool {
  /** Runs started so far (the next run's number). */
  run = 0;
  readonly live = new Set<Child>();
  /** The last worker started as each node (presence changes go to it). */
  readonly current: Child[] = [];
  /** Start to `ready` of each run, in ms. */
  readonly startupMs: number[] = [];
  readonly scenarioRuns = new Map<Scenario, number>();
  /** Workers of a scenario that SIGKILLed themselves at its moment. */
  selfKills = 0;
  #unexpected = 0;
  readonly #spares: Child[] = [];
  readonly #scenarioOf = new WeakMap<Child, Scenario>();
  readonly #endings = new WeakMap<Child, Promise<Ending>>();
  readonly #scenarioRandom: () => number;
  // A database node loads its driver while it waits.
  readonly #env = CLUSTER ? { CRASH_JOURNAL: JOURNAL } : undefined;

  constructor(private readonly c: PoolHost) {
    this.#scenarioRandom = seededRandom(c.base ^ 0x5ce7);
  }

  /** One spare per process or node, loading while nothing runs yet. */
  prestart(): void {
    for (let i = 0; i < (CLUSTER ? NODES : PROCESSES); i++) this.#spare();
  }

  dropSpares(): void {
    for (const child of this.#spares.splice(0)) kill(child);
  }

  anyAlive(): boolean {
    return [...this.live].some((w) => w.alive);
  }

  /** The campaign's end: kills every live worker, and any its loops start meanwhile, until `loops` (the slots, the nodes) have all returned. */
  async killUntil(loops: Promise<unknown>): Promise<void> {
    let done = false;
    void loops.then(() => (done = true));
    while (!done) {
      for (const w of this.live) kill(w);
      await Promise.race([loops, pause(50)]);
    }
  }

  scenarioOf(w: Child): Scenario {
    return this.#scenarioOf.get(w) ?? 'plain';
  }

  #spare(): Child {
    const child = start(this.c.bundles.worker, [], `${this.c.mode} spare worker`, this.#env);
    this.#spares.push(child);
    return child;
  }

  /** A run begins: a spare gets its config. */
  spawn(drain: boolean, node = 0): Child {
    const scenario: ScenarioConfig = drain ? { scenario: 'plain' } : scenarioFor(SCENARIO, this.#scenarioRandom, !SHARED);
    if (!drain) this.scenarioRuns.set(scenario.scenario, (this.scenarioRuns.get(scenario.scenario) ?? 0) + 1);
    const cfg = this.#config(scenario, drain, node);
    let child = this.#spares.shift();
    while (child !== undefined && !child.alive) child = this.#spares.shift();
    child ??= start(this.c.bundles.worker, [], '', this.#env);
    // The next spare starts once this worker is up: two node startups at once on two
    // cores would slow this worker's restart, the moment under test.
    if (!drain) void waitForLine(child, (l) => l === 'ready' || l.startsWith('refused '), 60_000).then(() => !this.c.stopping && this.#spare(), () => !this.c.stopping && this.#spare());
    child.label = `${this.c.mode} worker r${this.run}${CLUSTER ? ` (node ${node})` : ''}${scenario.scenario === 'plain' ? '' : ` (${scenario.scenario})`}`;
    this.#scenarioOf.set(child, scenario.scenario);
    child.spawnedAt = performance.now();
    child.proc.stdin?.write(`${JSON.stringify(cfg)}\n`);
    this.run += 1;
    this.current[node] = child;
    this.live.add(child);
    void child.closed.then(() => this.live.delete(child));
    return child;
  }

  #config(scenario: ScenarioConfig, drain: boolean, node: number): WorkerConfig {
    const { c } = this;
    return {
      ...scenario,
      url: c.url,
      apiKey: API_KEY,
      mode: c.mode,
      journal: JOURNAL,
      ...c.paths,
      ...c.nodePaths(node),
      ...(LOOP
        ? {
            clockPath: c.clockPath,
            loop: {
              pollIntervalMs: LOOP_POLL_MS,
              maxCallsPerSecond: LOOP_CALLS_PER_SECOND,
              // The drain: every player online on its one node.
              online: drain ? PLAYER_NAMES : (c.online?.(node) ?? []),
              speed: CLOCK_SPEED,
              marginMs: CLOCK_STEP_MS + 50,
              claimEveryMs: CLAIM_EVERY_MS,
              ...(CLAIM_MODE === undefined ? {} : { claimMode: CLAIM_MODE }),
              ...(HINTS ? { hints: true } : {}),
            },
          }
        : {}),
      ...(c.db === undefined
        ? {}
        : {
            clockPath: c.clockPath,
            // The lanes' locks, a game transaction under each, and one more.
            db: { url: c.db.admin.url, ...c.db.tables, lockTimeoutMs: LOCK_TIMEOUT_MS, poolSize: 2 * LANES + 1 },
          }),
      players: PLAYER_NAMES,
      seed: (c.base + Math.imul(this.run, 0x85ebca6b)) >>> 0,
      run: this.run,
      grantFailRate: CLUSTER ? P_GRANT_FAILS_DB : P_GRANT_FAILS,
      // The same stretches of trouble for every node and run: the campaign's seed.
      ...(FLAKY_JOURNAL ? { flakyJournal: { seed: (c.base ^ 0xf1a4) >>> 0, from: c.clockStart } } : {}),
      lanes: LANES,
      drain,
      node,
    };
  }

  /** `ready` or `refused …`, timing the startup; undefined when the worker ended first. */
  async started(w: Child): Promise<string | undefined> {
    const line = await waitForLine(w, (l) => l === 'ready' || l.startsWith('refused '), 30_000);
    if (line === 'ready') this.startupMs.push(performance.now() - w.spawnedAt);
    return line;
  }

  /** After a worker ended: a kill (ours, or its own at its scenario's moment), a refusal (exit 3), or a problem. */
  ended(w: Child): Promise<Ending> {
    let ending = this.#endings.get(w);
    if (ending === undefined) {
      ending = w.closed.then(({ code, signal }) => {
        if (w.killedByUs && signal === 'SIGKILL') return 'killed';
        if (signal === 'SIGKILL' && w.lines.some((l) => l.startsWith('selfkill '))) {
          this.selfKills += 1;
          return 'killed';
        }
        if (code === 3) return 'refused';
        this.#unexpected += 1;
        this.c.problem(`${w.label} exited by itself (code ${code}, signal ${signal}): ${w.stderr.trim().slice(-3000) || '(no stderr)'}`);
        if (this.#unexpected >= 5) throw new Error(`crash ${this.c.mode}: ${this.#unexpected} workers died by themselves; stopping (see the problems above)`);
        return 'other';
      });
      this.#endings.set(w, ending);
    }
    return ending;
  }

  refusal(w: Child): string {
    return w.lines.find((l) => l.startsWith('refused ')) ?? '(no refusal line)';
  }
}
