/**
 * Exactly-once `deliver` against the mock over HTTP: how long it waits between its preview
 * and its claim, and the batches of deliveries the journal rounds time (journals.ts). The
 * mock's clock runs in real time; a delivery's `sleep` moves it (and the client's `now`)
 * forward instead of waiting, so every request really crosses the loopback while the 10 s
 * windows cost nothing.
 *
 * @module
 */
import { MemoryJournal, StorefrontClient, type DeliveryJournal } from 'teamgames-sdk';
import { median } from '../common/figures.js';
import { mockAdmin, type MockAdmin } from '../common/mock-admin.js';
import { JOURNAL_CONCURRENCY, QUICK } from './settings.js';
import { SMALL_KEY, player } from './service.js';

/**
 * The figure is the total a delivery slept: one window less the preview's round trip when
 * the claim is timed right, two when it arrives early.
 */
export async function deliverWait(url: string, deliveries = QUICK ? 10 : 40): Promise<{ p50: number; max: number; claimsRefused: number }> {
  let skew = 0;
  const admin = mockAdmin(url, 'mock');
  const client = new StorefrontClient({ apiKey: SMALL_KEY, baseUrl: url, journal: new MemoryJournal(), now: () => Date.now() + skew, retry: 0 });
  const waits: number[] = [];
  let claimsRefused = 0;
  for (let i = 0; i < deliveries; i++) {
    const name = player();
    await admin('POST', '/__mock/purchases', { apiKey: SMALL_KEY, playerName: name, id: 1 + (i % 8), quantity: 1 });
    let slept = 0;
    const report = await client.deliver(name, () => {}, {
      sleep: async (ms) => {
        slept += ms;
        await admin('POST', '/__mock/clock/advance', { ms });
        skew += ms;
      },
    });
    if (report.code !== 'SUCCESS') throw new Error(`bench deliver: ${report.code}`);
    if (slept > 10_000) claimsRefused += 1;
    waits.push(slept);
  }
  return { p50: median(waits), max: Math.max(...waits), claimsRefused };
}

/** The mock's clock for every client of the journal rounds: each sleep moves it and their `now` by the same amount. */
export interface SharedClock {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

export async function sharedClock(admin: MockAdmin): Promise<SharedClock> {
  let skew = (await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 })).now - Date.now();
  return {
    now: () => Date.now() + skew,
    sleep: async (ms) => {
      const step = Math.ceil(ms);
      await admin('POST', '/__mock/clock/advance', { ms: step });
      skew += step;
    },
  };
}

/** Purchases for `n` new players (not timed), then their deliveries, 50 at once (timed). */
export async function deliverBatch(url: string, clock: SharedClock, journal: DeliveryJournal, n: number): Promise<{ deliveries: number; seconds: number }> {
  const admin = mockAdmin(url, 'mock');
  const client = new StorefrontClient({ apiKey: SMALL_KEY, baseUrl: url, journal, now: clock.now, retry: 0 });
  const names = Array.from({ length: n }, () => player());
  for (const [i, name] of names.entries()) await admin('POST', '/__mock/purchases', { apiKey: SMALL_KEY, playerName: name, id: 1 + (i % 8), quantity: 1 });
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(JOURNAL_CONCURRENCY, n) }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        const report = await client.deliver(name, () => {}, { sleep: clock.sleep });
        if (report.code !== 'SUCCESS' || report.granted.length !== 1) {
          throw new Error(`bench deliver (${journal.constructor.name}): ${report.code} granted=${report.granted.length}${report.error ? ` ${report.error.message}` : ''}${report.journalError ? ` ${report.journalError.message}` : ''}`);
        }
      }
    }),
  );
  return { deliveries: n, seconds: (performance.now() - t) / 1000 };
}
