/**
 * Simulation of automatic delivery (issue #23): the delivery loop over the in-process mock
 * on virtual time, players joining and leaving, purchases arriving at random, faults on.
 *
 *   npm run simulate -- --players <n> [--minutes <m>] [--seed <s>] [--interval <ms>] [--budget <calls/s>]
 *                       [--purchases-per-hour <r>] [--typed-claims <0..1>] [--claim-mode exactlyOnce|fast]
 *                       [--hint-claim-mode exactlyOnce|fast]
 *                       [--faults on|off] [--hints <0..1>] [--payment-median <s>] [--abandoned <0..1>] [--verbose]
 *
 * Prints what an online player costs the loop, then the run's line:
 *   simulate loop_heap_bytes_per_online_player: <b> at 1000 players, <b> at 10000 (heap
 *   after joining that many players to a loop with no traffic, minus before, per player)
 *   simulate players=<n> minutes=<m> interval=<ms> claim_mode=<mode>: purchases=… paid_units=… granted_units=…
 *   lost=… duplicated=… silent=… granted_offline=… windows_per_1000_purchases=… grant_p50=<s> grant_p99=<s>
 *   calls_per_player_minute=… max_calls_in_1s=… loop_cpu_ms_per_player_minute=… rss_mb=…
 * (`interval` is the pollIntervalMs asked for; the one in force, stretched by the budget, is in
 * --verbose's `stats.intervalMs`) and exits 1 when silent>0, duplicated>0, granted_offline>0 or
 * max_calls_in_1s exceeds the budget. --verbose adds one JSON line on stderr (CPU split, the
 * loop's stats, events, slow grants and what preceded them, memory). Deterministic for a seed
 * (Math.random, which the loop's jitter uses, is seeded too; no import() is left to finish in
 * real time once virtual time runs): two runs with the same flags print the same line but for
 * the CPU and memory figures, with hints too.
 *
 * Files: scripts/simulate/virtual-time.ts (the clock), world.ts (mock, players, fetch,
 * grant), accounting.ts (the figures).
 *
 * Time. A discrete-event clock: one min-heap of timers (the loop's, through the internal
 * `startDeliveryLoop(host, options, timers)`, and the simulation's). Once the process is
 * idle (setImmediate rounds until nothing new happened) virtual time jumps to the next
 * timer; the mock's clock, the client's `now` (its 10 s guard) and the engine's clocks
 * follow it. The loop runs on the client's own claim and onEvent and an engine on the
 * client's journal, as `client.startDeliveryLoop` wires it. Each call takes a virtual
 * latency (30–150 ms; 3 % of answers are slow, 2–12 s, under the client's 15 s timeout);
 * the mock answers it halfway, in an event of its own.
 *
 * Players. Most are online most of the time: sessions of 45 min on average, 5 min offline
 * (about 90 % online); at the start they connect over the first minute (a restart). 5 % of
 * grants are followed at once by the player leaving (mid-delivery: the rest of that
 * delivery must stay pending). 1 % of grants throw ("inventory full"). 15 % of purchases
 * made online (--typed-claims) are followed by a `/claim` typed 5–60 s later (`loop.claim`),
 * in the form `--claim-mode` names (the loop's `claimMode`): `exactlyOnce`, the loop's
 * default (a purchase no preview listed waits one window), or `fast` (one claim call; a lost
 * answer is a window for staff). One form per run: CI and the guide's figures run both.
 *
 * Checkout hints (#47). With `--hints <share>`, that share of the purchases is made through
 * the web shop's path instead: a checkout (the mock's, outside the loop's budget), then
 * `loop.expect(player, { transactionId })`, then the payment after a delay drawn from a
 * log-normal distribution, median `--payment-median` (default 60 s: a card form or a PayPal
 * login), spread 0.8 (10 % over 2.8 minutes, 1 % over 6.4: a 3-D Secure check, a second
 * card). `--abandoned <share>` of those checkouts are never paid (cancelled after 15
 * minutes): what hints for carts nobody pays cost. Off by default (0), when the random
 * draws are those of a run without hints.
 *
 * Purchases. Poisson, `--purchases-per-hour` per player (default 2), to online and offline
 * players alike (`mock.addPurchase`). Faults on the claim operation (mock.faults), previews
 * and claims alike: lost answers (`dropAfter`, 2 %), 503 before the operation (2 %), `delay`
 * (2 %; the mock's delay is real milliseconds, so it costs no virtual time: the virtual
 * slowness is the latency above).
 *
 * Phases. Main (`--minutes`): purchases arrive. Drain (two intervals in force + 2 min): no
 * more purchases, players still come and go, so the last purchases are delivered as the
 * others were. Then the loop is stopped (virtual time runs until stop() resolves), and a
 * final phase, faults off, starts a second loop on the same journal one second later and
 * joins every player until every paid row is delivered and no line is open in the journal
 * (or a bound passes): `lost` then means truly lost.
 *
 * Figures.
 * - lost: paid units never granted; silent: lost units of a row no `unverified` window of its
 *   player covers: the row's purchase (`created`, when it was paid) and its `delivered` time
 *   both in [from, to]. A window that starts after the purchase hides it from staff.
 * - windows_per_1000_purchases: `unverified` windows reported (what staff get to look at)
 *   per 1,000 purchases.
 * - duplicated: units of an invoice granted under more than one deliveryId (the game
 *   dedupes on deliveryId; a grant naming no invoice, `claim:<uuid>:<i>` from a fast claim,
 *   first covers what is missing of its player and product, the rest counts as duplicated);
 *   granted_offline: calls of give for a player offline at that moment.
 * - hinted_grant_p50/p99 (with --hints): the same from the payment, over the hinted purchases
 *   granted by the loop that was given the hints (before the final phase: hints live in the
 *   loop's memory, and the final phase is a restart); hinted_after_restart: those granted in
 *   the final phase (their player came back only then), in --verbose's `hintedAllP50P99`.
 *   grant_p50/p99 then count the routine purchases only.
 * - grant_p50/p99: virtual seconds from purchase to first grant, counting only the time the
 *   player was online (bought offline: from the join; a player who leaves and comes back:
 *   the stretches online added up), over every purchase granted.
 * - calls_per_player_minute: calls of the main phase / (players × minutes).
 * - max_calls_in_1s: the most calls sent in any one second of virtual time, counted at the
 *   fetch over the whole run (and the loops' own `stats().maxCallsInOneSecond`).
 * - loop_cpu_ms_per_player_minute: process.cpuUsage (user + system) summed over every
 *   event in which the SDK runs (the loop's timers, answers arriving and the client,
 *   engine, journal and give that follow them, join/leave/claim), each measured up to the
 *   process being idle again, main phase, / (players × minutes). Not counted: the mock
 *   answering (its own events) and purchase generation. The measuring itself (two
 *   cpuUsage calls and the settling rounds, about 0.02 ms per event; --verbose calibrates
 *   it) is counted, so the figure is a little high.
 * - rss_mb: RSS at the end of the main phase (the loop running with every online player)
 *   minus RSS before the loop started, both after full GCs repeated until V8 gives back its
 *   unused pages, after a warm-up run (20 players, 3 virtual minutes) has loaded and
 *   compiled the code. It includes the mock's rows and the simulation's own records, so it
 *   bounds the loop's growth from above (--verbose: the heap's growth).
 */
