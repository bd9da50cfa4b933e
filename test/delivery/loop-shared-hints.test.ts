/**
 * The checkout hint through a shared journal (`expectCheckout`, src/delivery/loop/shared-hints.ts,
 * #47): a web shop on another machine writes the hint into the journal the game's nodes
 * share, every node's loop reads it every few seconds into the same book `loop.expect`
 * fills, and only the node holding the player online calls the service for them. The
 * MemoryJournal stands for the shared database here (test/databases/checkout-hints.db.test.ts
 * runs the SQL statements against real servers).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectCheckout, JournalError, MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryJournal, type SharedCheckoutHint } from '../../src/index.js';
import { SHARED_HINTS_POLL_MS } from '../../src/delivery/loop/shared-hints.js';
import { loopHarness, type LoopCall } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';

const { setup } = loopHarness();

beforeEach(() => {
  // The polls' jitter (and the reads' backoff) pinned.
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** One node's object over the shared journal (each process has its own), hints included. */
function nodeView(shared: MemoryJournal, nodeId: string): DeliveryJournal {
  return {
    nodeId,
    append: (entries) => shared.append(entries),
    pending: (playerName) => shared.pending(playerName),
    acknowledge: (ids) => shared.acknowledge(ids),
    addCheckoutHint: (playerName, hint) => shared.addCheckoutHint(playerName, hint),
    liveCheckoutHints: () => shared.liveCheckoutHints(),
    endCheckoutHint: (playerName, transactionId) => shared.endCheckoutHint(playerName, transactionId),
  };
}

/** The shop: its own client on the store, and the shared journal (its own object over it). */
async function checkoutFor(client: StorefrontClient, player: string): Promise<string> {
  const result = await client.checkout({ username: player, items: [{ id: 3, quantity: 1 }] });
  if (result.outcome !== 'PAYMENT_REQUIRED') throw new Error(`checkout: ${result.outcome}`);
  return result.transactionId;
}

const claimsOf = (calls: LoopCall[], player: string, from: number) => calls.filter((c) => c.player === player && c.at >= from);

describe('a hint written by a shop on another machine', () => {
  it('reaches the loop of a node on the same journal, and the player is claimed within one read and one window of the payment', async () => {
    const shared = new MemoryJournal();
    const { mock, client, calls, given, give } = setup({ journal: nodeView(shared, 'game') });
    const shop = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, retry: 0 });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Abe');
    await vi.advanceTimersByTimeAsync(1_000); // the join's claim: nothing yet
    const transactionId = await checkoutFor(shop, 'Abe');
    await expectCheckout(nodeView(shared, 'shop'), 'Abe', { transactionId });
    const hintedAt = Date.now();
    // Paid at once: the worst case, the hint not read yet.
    mock.completePayment(transactionId);
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS + 10_000 + 200);
    expect(given.map((g) => g.item.product_name)).toEqual(['Sword']);
    expect(given[0]!.at - hintedAt).toBeLessThanOrEqual(SHARED_HINTS_POLL_MS + 10_100);
    // Satisfied: the hint, read again at every poll, is a no-op; the routine poll (10 min) is next.
    expect(loop.stats().hints).toBe(0);
    const after = Date.now();
    await vi.advanceTimersByTimeAsync(300_000);
    expect(claimsOf(calls, 'Abe', after)).toEqual([]);
    await loop.stop();
  });

  it('read again at every poll, a live hint is held once: one claim per window, as loop.expect', async () => {
    const shared = new MemoryJournal();
    const { client, calls, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Bo');
    await vi.advanceTimersByTimeAsync(1_000);
    await shared.addCheckoutHint('Bo', { expiresInMs: 60_000 });
    const hintedAt = Date.now();
    await vi.advanceTimersByTimeAsync(120_000);
    const hinted = claimsOf(calls, 'Bo', hintedAt).map((c) => c.at - hintedAt);
    // Read within 5 s, then one claim each window until the hint's 60 s are over.
    expect(hinted[0]).toBeLessThanOrEqual(SHARED_HINTS_POLL_MS + 10_000);
    expect(hinted.length).toBeGreaterThanOrEqual(5);
    expect(hinted.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < hinted.length; i++) expect(hinted[i]! - hinted[i - 1]!).toBeGreaterThanOrEqual(10_000);
    expect(Math.max(...hinted)).toBeLessThan(60_000);
    await loop.stop();
  });
});

