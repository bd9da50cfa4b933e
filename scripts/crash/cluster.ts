/**
 * The crash campaign of N nodes on one database journal (`--nodes N --journal
 * postgres|mysql`): each node is SIGKILLed at random moments (10% of the time 0–100 ms
 * into its run, otherwise 200–3000 ms after it is ready) and restarted at once, the others
 * delivering on; every few kills an outage kills every node at once, and all restart
 * after it. Before each kill the server is asked which player locks the victim's
 * connections hold; after it, those connections (and so the locks) must leave the server
 * within lockTimeoutMs + 5 s.
 *
 * @module
 */
import { seededRandom } from '../../src/mock/service/random.js';
import type { Campaign, Db } from './campaign.js';
import { between } from './draws.js';
import { kill, pause, type Child } from './children.js';
import { DURING_RUNS, KILLS, KILL_DELAY_MS_DB, KILL_DELAY_MS_LOOP_DB, LOCK_TIMEOUT_MS, LOOP, NODES, OUTAGE_EVERY_KILLS, P_EARLY_KILL, PLAYER_NAMES } from './options.js';

/** What the kills found, for the stderr line. */
export interface ClusterFigures {
  outages: number;
  outageKills: number;
  earlyKills: number;
  killsHoldingLocks: number;
  locksHeldAtKills: number;
  killsWithWaiters: number;
  connsWatched: number;
  slowestGoneMs: number;
}

const connsOf = (w: Child): number[] => w.lines.filter((l) => l.startsWith('conn ')).map((l) => Number(l.slice('conn '.length)));

class Cluster {
  readonly figures: ClusterFigures = { outages: 0, outageKills: 0, earlyKills: 0, killsHoldingLocks: 0, locksHeldAtKills: 0, killsWithWaiters: 0, connsWatched: 0, slowestGoneMs: 0 };
  readonly goneChecks: Array<Promise<void>> = [];
  // Closed during an outage: no node starts, and between runs means no node runs.
  gateClosed = false;
  gate: Promise<void> = Promise.resolve();
  readonly parked = Array.from({ length: NODES }, () => false);
  /** A node loop that threw (a worker silent for 30 s, too many dying by themselves): stops the campaign. */
  fatal: unknown;

  constructor(
    readonly c: Campaign,
    readonly db: Db,
  ) {}

  /** After a node died: its connections, and with them its player locks, must leave the server. */
  async watchGone(w: Child, held: readonly string[]): Promise<void> {
    await w.closed; // every `conn` line it printed has been read by now
    const conns = connsOf(w);
    if (conns.length === 0) return;
    this.figures.connsWatched += conns.length;
    const since = performance.now();
    for (;;) {
      const left = await this.db.admin.present(conns);
      const ms = performance.now() - since;
      if (left.length === 0) {
        this.figures.slowestGoneMs = Math.max(this.figures.slowestGoneMs, ms);
        return;
      }
      if (ms > LOCK_TIMEOUT_MS + 5_000) {
        this.c.problem(`${w.label} was SIGKILLed ${ms.toFixed(0)} ms ago and the server still has its connection(s) ${left.join(', ')}${held.length > 0 ? ` (which held the lock of ${held.map((p) => JSON.stringify(p)).join(', ')} at the kill)` : ''}`);
        return;
      }
      await pause(20);
    }
  }