import { seededRandom } from '../src/mock/service/random.js';
import { KEY } from '../test/support/reliability.js';
import { account } from './simulate/accounting.js';
import { World, type SimConfig } from './simulate/world.js';
import { commandLine } from './common/command-line.js';
import { exposeGc } from './common/gc.js';
import type { DeliveryLoop } from '../src/delivery/loop/scheduler.js';

// `--votes`: the vote reward simulation (scripts/simulate/votes.ts), with flags of its own.
if (process.argv.includes('--votes')) await import('./simulate/votes.js').then(({ run }) => run()).then((code) => process.exit(code));

const USAGE =
  'usage: npm run simulate -- --players <n> [--minutes <m>] [--seed <s>] [--interval <ms>] [--budget <calls/s>] [--purchases-per-hour <r>] [--typed-claims <0..1>] [--claim-mode exactlyOnce|fast] [--hint-claim-mode exactlyOnce|fast] [--faults on|off] [--hints <0..1>] [--payment-median <s>] [--abandoned <0..1>] [--verbose]\n' +
  '       npm run simulate -- --votes …   (vote rewards, price changes and late landings: scripts/simulate/votes.ts; --votes --help for its flags)';
const cli = commandLine('simulate', USAGE, {
  players: { type: 'string', default: '50' },
  minutes: { type: 'string', default: '30' },
  seed: { type: 'string', default: '1' },
  interval: { type: 'string' },
  budget: { type: 'string' },
  'purchases-per-hour': { type: 'string', default: '2' },
  'typed-claims': { type: 'string', default: '0.15' },
  'claim-mode': { type: 'string', default: 'exactlyOnce' },
  // The loop's hintClaimMode: by default its claimMode.
  'hint-claim-mode': { type: 'string' },
  hints: { type: 'string', default: '0' },
  'payment-median': { type: 'string', default: '60' },
  abandoned: { type: 'string', default: '0' },
  faults: { type: 'string', default: 'on' },
  verbose: { type: 'boolean', default: false },
});
const { values } = cli;
const ANY = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] as const;
const PLAYERS = cli.integer('players', 1, ANY[1]);
const MINUTES = cli.integer('minutes', 1, ANY[1]);
const SEED = cli.integer('seed', ...ANY);
const INTERVAL = values.interval === undefined ? undefined : cli.integer('interval', ...ANY);
const BUDGET = values.budget === undefined ? undefined : cli.integer('budget', ...ANY);
const PURCHASES_PER_HOUR = cli.number('purchases-per-hour', 0, Number.POSITIVE_INFINITY);
if (PURCHASES_PER_HOUR === 0) cli.fail('--purchases-per-hour must be above 0');
const TYPED_CLAIMS = cli.number('typed-claims', 0, 1);
const FAULTS = cli.oneOf('faults', ['on', 'off']) === 'on';
const CLAIM_MODE = cli.oneOf('claim-mode', ['exactlyOnce', 'fast']);
const HINT_CLAIM_MODE = cli.values['hint-claim-mode'] === undefined ? CLAIM_MODE : cli.oneOf('hint-claim-mode', ['exactlyOnce', 'fast']);
const HINTS = cli.number('hints', 0, 1);
const PAYMENT_MEDIAN_MS = cli.number('payment-median', 0, 3_600) * 1_000;
const ABANDONED = cli.number('abandoned', 0, 1);
/** The loop's defaults, for the printed line. */
const EFFECTIVE_INTERVAL = INTERVAL ?? 30_000;
const EFFECTIVE_BUDGET = BUDGET ?? 10;

