import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  ClaimOutcomeUnknownError,
  DEFAULT_JOURNAL_PATH,
  FileJournal,
  InvalidInputError,
  MemoryJournal,
  StorefrontClient,
  type DeliveredItem,
  type JournalEntry,
} from '../../src/index.js';
import { Crash, CrashingJournal, Game, KEY, inProcessStore } from '../support/reliability.js';

const { mock, sleep, fetch, client, outcome } = inProcessStore();

/** Crashes right after the claimed lines reach the journal (not after fast mode's claim mark). */
const afterWritingLines = (point: string, entries: readonly JournalEntry[] | readonly string[]) => point === 'appendAfter' && (entries as readonly JournalEntry[])[0]?.state === 'claimed';

const dir = mkdtempSync(join(tmpdir(), 'teamgames-delivery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

afterEach(() => {
  mock.reset();
});

describe('deliver, fast mode', () => {
  it('journals the claimed lines, grants each with a deliveryId and acknowledges it', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 2 });
    mock.addPurchase(KEY, { playerName: 'Ann', id: 2, quantity: 1 });
    const journal = new MemoryJournal();
    const seen: Array<{ item: DeliveredItem; journaled: number }> = [];
    const report = await client(journal).deliver(
      'Ann',
      async (item) => {
        seen.push({ item, journaled: (await journal.pending('Ann')).length });
      },
      { mode: 'fast' },
    );

    expect(report.code).toBe('SUCCESS');
    expect(report.granted.map((i) => [i.product_id_string, i.quantity_to_grant])).toEqual([
      ['42', 2],
      ['minecraft:diamond', 64],
    ]);
    // Both lines were in the journal before the first grant started.
    expect(seen.map((s) => s.journaled)).toEqual([2, 1]);
    expect(new Set(report.granted.map((i) => i.deliveryId)).size).toBe(2);
    expect(report.granted[0]?.deliveryId).toMatch(/^claim:[0-9a-f-]{36}:0$/);
    expect(report.pending).toBe(0);
    expect(journal.size).toBe(0);
  });

  it('keeps a line whose grant threw and grants it first on the next deliver, never an acknowledged one again', async () => {
    mock.addPurchase(KEY, { playerName: 'Bob', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Bob', id: 3, quantity: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    const calls: string[] = [];
    let broken = true;
    const grant = (item: DeliveredItem) => {
      calls.push(item.product_id_string);
      if (broken && item.product_id_string === '7') throw new Error('inventory full');
    };

    const first = await c.deliver('Bob', grant, { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    expect(first.granted.map((i) => i.product_id_string)).toEqual(['42']);
    expect(first.failed).toHaveLength(1);
    expect((first.failed[0]?.error as Error).message).toBe('inventory full');
    expect(first.pending).toBe(1);
    expect(first.message).toMatch(/next claim/);

    broken = false;
    const second = await c.deliver('Bob', grant, { mode: 'fast', sleep });
    expect(second.code).toBe('SUCCESS');
    expect(second.granted.map((i) => i.deliveryId)).toEqual([first.failed[0]?.item.deliveryId]);
    expect(second.pending).toBe(0);
    expect(calls).toEqual(['42', '7', '7']);
  });

  it('waits out the rate window through the injected sleep instead of failing', async () => {
    mock.addPurchase(KEY, { playerName: 'Cid', id: 1, quantity: 1 });
    const c = client(new MemoryJournal());
    const waits: number[] = [];
    const recordingSleep = async (ms: number) => {
      waits.push(ms);
      await sleep(ms);
    };
    expect((await c.deliver('Cid', () => {}, { mode: 'fast', sleep: recordingSleep })).code).toBe('SUCCESS');
    const again = await c.deliver('Cid', () => {}, { mode: 'fast', sleep: recordingSleep });
    expect(again.code).toBe('ALREADY_CLAIMED');
    expect(waits).toEqual([10_000]);
    const refused = await c.deliver('Cid', () => {}, { mode: 'fast', sleep: recordingSleep, maxRateLimitWaits: 0 });
    expect(refused.code).toBe('RATE_LIMIT');
  });

  it('reports a lost claim answer as OUTCOME_UNKNOWN with the unverified window: in fast mode those items are lost, never silently', async () => {
    mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const game = new Game();
    const journal = new MemoryJournal();
    const report = await client(journal).deliver('Dee', game.grant(), { mode: 'fast', sleep });
    expect(report.code).toBe('OUTCOME_UNKNOWN');
    expect(report.error).toBeInstanceOf(ClaimOutcomeUnknownError);
    // This client never saw Dee's list: the claim may have taken any purchase, since 0.
    expect(report.unverified).toEqual({ playerName: 'Dee', from: 0, to: mock.clock.now() });
    expect(report.message).toMatch(/staff can check/);
    expect(report.message).not.toMatch(/already claimed|safe/i);
    // The window is kept in the journal until staff resolve it; nothing else is left.
    expect((await journal.pending()).map((e) => e.state)).toEqual(['unverified']);
    expect(outcome(game)).toMatchObject({ paid: 1, granted: 0, lost: 1 });
  });

  it("a lost fast claim's window starts at the last answer that found nothing pending (NO_ITEMS or ALREADY_CLAIMED), not at an answer that left purchases pending", async () => {
    const game = new Game();
    const c = client(new MemoryJournal());
    const lost = async () => {
      mock.clock.advance(10_000);
      mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
      const report = await c.deliver('Flo', game.grant(), { mode: 'fast', sleep });
      expect(report.code).toBe('OUTCOME_UNKNOWN');
      return report.unverified?.from;
    };
    // Nothing ever bought: NO_ITEMS. The next lost claim can only have taken what came after.
    const noItemsAt = mock.clock.now();
    expect((await c.deliver('Flo', game.grant(), { mode: 'fast', sleep })).code).toBe('NO_ITEMS');
    expect(await lost()).toBe(noItemsAt);
    // Bought and delivered once: ALREADY_CLAIMED, a look at the list all the same.
    mock.addPurchase(KEY, { playerName: 'Flo', id: 1, quantity: 1 });
    mock.clock.advance(10_000);
    expect((await c.deliver('Flo', game.grant(), { mode: 'fast', sleep })).code).toBe('SUCCESS');
    mock.clock.advance(10_000);
    const alreadyAt = mock.clock.now();
    expect((await c.deliver('Flo', game.grant(), { mode: 'fast', sleep })).code).toBe('ALREADY_CLAIMED');
    expect(await lost()).toBe(alreadyAt);
    // A claim refused by the window (RATE_LIMIT, nothing looked at) moves nothing: the window
    // of the next lost claim still starts at the last look.
    mock.clock.advance(10_000);
    const lookAt = mock.clock.now();
    expect((await c.deliver('Flo', game.grant(), { mode: 'fast', sleep })).code).toBe('ALREADY_CLAIMED');
    mock.clock.advance(1_000);
    expect((await c.deliver('Flo', game.grant(), { mode: 'fast', sleep, maxRateLimitWaits: 0 })).code).toBe('RATE_LIMIT');
    expect(await lost()).toBe(lookAt);
  });

  it('survives a crash between the journal write and the grant: resumeDeliveries grants at startup', async () => {
    mock.addPurchase(KEY, { playerName: 'Eve', id: 2, quantity: 2 });
    const disk = new MemoryJournal();
    const game = new Game();
    const crashing = new CrashingJournal(disk, afterWritingLines);
    await expect(crashing.run(client(crashing).deliver('Eve', game.grant(), { mode: 'fast', sleep }))).rejects.toBeInstanceOf(Crash);
    expect(game.calls).toBe(0);
    expect(mock.purchases(KEY, 'Eve')[0]?.deliverystatus).toBe('Delivered');

    // The process restarts: a new client over the same journal.
    const resumed = await client(disk).resumeDeliveries(game.grant(), { sleep });
    expect(resumed.granted).toHaveLength(1);
    expect(resumed.pending).toBe(0);
    expect(resumed.errors).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 128, granted: 128, lost: 0, duplicated: 0 });
  });

  it('survives the same crash with the file journal: a new process reads the file and grants', async () => {
    mock.addPurchase(KEY, { playerName: 'Eli', id: 1, quantity: 2 });
    mock.addPurchase(KEY, { playerName: 'Eli', id: 3, quantity: 1 });
    const path = join(dir, 'crash.jsonl');
    const game = new Game();
    const before = new FileJournal(path);
    const crashing = new CrashingJournal(before, afterWritingLines);
    await expect(crashing.run(client(crashing).deliver('Eli', game.grant(), { mode: 'fast' }))).rejects.toBeInstanceOf(Crash);
    await before.close();

    const after = new FileJournal(path);
    const resumed = await client(after).resumeDeliveries(game.grant());
    expect(resumed.granted.map((i) => i.product_id_string)).toEqual(['42', '7']);
    expect(await after.pending()).toEqual([]);
    await after.close();
    expect(outcome(game)).toEqual({ paid: 3, granted: 3, lost: 0, duplicated: 0 });
  });

  it('repeats only the interrupted grant, with the same deliveryId, after a crash before its acknowledgement', async () => {
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    const disk = new MemoryJournal();
    const game = new Game();
    const crashing = new CrashingJournal(disk, (point, ids) => point === 'ackBefore' && !(ids as string[])[0]?.match(/^claim:[^:]+$/));
    await expect(crashing.run(client(crashing).deliver('Fay', game.grant(), { mode: 'fast' }))).rejects.toBeInstanceOf(Crash);
    const resumed = await client(disk).resumeDeliveries(game.grant());
    expect(resumed.granted).toHaveLength(1);
    expect(game.regrants).toBe(1);
    expect(outcome(game)).toMatchObject({ lost: 0, duplicated: 0 });
  });
});

describe('deliver, exactly-once mode', () => {
  it('previews, journals the intent, waits out the window on the injected clock, claims and grants by invoice', async () => {
    const row = mock.addPurchase(KEY, { playerName: 'Gus', id: 4, quantity: 1 });
    const journal = new MemoryJournal();
    const intents: string[] = [];
    const recordingSleep = async (ms: number) => {
      intents.push(...(await journal.pending('Gus')).map((e) => `${e.state}:${e.deliveryId}`));
      await sleep(ms);
    };
    const started = mock.clock.now();
    const report = await client(journal).deliver('Gus', () => {}, { mode: 'exactlyOnce', sleep: recordingSleep });
    expect(report.code).toBe('SUCCESS');
    expect(report.granted.map((i) => i.deliveryId)).toEqual([`invoice:${row.invoice}`]);
    expect(intents).toEqual([`intended:invoice:${row.invoice}`]);
    expect(mock.clock.now() - started).toBe(10_000);
    expect(journal.size).toBe(0);
  });

  it('reconciles a lost claim answer: the lines the lost claim delivered are granted from the journal', async () => {
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 3 });
    mock.addPurchase(KEY, { playerName: 'Hal', id: 5, quantity: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    // The preview goes through; the claim's answer is lost after the rows were delivered.
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const c = client(journal);
    const lost = await c.deliver('Hal', game.grant(), { mode: 'exactlyOnce', sleep });
    expect(lost.code).toBe('OUTCOME_UNKNOWN');
    expect(lost.pending).toBe(2);
    expect(mock.purchases(KEY, 'Hal').every((r) => r.deliverystatus === 'Delivered')).toBe(true);
    expect(game.calls).toBe(0);

    const next = await c.deliver('Hal', game.grant(), { mode: 'exactlyOnce', sleep });
    expect(next.code).toBe('SUCCESS');
    expect(next.granted.map((i) => i.deliveryId).sort()).toEqual(mock.purchases(KEY, 'Hal').map((r) => `invoice:${r.invoice}`).sort());
    expect(next.pending).toBe(0);
    expect(outcome(game)).toEqual({ paid: 103, granted: 103, lost: 0, duplicated: 0 });
  });

  it('claims normally when the unknown outcome was a drop before the state change', async () => {
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    const game = new Game();
    mock.faults.add({ operation: 'claim', kind: 'dropBefore', skip: 1, times: 1 });
    const c = client(new MemoryJournal());
    expect((await c.deliver('Ida', game.grant(), { mode: 'exactlyOnce', sleep })).code).toBe('OUTCOME_UNKNOWN');
    expect(mock.purchases(KEY, 'Ida')[0]?.deliverystatus).toBe('Undelivered');
    const next = await c.deliver('Ida', game.grant(), { mode: 'exactlyOnce', sleep });
    expect(next.code).toBe('SUCCESS');
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('a 5xx answer after the state change is reconciled too, and a fast-mode call finishes the intents', async () => {
    mock.addPurchase(KEY, { playerName: 'Jo', id: 3, quantity: 2 });
    mock.faults.add({ operation: 'claim', kind: 'status', status: 502, phase: 'after', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    const c = client(journal);
    const first = await c.deliver('Jo', game.grant(), { mode: 'exactlyOnce', sleep });
    expect(first.error).toBeInstanceOf(ClaimOutcomeUnknownError);
    // A plain deliver for a player with intents reconciles them the exactly-once way.
    const next = await c.deliver('Jo', game.grant(), { mode: 'fast', sleep });
    expect(next.code).toBe('SUCCESS');
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
  });

  it('resumeDeliveries at startup reconciles intents a crashed process left', async () => {
    mock.addPurchase(KEY, { playerName: 'Kim', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Lou', id: 2, quantity: 1 });
    const disk = new MemoryJournal();
    const game = new Game();
    // Kim: the claim went through but the process died before writing what it claimed.
    const crashing = new CrashingJournal(disk, (point, entries) => point === 'appendBefore' && (entries as ReadonlyArray<{ state?: string }>)[0]?.state === 'claimed');
    await expect(crashing.run(client(crashing).deliver('Kim', game.grant(), { mode: 'exactlyOnce', sleep }))).rejects.toBeInstanceOf(Crash);
    // Lou: a grant failed; the line waits in the journal.
    const failing = await client(disk).deliver('Lou', game.grant(() => true), { mode: 'fast', sleep });
    expect(failing.code).toBe('PARTIAL');

    const restarted = client(disk);
    const resumed = await restarted.resumeDeliveries(game.grant(), { sleep });
    expect(resumed.granted.map((i) => i.player_name).sort()).toEqual(['Kim', 'Lou']);
    expect(resumed.pending).toBe(0);
    expect(outcome(game)).toEqual({ paid: 65, granted: 65, lost: 0, duplicated: 0 });
  });
});

describe('deliver input checks', () => {
  it('rejects bad arguments with InvalidInputError before any request, never synchronously', async () => {
    const c = client(new MemoryJournal());
    const bad: Array<() => Promise<unknown>> = [
      () => c.deliver('  ', () => {}),
      () => c.deliver('Ann', 'grant' as never),
      () => c.deliver('Ann', () => {}, { mode: 'twice' as never }),
      () => c.deliver('Ann', () => {}, { sleeep: 1 } as never),
      () => c.deliver('Ann', () => {}, { maxRateLimitWaits: -1 }),
      () => c.deliver('Ann', () => {}, { signal: {} as never }),
      () => c.resumeDeliveries(null as never),
    ];
    for (const call of bad) await expect(call()).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => new StorefrontClient({ apiKey: KEY, journal: {} as never })).toThrow(InvalidInputError);
  });

  it('opens the default file journal lazily: constructing a client writes nothing', () => {
    const existed = existsSync(DEFAULT_JOURNAL_PATH);
    new StorefrontClient({ apiKey: KEY });
    expect(existsSync(DEFAULT_JOURNAL_PATH)).toBe(existed);
  });

  it('rejects with the signal reason when aborted during a wait', async () => {
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const report = client(new MemoryJournal()).deliver('Max', () => {}, {
      mode: 'exactlyOnce',
      signal: controller.signal,
      sleep: async () => controller.abort(reason),
    });
    await expect(report).rejects.toBe(reason);
  });
});

describe('deliver, exactly-once timing', () => {
  // Regression: the 10 s wait was timed from when the preview was sent, but the service
  // starts its window when the preview arrives, so on a real network the claim came a
  // moment early, was refused, and cost a second full window.
  it('times the window from the preview answer, so the claim is never refused for arriving early', async () => {
    mock.addPurchase(KEY, { playerName: 'Lat', id: 1, quantity: 1 });
    const latency = 40;
    const bodies: string[] = [];
    // 40 ms of network latency before the service sees each request.
    const slowFetch: typeof globalThis.fetch = async (input, init) => {
      mock.clock.advance(latency);
      bodies.push(String(init?.body));
      return fetch(input, init);
    };
    const slept: number[] = [];
    const sdk = client(new MemoryJournal(), { fetch: slowFetch });
    const report = await sdk.deliver('Lat', () => {}, {
      mode: 'exactlyOnce',
      sleep: async (ms) => {
        slept.push(ms);
        mock.clock.advance(ms);
      },
    });

    expect(report.code).toBe('SUCCESS');
    expect(report.granted).toHaveLength(1);
    // One preview and one claim: no refused claim in between, one wait only.
    expect(bodies.map((b) => JSON.parse(b).preview)).toEqual([true, false]);
    expect(slept).toEqual([10_000]);
  });
});
