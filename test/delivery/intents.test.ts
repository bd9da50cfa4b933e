/**
 * Exactly-once delivery's intents over several runs (src/delivery/engine/engine.ts), by what
 * players get and staff see: a window starts at the last preview before the lost claim
 * (the earliest of several lost intents'); intents a claim settled are dropped and never
 * granted again, even when their acknowledgement failed; resumeDeliveries reconciles a
 * player who also has a line to grant; a journal that cannot be read while reconciling
 * claims nothing; the store's own message reaches the player (in fast mode too).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { BASE_URL, Game, KEY, inProcessStore, processView } from '../support/reliability.js';
import { withSuccessText, withoutRawRows } from '../support/answers.js';

const { mock, sleep, fetch: mockFetch, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
});

const whip = (player: string) => ({ player_name: player, product_id: 1, product_id_string: '42', product_name: 'Whip', product_price: 10, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 });

/** A store whose claims answer with a message of its own: the player reads that one. */
const STORE_TEXT = 'Thanks for supporting Acme! Your items are in your bank.';

/** Claims the player's purchases with a plain client: a claim whose answer never reached the bridge. */
const claimElsewhere = (player: string) => new StorefrontClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: mockFetch, now: mock.clock.now, retry: 0 }).claim(player);

/** An open intent for the purchase `row`, previewed at `previewedAt`. */
const intentFor = (player: string, row: { invoice: string | number }, previewedAt: number, extra: Partial<JournalEntry> = {}): JournalEntry => ({
  deliveryId: `invoice:${row.invoice}`,
  playerName: player,
  state: 'intended',
  item: whip(player),
  invoice: String(row.invoice),
  recordedAt: previewedAt,
  previewedAt,
  ...extra,
} as JournalEntry);

/** The proxy drops the raw rows of real claims (previews keep theirs): the claimed lines cannot be matched to intents. */
const noRawRows = withoutRawRows(mockFetch);

