/**
 * Automatic delivery keeps the engine's promise (issue #33), point by point, as a hostile
 * game-server owner would try it: windows that cover what they could hide, exactly once by
 * default, only who is here, never given twice, nothing stuck or invisible, one loop per
 * journal, re-entry refused, no key in a player's text.
 */
import { describe, expect, it, vi } from 'vitest';
import { InvalidInputError, isStorefrontError, MemoryJournal, StorefrontClient, type DeliveredItem, type DeliveryJournal, type JournalLine } from '../../src/index.js';
import { encodeApiKey } from '../../src/auth.js';
import { onClaimCommand } from '../../examples/auto-delivery.js';
import { createMockService } from '../../src/mock/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY, seed } from '../support/reliability.js';

const { setup, T0 } = loopHarness();

/** A journal whose `acknowledge` fails while `failing()` says so. */
function ackFailing(inner: DeliveryJournal, failing: () => boolean): DeliveryJournal {
  return {
    append: (entries) => inner.append(entries),
    pending: (player) => inner.pending(player),
    acknowledge: async (ids) => {
      if (failing()) throw new Error('disk full');
      return inner.acknowledge(ids);
    },
  };
}

describe('1. every window covers what it could hide', () => {
  it('a one-call /claim whose answer is lost reports a window from the last preview, which covers the purchase', async () => {
    const { mock, client } = setup();
    const loop = client.startDeliveryLoop({ give: () => {}, claimMode: 'fast', pollIntervalMs: 60_000 });
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(15_000); // the join's preview at T0 found nothing
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 }); // bought at +15 s
    await vi.advanceTimersByTimeAsync(5_000);
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const pending = loop.claim('Ann');
    await vi.advanceTimersByTimeAsync(0);
    const report = await pending;
    expect(report.code).toBe('OUTCOME_UNKNOWN');
    // [T0, +20 s]: the purchase at +15 s is inside; a window from the claim (+20 s) was not.
    expect(report.unverified).toEqual({ playerName: 'Ann', from: T0, to: T0 + 20_000 });
    await loop.stop();
  });

  it('a wall clock stepped back an hour during a lost claim still gives from <= to (measured on the monotonic clock)', async () => {
    // The service keeps its own time; only this machine's wall clock steps back.
    const mock = createMockService({ seed, now: T0 });
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal: new MemoryJournal(), retry: 0 });
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    // The claim is processed and its answer lost; the preview before it goes through.
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const wait = async (ms: number) => {
      mock.clock.advance(ms);
      await vi.advanceTimersByTimeAsync(ms);
    };
    const first = await client.deliver('Bo', () => {}, {
      sleep: async (ms) => {
        vi.setSystemTime(Date.now() - 3_600_000); // NTP steps the clock back during the wait
        await wait(ms);
      },
    });
    expect(first.code).toBe('OUTCOME_UNKNOWN');
    await wait(10_000);
    const second = await client.deliver('Bo', () => {}, { sleep: wait });
    expect(second.code).toBe('SUCCESS');
    const window = second.unverified;
    expect(window).toBeDefined();
    expect(window?.from).toBeLessThanOrEqual(window?.to ?? Number.NaN);
    // The window lasts what passed on the monotonic clock since the preview (the wait and the pause), never minus an hour.
    expect((window?.to ?? 0) - (window?.from ?? 0)).toBe(20_000);
  });

  it('fast deliver after a preview this client saw: the window starts at that preview', async () => {
    const { mock, client } = setup();
    const seenAt = Date.now();
    expect((await client.deliver('Cy', () => {}, { sleep: async (ms) => void (await vi.advanceTimersByTimeAsync(ms)) })).code).toBe('NO_ITEMS');
    await vi.advanceTimersByTimeAsync(30_000);
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const report = await client.deliver('Cy', () => {}, { mode: 'fast' });
    expect(report.unverified).toEqual({ playerName: 'Cy', from: seenAt, to: Date.now() });
  });
});

describe('2. exactly once by default, fast by choice', () => {
  it('loop.claim previews, journals and claims one window later; a lost claim answer loses nothing', async () => {
    const { mock, client, calls, given, events } = setup();
    const loop = client.startDeliveryLoop({ give: (item) => void given.push({ at: Date.now(), item }), pollIntervalMs: 60_000 });
    loop.join('Dee');
    await vi.advanceTimersByTimeAsync(15_000);
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const report = loop.claim('Dee');
    await vi.advanceTimersByTimeAsync(12_000);
    expect((await report).code).toBe('OUTCOME_UNKNOWN');
    expect(calls.filter((c) => c.player === 'Dee').map((c) => c.preview)).toEqual([true, true, false]);
    // The next run previews, finds the intent delivered, and grants it; the window staff
    // get is only what was paid between that preview and the lost claim.
    const previewAt = (calls.filter((c) => c.player === 'Dee').at(1)?.at ?? 0);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(given.map((g) => g.item.quantity_purchased)).toEqual([1]);
    const window = events.find((e) => e.type === 'unverified');
    expect(window).toMatchObject({ window: { playerName: 'Dee', from: previewAt } });
    await loop.stop();
  });
});

