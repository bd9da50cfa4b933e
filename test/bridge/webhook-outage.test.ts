/**
 * `teamgames bridge` with a webhook game that fails for minutes (the hostile day: "the item
 * is marked for staff after two failures and then sent only twice in 45 s"): an item the
 * game refuses is given again on the guide's backoff (10 s, doubling, at most 1 h), marked
 * for staff after `staffAfterAttempts` failures and still given, counted in the bridge's
 * metrics (`teamgames_bridge_backing_off_items`) meanwhile, and given once the game is
 * back, once.
 *
 * The bridge's loop and metrics as the bridge assembles them, on the loop's fake-timer
 * harness (hours of virtual time in milliseconds); the game's webhook answers 503 while
 * it is down, as the webhook sink reports it.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DeliveredItem } from '../../src/index.js';
import { createMetrics } from '../../src/bridge/metrics.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY } from '../support/reliability.js';

const { setup } = loopHarness();

const gauge = (metrics: string, name: string) => Number(new RegExp(`^teamgames_bridge_${name} (\\S+)$`, 'm').exec(metrics)?.[1]);

describe('a webhook game down for minutes', () => {
  it('the item is given again on the backoff, shown as backing off, marked for staff and still given, then given once the game is back', async () => {
    const { mock, client, events } = setup();
    let down = true;
    const start = Date.now();
    const tries: number[] = [];
    const given: DeliveredItem[] = [];
    const give = (item: DeliveredItem) => {
      tries.push(Date.now() - start);
      if (down) throw new Error("the game's webhook answered HTTP 503");
      given.push(item);
    };
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({ give, claimMode: 'fast', staffAfterAttempts: 2 });
    const metrics = createMetrics(() => loop.stats());
    loop.join('Steve');

    const backingOff: number[] = [];
    const stepTo = async (until: number) => {
      while (Date.now() - start < until) {
        await vi.advanceTimersByTimeAsync(1_000);
        backingOff.push(gauge(await metrics.text(), 'backing_off_items'));
      }
    };
    // Three minutes down.
    await stepTo(180_000);
    // The first give, then one 10 s, 20 s, 40 s, 80 s after each failure (within a poll's second).
    const gaps = tries.slice(1).map((at, i) => at - (tries[i] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(3);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(10_000 * 2 ** i);
      expect(gap).toBeLessThanOrEqual(10_000 * 2 ** i + 11_000);
    });
    // Marked for staff after two failures, and still given on the backoff.
    expect(events.filter((e) => e.type === 'stuck')).toHaveLength(1);
    // Backing off after each failure, as the metrics say: the scrape a second later counts it
    // (until its time comes and a run, once the store's window allows, gives it again).
    const samples = (backingOff as number[]).map((n, i) => ({ at: (i + 1) * 1_000, n }));
    for (const at of tries) expect(samples.find((s) => s.at > at)?.n, `the scrape after the failure at ${at} ms`).toBe(1);
    expect(samples.filter((s) => s.at > (tries[0] as number) && s.n === 1).length).toBeGreaterThan(0.8 * samples.filter((s) => s.at > (tries[0] as number)).length);
    expect(loop.stats()).toMatchObject({ backingOff: 1, pending: 1 });

    down = false;
    const before = tries.length;
    await stepTo(Date.now() - start + 200_000);
    expect(tries.length).toBe(before + 1);
    expect(given).toHaveLength(1);
    const text = await metrics.text();
    expect(gauge(text, 'backing_off_items')).toBe(0);
    expect(gauge(text, 'granted_total')).toBe(1);
    expect(loop.stats()).toMatchObject({ backingOff: 0, pending: 0 });
    await loop.stop();
  });

  it("a /claim while the game refuses: PARTIAL, and the player's text says the bridge delivers it on its own (not \"on your next claim\")", async () => {
    const { mock, client } = setup();
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const loop = client.startDeliveryLoop({
      give: () => {
        throw new Error("the game's webhook answered HTTP 503");
      },
      claimMode: 'fast',
    });
    loop.join('Steve');
    let report: Awaited<ReturnType<typeof loop.claim>> | undefined;
    void loop.claim('Steve').then((r) => (report = r));
    for (let i = 0; i < 60 && report === undefined; i++) await vi.advanceTimersByTimeAsync(1_000);
    expect(report).toMatchObject({ code: 'PARTIAL', pending: 1, message: 'Some items could not be delivered yet; they will be delivered automatically, while you are online or when you next join.' });
    await loop.stop();
  });
});