  /** SIGKILL a node, after asking the server which player locks its connections hold. */
  readonly killNode = async (w: Child): Promise<void> => {
    if (!w.alive) return;
    const conns = connsOf(w);
    let held: string[] = [];
    if (conns.length > 0) {
      try {
        const [holders, waiters] = await Promise.all([this.db.admin.lockHolders(this.db.tables.table, PLAYER_NAMES), this.db.admin.lockWaiters()]);
        held = holders.filter((h) => conns.includes(h.conn)).map((h) => h.player);
        if (waiters > 0) this.figures.killsWithWaiters += 1;
      } catch (error) {
        this.c.notes.push(`could not read the lock holders before a kill: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (!w.alive) return;
    kill(w);
    if (held.length > 0) {
      this.figures.killsHoldingLocks += 1;
      this.figures.locksHeldAtKills += held.length;
    }
    this.goneChecks.push(this.watchGone(w, held));
  };

  /** One node's life: run, be killed, restart at once (waiting while an outage lasts). */
  async node(index: number): Promise<void> {
    const { c } = this;
    const nodeRandom = seededRandom(c.base ^ (0x40de + index));
    while (!c.stopping && c.kills < KILLS) {
      this.parked[index] = true;
      while (this.gateClosed) await this.gate;
      this.parked[index] = false;
      if (c.stopping || c.kills >= KILLS) break;
      const w = c.workers.spawn(false, index); // synchronous after the gate's check: an outage cannot slip in between
      if (nodeRandom() < P_EARLY_KILL) {
        // While it starts: connects, creates the tables, resumes what any node left.
        this.figures.earlyKills += 1;
        void c.workers.started(w);
        await Promise.race([pause(between(nodeRandom, [0, 100])), w.closed]);
      } else if ((await c.workers.started(w)) === 'ready') {
        await Promise.race([pause(between(nodeRandom, LOOP ? KILL_DELAY_MS_LOOP_DB : KILL_DELAY_MS_DB)), w.closed]);
      }
      await this.killNode(w);
      const how = await c.workers.ended(w);
      if (how === 'killed') {
        // The kills that stop the campaign are not counted: not at a moment of their own.
        if (!c.stopping) c.kills += 1;
        c.progress();
      } else if (how === 'refused') {
        c.problem(`${w.label} exited with the refusal code, which a database journal never gives: ${c.workers.refusal(w)}`);
      }
      // Restarted at once; with purchases during runs, some arrive first (the other nodes run).
      if (DURING_RUNS && !c.stopping) {
        const n = between(c.buyRandom, [0, 2]);
        for (let i = 0; i < n; i++) await c.buy();
      }
    }
    this.parked[index] = true;
  }

  /** Every node killed at once; purchases while none runs; then every node restarts. */
  async outage(): Promise<void> {
    const { c } = this;
    this.gateClosed = true;
    let open!: () => void;
    this.gate = new Promise((resolve) => (open = resolve));
    this.figures.outages += 1;
    const victims = [...c.workers.live].filter((w) => w.alive);
    this.figures.outageKills += victims.length;
    await Promise.all(victims.map(this.killNode));
    // Until every node loop waits at the gate with its worker dead.
    while (!this.parked.every(Boolean) || c.workers.anyAlive()) {
      for (const w of c.workers.live) if (w.alive) await this.killNode(w);
      await pause(5);
      if (this.fatal !== undefined) break;
    }
    try {
      // A request a dead node sent just before the kill may still be in the mock's hands:
      // let it finish, so that these purchases are really added between runs.
      await pause(20);
      await c.admin('GET', '/__mock/faults');
      // Only here without purchases during runs: more of them then.
      const n = between(c.buyRandom, DURING_RUNS ? [0, NODES] : [NODES, 4 * NODES]);
      for (let i = 0; i < n; i++) await c.buy();
    } finally {
      this.gateClosed = false;
      open();
    }
  }
}

export async function runCluster(c: Campaign): Promise<ClusterFigures> {
  if (c.db === undefined) throw new Error('crash: a database journal without a database');
  const cluster = new Cluster(c, c.db);
  const nodes = Array.from({ length: NODES }, (_, index) =>
    cluster.node(index).catch((error: unknown) => {
      cluster.fatal ??= error;
      cluster.parked[index] = true;
    }),
  );
  let nextOutage = between(c.killRandom, OUTAGE_EVERY_KILLS);
  while (c.kills < KILLS) {
    await pause(10);
    if (cluster.fatal !== undefined) break;
    if (c.kills >= nextOutage && c.kills < KILLS) {
      await cluster.outage();
      nextOutage = c.kills + between(c.killRandom, OUTAGE_EVERY_KILLS);
    }
  }
  c.stopping = true;
  await c.workers.killUntil(Promise.all(nodes));
  if (cluster.fatal !== undefined) throw cluster.fatal;
  await Promise.all(cluster.goneChecks);
  return cluster.figures;
}