// Everything random is seeded, the loop's jitter (Math.random) included.
const random = seededRandom(SEED ^ 0x51e1a7e);
Math.random = seededRandom(SEED ^ 0x7a11e4);
const gc = exposeGc();

const config = (players: number): SimConfig => ({ players, pollIntervalMs: INTERVAL, maxCallsPerSecond: BUDGET, purchasesPerHour: PURCHASES_PER_HOUR, typedClaims: TYPED_CLAIMS, seed: SEED, random, claimMode: CLAIM_MODE, hintClaimMode: HINT_CLAIM_MODE, hints: HINTS, paymentMedianMs: PAYMENT_MEDIAN_MS, abandoned: ABANDONED });

/** Purchases granted more than 1.5 intervals + one window after they could be, and what happened to each before its grant. */
function slowGrants(world: World, intervalMs: number) {
  const over = Math.round(1.5 * intervalMs + 10_000);
  const slow = [...world.purchases.values()].filter((p) => p.latency !== undefined && p.latency > over).sort((a, b) => (b.latency as number) - (a.latency as number));
  const worst = slow.slice(0, 8).map((p) => ({ s: Math.round((p.latency as number) / 1_000), loopError: p.errorBefore, typedClaim: p.typedClaim, threw: p.threw, leaves: p.leaves }));
  return { over: over / 1_000, total: slow.length, afterALoopError: slow.filter((p) => p.errorBefore).length, worst };
}

/** The hinted purchases granted more than 25 s (the target's p99) after their payment, and what happened to each before its grant. */
function slowHinted(world: World) {
  const slow = [...world.purchases.values()].filter((p) => p.hinted && p.latency !== undefined && p.latency > 25_000).sort((a, b) => (b.latency as number) - (a.latency as number));
  const count = (test: (p: (typeof slow)[number]) => boolean) => slow.filter(test).length;
  return { total: slow.length, afterALoopError: count((p) => p.errorBefore), giveThrew: count((p) => p.threw), left: count((p) => p.leaves > 0), typedClaim: count((p) => p.typedClaim), worst: slow.slice(0, 8).map((p) => ({ s: Math.round((p.latency as number) / 1_000), loopError: p.errorBefore, threw: p.threw, leaves: p.leaves })) };
}

/** Stops the world's loop, running virtual time until stop() resolves. */
async function stopLoop(world: World): Promise<void> {
  let stopped = false;
  void world.loop?.stop().then(() => (stopped = true));
  if (!(await world.time.run(Number.POSITIVE_INFINITY, () => stopped))) throw new Error('stop() never resolved, and no timer was left to run');
}