describe('a row read again and again', () => {
  it('is handed to the book once: a hint delivered stays ended while its row lives, even once the book has forgotten it (10,000 hints ended since)', async () => {
    const shared = new MemoryJournal();
    // A journal of one's own that cannot delete a hint: its row outlives the delivery.
    const { endCheckoutHint: _cannot, ...journal } = nodeView(shared, 'game');
    const { mock, client, calls, given, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Ada');
    await vi.advanceTimersByTimeAsync(1_000);
    await shared.addCheckoutHint('Ada', { expiresInMs: 3_600_000 });
    mock.addPurchase(KEY, { playerName: 'Ada', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(given).toHaveLength(1);
    expect(loop.stats().hints).toBe(0);
    // 10,000 hints for players not online expire, and end when the full book is swept: the
    // book's memory of ended hints (10,000 at most) drops Ada's.
    for (let i = 0; i < 10_000; i++) loop.expect(`Gone${i}`, { expiresInMs: 10_000 });
    await vi.advanceTimersByTimeAsync(11_000);
    expect(loop.expect('Next')).toBe('held');
    const after = Date.now();
    await vi.advanceTimersByTimeAsync(60_000);
    // Ada's row still lives (an hour): read at every poll, never held again.
    expect(claimsOf(calls, 'Ada', after)).toEqual([]);
    expect(loop.stats().hints).toBe(1);
    await loop.stop();
  });
});

describe('the hints share of the budget', () => {
  it('read again at every poll, hints reserve no share twice: 20 hinted players (2 claims a second) are each claimed every window under a 3-a-second share', async () => {
    const shared = new MemoryJournal();
    const { client, calls, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, maxCallsPerSecond: 10, claimMode: 'fast' });
    for (let i = 0; i < 20; i++) loop.join(`Hot${i}`);
    await vi.advanceTimersByTimeAsync(5_000);
    for (let i = 0; i < 20; i++) await shared.addCheckoutHint(`Hot${i}`, { expiresInMs: 300_000 });
    await vi.advanceTimersByTimeAsync(20_000);
    const from = Date.now();
    await vi.advanceTimersByTimeAsync(100_000);
    // Each player once per 10 s window: 10 each in 100 s (re-planned from its last answer).
    const claims = calls.filter((c) => c.at >= from && !c.preview);
    expect(claims.length).toBeGreaterThanOrEqual(190);
    for (let i = 0; i < 20; i++) expect(claims.filter((c) => c.player === `Hot${i}`).length).toBeGreaterThanOrEqual(9);
    await loop.stop();
  });
});

describe('two nodes on one journal', () => {
  it('both hold the hint; only the node holding the player online calls the service and gives', async () => {
    const shared = new MemoryJournal();
    const { mock, client: clientA, calls: callsA, given: givenA, give: giveA } = setup({ journal: nodeView(shared, 'A') });
    const callsB: string[] = [];
    const givenB: DeliveredItem[] = [];
    const clientB = new StorefrontClient({
      apiKey: KEY,
      baseUrl: 'https://api.teamgames.io',
      journal: nodeView(shared, 'B'),
      retry: 0,
      fetch: (input, init) => (callsB.push(String(init?.body)), mock.fetch(input, init)),
    });
    const loopA = clientA.startDeliveryLoop({ give: giveA, pollIntervalMs: 600_000, claimMode: 'fast' });
    const loopB = clientB.startDeliveryLoop({ give: (item) => void givenB.push(item), pollIntervalMs: 600_000, claimMode: 'fast' });
    loopA.join('Cid');
    loopB.join('Fay');
    await vi.advanceTimersByTimeAsync(1_000);
    const shop = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, retry: 0 });
    const transactionId = await checkoutFor(shop, 'Fay');
    await expectCheckout(nodeView(shared, 'shop'), 'Fay', { transactionId });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS + 1_000);
    expect([loopA.stats().hints, loopB.stats().hints]).toEqual([1, 1]);
    mock.completePayment(transactionId);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(givenB.map((item) => item.product_name)).toEqual(['Sword']);
    expect(givenA).toEqual([]);
    expect(callsA.filter((c) => c.player === 'Fay')).toEqual([]);
    // B: the join's claim, then hinted claims until the purchase came.
    expect(callsB.filter((body) => body.includes('"Fay"')).length).toBeGreaterThanOrEqual(2);
    await loopA.stop();
    await loopB.stop();
  });

  it.each([true, false])('once the node holding the player delivered, the row is deleted: the other node drops the hint, and claims nothing when the player moves to it (naming its transaction: %s)', async (naming) => {
    const shared = new MemoryJournal();
    const { mock, client: clientA, calls: callsA, give: giveA } = setup({ journal: nodeView(shared, 'A') });
    const clientB = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', journal: nodeView(shared, 'B'), retry: 0, fetch: mock.fetch });
    const givenB: DeliveredItem[] = [];
    const loopA = clientA.startDeliveryLoop({ give: giveA, pollIntervalMs: 600_000, claimMode: 'fast' });
    const loopB = clientB.startDeliveryLoop({ give: (item) => void givenB.push(item), pollIntervalMs: 600_000, claimMode: 'fast' });
    loopB.join('Moe');
    await vi.advanceTimersByTimeAsync(1_000);
    const shop = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, retry: 0 });
    const transactionId = await checkoutFor(shop, 'Moe');
    await expectCheckout(nodeView(shared, 'shop'), 'Moe', naming ? { transactionId } : {});
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect([loopA.stats().hints, loopB.stats().hints]).toEqual([1, 1]);
    mock.completePayment(transactionId);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(givenB).toHaveLength(1);
    // B deleted the row; A's next read dropped the hint.
    expect(await shared.liveCheckoutHints()).toEqual([]);
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect([loopA.stats().hints, loopB.stats().hints]).toEqual([0, 0]);
    // Moe moves to A: its join's run (a preview: no hint), and nothing more for 10 minutes.
    loopB.leave('Moe');
    const movedAt = Date.now();
    loopA.join('Moe');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(claimsOf(callsA, 'Moe', movedAt).map((c) => c.preview)).toEqual([true]);
    await loopA.stop();
    await loopB.stop();
  });

  it('a hint for a player online nowhere costs no call, and is acted on when they join', async () => {
    const shared = new MemoryJournal();
    const { mock, client, calls, given, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    await expectCheckout(nodeView(shared, 'shop'), 'Eve');
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(loop.stats().hints).toBe(1);
    expect(calls).toEqual([]);
    expect(given).toEqual([]);
    loop.join('Eve');
    await vi.advanceTimersByTimeAsync(1_000);
    // A hinted player's first run in the fast mode: one claim call.
    expect(calls.map((c) => c.preview)).toEqual([false]);
    expect(given).toHaveLength(1);
    await loop.stop();
  });
});

