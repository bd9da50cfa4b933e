/**
 * The power-loss campaign of the file journal (issue #27 point 3), shared by
 * `scripts/crash/power-loss.ts` (`npm run crash -- --power-loss`) and
 * `test/journals/power-loss.test.ts`.
 *
 * A dozen delivery runs (both modes; purchases during the 10 s wait and between rounds;
 * claim answers lost; a grant that throws once; compactions with a small `compactAfter`)
 * are played against the in-process mock with a FileJournal over the recording file system
 * (test/support/power-loss.ts). For each step k of a run (or a sample), the run is played again
 * and the power goes as step k is about to happen (and, where the world differs, once more
 * as step k − 1 returns: before the claim it preceded is sent, before the grant it allowed):
 * the mock and the game are exactly as the world saw them then (the game's grants are
 * durable: it granted what it granted). Each
 * power-cut state of the disk at k ({@link choices}: only what was synced, everything
 * written, each last write torn at every line end and 4 KiB boundary, random mixes) is
 * materialized into a fresh directory, a NEW FileJournal opens it, `resumeDeliveries` and
 * `deliver` for every player run (no faults), and the outcome is counted:
 *
 * - lost: paid units not granted at the end;
 * - silent: lost units of a purchase that no reported window of its player covers (the
 *   `unverified` events before and after the cut, and the window records in the journal);
 * - duplicated: units granted beyond what was paid (a unit granted before the cut and again
 *   under another deliveryId: the game's dedupe cannot catch it);
 * - forgotten: records the journal acknowledged (an append or an acknowledge that resolved
 *   before the cut) that the journal file no longer shows after it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournal, type DeliveryJournal, type DeliveryMode, type JournalEntry, type StorefrontEvent, type UnverifiedWindow } from '../../src/index.js';
import { choices, cutState, fingerprint, materialize, record, seeded, walk, type Breakage, type CutChoice, type Moment, type Step } from './power-loss.js';
import { PRODUCTS } from './products.js';
import { Game, KEY, inProcessStore } from './reliability.js';

/** One delivery run of the campaign. */
export interface Scenario {
  name: string;
  mode: DeliveryMode;
  seed: number;
  players: string[];
  /** Purchases before the run: [player index, product id]. */
  initial: Array<[number, number]>;
  /** A purchase completes during each player's first 10 s wait (exactly-once). */
  duringWait: boolean;
  /** Between rounds: [round, player index, product id]. */
  later: Array<[number, number, number]>;
  /** Claim answers lost: the `skip` of a `dropAfter` rule each (claims and previews count). */
  drops: number[];
  /** The grant call (1-based) that throws once; 0 for none. */
  grantFailsAt: number;
  compactAfter: number;
  rounds: number;
}

/** The store's product ids (the reliability seed's). */
const PRODUCT_IDS = PRODUCTS.map((p) => p.id);
const FILE = 'journal.jsonl';

/** The dozen runs: both modes, every trouble, each (player, product) bought at most once so every unit is traced to its purchase. */
export function scenarios(seed = 1): Scenario[] {
  const out: Scenario[] = [];
  for (let i = 0; i < 12; i++) {
    const random = seeded(seed * 1000 + i);
    const mode: DeliveryMode = i % 2 === 0 ? 'exactlyOnce' : 'fast';
    const players = ['Ann', 'Bo', 'Cy'].slice(0, 2 + (i % 2));
    const free = players.map(() => [...PRODUCT_IDS].sort(() => random() - 0.5));
    const take = (p: number): number => free[p]?.pop() as number;
    const initial: Array<[number, number]> = [];
    players.forEach((_, p) => {
      for (let n = 1 + Math.floor(random() * 2); n > 0; n--) initial.push([p, take(p)]);
    });
    const rounds = 2;
    const later: Array<[number, number, number]> = players.map((_, p) => [0, p, take(p)] as [number, number, number]).filter(() => random() < 0.7);
    out.push({
      name: `${mode}-${i}`,
      mode,
      seed: seed * 1000 + i,
      players,
      initial,
      duringWait: mode === 'exactlyOnce' && i % 4 !== 2,
      later,
      drops: i % 3 === 2 ? [] : [Math.floor(random() * 4), 4 + Math.floor(random() * 4)].slice(0, 1 + (i % 2)),
      grantFailsAt: i % 4 === 1 || i % 4 === 0 ? 1 + Math.floor(random() * 3) : 0,
      compactAfter: i % 3 === 0 ? 1000 : 2 + (i % 3),
      rounds,
    });
  }
  return out;
}