describe('3. only who is here', () => {
  it('claim() for a player the loop does not hold online resolves OFFLINE, never joins them and never gives', async () => {
    const { mock, client, calls, given, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Eve', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give });
    const report = await loop.claim('Eve');
    expect(report.code).toBe('OFFLINE');
    await vi.advanceTimersByTimeAsync(600_000);
    expect(loop.stats().online).toBe(0);
    expect(calls).toEqual([]);
    expect(given).toEqual([]);
    await loop.stop();
  });

  it('a claim whose player leaves before it completes resolves OFFLINE; one interrupted by stop() resolves STOPPED', async () => {
    const { client, give } = setup();
    const loop = client.startDeliveryLoop({ give });
    loop.join('Fay');
    loop.join('Gus');
    await vi.advanceTimersByTimeAsync(1_000);
    const fay = loop.claim('Fay'); // waits for the window's edge
    const gus = loop.claim('Gus');
    loop.leave('Fay');
    expect((await fay).code).toBe('OFFLINE');
    const stopped = loop.stop();
    expect((await gus).code).toBe('STOPPED');
    await stopped;
    expect((await loop.claim('Gus')).code).toBe('STOPPED');
  });

  it("the guide's /claim handler survives every outcome (offline, leaving, stopping, a refused name) without an unhandled rejection", async () => {
    const { client, give } = setup();
    const told: string[] = [];
    const tell = (player: string, text: string) => void told.push(`${player}: ${text}`);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const loop = client.startDeliveryLoop({ give });
    loop.join('Hal');
    await onClaimCommand(loop, tell, 'Nobody');
    const leaving = onClaimCommand(loop, tell, 'Hal');
    loop.leave('Hal');
    await leaving;
    await onClaimCommand(loop, tell, 'bad\u0007name');
    await loop.stop();
    await onClaimCommand(loop, tell, 'Hal');
    expect(told).toHaveLength(4);
    expect(errors).toHaveBeenCalledTimes(1);
    errors.mockRestore();
  });
});

describe('4. never given twice by the SDK', () => {
  it('while acknowledge fails for minutes, an item given once is never given again, across a restart of the loop; it drains once the journal is back', async () => {
    const inner = new MemoryJournal();
    let failing = true;
    const journal = ackFailing(inner, () => failing);
    const { mock, client, given, give } = setup({ journal });
    mock.addPurchase(KEY, { playerName: 'Ivy', id: 1, quantity: 1 });
    let loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Ivy');
    await vi.advanceTimersByTimeAsync(600_000);
    await loop.stop();
    loop = client.startDeliveryLoop({ give, pollIntervalMs: 10_000 });
    loop.join('Ivy');
    await vi.advanceTimersByTimeAsync(600_000);
    expect(given).toHaveLength(1);
    expect(await inner.pending('Ivy')).toHaveLength(1); // still pending: never acknowledged
    failing = false;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(await inner.pending('Ivy')).toEqual([]);
    expect(given).toHaveLength(1);
    await loop.stop();
  });
});

describe('5. nothing stuck, nothing invisible', () => {
  it('a give that always fails for one item backs off per item, is marked for staff after staffAfterAttempts, is never dropped, and is retried on the next join', async () => {
    const { mock, client, events, journal } = setup();
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    let attempts = 0;
    const loop = client.startDeliveryLoop({
      give: () => {
        attempts += 1;
        throw new Error('unknown item');
      },
      staffAfterAttempts: 3,
    });
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(3_600_000);
    // Every window for an hour would be 360 gives; doubling from 10 s to 1 h, about ten.
    expect(attempts).toBeGreaterThanOrEqual(5);
    expect(attempts).toBeLessThanOrEqual(12);
    const stuck = events.filter((e) => e.type === 'stuck');
    expect(stuck).toHaveLength(1);
    expect(stuck[0]).toMatchObject({ playerName: 'Jo', attempts: 3 });
    const [line] = (await journal.pending('Jo')) as JournalLine[];
    expect(line?.lastError).toMatchObject({ stuck: true, message: 'unknown item' });
    const status = await loop.status('Jo');
    expect(status.pending[0]).toMatchObject({ state: 'claimed', lastError: { stuck: true } });
    expect(status.pending[0]?.retryAt).toBeGreaterThan(Date.now());
    expect(loop.stats().backingOff).toBe(1);
    // The next join gives it at once.
    const before = attempts;
    loop.leave('Jo');
    loop.join('Jo');
    await vi.advanceTimersByTimeAsync(0);
    expect(attempts).toBe(before + 1);
    await loop.stop();
  });

  it('a player leaving mid-delivery is not a failed give: the rest stays pending with no attempt counted (never marked stuck by leaving)', async () => {
    const { mock, client, journal } = setup();
    mock.addPurchase(KEY, { playerName: 'Lea', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Lea', id: 3, quantity: 1 });
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const loop = client.startDeliveryLoop({ give: () => loopRef?.leave('Lea'), staffAfterAttempts: 1 });
    loopRef = loop;
    loop.join('Lea');
    await vi.advanceTimersByTimeAsync(60_000);
    const left = (await journal.pending('Lea')) as JournalLine[];
    expect(left).toHaveLength(1);
    expect(left[0]?.lastError).toBeUndefined();
    await loop.stop();
  });

  it('a player whose previews come back PRODUCT_NOT_FOUND shows in stats(), in an event and in status()', async () => {
    const { mock, client, events, give } = setup();
    mock.addPurchase(KEY, { playerName: 'Kai', id: 1, quantity: 1 });
    mock.removeProduct(KEY, 1);
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000 });
    loop.join('Kai');
    await vi.advanceTimersByTimeAsync(300_000);
    expect(loop.stats().blocked).toBe(1);
    expect(events.filter((e) => e.type === 'playerBlocked')).toEqual([expect.objectContaining({ playerName: 'Kai', code: 'PRODUCT_NOT_FOUND' })]);
    const status = await loop.status('Kai');
    expect(status).toMatchObject({ playerName: 'Kai', online: true, blocked: { code: 'PRODUCT_NOT_FOUND' } });
    expect(status.nextCheckAt).toBeGreaterThan(Date.now());
    expect(await loop.status('Nobody')).toMatchObject({ online: false, pending: [], openWindows: [] });
    await loop.stop();
  });
});

describe('6. one loop per client and per journal', () => {
  it('a second loop on the same client, or on a client sharing the journal, is refused with LOOP_RUNNING; after stop() a new one starts', async () => {
    const { client, journal, give } = setup();
    const loop = client.startDeliveryLoop({ give });
    expect(() => client.startDeliveryLoop({ give })).toThrow(expect.objectContaining({ code: 'LOOP_RUNNING' }));
    const other = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', journal, fetch: async () => new Response('{}') });
    let refused: unknown;
    try {
      other.startDeliveryLoop({ give });
    } catch (error) {
      refused = error;
    }
    expect(isStorefrontError(refused, 'LOOP_RUNNING')).toBe(true);
    expect(() => client.withOptions({ timeoutMs: 1_000 }).startDeliveryLoop({ give })).toThrow(/already runs on this journal/);
    await loop.stop();
    await client.startDeliveryLoop({ give }).stop();
  });
});

describe('7. re-entry refused everywhere', () => {
  it('a give that calls loop.claim for its own player is refused at once with an InvalidInputError, not after the grant timeout', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Lou', id: 1, quantity: 1 });
    let refusal: unknown;
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    let givenAt = 0;
    const loop = client.startDeliveryLoop({
      give: async () => {
        givenAt = Date.now();
        refusal = await loopRef?.claim('Lou').catch((error: unknown) => error);
      },
    });
    loopRef = loop;
    loop.join('Lou');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(refusal).toBeInstanceOf(InvalidInputError);
    expect(String(refusal)).toMatch(/would wait for itself/);
    expect(Date.now() - givenAt).toBeLessThan(2_000);
    await loop.stop();
  });

  it('a give that calls stop() does not wait for itself', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    let stoppedAt = 0;
    let loopRef: ReturnType<typeof client.startDeliveryLoop> | undefined;
    const loop = client.startDeliveryLoop({
      give: async () => {
        const started = Date.now();
        await loopRef?.stop();
        stoppedAt = Date.now() - started;
      },
    });
    loopRef = loop;
    loop.join('Max');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(stoppedAt).toBe(0);
    await loop.stop();
  });
});