describe('the hint lives by the journal\'s clock', () => {
  it('written 40 s before the loop read it, a 60 s hint is claimed for 20 s more, not 60', async () => {
    const shared = new MemoryJournal();
    await shared.addCheckoutHint('Gil', { expiresInMs: 60_000 });
    const writtenAt = Date.now();
    await vi.advanceTimersByTimeAsync(40_000);
    const { client, calls, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Gil');
    await vi.advanceTimersByTimeAsync(120_000);
    const sent = claimsOf(calls, 'Gil', writtenAt).map((c) => c.at - writtenAt);
    // The join's claim at 40 s, then one window later (50 s); none at or after the hint's 60 s.
    expect(sent).toEqual([40_000, 50_000]);
    expect(loop.stats().hints).toBe(0);
    await loop.stop();
  });
});

describe('a flood of hints in the shared journal', () => {
  it('is bounded: the journal keeps and hands back the newest 10,000, the loop holds them and calls nothing for players not online', async () => {
    const shared = new MemoryJournal();
    for (let i = 0; i < 12_000; i++) await shared.addCheckoutHint(`Flood${i}`, { expiresInMs: 600_000 });
    const live = await shared.liveCheckoutHints();
    expect(live).toHaveLength(10_000);
    // The oldest were dropped first.
    expect(live[0]!.playerName).toBe('Flood2000');
    expect(live.at(-1)!.playerName).toBe('Flood11999');
    const { client, calls, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS * 3);
    expect(loop.stats().hints).toBe(10_000);
    // The book is full of live hints: a hint given in process is refused, not grown.
    expect(loop.expect('Another')).toBe('full');
    expect(calls).toEqual([]);
    await loop.stop();
  });
});

describe('a hint the book has no room for', () => {
  it('is offered again at the next read, and held once the book has room', async () => {
    const shared = new MemoryJournal();
    const { client, give } = setup({ journal: nodeView(shared, 'game') });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    for (let i = 0; i < 10_000; i++) loop.expect(`Local${i}`, { expiresInMs: 10_000 });
    await shared.addCheckoutHint('Late', { transactionId: 'tx-late' });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    // Full of live hints: refused for now.
    expect(loop.stats().hints).toBe(10_000);
    await vi.advanceTimersByTimeAsync(10_000);
    // The local hints expired: the next read's offer sweeps them, and Late's is held.
    expect(loop.stats().hints).toBe(1);
    expect(loop.expect('Late', { transactionId: 'tx-late' })).toBe('held');
    await loop.stop();
  });
});

describe('a read cut at its bound (10,000 rows)', () => {
  it('drops no hint for a row it left out: that row may still be in the table', async () => {
    const shared = new MemoryJournal();
    const { client, give } = setup({ journal: nodeView(shared, 'game') });
    for (let i = 0; i < 10_000; i++) await shared.addCheckoutHint(`Row${i}`);
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.stats().hints).toBe(10_000);
    // One more row: the read holds the newest 10,000, without Row0's.
    await shared.addCheckoutHint('Newer');
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    // Row0's hint is still held (the book is full: Newer waits for room).
    expect(loop.stats().hints).toBe(10_000);
    await loop.stop();
  });

  it('counts the rows that are not hints: 9,999 hints and one damaged row are a cut read too', async () => {
    const shared = new MemoryJournal();
    let damaged = false;
    const journal: DeliveryJournal = {
      ...nodeView(shared, 'game'),
      // As the SQL journals: the newest 10,000 rows, one of them not a hint once damaged.
      liveCheckoutHints: async (onBadRow) => {
        const live = await shared.liveCheckoutHints();
        if (!damaged) return live;
        onBadRow?.(new JournalError('PostgresJournal: a row of the checkout hints is not a hint (its player name is not a player name); it was changed outside the SDK'));
        return live.slice(-9_999);
      },
    };
    const { client, give } = setup({ journal });
    for (let i = 0; i < 10_000; i++) await shared.addCheckoutHint(`Row${i}`);
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000 });
    await vi.advanceTimersByTimeAsync(1);
    expect(loop.stats().hints).toBe(10_000);
    damaged = true;
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    // Row0's row was cut from the read, not deleted: its hint is still held.
    expect(loop.stats().hints).toBe(10_000);
    expect(loop.stats().sharedHintsError).toBeInstanceOf(JournalError);
    await loop.stop();
  });
});

