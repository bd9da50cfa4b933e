/**
 * The delivery engine (src/delivery/engine/engine.ts) on what staff and players read: a failed
 * grant leaves its note on the line, a listener that throws changes nothing, a window
 * names the node that found it, a journal that fails is reported with its own words, and
 * a rate-limited claim waits as long as the service asks (never longer than its window).
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError, JournalError, MemoryJournal, type DeliveryJournal, type JournalLine, type StorefrontEvent } from '../../src/index.js';
import { Game, KEY, inProcessStore } from '../support/reliability.js';
import { deferred, withoutRawRows } from '../support/answers.js';
import { journalLine } from '../support/journal.js';

const { mock, sleep, client, outcome } = inProcessStore();

afterEach(() => {
  mock.reset();
});

const linesOf = async (journal: DeliveryJournal) => (await journal.pending()).filter((e): e is JournalLine => e.state === 'claimed');

describe('a give that timed out and succeeds later', () => {
  it('whose acknowledgement the journal refuses then: remembered as given, never given again, acknowledged by the next call', async () => {
    mock.addPurchase(KEY, { playerName: 'Jo', id: 1, quantity: 1 });
    const disk = new MemoryJournal();
    let refuse = false;
    const journal: DeliveryJournal = {
      append: (entries) => disk.append(entries),
      pending: (player) => disk.pending(player),
      acknowledge: async (ids) => {
        if (refuse) throw new Error('EIO: the disk is gone');
        await disk.acknowledge(ids);
      },
    };
    const c = client(journal);
    const gives: string[] = [];
    let finish = () => {};
    const first = await c.deliver('Jo', (item) => {
      gives.push(item.deliveryId);
      return new Promise<void>((resolve) => (finish = resolve));
    }, { mode: 'fast', sleep, grantTimeoutMs: 5 });
    expect(first.code).toBe('PARTIAL');
    // The give succeeds late, while the journal refuses to acknowledge.
    refuse = true;
    finish();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await disk.pending('Jo')).map((e) => e.state)).toEqual(['claimed']);
    refuse = false;
    const second = await c.deliver('Jo', (item) => void gives.push(item.deliveryId), { mode: 'fast', sleep });
    expect(gives).toHaveLength(1);
    expect(second.granted).toEqual([]);
    expect(await disk.pending('Jo')).toEqual([]);
  });
});

describe('a grant that fails', () => {
  it('for a line acknowledged meanwhile (a give that settled it itself, as a late success would): nothing is noted nor written back, and the report is a plain PARTIAL', async () => {
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const report = await client(journal).deliver(
      'Ida',
      async (item) => {
        await journal.acknowledge([item.deliveryId]);
        throw new Error('inventory full');
      },
      { mode: 'fast', sleep },
    );
    expect(report).toMatchObject({ code: 'PARTIAL', failed: [{ error: expect.objectContaining({ message: 'inventory full' }) }] });
    expect(report.journalError).toBeUndefined();
    // The note is not written over the acknowledgement: the line does not come back.
    expect(await journal.pending('Ida')).toEqual([]);
  });

  it('leaves its last failure on the line for staff: the message, when, and how many attempts so far', async () => {
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const c = client(journal);
    const first = await c.deliver('Ann', () => Promise.reject(new Error('inventory full')), { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    const failedAt = mock.clock.now();
    expect((await linesOf(journal))[0]?.lastError).toEqual({ message: 'inventory full', at: failedAt, attempts: 1 });

    mock.clock.advance(5_000);
    // Thrown synchronously, and not an Error: its text all the same, cut to 300 characters.
    await c.deliver('Ann', () => {
      throw 'x'.repeat(500);
    }, { mode: 'fast', sleep });
    expect((await linesOf(journal))[0]?.lastError).toEqual({ message: 'x'.repeat(300), at: failedAt + 5_000, attempts: 2 });

    // Nothing at all thrown (a game's bridge may do that): noted as such.
    await c.deliver('Ann', () => Promise.reject(undefined), { mode: 'fast', sleep });
    expect((await linesOf(journal))[0]?.lastError).toMatchObject({ message: 'undefined', attempts: 3 });

    const game = new Game();
    const last = await c.deliver('Ann', game.grant(), { mode: 'fast', sleep });
    expect(last.granted).toHaveLength(1);
    expect(await journal.pending()).toEqual([]);
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it('the report lists the item with what the grant threw, and the player is told the rest comes on the next claim', async () => {
    mock.addPurchase(KEY, { playerName: 'Bo', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Bo', id: 3, quantity: 1 });
    const refused = new Error('no room for a sword');
    const report = await client(new MemoryJournal()).deliver('Bo', (item) => {
      if (item.product_id_string === '7') throw refused;
    }, { mode: 'fast', sleep });
    expect(report.code).toBe('PARTIAL');
    expect(report.granted.map((i) => i.product_id_string)).toEqual(['42']);
    expect(report.failed).toEqual([{ item: expect.objectContaining({ product_id_string: '7' }), error: refused }]);
    expect(report.pending).toBe(1);
    expect(report.message).toMatch(/next claim/);
  });
});

describe('a give that refuses for good (staff: true)', () => {
  it('marks the line for staff at once, with a stuck event; a plain failure does not', async () => {
    mock.addPurchase(KEY, { playerName: 'Ray', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Ray', id: 3, quantity: 1 });
    const journal = new MemoryJournal();
    const events: StorefrontEvent[] = [];
    const refusal = Object.assign(new Error('no command for this product'), { staff: true });
    await client(journal, { onEvent: (e) => events.push(e) }).deliver('Ray', (item) => {
      throw item.product_id_string === '42' ? refusal : Object.assign(new Error('busy'), { staff: 'yes' });
    }, { mode: 'fast', sleep });
    const byProduct = new Map((await linesOf(journal)).map((l) => [l.item.product_id_string, l.lastError]));
    expect(byProduct.get('42')).toEqual({ message: 'no command for this product', at: mock.clock.now(), attempts: 1, stuck: true });
    expect(byProduct.get('7')).toEqual({ message: 'busy', at: mock.clock.now(), attempts: 1 });
    expect(events.filter((e) => e.type === 'stuck')).toEqual([expect.objectContaining({ type: 'stuck', playerName: 'Ray', attempts: 1, error: refusal, item: expect.objectContaining({ deliveryId: expect.any(String), product_id_string: '42' }) })]);
    // Marked once, marked for good: a later plain failure keeps the mark, and no second event.
    await client(journal, { onEvent: (e) => events.push(e) }).resumeDeliveries(() => {
      throw new Error('busy');
    });
    const again = new Map((await linesOf(journal)).map((l) => [l.item.product_id_string, l.lastError]));
    expect(again.get('42')).toEqual({ message: 'busy', at: mock.clock.now(), attempts: 2, stuck: true });
    expect(again.get('7')).toEqual({ message: 'busy', at: mock.clock.now(), attempts: 2 });
    expect(events.filter((e) => e.type === 'stuck')).toHaveLength(1);
  });
});

describe('a journal whose error quotes the key', () => {
  it('is reported without it: the JournalError\'s message carries the key redacted', async () => {
    mock.addPurchase(KEY, { playerName: 'Kai', id: 1, quantity: 1 });
    const failing: DeliveryJournal = { append: async () => undefined, pending: () => Promise.reject(new Error(`login refused for ${KEY}`)), acknowledge: async () => undefined };
    const report = await client(failing).deliver('Kai', () => undefined, { sleep });
    expect(report.journalError?.message).toMatch(/^deliver: the delivery journal failed \(login refused for /);
    expect(report.journalError?.message).not.toContain(KEY);
  });
});

describe('an onEvent listener that throws', () => {
  it('changes nothing: the window is reported and written, the items granted', async () => {
    mock.addPurchase(KEY, { playerName: 'Cy', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    const journal = new MemoryJournal();
    const seen: string[] = [];
    const c = client(journal, {
      onEvent: (event: StorefrontEvent) => {
        seen.push(event.type);
        throw new Error('the listener is broken');
      },
    });
    const game = new Game();
    expect((await c.deliver('Cy', game.grant(), { sleep })).code).toBe('OUTCOME_UNKNOWN');
    const reconciled = await c.deliver('Cy', game.grant(), { sleep });
    expect(reconciled.granted).toHaveLength(1);
    expect(reconciled.unverified).toMatchObject({ playerName: 'Cy' });
    expect(seen).toContain('unverified');
    expect(outcome(game)).toMatchObject({ lost: 0, duplicated: 0 });
  });
});

describe('a window found on a journal shared by several nodes', () => {
  it('names the node that found it; a journal without a node id writes none', async () => {
    for (const nodeId of ['node-7', undefined]) {
      mock.reset();
      mock.addPurchase(KEY, { playerName: 'Dee', id: 1, quantity: 1 });
      mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
      const inner = new MemoryJournal();
      const journal: DeliveryJournal = { append: (e) => inner.append(e), pending: (p) => inner.pending(p), acknowledge: (ids) => inner.acknowledge(ids), ...(nodeId === undefined ? {} : { nodeId }) };
      await client(journal).deliver('Dee', () => {}, { mode: 'fast', sleep });
      const [window] = await inner.pending();
      expect(window?.state).toBe('unverified');
      if (nodeId === undefined) expect(window).not.toHaveProperty('node');
      else expect(window).toMatchObject({ node: nodeId });
    }
  });
});

describe('a journal that fails', () => {
  it("its own JournalError is reported as it is; any other error is wrapped, its message cut to 200 characters", async () => {
    const own = new JournalError('MyJournal: the disk is read-only');
    const failing = (error: unknown): DeliveryJournal => ({
      append: async () => undefined,
      acknowledge: async () => undefined,
      pending: async () => {
        throw error;
      },
    });
    const events: StorefrontEvent[] = [];
    const mine = await client(failing(own), { onEvent: (e) => events.push(e) }).deliver('Eve', () => {}, { sleep });
    expect(mine.journalError).toBe(own);
    expect(mine.error).toBe(own);
    expect(events).toContainEqual({ type: 'journalError', operation: 'deliver', playerName: 'Eve', error: own });

    const wrapped = await client(failing(new Error('y'.repeat(400)))).deliver('Eve', () => {}, { sleep });
    expect(wrapped.journalError).toBeInstanceOf(JournalError);
    expect(wrapped.journalError?.message).toBe(`deliver: the delivery journal failed (${'y'.repeat(200)})`);
    const plain = await client(failing('disk gone')).resumeDeliveries(() => {}, { sleep }).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(JournalError);
    expect((plain as Error).message).toBe('resumeDeliveries: the delivery journal failed (disk gone)');
    // A journal of the user's making may throw anything, even nothing.
    const nothing = await client(failing(undefined)).deliver('Eve', () => {}, { sleep });
    expect(nothing.journalError?.message).toBe('deliver: the delivery journal failed (undefined)');
  });

  it('a journal whose pending() is not a list is damage: nothing granted, nothing claimed', async () => {
    mock.addPurchase(KEY, { playerName: 'Fay', id: 1, quantity: 1 });
    const odd: DeliveryJournal = { append: async () => undefined, acknowledge: async () => undefined, pending: async () => ({ length: 0 }) as never };
    const report = await client(odd).deliver('Fay', () => {}, { sleep });
    expect(report.code).toBe('ERROR');
    expect(report.journalError?.message).toMatch(/pending\(\) did not return an array \(object\)/);
    expect(mock.purchases(KEY, 'Fay')[0]?.deliverystatus).toBe('Undelivered');
  });
});

describe('a claim the service rate-limits', () => {
  it('waits as long as the service asks, a few times, then reports RATE_LIMIT', async () => {
    mock.addPurchase(KEY, { playerName: 'Gus', id: 1, quantity: 1 });
    const waits: number[] = [];
    const c = client(new MemoryJournal());
    // A first claim for Gus opens the service's 10 s window (nothing pending yet for him … a preview is a claim call too).
    await c.claim('Gus', { preview: true });
    mock.clock.advance(4_000);
    const report = await c.deliver('Gus', () => {}, { mode: 'fast', maxRateLimitWaits: 2, sleep: async (ms) => void waits.push(ms) });
    // Nothing moved the clock: each wait is the 6 s left of the window.
    expect(waits).toEqual([6_000, 6_000]);
    expect(report.code).toBe('RATE_LIMIT');
  });
});

describe('a grant that outlives grantTimeoutMs, then fails', () => {
  it('the line stays pending, and the next call grants it again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      mock.addPurchase(KEY, { playerName: 'Hu', id: 1, quantity: 1 });
      const journal = new MemoryJournal();
      const c = client(journal);
      const stuck = deferred();
      const first = c.deliver('Hu', () => stuck.promise, { sleep, mode: 'fast', grantTimeoutMs: 1_000 });
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await first).code).toBe('PARTIAL');
      // Still running, not failed: staff see no failure on the line while the grant may still succeed.
      expect((await linesOf(journal))[0]).not.toHaveProperty('lastError');
      stuck.reject(new Error('the game crashed mid-grant'));
      await vi.advanceTimersByTimeAsync(0);
      const game = new Game();
      const next = await c.deliver('Hu', game.grant(), { sleep, mode: 'fast' });
      expect(next.granted).toHaveLength(1);
      expect(await journal.pending()).toEqual([]);
      expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("another node's lock on the player", () => {
  it('a deliver waiting for it rejects with signal.reason as soon as aborted; when the lock comes later, nothing is claimed', async () => {
    mock.addPurchase(KEY, { playerName: 'Ida', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    const free = deferred();
    const ran: boolean[] = [];
    let asked = false;
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: async (_player, work) => {
        asked = true;
        await free.promise;
        const result = await work();
        ran.push(true);
        return result;
      },
    };
    const controller = new AbortController();
    const delivering = client(journal).deliver('Ida', () => {}, { sleep, signal: controller.signal });
    await vi.waitFor(() => expect(asked).toBe(true));
    const reason = new Error('the player logged out');
    controller.abort(reason);
    await expect(delivering).rejects.toBe(reason);
    free.resolve();
    await vi.waitFor(() => expect(ran).toEqual([true]));
    expect(mock.purchases(KEY, 'Ida')[0]?.deliverystatus).toBe('Undelivered');
    expect(await inner.pending()).toEqual([]);
  });

  it('a deliver aborted while waiting, whose lock then fails: rejected with signal.reason only, no journal failure reported for it', async () => {
    const refused = deferred();
    let asked = false;
    const inner = new MemoryJournal();
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: async () => {
        asked = true;
        await refused.promise;
        throw new Error('lock_timeout');
      },
    };
    const events: StorefrontEvent[] = [];
    const controller = new AbortController();
    const delivering = client(journal, { onEvent: (e) => events.push(e) }).deliver('Ivo', () => {}, { sleep, signal: controller.signal });
    await vi.waitFor(() => expect(asked).toBe(true));
    const reason = new Error('the player logged out');
    controller.abort(reason);
    await expect(delivering).rejects.toBe(reason);
    refused.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.filter((e) => e.type === 'journalError')).toEqual([]);
  });

  it('a lock that cannot be had: ERROR with the journal failure, nothing claimed, the player free for the next call', async () => {
    mock.addPurchase(KEY, { playerName: 'Jay', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    let refuse = true;
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: async (_player, work) => {
        if (refuse) throw new Error('lock_timeout');
        return work();
      },
    };
    const c = client(journal);
    const controller = new AbortController();
    const refused = await c.deliver('Jay', () => {}, { sleep, signal: controller.signal });
    expect(refused).toMatchObject({ code: 'ERROR', granted: [], pending: 0 });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(refused.journalError?.message).toMatch(/lock_timeout/);
    expect(mock.purchases(KEY, 'Jay')[0]?.deliverystatus).toBe('Undelivered');
    refuse = false;
    const game = new Game();
    expect((await c.deliver('Jay', game.grant(), { sleep })).granted).toHaveLength(1);
  });
});

/**
 * A journal whose cross-node lock is a queue of controllable answers, as a user's async
 * lock (or a database's) is: each `withPlayerLock` waits for the holder before it, then
 * for the test to `answer` it (at once while `auto`).
 */
