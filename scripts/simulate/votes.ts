/**
 * `npm run simulate -- --votes`: vote rewards (`deliverVoteReward`, issues #36, #43) over
 * the in-process mock, with players voting and spending at random, answers lost on the
 * way, requests carried out after a later answer (`landLate`), 503s, the owner changing
 * rewards' prices on the dashboard, gives that throw and simulated process deaths at every
 * journal write; then a final phase, faults off, in a fresh process: every held request
 * lands, the clock passes the time a request can still land, `resumeVoteRewards`, then one
 * more claim per player with a lost answer left.
 *
 *   npm run simulate -- --votes [--players <n>] [--calls <n>] [--seed <s>] [--faults on|off] [--all <0..1>] [--prices <0..1>] [--late <0..1>] [--steady <0..1>]
 *
 * `--all`: the share of claims sent with `amount: 'all'` (default 0.25; the rest ask 1 to 3
 * units). `--prices`: the chance, at each step, that a reward's price changes (default
 * 0.01). `--late`: the share of vote requests carried out after a later answer (default 0.02).
 * `--steady`: the share of players whose command always asks the Scroll, one unit and two
 * in turn (default 0.25): the traffic where the counters can prove a lost call carried out.
 *
 * Prints one line:
 *   simulate votes players=… calls=… seed=…: votes=… points_spent=… points_granted=… lost=…
 *   silent=… duplicated=… unpaid=… recovered=… windows=… lost_answers=… late_landings=…
 *   price_changes=… crashes=… give_failures=… regives=…
 * - points_spent: what the claims the mock carried out cost (each at the price it paid);
 *   points_granted: the points of the claims the game's units account for; lost: the rest.
 * - silent: lost points no window covers (a window of the player whose span holds the
 *   moment the claim was carried out, within the windows' `points`);
 *   duplicated: rows given for a claim another row already accounted for; unpaid:
 *   recovered rows for which no claim was left unaccounted (a reward nobody paid for).
 * - recovered: rows given from the counters after a lost answer; windows: open windows.
 * - regives: gives the game skipped as repeats of a `deliveryId` (a death between a give and
 *   its acknowledgement): not duplicates, the dedupe check at work.
 * Exits 1 when silent, duplicated or unpaid is above 0. Deterministic for a seed.
 *
 * @module
 */
import { MemoryJournal, StorefrontClient, inspectJournal, type GivenVoteReward, type JournalEntry } from '../../src/index.js';
import { createMockService, type MockSeed } from '../../src/mock/index.js';
import { seededRandom } from '../../src/mock/service/random.js';
import { Crash, CrashingJournal, T0, processView } from '../../test/support/reliability.js';
import { commandLine } from '../common/command-line.js';
import { VOTE_LANDING_MS } from '../../src/delivery/votes/recovery.js';
import { voteFigures, type GivenVoteRow } from '../common/vote-points.js';

const KEY = 'votes-simulation-key';
const REWARDS = [
  { id: 1, name: 'Vote key', cost: 1, giveAmount: 1 },
  { id: 2, name: 'Scroll', cost: 5, giveAmount: 2 },
  { id: 3, name: 'Chest', cost: 12, giveAmount: 1 },
];
const seed: MockSeed = { servers: [{ apiKey: KEY, name: 'Vote simulation', rewards: REWARDS }] };

/** The game: applies each `deliveryId` once, its record surviving the bridge's deaths. */
class Game {
  readonly rows: GivenVoteRow[] = [];
  readonly seen = new Set<string>();
  regives = 0;
  recovered = 0;
  failures = 0;
  /** Set for the final phase: the game gives every time. */
  healthy = false;

  constructor(private readonly fail: () => boolean) {}

  give = (reward: GivenVoteReward): void => {
    if (!this.healthy && this.fail()) {
      this.failures += 1;
      throw new Error('inventory full');
    }
    if (this.seen.has(reward.deliveryId)) {
      this.regives += 1;
      return;
    }
    this.seen.add(reward.deliveryId);
    if (reward.recovered === true) this.recovered += 1;
    this.rows.push({ player: reward.playerName, reward: reward.reward_id, units: reward.give_amount, recovered: reward.recovered === true, total_points: reward.total_points, vote_points: reward.vote_points });
  };
}

