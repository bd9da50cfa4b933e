/**
 * The five ways a paid purchase was lost (the crash-safety issue), each reproduced through
 * the public API: a purchase paid while an exactly-once delivery waits and whose claim
 * answer is then lost, a journal that fails at any write, a preview answered like a claim,
 * and a hostile body after a successful claim. (Two processes on one file: file-journal.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  JournalError,
  MemoryJournal,
  ResponseValidationError,
  StorefrontClient,
  type DeliveryJournal,
  type DeliveryMode,
  type JournalEntry,
  type StorefrontEvent,
} from '../../src/index.js';
import { Game, KEY, T0, inProcessStore } from '../support/reliability.js';

const { mock, sleep, fetch: mockFetch, client, outcome } = inProcessStore();

/** A client on the in-process mock that records its events (and may reach it through a proxy). */
function sdk(journal: DeliveryJournal, events: StorefrontEvent[] = [], fetch = mockFetch): StorefrontClient {
  return client(journal, { fetch, onEvent: (e) => events.push(e) });
}
const undelivered = (player: string) => mock.purchases(KEY, player).filter((r) => r.deliverystatus === 'Undelivered').length;

afterEach(() => mock.reset());

/** A MemoryJournal whose `failAt`-th write (append or acknowledge, counted from 1) fails once, like a full disk. */
class FullDiskJournal implements DeliveryJournal {
  readonly inner = new MemoryJournal();
  writes = 0;
  constructor(readonly failAt: number) {}

  append(entries: readonly JournalEntry[]): Promise<void> {
    return this.#write(() => this.inner.append(entries));
  }

  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.inner.pending(playerName);
  }

  acknowledge(ids: readonly string[]): Promise<void> {
    return this.#write(() => this.inner.acknowledge(ids));
  }

  async #write(change: () => Promise<void>): Promise<void> {
    if (++this.writes === this.failAt) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    await change();
  }
}