describe('a read of the hints that fails', () => {
  it('never stops nor slows deliveries: the routine polls deliver, the failure shows in stats(), reads back off and resume', async () => {
    const shared = new MemoryJournal();
    let reads = 0;
    let down = true;
    const journal: DeliveryJournal = {
      ...nodeView(shared, 'game'),
      liveCheckoutHints: async () => {
        reads += 1;
        if (down) throw new JournalError('PostgresJournal: could not read the checkout hints: connection refused');
        return shared.liveCheckoutHints();
      },
    };
    const { mock, client, given, give, events } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000, claimMode: 'fast' });
    loop.join('Hal');
    await vi.advanceTimersByTimeAsync(1_000);
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    const paidAt = Date.now();
    await vi.advanceTimersByTimeAsync(40_000);
    // The routine poll (30 s: its preview, the claim a window later) delivered it, as without hints.
    expect(given).toHaveLength(1);
    expect(given[0]!.at - paidAt).toBeLessThanOrEqual(30_000 + 10_000);
    expect(loop.stats().sharedHintsError).toBeInstanceOf(JournalError);
    // Backing off: 7.5 s, 15 s, 30 s, then 45 s (the jitter pinned at the middle), not every 5 s.
    const before = reads;
    await vi.advanceTimersByTimeAsync(300_000);
    expect(reads - before).toBeLessThanOrEqual(8);
    expect(reads - before).toBeGreaterThanOrEqual(5);
    down = false;
    await shared.addCheckoutHint('Hal');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(loop.stats().sharedHintsError).toBeUndefined();
    expect(loop.stats().hints).toBe(1);
    // One event when the reads started failing (not one per failed read), one when they worked again.
    const changes = events.filter((e) => e.type === 'sharedHintsError');
    expect(changes.map((e) => (e.error as Error | undefined)?.message)).toEqual(['PostgresJournal: could not read the checkout hints: connection refused', undefined]);
    await loop.stop();
  });
});