describe('8. no key in any text a player or staff sees', () => {
  it("the report's message and the delivery event never carry the key, raw or in Base64, when the store's answer echoes it", async () => {
    const { mock, client, events } = setup({
      fetch: (next) => async (input, init) => {
        const answer = await next(input, init);
        const body = (await answer.json()) as { message?: string };
        body.message = `${body.message ?? ''} key=${KEY} auth=${encodeApiKey(KEY)}`;
        return new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers });
      },
    });
    mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
    const report = await client.deliver('Ned', () => {}, { mode: 'fast' });
    expect(report.code).toBe('SUCCESS');
    expect(report.message).toContain('<redacted>');
    expect(report.message).not.toContain(KEY);
    expect(report.message).not.toContain(encodeApiKey(KEY));
    const loop = client.startDeliveryLoop({ give: () => {} });
    loop.join('Ned');
    mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
    await vi.advanceTimersByTimeAsync(30_000);
    const texts = JSON.stringify(events.filter((e) => e.type === 'delivery'));
    expect(texts).toContain('<redacted>');
    expect(texts).not.toContain(KEY);
    expect(texts).not.toContain(encodeApiKey(KEY));
    await loop.stop();
  });
});

describe('the give that gets the item', () => {
  it('is called with the item as journaled', async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Oz', id: 2, quantity: 3 });
    const given: DeliveredItem[] = [];
    const loop = client.startDeliveryLoop({ give: (item) => void given.push(item) });
    loop.join('Oz');
    await vi.advanceTimersByTimeAsync(11_000);
    expect(given).toEqual([expect.objectContaining({ player_name: 'Oz', quantity_purchased: 3, deliveryId: expect.stringMatching(/^invoice:/) })]);
    await loop.stop();
  });
});