/** Runs the simulation; resolves to the exit code. */
export async function run(): Promise<number> {
  const cli = commandLine('simulate --votes', 'usage: npm run simulate -- --votes [--players <n>] [--calls <n>] [--seed <s>] [--faults on|off] [--all <0..1>] [--prices <0..1>] [--late <0..1>] [--steady <0..1>]', {
    votes: { type: 'boolean', default: true },
    players: { type: 'string', default: '20' },
    calls: { type: 'string', default: '3000' },
    seed: { type: 'string', default: '1' },
    faults: { type: 'string', default: 'on' },
    all: { type: 'string', default: '0.25' },
    prices: { type: 'string', default: '0.01' },
    late: { type: 'string', default: '0.02' },
    steady: { type: 'string', default: '0.25' },
  });
  const ALL = cli.number('all', 0, 1);
  const PRICES = cli.number('prices', 0, 1);
  const LATE = cli.number('late', 0, 1);
  const STEADY = cli.number('steady', 0, 1);
  const players = Array.from({ length: cli.integer('players', 1, 10_000) }, (_, i) => `Voter${i + 1}`);
  const calls = cli.integer('calls', 1, 10_000_000);
  const SEED = cli.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const faults = cli.oneOf('faults', ['on', 'off']) === 'on';
  const random = seededRandom(SEED ^ 0x0f07e5);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

  const mock = createMockService({ seed, now: T0 });
  mock.faults.seed(SEED);
  if (faults) {
    mock.faults.add({ operation: 'claimVoteReward', kind: 'dropAfter', probability: 0.05 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'status', status: 503, probability: 0.02 });
    // Half land after the next vote answer, half after five more.
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', probability: LATE / 2 });
    mock.faults.add({ operation: 'claimVoteReward', kind: 'landLate', probability: LATE / 2, landAfter: 5 });
  }
  let priceChanges = 0;
  const steadyPlayers = new Set(players.slice(0, Math.round(players.length * STEADY)));
  const turns = new Map<string, number>();
  const storage = new MemoryJournal();
  const game = new Game(() => faults && random() < 0.02);
  let crashes = 0;
  let votes = 0;
  const process_ = (dies: boolean) => {
    const journal = new CrashingJournal(processView(storage), () => dies && random() < 0.01);
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, now: mock.clock.now, journal, retry: 0 });
    return { journal, client };
  };
  let bridge = process_(faults);
  /** Runs one call of the bridge; a death starts the next process, which resumes first. */
  const attempt = async (call: (client: StorefrontClient) => Promise<unknown>): Promise<void> => {
    try {
      await bridge.journal.run(call(bridge.client));
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      crashes += 1;
      bridge = process_(faults);
      await attempt((client) => client.resumeVoteRewards(game.give));
    }
  };

  for (let i = 0; i < calls; i++) {
    mock.clock.advance(1_000 + Math.floor(random() * 60_000));
    if (random() < PRICES) {
      mock.updateReward(KEY, pick(REWARDS).id, { cost: 1 + Math.floor(random() * 15) });
      priceChanges += 1;
    }
    const player = pick(players);
    if (random() < 0.3) {
      mock.recordVote(KEY, player, 1 + Math.floor(random() * 5));
      votes += 1;
      continue;
    }
    // A steady player's command: always the Scroll, one unit and two in turn.
    const turn = (turns.get(player) ?? 0) + 1;
    turns.set(player, turn);
    const steady = steadyPlayers.has(player);
    const reward = steady ? 2 : pick(REWARDS).id;
    const amount = steady ? 1 + (turn % 2) : random() >= ALL ? 1 + Math.floor(random() * 3) : ('all' as const);
    await attempt((client) => client.deliverVoteReward({ player, reward, amount }, game.give));
  }

  // Final phase: faults off, every held request carried out, past the time one can land;
  // a fresh process that never dies; every lost answer worked out.
  const faultsFired = mock.faults.list();
  const lostAnswers = faultsFired.reduce((sum, f) => sum + f.fired, 0);
  const lateLandings = faultsFired.filter((f) => f.rule.kind === 'landLate').reduce((sum, f) => sum + f.fired, 0);
  mock.faults.clear();
  mock.faults.land();
  mock.clock.advance(VOTE_LANDING_MS);
  game.healthy = true;
  bridge = process_(false);
  await bridge.client.resumeVoteRewards(game.give);
  for (let pass = 0; pass < 5; pass++) {
    const open = new Set((await storage.pending()).filter(isOpen).map((e) => e.playerName));
    if (open.size === 0) break;
    for (const player of open) await bridge.client.deliverVoteReward({ player, reward: 1, amount: 1 }, game.give);
  }
  const left = (await storage.pending()).filter(isOpen).length;

  const windows = (await inspectJournal(storage)).openWindows;
  const { spent, granted, lost, silent, duplicated, unpaid } = voteFigures(mock.state().servers[0]?.voteClaims ?? [], game.rows, windows);
  console.log(
    `simulate votes players=${players.length} calls=${calls} seed=${SEED}: votes=${votes} points_spent=${spent} points_granted=${granted} lost=${lost} silent=${silent} duplicated=${duplicated} unpaid=${unpaid} recovered=${game.recovered} windows=${windows.length} lost_answers=${lostAnswers} late_landings=${lateLandings} price_changes=${priceChanges} crashes=${crashes} give_failures=${game.failures} regives=${game.regives}${left > 0 ? ` still_open=${left}` : ''}`,
  );
  return silent > 0 || duplicated > 0 || unpaid > 0 || left > 0 ? 1 : 0;
}

/** A record still to do: a row to give or a lost answer to work out. */
function isOpen(entry: JournalEntry): boolean {
  return entry.state === 'voteClaimed' || (entry.state === 'voteClaiming' && entry.settled !== true);
}
