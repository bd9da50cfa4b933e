/**
 * Two nodes, one journal: what the engine does with a journal shared across processes
 * (a cross-node player lock, intents that belong to the node that wrote them). The
 * journal here is a MemoryJournal behind an in-memory lock, so the engine's side is
 * tested alone; the shipped database journals are tested against real servers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError, MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { BASE_URL, Game, KEY, T0, clockSleep, compare, paidUnits, seed } from '../support/reliability.js';

const mock = createMockService({ seed, now: T0 });
const sleep = clockSleep(mock.clock);
const fetch = mock.fetch;
afterEach(() => mock.reset());

/** One lock table for every node, as a database's advisory locks are. */
class Locks {
  readonly #held = new Map<string, Promise<void>>();
  timeouts = 0;

  async run<T>(player: string, work: () => Promise<T>, timeoutMs = Number.POSITIVE_INFINITY): Promise<T> {
    const previous = this.#held.get(player) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const chained = previous.then(() => mine);
    this.#held.set(player, chained);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const got = await Promise.race([previous.then(() => 'locked' as const), timedOut]);
    clearTimeout(timer);
    if (got === 'timeout') {
      this.timeouts += 1;
      void previous.then(release);
      throw new JournalError(`the lock on ${player} was not free within ${timeoutMs} ms`);
    }
    try {
      return await work();
    } finally {
      release();
      if (this.#held.get(player) === chained) this.#held.delete(player);
    }
  }
}

/** One node's view of the shared journal. */
function node(nodeId: string, shared: MemoryJournal, locks: Locks, lockTimeoutMs?: number): DeliveryJournal {
  return {
    nodeId,
    append: (entries) => shared.append(entries),
    pending: (player) => shared.pending(player),
    acknowledge: (ids) => shared.acknowledge(ids),
    withPlayerLock: (player, work) => locks.run(player, work, lockTimeoutMs),
  };
}

const client = (journal: DeliveryJournal) => new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch, now: mock.clock.now, journal, retry: 0 });
const outcome = (game: Game) => compare(paidUnits(mock.purchases(KEY)), game.applied);
const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('two nodes on one journal', () => {
  it("B waits for A's lock, then reconciles A's lost claim: nothing lost, nothing granted twice", async () => {
    const row = mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    // A's preview goes through; A's claim is processed and its answer lost.
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const shared = new MemoryJournal();
    const locks = new Locks();
    const game = new Game(); // the game's dedupe record is shared too
    const a = client(node('A', shared, locks));
    const b = client(node('B', shared, locks));

    let fromB: ReturnType<StorefrontClient['deliver']> | undefined;
    let intentDuringWait: JournalEntry[] = [];
    const first = await a.deliver('Ann', game.grant(), {
      sleep: async (ms) => {
        intentDuringWait = await shared.pending('Ann');
        // B's player types /claim while A waits out the window: B must wait for A's lock.
        fromB = b.deliver('Ann', game.grant(), { sleep });
        await ticks(20);
        await sleep(ms);
      },
    });
    expect(intentDuringWait).toEqual([expect.objectContaining({ deliveryId: `invoice:${row.invoice}`, state: 'intended', node: 'A' })]);
    expect(first.code).toBe('OUTCOME_UNKNOWN');
    expect(game.calls).toBe(0);

    const second = await fromB!;
    expect(second.code).toBe('SUCCESS');
    expect(second.granted.map((i) => i.deliveryId)).toEqual([`invoice:${row.invoice}`]);
    expect(second.unverified).toMatchObject({ playerName: 'Ann' });
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
    expect((await shared.pending()).map((e) => e.state)).toEqual(['unverified']);
  });

  it("never overwrites another node's intent: B's claim that finds nothing leaves it to be reconciled", async () => {
    const one = mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Bo', id: 3, quantity: 1 });
    const shared = new MemoryJournal();
    const locks = new Locks();
    // Node A died after journaling its intent for the first line (its claim never went out).
    const [line] = (await client(new MemoryJournal()).previewClaim('Bo', { includeRawTransactions: true })).claims;
    await shared.append([{ deliveryId: `invoice:${one.invoice}`, playerName: 'Bo', state: 'intended', item: line!, invoice: String(one.invoice), recordedAt: T0, previewedAt: T0, node: 'A' }]);
    mock.clock.advance(10_000);

    const written: JournalEntry[][] = [];
    const journal = node('B', shared, locks);
    const b = client({ ...journal, append: (entries) => (written.push([...entries]), shared.append(entries)) });
    const game = new Game();
    const report = await b.deliver('Bo', game.grant(), { sleep });

    // B journaled an intent for the second line only, then claimed both and granted both.
    expect(written[0]).toEqual([expect.objectContaining({ state: 'intended', node: 'B' })]);
    expect(written[0]?.[0]?.deliveryId).not.toBe(`invoice:${one.invoice}`);
    expect(report.code).toBe('SUCCESS');
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
    expect(shared.size).toBe(0);
  });

  it('a lock that cannot be had in time: nothing claimed, the failure reported', async () => {
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    const shared = new MemoryJournal();
    const locks = new Locks();
    let releaseHolder!: () => void;
    const holding = locks.run('Cy', () => new Promise<void>((resolve) => (releaseHolder = resolve)));
    const report = await client(node('B', shared, locks, 5)).deliver('Cy', () => {}, { sleep });
    expect(report.code).toBe('ERROR');
    expect(report.journalError).toBeInstanceOf(JournalError);
    expect(report.journalError?.message).toMatch(/not free within 5 ms/);
    expect(mock.purchases(KEY, 'Cy')[0]?.deliverystatus).toBe('Undelivered');
    releaseHolder();
    await holding;
  });
});