describe('a row of the hints that is not a hint (changed outside the SDK)', () => {
  it('is left out and reported in stats() and one event; the other hints are held and claimed; once it is gone, the report ends', async () => {
    const shared = new MemoryJournal();
    const damage = new JournalError("PostgresJournal: a row of the checkout hints is not a hint (its player name is not a player name); it was changed outside the SDK");
    let damaged = true;
    const journal: DeliveryJournal = {
      ...nodeView(shared, 'game'),
      // As the SQL journals: without onBadRow the read fails; with it, the row is handed over and left out.
      liveCheckoutHints: async (onBadRow) => {
        if (damaged) {
          if (onBadRow === undefined) throw damage;
          onBadRow(damage);
        }
        return shared.liveCheckoutHints();
      },
    };
    const { mock, client, given, give, events } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(1_000);
    await shared.addCheckoutHint('Jo');
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS + 10_000 + 200);
    // The good hint was held and claimed within a read and a window, not at the 10-minute poll.
    expect(given).toHaveLength(1);
    expect(loop.stats().sharedHintsError).toBe(damage);
    damaged = false;
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS);
    expect(loop.stats().sharedHintsError).toBeUndefined();
    expect(events.filter((e) => e.type === 'sharedHintsError')).toEqual([
      { type: 'sharedHintsError', operation: 'startDeliveryLoop', error: damage },
      { type: 'sharedHintsError', operation: 'startDeliveryLoop', error: undefined },
    ]);
    await loop.stop();
  });
});