/** A journal that notes which of its calls resolved: those are durable, whatever happens next. */
class Witness implements DeliveryJournal {
  readonly resolved: Array<{ op: 'put'; entries: JournalEntry[] } | { op: 'ack'; ids: string[] }> = [];
  /** Ids of puts and acknowledgements started: a call cut short may or may not have landed. */
  readonly inFlight = new Set<string>();
  readonly ackInFlight = new Set<string>();
  constructor(readonly inner: FileJournal) {}
  async append(entries: readonly JournalEntry[]): Promise<void> {
    const copies = entries.map((e) => structuredClone(e));
    for (const e of copies) this.inFlight.add(e.deliveryId);
    await this.inner.append(entries);
    for (const e of copies) this.inFlight.delete(e.deliveryId);
    this.resolved.push({ op: 'put', entries: copies });
  }
  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.inner.pending(playerName);
  }
  async acknowledge(ids: readonly string[]): Promise<void> {
    const copies = [...ids];
    for (const id of copies) this.ackInFlight.add(id);
    await this.inner.acknowledge(ids);
    for (const id of copies) this.ackInFlight.delete(id);
    this.resolved.push({ op: 'ack', ids: copies });
  }
}

/** A world: the mock (the service), the game (durable), the events seen, a journal directory. */
interface World {
  store: ReturnType<typeof inProcessStore>;
  game: Game;
  events: StorefrontEvent[];
  dir: string;
  witness: Witness;
}

/** Plays a scenario in `dir` until it ends or the power goes (the recorder's `died`). */
async function play(s: Scenario, dir: string, died: Promise<void>): Promise<World> {
  const store = inProcessStore();
  const { mock, sleep } = store;
  const game = new Game();
  const events: StorefrontEvent[] = [];
  const witness = new Witness(new FileJournal(join(dir, FILE), { compactAfter: s.compactAfter }));
  const world: World = { store, game, events, dir, witness };
  const client = store.client(witness, { onEvent: (e) => events.push(e) });
  for (const [p, id] of s.initial) mock.addPurchase(KEY, { playerName: s.players[p] as string, id });
  for (const skip of s.drops) mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip, times: 1 });
  let grants = 0;
  const grant = game.grant(() => ++grants === s.grantFailsAt);
  const waited = new Set<string>();
  const spare = s.players.map((_, p) => PRODUCT_IDS.filter((id) => !s.initial.some(([q, i]) => q === p && i === id) && !s.later.some(([, q, i]) => q === p && i === id)));
  const run = async () => {
    await client.resumeDeliveries(grant, { sleep });
    for (let round = 0; round < s.rounds; round++) {
      for (const [p, player] of s.players.entries()) {
        const wait = async (ms: number) => {
          if (s.duringWait && !waited.has(player) && ms >= 1_000) {
            waited.add(player);
            const id = spare[p]?.pop();
            if (id !== undefined) mock.addPurchase(KEY, { playerName: player, id });
          }
          await sleep(ms);
        };
        await client.deliver(player, grant, { mode: s.mode, sleep: wait, maxRateLimitWaits: 3 });
      }
      for (const [r, p, id] of s.later) if (r === round) mock.addPurchase(KEY, { playerName: s.players[p] as string, id });
      mock.clock.advance(11_000);
    }
  };
  await Promise.race([run(), died]);
  return world;
}

/** The journal file as a power cut left it: its entries, and the ids its ack lines name. */
function readJournal(data: Buffer): { entries: Map<string, JournalEntry>; acked: Set<string>; damaged: boolean } {
  const entries = new Map<string, JournalEntry>();
  const acked = new Set<string>();
  const text = data.toString('utf8');
  const lines = text.split('\n');
  let damaged = false;
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    let line: { op: string; entry?: JournalEntry; entries?: JournalEntry[]; ids?: string[] };
    try {
      line = JSON.parse(raw) as typeof line;
    } catch {
      if (i !== lines.length - 1) damaged = true; // only a last line without its newline may be torn
      return;
    }
    if (line.op === 'ack') for (const id of line.ids ?? []) (entries.delete(id), acked.add(id));
    else for (const e of line.entries ?? (line.entry ? [line.entry] : [])) entries.set(e.deliveryId, e);
  });
  return { entries, acked, damaged };
}

