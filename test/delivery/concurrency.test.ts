import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveryMode } from '../../src/index.js';
import { createMockService, type MockServerHandle } from '../../src/mock/index.js';
import { seededRandom } from '../../src/mock/adapters/faults.js';
import { Game, KEY, T0, clockSleep, compare, paidUnits, seed } from '../support/reliability.js';

const PLAYERS = 100;
const CALLS = 1_000;

describe('1,000 concurrent deliver calls over 100 players, against the mock over HTTP', () => {
  const mock = createMockService({ seed, now: T0 });
  let server: MockServerHandle;
  beforeAll(async () => {
    server = await mock.listen({ port: 0 });
  });
  afterAll(() => server.close());
  afterEach(() => mock.reset());

  const buy = () => {
    const random = seededRandom(2026);
    for (let p = 0; p < PLAYERS; p++) {
      const lines = 1 + Math.floor(random() * 3);
      for (let l = 0; l < lines; l++) mock.addPurchase(KEY, { playerName: `Player ${p}`, id: 1 + Math.floor(random() * 5), quantity: 1 + Math.floor(random() * 3) });
    }
  };

  it.each<DeliveryMode>(['fast', 'exactlyOnce'])('%s mode: every paid unit is granted exactly once, none lost', async (mode) => {
    buy();
    const journal = new MemoryJournal();
    // A generous timeout: this test is about concurrency, not speed, and CI machines are small.
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: server.url, now: mock.clock.now, journal, timeoutMs: 60_000 });
    const game = new Game();
    const sleep = clockSleep(mock.clock);
    // 10 calls per player, interleaved, all started at once.
    const reports = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => client.deliver(`Player ${i % PLAYERS}`, game.grant(), { mode, sleep, maxRateLimitWaits: 10 })),
    );

    expect(reports.filter((r) => r.code === 'SUCCESS')).toHaveLength(PLAYERS);
    expect(new Set(reports.map((r) => r.code))).toEqual(new Set(['SUCCESS', 'ALREADY_CLAIMED']));
    expect(compare(paidUnits(mock.purchases(KEY)), game.applied)).toMatchObject({ lost: 0, duplicated: 0 });
    expect(game.regrants).toBe(0);
    expect(journal.size).toBe(0);
    expect(mock.purchases(KEY).every((r) => r.deliverystatus === 'Delivered')).toBe(true);
  }, 30_000);

  it('exactly-once mode with lost answers and resets under the same load: nothing lost, nothing doubled', async () => {
    buy();
    mock.faults.seed(11);
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', probability: 0.05 });
    mock.faults.add({ operation: 'claim', kind: 'dropBefore', probability: 0.05 });
    const journal = new MemoryJournal();
    // A generous timeout: this test is about concurrency, not speed, and CI machines are small.
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: server.url, now: mock.clock.now, journal, timeoutMs: 60_000 });
    const game = new Game();
    const sleep = clockSleep(mock.clock);
    await Promise.all(
      Array.from({ length: CALLS }, (_, i) => client.deliver(`Player ${i % PLAYERS}`, game.grant(), { mode: 'exactlyOnce', sleep, maxRateLimitWaits: 10 })),
    );
    const fired = mock.faults.list().reduce((n, f) => n + f.fired, 0);
    // Whatever the last calls left unknown is settled by the next run.
    mock.faults.clear();
    await client.resumeDeliveries(game.grant(), { sleep });
    await Promise.all(Array.from({ length: PLAYERS }, (_, p) => client.deliver(`Player ${p}`, game.grant(), { mode: 'exactlyOnce', sleep })));

    expect(fired).toBeGreaterThan(20);
    expect(compare(paidUnits(mock.purchases(KEY)), game.applied)).toMatchObject({ lost: 0, duplicated: 0 });
    // The windows of the lost answers are kept for staff; nothing else is left.
    expect((await journal.pending()).filter((e) => e.state !== 'unverified')).toEqual([]);
  }, 30_000);
});
