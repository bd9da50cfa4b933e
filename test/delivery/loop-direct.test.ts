/**
 * The scheduler started directly on given timers (src/delivery/loop/scheduler.ts's startDeliveryLoop,
 * as the simulation starts it on virtual time): the one-loop rule is its own, and a host
 * without vote rewards refuses claimVote.
 */
import { describe, expect, it, vi } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient } from '../../src/index.js';
import { DeliveryEngine } from '../../src/delivery/engine/engine.js';
import { startDeliveryLoop } from '../../src/delivery/loop/scheduler.js';
import type { LoopTimers } from '../../src/delivery/loop/call-budget.js';
import { createMockService } from '../../src/mock/index.js';
import { loopHarness } from '../support/loop-harness.js';
import { KEY, seed } from '../support/reliability.js';

const { T0 } = loopHarness();

function world() {
  const mock = createMockService({ seed });
  const journal = new MemoryJournal();
  const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal, retry: 0 });
  const engine = new DeliveryEngine({ now: () => Date.now(), monotonic: () => performance.now(), journal });
  const host = { engine, via: () => ({ claim: client.claim.bind(client), onEvent: undefined }) };
  const timers: LoopTimers = { now: () => performance.now(), setTimeout: (run, ms) => setTimeout(run, ms), clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>) };
  return { mock, host, timers };
}

describe('startDeliveryLoop on given timers', () => {
  it('is the journal\'s one loop until it stops, delivers on those timers, and refuses claimVote without vote rewards', async () => {
    const { mock, host, timers } = world();
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const given: number[] = [];
    const loop = startDeliveryLoop(host, { give: () => void given.push(Date.now() - T0), giveVoteReward: () => {} }, timers);
    expect(() => startDeliveryLoop(host, { give: () => {} }, timers)).toThrow(expect.objectContaining({ code: 'LOOP_RUNNING' }));
    loop.join('Ann');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(given).toEqual([10_000]);
    // No vote rewards to give on the join either: the run ends cleanly, with no loop error.
    expect(loop.stats()).toMatchObject({ errors: 0 });
    await expect(loop.claimVote('Ann', { reward: 1, amount: 1 })).rejects.toThrow(/^startDeliveryLoop: invalid options\.giveVoteReward: must be given/);
    // Started directly, the scheduler checks names itself (the client's handle checks them first otherwise).
    const named = /^startDeliveryLoop: invalid playerName: /;
    expect(() => loop.join('bad\u0007name')).toThrow(named);
    expect(() => loop.leave('bad\u0007name')).toThrow(named);
    expect(() => loop.expect('bad\u0007name')).toThrow(named);
    await expect(loop.claim('bad\u0007name')).rejects.toBeInstanceOf(InvalidInputError);
    await loop.stop();
    await startDeliveryLoop(host, { give: () => {} }, timers).stop();
  });
});