function gatedLock(inner: DeliveryJournal) {
  const gates: Array<() => void> = [];
  let tail: Promise<void> = Promise.resolve();
  let auto = false;
  let held = 0;
  let waiting = 0;
  let reads = 0;
  const journal: DeliveryJournal = {
    append: (e) => inner.append(e),
    pending: (p) => ((reads += 1), inner.pending(p)),
    acknowledge: (ids) => inner.acknowledge(ids),
    withPlayerLock: async (_player, work) => {
      const before = tail;
      let release!: () => void;
      tail = new Promise((resolve) => (release = resolve));
      waiting += 1;
      try {
        await before;
        if (!auto) await new Promise<void>((resolve) => gates.push(resolve));
      } finally {
        waiting -= 1;
      }
      held += 1;
      try {
        return await work();
      } finally {
        held -= 1;
        release();
      }
    },
  };
  return {
    journal,
    /** Lets the oldest call waiting for its answer have the lock; false when none waits yet. */
    answer: () => (gates.length > 0 ? (gates.shift() as () => void)() === undefined : false),
    /** Every later call has the lock as soon as it is free. */
    free: () => {
      auto = true;
      for (const gate of gates.splice(0)) gate();
    },
    /** Calls holding the lock, and waiting for it. */
    state: () => ({ held, waiting }),
    /** How many times the journal was read (a delivery's work reads it first). */
    reads: () => reads,
  };
}