describe('a purchase paid while exactly-once waits, then a lost claim answer', () => {
  it('is never silent: the reconciling report carries the unverified window and tells the player staff can check', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const events: StorefrontEvent[] = [];
    const client = sdk(new MemoryJournal(), events);
    const game = new Game();
    const previewSentAt = mock.clock.now();
    // A second purchase completes during the 10 s wait: no preview ever shows it.
    const first = await client.deliver('Ann', game.grant(), {
      sleep: async (ms) => {
        mock.addPurchase(KEY, { playerName: 'Ann', id: 3, quantity: 1 });
        await sleep(ms);
      },
    });
    expect(first.code).toBe('OUTCOME_UNKNOWN');
    expect(first.unverified).toBeUndefined();
    const lostAt = mock.clock.now();

    const second = await client.deliver('Ann', game.grant(), { sleep });
    expect(second.code).toBe('SUCCESS');
    expect(second.granted.map((i) => i.product_id_string)).toEqual(['42']);
    expect(second.unverified).toEqual({ playerName: 'Ann', from: previewSentAt, to: expect.any(Number) });
    expect(second.unverified?.to).toBeGreaterThanOrEqual(lostAt);
    expect(second.message).toMatch(/staff can check/);
    expect(second.message).not.toMatch(/already claimed/i);
    expect(events.filter((e) => e.type === 'unverified')).toEqual([{ type: 'unverified', operation: 'deliver', window: second.unverified }]);

    // The sword went with the lost claim: lost, but inside the reported window.
    expect(outcome(game)).toMatchObject({ lost: 1, duplicated: 0 });
    const sword = mock.purchases(KEY, 'Ann').find((r) => r.productid === '7');
    expect(sword?.deliverystatus).toBe('Delivered');
  });

  it('resumeDeliveries reports the same window per player', async () => {
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    expect((await sdk(journal).deliver('Bo', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(10_000);
    const resumed = await sdk(journal).resumeDeliveries(() => {}, { sleep });
    expect(resumed.granted).toHaveLength(1);
    expect(resumed.unverified).toEqual([{ playerName: 'Bo', from: T0, to: expect.any(Number) }]);
  });
});

describe('a journal that fails (a full disk) at any write', () => {
  // A delivery of two lines writes 4 times in exactly-once mode (intents, lines, two
  // acknowledgements) and 5 in fast mode (claim mark, lines, mark acknowledged, two acknowledgements).
  const writes: Record<DeliveryMode, number> = { exactlyOnce: 4, fast: 5 };
  const cases = (['exactlyOnce', 'fast'] as const).flatMap((mode) => Array.from({ length: writes[mode] }, (_, i) => [mode, i + 1] as const));

  it.each(cases)('%s mode, write #%i fails: reported, and nothing is lost or granted twice', async (mode, failAt) => {
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Cy', id: 2, quantity: 1 });
    const journal = new FullDiskJournal(failAt);
    const events: StorefrontEvent[] = [];
    const client = sdk(journal, events);
    const game = new Game();

    const first = await client.deliver('Cy', game.grant(), { mode, sleep });
    expect(first.journalError).toBeInstanceOf(JournalError);
    expect(first.journalError?.cause).toMatchObject({ code: 'ENOSPC' });
    expect(events.filter((e) => e.type === 'journalError')).toEqual([{ type: 'journalError', operation: 'deliver', playerName: 'Cy', error: first.journalError }]);
    // branch: only the first write comes before the claim; what follows holds for every write
    if (failAt === 1) {
      // The first write comes before the claim: a full disk stops the claim itself.
      expect(first.code).toBe('ERROR');
      expect(first.error).toBe(first.journalError);
      expect(undelivered('Cy')).toBe(2);
    }

    // The disk has room again: a later purchase and the next calls finish everything.
    mock.addPurchase(KEY, { playerName: 'Cy', id: 3, quantity: 1 });
    mock.clock.advance(10_000);
    await client.deliver('Cy', game.grant(), { mode, sleep });
    await sdk(journal.inner).resumeDeliveries(game.grant(), { sleep });
    expect(outcome(game)).toEqual({ paid: 66, granted: 66, lost: 0, duplicated: 0 });
    expect((await journal.inner.pending()).filter((e) => e.state !== 'unverified')).toEqual([]);
  });

  it('a journal that cannot be read stops deliver before any request, with the failure on the report', async () => {
    mock.addPurchase(KEY, { playerName: 'Di', id: 1, quantity: 1 });
    const broken: DeliveryJournal = {
      append: async () => {},
      acknowledge: async () => {},
      pending: async () => {
        throw new Error('EIO: i/o error, read');
      },
    };
    const report = await sdk(broken).deliver('Di', () => {});
    expect(report).toMatchObject({ code: 'ERROR', granted: [], pending: 0 });
    expect(report.journalError).toBeInstanceOf(JournalError);
    expect(report.journalError?.message).toMatch(/^deliver: the delivery journal failed \(EIO/);
    expect(undelivered('Di')).toBe(1);
    await expect(sdk(broken).resumeDeliveries(() => {})).rejects.toBeInstanceOf(JournalError);
  });
});

describe('a preview answered SUCCESS with items (a misbehaving service or proxy)', () => {
  it('treats the items as delivered: journaled, granted, and the oddity reported', async () => {
    mock.addPurchase(KEY, { playerName: 'Ed', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Ed', id: 4, quantity: 1 });
    // The proxy turns the preview into a real claim: the service delivers and says SUCCESS.
    const claimingProxy: typeof globalThis.fetch = async (input, init) => {
      const body = String(init?.body).replace('"preview":true', '"preview":false');
      return mockFetch(input, { ...init, body });
    };
    const journal = new MemoryJournal();
    const game = new Game();
    const report = await sdk(journal, [], claimingProxy).deliver('Ed', game.grant(), { sleep });
    expect(report.code).toBe('SUCCESS');
    expect(report.granted.map((i) => i.deliveryId).sort()).toEqual(mock.purchases(KEY, 'Ed').map((r) => `invoice:${r.invoice}`).sort());
    expect(report.error).toBeInstanceOf(ResponseValidationError);
    expect(report.error?.message).toMatch(/preview answered SUCCESS/);
    expect(outcome(game)).toMatchObject({ lost: 0, duplicated: 0 });
    expect(journal.size).toBe(0);
  });
});

describe('a hostile body after a successful claim', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  /** Adds a 100,000-deep field to every purchase of the answers (of claims only, or of previews too). */
  const deepening =
    (previewsToo: boolean): typeof globalThis.fetch =>
    async (input, init) => {
      const response = await mockFetch(input, init);
      if (!previewsToo && String(init?.body).includes('"preview":true')) return response;
      const text = await response.text();
      return new Response(text.replace(/"player_name":/g, `"extra":${deep},"player_name":`), { status: response.status, headers: response.headers });
    };

  it.each<DeliveryMode>(['fast', 'exactlyOnce'])('%s mode: the claimed purchase is granted from memory, the journal failure reported', async (mode) => {
    mock.addPurchase(KEY, { playerName: 'Fi', id: 1, quantity: 2 });
    const game = new Game();
    const journal = new MemoryJournal();
    const report = await sdk(journal, [], deepening(false)).deliver('Fi', game.grant(), { mode, sleep });
    expect(report.code).toBe('SUCCESS');
    expect(report.journalError?.cause).toBeInstanceOf(RangeError);
    expect(outcome(game)).toMatchObject({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
    expect(report.pending).toBe(0);
    expect(journal.size).toBe(0);
  });

  it('exactly-once mode, the preview deep too: nothing is claimed while the intent cannot be journaled', async () => {
    mock.addPurchase(KEY, { playerName: 'Flo', id: 1, quantity: 1 });
    const report = await sdk(new MemoryJournal(), [], deepening(true)).deliver('Flo', () => {}, { sleep });
    expect(report.code).toBe('ERROR');
    expect(report.journalError).toBeInstanceOf(JournalError);
    expect(undelivered('Flo')).toBe(1);
  });

  it('claim() turns an unreadable answer into ClaimOutcomeUnknownError, never a plain RangeError', async () => {
    mock.addPurchase(KEY, { playerName: 'Gil', id: 1, quantity: 1 });
    const thrower: typeof globalThis.fetch = async () =>
      new Response(`{"status":"SUCCESS","message":"ok","claims":[{"player_name":"Gil","product_id":1,"product_id_string":"1","quantity_to_grant":1,"quantity_purchased":1,"product_name":"x","product_price":1,"x":${deep}}]}`, {
        headers: { 'content-type': 'application/json' },
      });
    const result = await sdk(new MemoryJournal(), [], thrower)
      .claim('Gil')
      .then(
        () => 'resolved',
        (error: unknown) => (error as Error).name,
      );
    expect(['resolved', 'ClaimOutcomeUnknownError']).toContain(result);
  });
});