/** What one power-cut state came to. */
export interface StateResult {
  scenario: string;
  step: number;
  choice: string;
  lost: number;
  silent: number;
  duplicated: number;
  forgotten: number;
  /** The recovery failed with an error (a damaged journal: loud, but not what a power cut may do). */
  error?: string;
  details: string[];
}

/** Checks one state: recovery on a new FileJournal over `cutDir`, then the count. */
async function check(s: Scenario, world: World, cutDir: string, k: number, choice: CutChoice): Promise<StateResult> {
  const { mock, sleep } = world.store;
  const result: StateResult = { scenario: s.name, step: k, choice: choice.label, lost: 0, silent: 0, duplicated: 0, forgotten: 0, details: [] };
  // Nothing acknowledged lost: every resolved call's change is in the file.
  let onDisk: Buffer;
  try {
    onDisk = readFileSync(join(cutDir, FILE));
  } catch {
    onDisk = Buffer.alloc(0);
  }
  const disk = readJournal(onDisk);
  const expected = new Map<string, JournalEntry>();
  for (const call of world.witness.resolved) {
    if (call.op === 'put') for (const e of call.entries) expected.set(e.deliveryId, e);
    else for (const id of call.ids) expected.delete(id);
  }
  const everPut = new Set(world.witness.resolved.flatMap((c) => (c.op === 'put' ? c.entries.map((e) => e.deliveryId) : [])));
  for (const id of expected.keys()) {
    if (!disk.entries.has(id) && !disk.acked.has(id) && !world.witness.ackInFlight.has(id)) {
      result.forgotten += 1;
      result.details.push(`acknowledged record ${id} is gone`);
    }
  }
  for (const id of disk.entries.keys()) {
    if (everPut.has(id) && !expected.has(id) && !world.witness.inFlight.has(id)) {
      result.forgotten += 1;
      result.details.push(`acknowledged acknowledgement of ${id} is gone`);
    }
  }
  if (disk.damaged) result.details.push('a complete line of the journal is not JSON');

  // Recovery: the bridge restarts (a little later) on the disk the power cut left.
  mock.faults.clear();
  mock.clock.advance(11_000);
  const journal = new FileJournal(join(cutDir, FILE), { compactAfter: s.compactAfter });
  const after: StorefrontEvent[] = [];
  const client = world.store.client(journal, { onEvent: (e) => after.push(e) });
  const grant = world.game.grant();
  let windows: UnverifiedWindow[] = [];
  try {
    await client.resumeDeliveries(grant, { sleep });
    for (const player of s.players) {
      for (let round = 0; round < 3; round++) {
        await client.deliver(player, grant, { mode: s.mode, sleep, maxRateLimitWaits: 3 });
        const left = (await journal.pending(player)).filter((e) => e.state === 'claimed' || e.state === 'intended' || e.state === 'claiming').length;
        if (left === 0 && mock.purchases(KEY, player).every((r) => r.deliverystatus === 'Delivered')) break;
        mock.clock.advance(11_000);
      }
    }
    windows = (await journal.pending())
      .filter((e) => e.state === 'unverified')
      .map((e) => ({ playerName: e.playerName, from: (e as { from: number }).from, to: (e as { to: number }).to }));
  } catch (error) {
    result.error = (error as Error).message;
  } finally {
    await journal.close().catch(() => undefined);
  }
  for (const e of [...world.events, ...after]) if (e.type === 'unverified') windows.push(e.window);

  // The count, per purchase: each (player, product) was bought at most once.
  const rows = mock.purchases(KEY).filter((r) => r.paymentstatus === 'Paid');
  const seen = new Set<string>();
  for (const row of rows) {
    const key = `${row.username}\u0000${row.productid}`;
    if (seen.has(key)) throw new Error(`power-loss: ${s.name} bought ${key} twice: the count could not tell the purchases apart`);
    seen.add(key);
    const applied = world.game.applied.get(key) ?? 0;
    if (applied > row.givequantity) {
      result.duplicated += applied - row.givequantity;
      result.details.push(`${row.username} invoice ${row.invoice}: granted ${applied} of ${row.givequantity} units`);
    }
    if (applied >= row.givequantity) continue;
    const lost = row.givequantity - applied;
    result.lost += lost;
    const at = row.delivered === null ? undefined : Date.parse(row.delivered);
    const covered = at !== undefined && windows.some((w) => w.playerName === row.username && at >= w.from - 1_000 && at <= w.to + 1_000);
    if (!covered) result.silent += lost;
    result.details.push(`${row.username} invoice ${row.invoice}: ${lost} units lost${covered ? ' (inside a reported window)' : ', SILENT'}`);
  }
  for (const [key, applied] of world.game.applied) {
    if (!seen.has(key)) {
      result.duplicated += applied;
      result.details.push(`${key.replace('\u0000', ' ')}: ${applied} units granted, none paid`);
    }
  }
  return result;
}