/** Lets every queued microtask and I/O callback run, a few rounds over (no time passes). */
const settleAll = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('a deliver aborted at any moment, with a journal whose lock answers asynchronously', () => {
  /**
   * One deliver aborted `ticks` microtasks after `start` resolves (each tick one turn of the
   * microtask queue): at 0 before the lock is asked for, then between the player's turn and
   * the lock, while it waits, as it answers, during the work. It settles (rejected with the
   * signal's reason, or its report once the work ran), and frees the player: the journal's
   * lock is neither held nor waited for, and the next deliver for the player runs.
   */
  const abortAfter = async (ticks: number, answerFirst: boolean) => {
    mock.reset();
    mock.addPurchase(KEY, { playerName: 'Pia', id: 1, quantity: 1 });
    const lock = gatedLock(new MemoryJournal());
    const c = client(lock.journal);
    const controller = new AbortController();
    const reason = new Error(`the player logged out (after ${ticks} ticks)`);
    let settled: { ok: boolean; value: unknown } | undefined;
    void c.deliver('Pia', () => {}, { sleep, signal: controller.signal }).then(
      (value) => (settled = { ok: true, value }),
      (error: unknown) => (settled = { ok: false, value: error }),
    );
    if (answerFirst) {
      await vi.waitFor(() => expect(lock.answer()).toBe(true));
    }
    for (let i = 0; i < ticks; i++) await Promise.resolve();
    controller.abort(reason);
    await settleAll();
    lock.free();
    await settleAll();
    expect(settled, `settled, aborted ${ticks} ticks after ${answerFirst ? 'the lock answered' : 'the call'}`).toBeDefined();
    if (settled?.ok === false) expect(settled.value).toBe(reason);
    expect(lock.state()).toEqual({ held: 0, waiting: 0 });
    const game = new Game();
    mock.clock.advance(10_000);
    const next = await c.deliver('Pia', game.grant(), { sleep });
    expect(next.code).not.toBe('ERROR');
    expect(lock.state()).toEqual({ held: 0, waiting: 0 });
  };

  it('before the lock is asked for, between the player\'s turn and the lock, and while it waits: rejects with signal.reason', async () => {
    for (let ticks = 0; ticks <= 12; ticks++) await abortAfter(ticks, false);
  });

  it('just as the lock answers, and at every step of the work after it: settles, and the player\'s next deliver runs', async () => {
    for (let ticks = 0; ticks <= 24; ticks++) await abortAfter(ticks, true);
  });

  it('aborted already when the lock answers: rejected with signal.reason, the work never run, the lock released', async () => {
    mock.addPurchase(KEY, { playerName: 'Quy', id: 1, quantity: 1 });
    const lock = gatedLock(new MemoryJournal());
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const delivering = client(lock.journal).deliver('Quy', () => {}, { sleep, signal: controller.signal });
    await vi.waitFor(() => expect(lock.state().waiting).toBe(1));
    controller.abort(reason);
    await expect(delivering).rejects.toBe(reason);
    expect(lock.answer()).toBe(true);
    await settleAll();
    expect(lock.state()).toEqual({ held: 0, waiting: 0 });
    expect(lock.reads()).toBe(0);
    expect(mock.purchases(KEY, 'Quy')[0]?.deliverystatus).toBe('Undelivered');
  });

  it('a lock that calls the work synchronously, or throws synchronously, is handled as one that answers later', async () => {
    mock.addPurchase(KEY, { playerName: 'Rex', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    const base = { append: inner.append.bind(inner), pending: inner.pending.bind(inner), acknowledge: inner.acknowledge.bind(inner) };
    const game = new Game();
    const direct = await client({ ...base, withPlayerLock: (_p, work) => work() }).deliver('Rex', game.grant(), { sleep });
    expect(direct.granted).toHaveLength(1);
    const refused = await client({
      ...base,
      withPlayerLock: () => {
        throw new Error('lock_unavailable');
      },
    }).deliver('Rex', () => {}, { sleep });
    expect(refused).toMatchObject({ code: 'ERROR', journalError: expect.objectContaining({ message: expect.stringMatching(/lock_unavailable/) }) });
  });

  it('a signal aborted in the microtask between the player\'s turn and the lock: rejected, the player free (was a hang)', async () => {
    mock.addPurchase(KEY, { playerName: 'Sam', id: 1, quantity: 1 });
    const lock = gatedLock(new MemoryJournal());
    lock.free();
    const controller = new AbortController();
    const reason = new Error('the player logged out');
    const c = client(lock.journal);
    // The journal's lock is asked for synchronously inside the player's turn: aborting from
    // within that call is the latest moment before the engine listens for the abort.
    const asking = lock.journal.withPlayerLock!.bind(lock.journal);
    lock.journal.withPlayerLock = (player, work) => {
      controller.abort(reason);
      return asking(player, work);
    };
    await expect(c.deliver('Sam', () => {}, { sleep, signal: controller.signal })).rejects.toBe(reason);
    await settleAll();
    expect(lock.state()).toEqual({ held: 0, waiting: 0 });
    // resumeDeliveries takes the same path for each player it has work for.
    await lock.journal.append([journalLine('left-over', 'Sam')]);
    const resumeController = new AbortController();
    lock.journal.withPlayerLock = (player, work) => {
      resumeController.abort(reason);
      return asking(player, work);
    };
    await expect(c.resumeDeliveries(() => {}, { sleep, signal: resumeController.signal })).rejects.toBe(reason);
    expect(lock.state()).toEqual({ held: 0, waiting: 0 });
    await lock.journal.acknowledge(['left-over']);
    lock.journal.withPlayerLock = asking;
    const game = new Game();
    expect((await c.deliver('Sam', game.grant(), { sleep })).granted).toHaveLength(1);
  });
});

describe('a delivery under the journal\'s cross-node lock, once it has started', () => {
  /** A journal whose cross-node lock is free at once (another node's would be the same once had). */
  const locked = (inner: DeliveryJournal): DeliveryJournal => ({
    append: (e) => inner.append(e),
    pending: (p) => inner.pending(p),
    acknowledge: (ids) => inner.acknowledge(ids),
    withPlayerLock: (_player, work) => work(),
  });

  it('settles on its own when aborted during the grant: the item given is reported, nothing left behind on the signal', async () => {
    mock.addPurchase(KEY, { playerName: 'Mo', id: 1, quantity: 1 });
    const controller = new AbortController();
    const game = new Game();
    const report = await client(locked(new MemoryJournal())).deliver('Mo', (item) => {
      controller.abort(new Error('the player logged out'));
      return game.grant()(item);
    }, { mode: 'fast', sleep, signal: controller.signal });
    expect(report).toMatchObject({ code: 'SUCCESS', granted: [expect.objectContaining({ product_id_string: '42' })] });
    expect(outcome(game)).toEqual({ paid: 1, granted: 1, lost: 0, duplicated: 0 });
  });

  it("aborted during exactly-once's wait: rejects with signal.reason, as without the lock; the intent is kept", async () => {
    mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
    const inner = new MemoryJournal();
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const delivering = client(locked(inner)).deliver('Ned', () => {}, {
      signal: controller.signal,
      sleep: async () => controller.abort(reason),
    });
    await expect(delivering).rejects.toBe(reason);
    expect((await inner.pending()).map((e) => e.state)).toEqual(['intended']);
    expect(mock.purchases(KEY, 'Ned')[0]?.deliverystatus).toBe('Undelivered');
  });

  it('leaves no listener on a long-lived signal, call after call', async () => {
    const controller = new AbortController();
    const c = client(locked(new MemoryJournal()));
    for (let i = 0; i < 3; i++) {
      mock.addPurchase(KEY, { playerName: 'Oz', id: 1, quantity: 1 });
      await c.deliver('Oz', () => {}, { mode: 'fast', sleep, signal: controller.signal });
      mock.clock.advance(10_000);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('a window the journal cannot take', () => {
  it("is reported all the same, and kept in memory: the player's next texts say staff are checking; another player's do not", async () => {
    mock.addPurchase(KEY, { playerName: 'Kai', id: 1, quantity: 1 });
    mock.addPurchase(KEY, { playerName: 'Lee', id: 1, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const inner = new MemoryJournal();
    const journal: DeliveryJournal = {
      append: async (entries) => {
        if (entries.some((e) => e.state === 'unverified')) throw new Error('EROFS: the window cannot be written');
        await inner.append(entries);
      },
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
    };
    const c = client(journal);
    const lost = await c.deliver('Kai', () => {}, { mode: 'fast', sleep });
    expect(lost.unverified).toMatchObject({ playerName: 'Kai' });
    expect(lost.journalError).toBeDefined();
    mock.clock.advance(10_000);
    const next = await c.deliver('Kai', () => {}, { mode: 'fast', sleep });
    expect(next.message).toMatch(/staff can check/);
    const other = await c.deliver('Lee', () => {}, { mode: 'fast', sleep });
    expect(other.message).not.toMatch(/staff/);
  });
});

describe('the operation named to the caller', () => {
  it('a grant that is not a function, and a grant calling back for its own player, name the call they came from', async () => {
    mock.addPurchase(KEY, { playerName: 'Max', id: 1, quantity: 1 });
    const c = client(new MemoryJournal());
    const badGrant = (await c.deliver('Max', 'grant' as never).catch((e: unknown) => e)) as InvalidInputError;
    expect(badGrant).toBeInstanceOf(InvalidInputError);
    expect(badGrant.operation).toBe('deliver');
    const badResume = (await c.resumeDeliveries(42 as never).catch((e: unknown) => e)) as InvalidInputError;
    expect(badResume.operation).toBe('resumeDeliveries');
    const inner: unknown[] = [];
    await c.deliver('Max', async () => {
      inner.push(await c.deliver('Max', () => {}, { sleep }).catch((e: unknown) => e));
      inner.push(await c.resumeDeliveries(() => {}, { sleep }).catch((e: unknown) => e));
    }, { sleep, mode: 'fast' });
    expect((inner[0] as InvalidInputError).operation).toBe('deliver');
    expect((inner[0] as Error).message).toMatch(/calling deliver for "Max"/);
    expect((inner[1] as InvalidInputError).operation).toBe('resumeDeliveries');
    expect((inner[1] as Error).message).toMatch(/calling resumeDeliveries for "Max"/);
  });

  it('a journal that cannot be read at startup: resumeDeliveries rejects, and no event names a player', async () => {
    const events: StorefrontEvent[] = [];
    const broken: DeliveryJournal = { append: async () => undefined, acknowledge: async () => undefined, pending: async () => Promise.reject(new Error('EIO')) };
    await expect(client(broken, { onEvent: (e) => events.push(e) }).resumeDeliveries(() => {}, { sleep })).rejects.toBeInstanceOf(JournalError);
    expect(events).toEqual([]);
  });
});

describe('what a delivery leaves behind', () => {
  it('no timer: the grant timeout is cleared once the grant returns', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      mock.addPurchase(KEY, { playerName: 'Ned', id: 1, quantity: 1 });
      mock.addPurchase(KEY, { playerName: 'Ned', id: 3, quantity: 1 });
      const report = await client(new MemoryJournal()).deliver('Ned', async () => undefined, { sleep, mode: 'fast' });
      expect(report.granted).toHaveLength(2);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('records without the fields they do not have: a fast line has no invoice, an intent of a journal without node id no node', async () => {
    mock.addPurchase(KEY, { playerName: 'Oz', id: 1, quantity: 1 });
    const fast = new MemoryJournal();
    await client(fast).deliver('Oz', () => Promise.reject(new Error('later')), { mode: 'fast', sleep });
    const [line] = await fast.pending('Oz');
    expect(line).toMatchObject({ state: 'claimed' });
    expect(line).not.toHaveProperty('invoice');

    mock.reset();
    mock.addPurchase(KEY, { playerName: 'Oz', id: 1, quantity: 1 });
    const exact = new MemoryJournal();
    let intent: unknown;
    await client(exact).deliver('Oz', () => {}, {
      sleep: async (ms) => {
        [intent] = await exact.pending('Oz');
        await sleep(ms);
      },
    });
    expect(intent).toMatchObject({ state: 'intended', invoice: expect.any(String) });
    expect(intent).not.toHaveProperty('node');
  });

  it.each(['fast', 'exactlyOnce'] as const)('%s: lines of claim answers without invoices get ids of their own claim: two claims never share one', async (mode) => {
    // The previews keep their rows (exactly-once needs them); the claims' answers lose them.
    const journal = new MemoryJournal();
    const c = client(journal, { fetch: withoutRawRows(mock.fetch) });
    const ids: string[] = [];
    for (const player of ['Pat', 'Quin']) {
      mock.addPurchase(KEY, { playerName: player, id: 1, quantity: 1 });
      const report = await c.deliver(player, (item) => void ids.push(item.deliveryId), { mode, sleep });
      expect(report.granted).toHaveLength(1);
    }
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^claim:[0-9a-f-]{36}:0$/);
  });
});

describe('aborting a delivery', () => {
  it('aborts the claim request itself: a claim sent and aborted is an unknown outcome, reported at once with its window', async () => {
    mock.addPurchase(KEY, { playerName: 'Rae', id: 1, quantity: 1 });
    const sent = deferred();
    const hanging: typeof globalThis.fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        sent.resolve();
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      });
    const controller = new AbortController();
    const delivering = client(new MemoryJournal(), { fetch: hanging }).deliver('Rae', () => {}, { mode: 'fast', sleep, signal: controller.signal });
    await sent.promise;
    const reason = new Error('shutting down');
    controller.abort(reason);
    const report = await delivering;
    expect(report.code).toBe('OUTCOME_UNKNOWN');
    expect(report.error).toMatchObject({ code: 'CLAIM_OUTCOME_UNKNOWN', reason: 'aborted' });
    expect(report.unverified).toMatchObject({ playerName: 'Rae' });
  });
});

describe('resumeDeliveries visits only players with work', () => {
  it('a player with only an open window and a settled intent is neither locked nor visited; one with a claimed line is', async () => {
    const inner = new MemoryJournal();
    const window = { deliveryId: 'window:1', playerName: 'Wyn', state: 'unverified' as const, from: 1, to: 2, cause: 'lostClaim' as const, recordedAt: 2 };
    await inner.append([window, { ...journalLine('invoice:9', 'Wyn', 'intended'), invoice: '9', settled: true }, journalLine('claim:x:0', 'Xia')]);
    const asked: string[] = [];
    const journal: DeliveryJournal = {
      append: (e) => inner.append(e),
      pending: (p) => inner.pending(p),
      acknowledge: (ids) => inner.acknowledge(ids),
      withPlayerLock: (player, work) => (asked.push(player), work()),
    };
    const game = new Game();
    const report = await client(journal).resumeDeliveries(game.grant(), { sleep });
    expect(asked).toEqual(['Xia']);
    expect(report).toMatchObject({ granted: [expect.objectContaining({ deliveryId: 'claim:x:0' })], errors: [], pending: 0 });
    expect((await inner.pending('Wyn')).map((e) => e.deliveryId)).toEqual(['window:1', 'invoice:9']);
  });
});