describe('the window of a lost claim', () => {
  it('starts at the preview before the claim that was lost, not at an earlier run whose claim never arrived', async () => {
    mock.addPurchase(KEY, { playerName: 'Ada', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    // Run 1: the claim never reaches the service (the intent stays, the purchase pending).
    mock.faults.add({ operation: 'claim', kind: 'dropBefore', skip: 1, times: 1 });
    expect((await c.deliver('Ada', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(60_000);
    // Run 2: previewed again, claimed, and the answer lost on the way back.
    const secondPreview = mock.clock.now();
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    expect((await c.deliver('Ada', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(60_000);
    const game = new Game();
    const third = await c.deliver('Ada', game.grant(), { sleep });
    expect(third.granted).toHaveLength(1);
    expect(third.unverified).toEqual({ playerName: 'Ada', from: secondPreview, to: mock.clock.now() });
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('of several lost intents (of two nodes) starts at the earliest preview', async () => {
    const a = mock.addPurchase(KEY, { playerName: 'Bel', id: 1, quantity: 1 });
    const b = mock.addPurchase(KEY, { playerName: 'Bel', id: 1, quantity: 1 });
    await claimElsewhere('Bel');
    const t = mock.clock.now();
    const journal = new MemoryJournal();
    await journal.append([intentFor('Bel', a, t - 5_000, { node: 'node-b' } as Partial<JournalEntry>), intentFor('Bel', b, t - 9_000)]);
    const report = await client(journal).deliver('Bel', () => {}, { sleep });
    expect(report.granted).toHaveLength(2);
    expect(report.unverified).toMatchObject({ playerName: 'Bel', from: t - 9_000 });
  });
});

describe('intents a claim settled', () => {
  it('a claim answer without invoices: its lines granted, the intents it replaced dropped, nothing left in the journal', async () => {
    mock.addPurchase(KEY, { playerName: 'Cas', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const game = new Game();
    const report = await client(journal, { fetch: withSuccessText(noRawRows, STORE_TEXT) }).deliver('Cas', game.grant(), { sleep });
    expect(report).toMatchObject({ code: 'SUCCESS', message: STORE_TEXT, pending: 0 });
    expect(await journal.pending()).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('the same when the journal refuses the claimed lines and the game refuses them too: the intents stay, so a restart grants and reports', async () => {
    mock.addPurchase(KEY, { playerName: 'Dia', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    const journal: DeliveryJournal = {
      ...processView(storage),
      append: async (entries) => {
        if (entries.some((e) => e.state === 'claimed')) throw new Error('ENOSPC');
        await storage.append(entries);
      },
    };
    const first = await client(journal, { fetch: noRawRows }).deliver('Dia', () => Promise.reject(new Error('offline')), { sleep });
    expect(first.code).toBe('PARTIAL');
    // The bridge dies with the line in memory: the intent on disk is what tells the next process.
    const game = new Game();
    const after = await client(processView(storage)).deliver('Dia', game.grant(), { sleep });
    expect(after.granted).toHaveLength(1);
    expect(after.unverified).toMatchObject({ playerName: 'Dia' });
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('a settled intent whose acknowledgement failed is never granted again: resumeDeliveries grants only the claimed line', async () => {
    const row = mock.addPurchase(KEY, { playerName: 'Eli', id: 1, quantity: 1 });
    await claimElsewhere('Eli'); // the claim whose answer had no invoices
    const storage = new MemoryJournal();
    const t = mock.clock.now();
    await storage.append([
      { deliveryId: 'claim:batch:0', playerName: 'Eli', state: 'claimed', item: whip('Eli'), recordedAt: t },
      intentFor('Eli', row, t - 10_000, { settled: true } as Partial<JournalEntry>),
    ]);
    let acks = 0;
    const journal: DeliveryJournal = {
      ...processView(storage),
      acknowledge: async (ids) => {
        if (++acks === 1) throw new Error('EIO');
        await storage.acknowledge(ids);
      },
    };
    const game = new Game();
    const resumed = await client(journal).resumeDeliveries(game.grant(), { sleep });
    expect(resumed.granted.map((i) => i.deliveryId)).toEqual(['claim:batch:0']);
    expect(resumed.unverified).toEqual([]);
    expect(resumed.pending).toBe(0);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });
});

describe('resumeDeliveries for a player with a line to grant and an intent', () => {
  it('grants the line, and reconciles the intent: the lost claim took it, so it is granted and its window reported', async () => {
    mock.addPurchase(KEY, { playerName: 'Flo', id: 3, quantity: 1 });
    const row = mock.addPurchase(KEY, { playerName: 'Flo', id: 1, quantity: 1 });
    await claimElsewhere('Flo');
    const t = mock.clock.now();
    const storage = new MemoryJournal();
    await storage.append([
      { deliveryId: 'claim:old:0', playerName: 'Flo', state: 'claimed', item: { ...whip('Flo'), product_id: 3, product_id_string: '7', product_name: 'Sword' }, recordedAt: t },
      intentFor('Flo', row, t - 3_000),
    ]);
    const game = new Game();
    const resumed = await client(storage).resumeDeliveries(game.grant(), { sleep });
    expect(resumed.granted).toHaveLength(2);
    expect(resumed.unverified).toEqual([{ playerName: 'Flo', from: t - 3_000, to: mock.clock.now() }]);
    expect(await storage.pending()).toMatchObject([{ state: 'unverified' }]);
    expect(outcome(game)).toEqual({ paid: 2, granted: 2, lost: 0, duplicated: 0 });
  });
});

describe('a journal that cannot be read while reconciling', () => {
  it('claims nothing: ERROR with the journal failure, no window, the purchase still pending', async () => {
    mock.addPurchase(KEY, { playerName: 'Gia', id: 1, quantity: 1 });
    const storage = new MemoryJournal();
    let reads = 0;
    const journal: DeliveryJournal = {
      ...processView(storage),
      pending: async (p) => {
        // The first read (finishing earlier work) succeeds; the reconcile's does not.
        if (++reads === 2) throw new Error('EIO: bad sector');
        return storage.pending(p);
      },
    };
    const report = await client(journal).deliver('Gia', () => {}, { sleep });
    expect(report.code).toBe('ERROR');
    expect(report.journalError?.message).toMatch(/EIO: bad sector/);
    expect(report.unverified).toBeUndefined();
    expect(mock.purchases(KEY, 'Gia')[0]?.deliverystatus).toBe('Undelivered');
    expect(await storage.pending()).toEqual([]);
  });
});

describe("the player's text", () => {
  it.each(['exactlyOnce', 'fast'] as const)("%s: the store's own message on success", async (mode) => {
    mock.addPurchase(KEY, { playerName: 'Hal', id: 1, quantity: 1 });
    const report = await client(new MemoryJournal(), { fetch: withSuccessText(mockFetch, STORE_TEXT) }).deliver('Hal', () => {}, { mode, sleep });
    expect(report).toMatchObject({ code: 'SUCCESS', message: STORE_TEXT });
    expect(report.granted).toHaveLength(1);
  });

  it('a preview a proxy turned into a claim: the lines are granted, and the player reads the success', async () => {
    mock.addPurchase(KEY, { playerName: 'Ira', id: 1, quantity: 1 });
    const previewAsClaim: typeof globalThis.fetch = (input, init) => mockFetch(input, { ...init, body: String(init?.body).replace('"preview":true', '"preview":false') });
    const game = new Game();
    const report = await client(new MemoryJournal(), { fetch: withSuccessText(previewAsClaim, STORE_TEXT) }).deliver('Ira', game.grant(), { sleep });
    expect(report).toMatchObject({ code: 'SUCCESS', message: STORE_TEXT });
    expect(report.granted).toHaveLength(1);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });
});

describe('the claim after the wait finds the previewed lines gone', () => {
  it('a store that answers NO_ITEMS then (not ALREADY_CLAIMED): the intents are dropped all the same, nothing granted twice', async () => {
    mock.addPurchase(KEY, { playerName: 'Jon', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const noItems: typeof globalThis.fetch = async (input, init) => {
      const text = await (await mockFetch(input, init)).text();
      return new Response(text.replace('"ALREADY_CLAIMED"', '"NO_ITEMS"'), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const first = await client(journal, { fetch: noItems }).deliver('Jon', () => {}, {
      sleep: async (ms) => {
        mock.clock.advance(10_000);
        await claimElsewhere('Jon'); // another claimer takes the line during the wait
        await sleep(ms);
      },
    });
    expect(first).toMatchObject({ code: 'NO_ITEMS', granted: [] });
    expect(await journal.pending()).toEqual([]);
    const game = new Game();
    mock.clock.advance(10_000);
    const next = await client(journal).deliver('Jon', game.grant(), { sleep });
    expect(next.granted).toEqual([]);
    expect(next.unverified).toBeUndefined();
  });
});

describe('records the SDK never writes', () => {
  it('a claimed line marked settled (written by another tool) is still a line to grant, never dropped unseen', async () => {
    const journal = new MemoryJournal();
    await journal.append([{ deliveryId: 'claim:other:0', playerName: 'Kit', state: 'claimed', item: whip('Kit'), recordedAt: 1, settled: true } as JournalEntry]);
    // What a crash during the grant would leave: the line must still be there.
    const onDisk: string[][] = [];
    const report = await client(journal).deliver('Kit', async () => {
      onDisk.push((await journal.pending('Kit')).map((e) => e.deliveryId));
    }, { mode: 'fast', sleep });
    expect(onDisk).toEqual([['claim:other:0']]);
    expect(report.granted.map((i) => i.deliveryId)).toEqual(['claim:other:0']);
  });
});

describe('an intent the preview answered like a claim', () => {
  it('a proxy turned the preview into a claim while an intent of the same purchase was open: granted once, no window', async () => {
    mock.addPurchase(KEY, { playerName: 'Lux', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    // Run 1: the claim never reaches the service; the intent stays.
    mock.faults.add({ operation: 'claim', kind: 'dropBefore', skip: 1, times: 1 });
    expect((await client(journal).deliver('Lux', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    mock.clock.advance(10_000);
    const previewAsClaim: typeof globalThis.fetch = (input, init) => mockFetch(input, { ...init, body: String(init?.body).replace('"preview":true', '"preview":false') });
    const game = new Game();
    const report = await client(journal, { fetch: previewAsClaim }).deliver('Lux', game.grant(), { sleep });
    expect(report.granted).toHaveLength(1);
    expect(report.unverified).toBeUndefined();
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
    expect(await journal.pending()).toEqual([]);
  });
});