/** Faults off, every player joined on a second loop over the same journal, until everything paid was delivered (or a bound). */
async function finalPhase(world: World) {
  const { time, mock, journal } = world;
  mock.faults.clear();
  world.phase = 'final';
  // A restart takes a moment: the new loop's budget must not meet the old loop's last second.
  await time.run(time.now + 1_000);
  const loop = world.startLoop();
  for (const player of world.players) {
    if (player.online) loop.join(player.name);
    else world.setOnline(player, true);
  }
  // Every player previewed and claimed once at the budget's pace, plus room for retries.
  const bound = time.now + Math.ceil((3 * PLAYERS * 1_000) / EFFECTIVE_BUDGET) + 600_000;
  let settled = false;
  const check = async (): Promise<void> => {
    const open = (await journal.pending()).filter((e) => e.state === 'claimed' || e.state === 'claiming' || (e.state === 'intended' && e.settled !== true));
    settled = open.length === 0 && mock.purchases(KEY).every((r) => r.deliverystatus === 'Delivered') && loop.stats().pending === 0;
    if (!settled) time.schedule(time.now + 10_000, 'sim', check);
  };
  time.schedule(time.now + 10_000, 'sim', check);
  await time.run(bound, () => settled);
  const stats = loop.stats();
  await stopLoop(world);
  return { stats, settled };
}

/**
 * Memory once garbage is gone: full GCs, a little real time between them, until V8 has
 * given back the pages it no longer needs (one GC alone leaves the heap's peak committed).
 */
async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  let last = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 10; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { heapTotal } = process.memoryUsage();
    if (heapTotal >= last) break;
    last = heapTotal;
  }
  return process.memoryUsage();
}

/** CPU ms the measuring itself costs per event (two cpuUsage calls, the settling rounds), from events that do nothing. */
async function measuringCost(): Promise<number> {
  const time = new World(config(1)).time;
  for (let i = 0; i < 2_000; i++) time.schedule(i, 'sim', () => {});
  await time.run(Number.POSITIVE_INFINITY);
  return time.cpu.sim / 2_000;
}

/**
 * What an online player costs the loop, in heap bytes: a loop of `players` joined players
 * with no traffic (virtual time does not run: no preview, no purchase, nothing in the mock
 * or the simulator's records), the heap after the joins minus before, settled both times,
 * over `players`. The names exist before the joins (the game's strings, not the loop's).
 */
async function loopHeapPerPlayer(players: number): Promise<number> {
  const world = new World(config(players));
  const loop = world.startLoop();
  const names = world.players.map((player) => player.name);
  const before = (await settledMemory()).heapUsed;
  for (const name of names) loop.join(name);
  const after = (await settledMemory()).heapUsed;
  await stopLoop(world);
  return (after - before) / players;
}

/** A short run first, so that code loading and compiling is not counted as RSS growth. */
async function warmUp(): Promise<void> {
  const world = new World(config(20));
  world.faultsOn();
  world.startLoop();
  world.start();
  await world.time.run(180_000);
  world.phase = 'ending';
  await stopLoop(world);
}