/** Options of {@link campaign}. */
export interface CampaignOptions {
  seed?: number;
  breakage?: Breakage;
  /** How many states to check at most (sampled evenly over the steps of every run); default: all. */
  states?: number;
  /** Random tear choices per step, besides the fixed ones. Default 2. */
  randomChoices?: number;
  /** The runs (default {@link scenarios}). */
  runs?: Scenario[];
  /** Where the temp dirs go (default /dev/shm when it exists: fsync costs nothing there). */
  root?: string;
  /** Called per state checked. */
  onState?: (result: StateResult) => void;
}

/** The campaign's figures. */
export interface CampaignResult {
  states: number;
  steps: number;
  lost: number;
  silent: number;
  duplicated: number;
  forgotten: number;
  errors: number;
  /** The first few states that lost silently, duplicated, forgot or failed, described. */
  examples: string[];
  seconds: number;
}

async function withRecorder<T>(dieAt: number, breakage: Breakage, dir: string, run: (died: Promise<void>) => Promise<T>, moment: Moment = 'before'): Promise<{ value: T; steps: Step[]; dead: boolean }> {
  const recording = record({ dieAt, breakage, moment });
  try {
    const value = await run(recording.died);
    return { value, steps: recording.steps, dead: recording.dead };
  } finally {
    await recording.uninstall();
    forgetLocks(dir);
  }
}

/** A run the power cut leaves its journal's lock in this process's registry: forgotten, as the dead process would. */
function forgetLocks(dir: string): void {
  const registry = (globalThis as Record<symbol, { held: Map<string, unknown>; names?: Map<string, string>; onExit: () => void } | undefined>)[Symbol.for('teamgames-sdk.FileJournal.locks')];
  if (registry === undefined) return;
  for (const path of [...registry.held.keys()]) {
    if (path.startsWith(`${dir}/`) && registry.held.delete(path)) {
      registry.names?.delete(path);
      if (registry.held.size === 0) process.off('exit', registry.onExit);
    }
  }
}

function defaultRoot(): string {
  try {
    return mkdtempSync('/dev/shm/teamgames-power-loss-');
  } catch {
    return mkdtempSync(join(tmpdir(), 'teamgames-power-loss-'));
  }
}

/**
 * Runs the campaign: every run recorded once, then every step (or an even sample) cut
 * with each of its distinct power-cut states, each checked after a recovery.
 */
export async function campaign(options: CampaignOptions = {}): Promise<CampaignResult> {
  const started = performance.now();
  const breakage = options.breakage ?? 'none';
  const runs = options.runs ?? scenarios(options.seed ?? 1);
  const root = options.root ?? defaultRoot();
  const random = seeded((options.seed ?? 1) * 7919);
  const total: CampaignResult = { states: 0, steps: 0, lost: 0, silent: 0, duplicated: 0, forgotten: 0, errors: 0, examples: [], seconds: 0 };
  let n = 0;
  const fresh = (what: string) => join(root, `${what}-${n++}`);
  try {
    // Each run once, whole: how many steps it takes.
    const lengths: number[] = [];
    const whole: Step[][] = [];
    for (const s of runs) {
      const dir = fresh('full');
      mkdirSync(dir);
      const { steps } = await withRecorder(Infinity, breakage, dir, (died) => play(s, dir, died));
      lengths.push(steps.length);
      whole.push(steps);
      rmSync(dir, { recursive: true, force: true });
    }
    const allSteps = lengths.reduce((a, b) => a + b + 1, 0);
    total.steps = allSteps;
    const budget = options.states ?? Infinity;
    // Every step when the budget allows (each gives one or more states), else an even sample.
    const stride = Number.isFinite(budget) ? Math.max(1, allSteps / Math.max(1, budget / 2)) : 1;
    let cursor = random() * stride;
    for (const [r, s] of runs.entries()) {
      const length = lengths[r] as number;
      const picks: number[] = [];
      if (stride === 1) for (let k = 0; k <= length; k++) picks.push(k);
      else {
        for (; cursor <= length; cursor += stride) picks.push(Math.floor(cursor));
        cursor -= length + 1;
      }
      for (const k of picks) {
        if (total.states >= budget) break;
        await cutAt(s, k, whole[r] as Step[], breakage, random, options.randomChoices ?? 2, fresh, budget, total, options.onState);
      }
    }
  } finally {
    if (options.root === undefined) rmSync(root, { recursive: true, force: true });
  }
  total.seconds = (performance.now() - started) / 1000;
  return total;
}