describe('a read of the hints that never answers', () => {
  it('is reported after 30 s; no second read starts while it hangs; deliveries go on; stop() does not wait for it', async () => {
    let reads = 0;
    const shared = new MemoryJournal();
    const journal: DeliveryJournal = { ...nodeView(shared, 'game'), liveCheckoutHints: () => ((reads += 1), new Promise<never>(() => {})) };
    const { mock, client, given, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000, claimMode: 'fast' });
    loop.join('Ivy');
    await vi.advanceTimersByTimeAsync(29_000);
    expect(loop.stats().sharedHintsError).toBeUndefined();
    mock.addPurchase(KEY, { playerName: 'Ivy', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(loop.stats().sharedHintsError).toBeInstanceOf(JournalError);
    expect(String((loop.stats().sharedHintsError as Error).message)).toMatch(/^startDeliveryLoop: the journal's checkout hints were not read within 30000 ms/);
    expect((loop.stats().sharedHintsError as JournalError).operation).toBe('startDeliveryLoop');
    await vi.advanceTimersByTimeAsync(300_000);
    expect(reads).toBe(1);
    expect(given).toHaveLength(1);
    await loop.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('stop() while a read hangs', () => {
  it('clears the timer that would report it: nothing keeps the process alive', async () => {
    const shared = new MemoryJournal();
    const journal: DeliveryJournal = { ...nodeView(shared, 'game'), liveCheckoutHints: () => new Promise<never>(() => {}) };
    const { client, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give });
    await vi.advanceTimersByTimeAsync(1_000);
    await loop.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('stop() while a read is in flight', () => {
  it.each(['answers', 'fails'])('the read that %s after it changes nothing: no report, no read after it, no timer', async (settles) => {
    const shared = new MemoryJournal();
    let reads = 0;
    let settle: (() => void) | undefined;
    const journal: DeliveryJournal = {
      ...nodeView(shared, 'game'),
      liveCheckoutHints: () => {
        reads += 1;
        if (reads === 1) return Promise.reject(new JournalError('PostgresJournal: could not read the checkout hints: connection refused'));
        return new Promise<SharedCheckoutHint[]>((resolve, reject) => {
          settle = () => (settles === 'answers' ? resolve([{ playerName: 'Abe', ageMs: 0, remainingMs: 60_000 }]) : reject(new JournalError('PostgresJournal: could not read the checkout hints: connection reset')));
        });
      },
    };
    const { client, give, events } = setup({ journal });
    const loop = client.startDeliveryLoop({ give });
    loop.join('Abe');
    // The first read failed (reported once), the second (7.5 s later, backing off) hangs.
    await vi.advanceTimersByTimeAsync(8_000);
    expect(reads).toBe(2);
    const reports = () => events.filter((e) => e.type === 'sharedHintsError').map((e) => (e.error as Error | undefined)?.message);
    expect(reports()).toEqual(['PostgresJournal: could not read the checkout hints: connection refused']);
    await loop.stop();
    settle?.();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(reads).toBe(2);
    expect(reports()).toEqual(['PostgresJournal: could not read the checkout hints: connection refused']);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("a hint's row that cannot be deleted once a delivery here satisfied it", () => {
  it('shows in stats() and one event; the purchase is given all the same', async () => {
    const shared = new MemoryJournal();
    const refused = new JournalError('PostgresJournal: could not end a checkout hint: connection refused');
    const journal: DeliveryJournal = { ...nodeView(shared, 'game'), endCheckoutHint: () => Promise.reject(refused) };
    const { mock, client, given, give, events } = setup({ journal });
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 600_000, claimMode: 'fast' });
    loop.join('Abe');
    await vi.advanceTimersByTimeAsync(1_000);
    await shared.addCheckoutHint('Abe');
    mock.addPurchase(KEY, { playerName: 'Abe', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS + 10_000 + 200);
    expect(given).toHaveLength(1);
    expect(events.filter((e) => e.type === 'sharedHintsError')[0]?.error).toBe(refused);
    await loop.stop();
  });
});

describe('stop()', () => {
  it('stops the reads: no timer, no read after it', async () => {
    let reads = 0;
    const shared = new MemoryJournal();
    const journal: DeliveryJournal = { ...nodeView(shared, 'game'), liveCheckoutHints: async () => ((reads += 1), []) };
    const { client, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give });
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS * 4);
    expect(reads).toBe(5);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(SHARED_HINTS_POLL_MS * 4);
    expect(reads).toBe(5);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a loop on a journal without hints (no liveCheckoutHints) reads nothing and runs as before', async () => {
    const shared = new MemoryJournal();
    const journal: DeliveryJournal = { append: (e) => shared.append(e), pending: (p) => shared.pending(p), acknowledge: (ids) => shared.acknowledge(ids) };
    const { client, give } = setup({ journal });
    const loop = client.startDeliveryLoop({ give });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(loop.stats().sharedHintsError).toBeUndefined();
    await loop.stop();
  });
});