async function main(): Promise<number> {
  await warmUp();
  const perPlayer = [await loopHeapPerPlayer(1_000), await loopHeapPerPlayer(10_000)];
  console.log(
    `simulate loop_heap_bytes_per_online_player: ${Math.round(perPlayer[0]!)} at 1000 players, ${Math.round(perPlayer[1]!)} at 10000 (target <= 2048; the loop's own structures, no mock rows, no simulator records)`,
  );
  const perEventMs = values.verbose ? await measuringCost() : 0;
  const world = new World(config(PLAYERS));
  const { time } = world;
  const end = MINUTES * 60_000;
  if (FAULTS) world.faultsOn();
  const memStart = await settledMemory();
  const { rss: rssStart, heapUsed: heapStart } = memStart;
  const realStart = performance.now();

  // Main phase: the loop at its defaults (unless flags say otherwise), players, purchases.
  world.startLoop();
  world.start();
  await time.run(end);
  const mainCalls = world.calls;
  const mainStats = (world.loop as DeliveryLoop).stats();
  const { loop: loopCpuMs, mock: mockCpuMs } = time.cpu;
  const loopEvents = time.events.loop;
  const realMain = performance.now() - realStart;
  // Memory with the loop running, every online player in it.
  const memEnd = await settledMemory();
  const rssMb = (memEnd.rss - rssStart) / 1_048_576;

  // Drain: no more purchases, players still come and go, for two intervals: the last
  // purchases are delivered as the others were, not by the final phase.
  world.phase = 'drain';
  await time.run(end + 2 * mainStats.intervalMs + 120_000);
  const drainEnd = time.now;
  world.phase = 'ending';
  await stopLoop(world);
  const stopTook = time.now - drainEnd;
  const final = await finalPhase(world);
  const figures = account(world, drainEnd);
  const maxCalls = Math.max(world.maxCallsIn1s, mainStats.maxCallsInOneSecond, final.stats.maxCallsInOneSecond);
  const playerMinutes = PLAYERS * MINUTES;
  console.log(
    `simulate players=${PLAYERS} minutes=${MINUTES} interval=${EFFECTIVE_INTERVAL} claim_mode=${CLAIM_MODE}${HINTS > 0 ? ` hints=${HINTS} hint_claim_mode=${HINT_CLAIM_MODE} payment_median=${PAYMENT_MEDIAN_MS / 1_000}${ABANDONED > 0 ? ` abandoned=${ABANDONED}` : ''}` : ''}: purchases=${world.purchases.size} paid_units=${figures.paid} granted_units=${figures.granted} ` +
      `lost=${figures.lost} duplicated=${figures.duplicated} silent=${figures.silent} granted_offline=${world.grantsOffline} windows_per_1000_purchases=${figures.windowsPer1000.toFixed(2)} ` +
      `grant_p50=${figures.p50.toFixed(1)} grant_p99=${figures.p99.toFixed(1)} ${HINTS > 0 ? `hinted=${figures.hinted} hinted_grant_p50=${figures.hintedP50.toFixed(1)} hinted_grant_p99=${figures.hintedP99.toFixed(1)} hinted_after_restart=${figures.hintedAfterRestart} ` : ''}calls_per_player_minute=${(mainCalls / playerMinutes).toFixed(2)} ` +
      `max_calls_in_1s=${maxCalls} loop_cpu_ms_per_player_minute=${(loopCpuMs / playerMinutes).toFixed(4)} rss_mb=${rssMb.toFixed(1)}`,
  );
  if (values.verbose) {
    const detail = {
      loopCpuPercentOfOneCore: Number(((100 * loopCpuMs) / end).toFixed(3)),
      loopCpuMs: Math.round(loopCpuMs),
      loopEvents,
      measuringCostPerEventMs: Number(perEventMs.toFixed(4)),
      mockCpuMs: Math.round(mockCpuMs),
      realMsMain: Math.round(realMain),
      stats: { ...mainStats, lastError: String(mainStats.lastError) },
      events: world.events,
      claimsTyped: world.claimsTyped,
      claimOutcomes: Object.fromEntries(world.claimOutcomes),
      hintOutcomes: Object.fromEntries(world.hintOutcomes),
      abandonedCheckouts: world.abandonedCheckouts,
      hintedAllP50P99: [figures.hintedAllP50, figures.hintedAllP99].map((s) => Number(s.toFixed(1))),
      claimRejected: world.claimRejected,
      windows: world.windows.length,
      giveThrew: world.giveThrew,
      leftMidDelivery: world.leftMidDelivery,
      regrantsDeduped: world.game.regrants,
      grantedInFinalPhase: figures.grantedInFinal,
      beforeFinalPhaseP50P99: [figures.mainP50, figures.mainP99].map((s) => Number(s.toFixed(1))),
      slowGrants: slowGrants(world, mainStats.intervalMs),
      ...(HINTS > 0 ? { slowHinted: slowHinted(world) } : {}),
      stopTookMs: Math.round(stopTook),
      finalPhaseMs: Math.round(time.now - drainEnd - stopTook),
      finalSettled: final.settled,
      undeliveredRows: world.mock.purchases(KEY).filter((r) => r.deliverystatus !== 'Delivered').length,
      heapUsedGrowthMb: Number(((memEnd.heapUsed - heapStart) / 1_048_576).toFixed(1)),
      rssStartMb: Math.round(rssStart / 1_048_576),
    };
    console.error(JSON.stringify(detail));
  }
  if (!final.settled) console.error('simulate: the final phase ended at its bound with deliveries still open');
  const bad = figures.silent > 0 || figures.duplicated > 0 || world.grantsOffline > 0 || maxCalls > EFFECTIVE_BUDGET;
  return bad ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