/** Every distinct power-cut state at step k of one run, each checked on a world played to k again. */
async function cutAt(
  s: Scenario,
  k: number,
  whole: readonly Step[],
  breakage: Breakage,
  random: () => number,
  randomCount: number,
  fresh: (what: string) => string,
  budget: number,
  total: CampaignResult,
  onState: ((result: StateResult) => void) | undefined,
): Promise<void> {
  let world: World | undefined;
  let steps: Step[] = [];
  let live = '';
  const replay = async (moment: Moment = 'before') => {
    live = fresh('live');
    mkdirSync(live);
    const played = await withRecorder(k, breakage, live, (died) => play(s, live, died), moment);
    world = played.value;
    steps = played.steps;
  };
  await replay();
  const first = steps.map((step) => step.kind).join(',');
  const before = worldPrint(world as World);
  const walked = walk(steps, k);
  const seen = new Set<string>();
  const distinct: CutChoice[] = [];
  for (const choice of choices(walked, random, randomCount)) {
    const print = fingerprint(cutState(walked, choice));
    if (seen.has(print)) continue;
    seen.add(print);
    distinct.push(choice);
  }
  // The same disk, the power gone as step k − 1 returned: before the claim it preceded was
  // sent, before the grant it allowed (checked when the world differs, on what was synced).
  const moments: Array<[Moment, CutChoice]> = distinct.map((choice) => ['before', choice]);
  if (k > 0) moments.push(['returning', { ...(distinct[0] as CutChoice), label: `${(distinct[0] as CutChoice).label}, the power gone as step ${k - 1} returned` }]);
  for (const [i, [moment, choice]] of moments.entries()) {
    if (total.states >= budget) break;
    if (i > 0) {
      rmSync(live, { recursive: true, force: true });
      await replay(moment); // a fresh world (mock, game) at the same step: runs are deterministic
      if (steps.map((step) => step.kind).join(',') !== first) throw new Error(`power-loss: ${s.name} did not replay the same steps up to ${k}: the run is not deterministic`);
      if (moment === 'returning' && worldPrint(world as World) === before) continue; // nothing happened in between
    }
    const state = cutState(walk(steps, k), choice);
    const cut = fresh('cut');
    materialize(state, live, cut);
    const result = await check(s, world as World, cut, k, choice);
    rmSync(cut, { recursive: true, force: true });
    total.states += 1;
    total.lost += result.lost;
    total.silent += result.silent;
    total.duplicated += result.duplicated;
    total.forgotten += result.forgotten;
    if (result.error !== undefined) total.errors += 1;
    if ((result.silent > 0 || result.duplicated > 0 || result.forgotten > 0 || result.error !== undefined) && total.examples.length < 5) {
      const step = whole[k] === undefined ? 'the end of the run' : describeStep(whole[k] as Step);
      total.examples.push(`${s.name} power cut before step ${k} (${step}), ${choice.label}: ${result.error ?? result.details.join('; ')}`);
    }
    onState?.(result);
  }
  rmSync(live, { recursive: true, force: true });
}

/** What the world (the game, the service, the reports) holds, to tell two moments apart. */
function worldPrint(world: World): string {
  const rows = world.store.mock.purchases(KEY).map((r) => `${r.invoice}:${r.deliverystatus}`);
  return JSON.stringify([[...world.game.applied], rows, world.events.length]);
}

function describeStep(step: Step): string {
  switch (step.kind) {
    case 'write':
      return `write of ${step.bytes.length} bytes at ${step.offset} to inode ${step.inode}: ${JSON.stringify(step.bytes.toString('utf8').slice(0, 60))}…`;
    case 'create':
    case 'unlink':
      return `${step.kind} ${step.path.split('/').pop()}`;
    case 'rename':
    case 'link':
      return `${step.kind} ${step.from.split('/').pop()} → ${step.to.split('/').pop()}`;
    case 'sync':
      return `${step.how} of inode ${step.inode}`;
    case 'truncate':
      return `truncate inode ${step.inode} to ${step.size}`;
    case 'dirsync':
      return 'directory sync';
  }
}
