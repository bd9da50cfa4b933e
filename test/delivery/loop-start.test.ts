/**
 * The loop as the client starts it (src/delivery/loop/start.ts): the options and the
 * one-loop rule checked at once, the scheduler loaded on first use. This file does not
 * load the scheduler up front (unlike the loop harness), so its first loop meets the load.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, MemoryJournal, StorefrontClient } from '../../src/index.js';
import { createMockService } from '../../src/mock/index.js';
import { KEY, seed } from '../support/reliability.js';

describe('startDeliveryLoop before its scheduler has loaded', () => {
  it('checks at once, queues joins and leaves in order, and delivers once loaded', async () => {
    const mock = createMockService({ seed, now: Date.parse('2026-01-01T00:00:00Z') });
    mock.addPurchase(KEY, { playerName: 'Ann', id: 1, quantity: 1 });
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch: mock.fetch, journal: new MemoryJournal(), retry: 0, now: mock.clock.now });
    expect(() => client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 5 })).toThrow(InvalidInputError);
    const loop = client.startDeliveryLoop({ give: () => {}, pollIntervalMs: 20_000 });
    // The one-loop rule holds before the scheduler has loaded.
    expect(() => client.startDeliveryLoop({ give: () => {} })).toThrow(expect.objectContaining({ code: 'LOOP_RUNNING' }));
    expect(() => loop.join('bad\u0007name')).toThrow(InvalidInputError);
    const refusal = (call: () => void) => {
      try {
        call();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    // leave refuses a bad name as join does, naming the argument and the operation.
    const joinRefused = refusal(() => loop.join('bad\u0007name'));
    expect(joinRefused).toBeInstanceOf(InvalidInputError);
    expect(String(joinRefused)).toMatch(/playerName/);
    expect(refusal(() => loop.leave('bad\u0007name'))).toEqual(joinRefused);
    loop.join('Ann');
    loop.join('Bo');
    loop.leave('Bo');
    loop.leave('Cy');
    loop.join('Cy');
    loop.leave('Cy');
    loop.join('Dee');
    // A checkout hint is checked at once and queued too (held once loaded).
    expect(() => loop.expect('Dee', { expiresInMs: 1 })).toThrow(InvalidInputError);
    expect(loop.expect('Dee', { transactionId: 'tx-1' })).toBe('held');
    // A hint naming nothing is a hint all the same (not a leave), and a bad name is refused as join refuses it.
    expect(loop.expect('Fay')).toBe('held');
    expect(refusal(() => loop.expect('bad\u0007name'))).toEqual(joinRefused);
    // Until it has loaded: the players queued, nothing called, the interval asked for.
    expect(loop.stats()).toEqual({ online: 2, hints: 2, calls: 0, previews: 0, claims: 0, granted: 0, pending: 0, unverified: 0, errors: 0, lastError: undefined, intervalMs: 20_000, maxCallsInOneSecond: 0, paused: false, blocked: 0, backingOff: 0 });
    // The async methods wait for it, then answer as the scheduler does.
    await expect(loop.claimVote('Ann', { reward: 1, amount: 1 })).rejects.toThrow(/options\.giveVoteReward/);
    const status = await loop.status('Ann');
    expect(status.online).toBe(true);
    expect(loop.stats().online).toBe(2);
    expect(loop.stats().hints).toBe(2);
    expect((await loop.status('Cy')).online).toBe(false);
    expect((await loop.claim('Bo')).code).toBe('OFFLINE');
    // Loaded: join and leave reach the scheduler at once.
    loop.join('Eve');
    expect(loop.stats().online).toBe(3);
    loop.leave('Ann');
    expect(loop.stats().online).toBe(2);
    await loop.stop();
    // Stopped: the journal takes a new loop, which starts at once now the scheduler is loaded.
    const next = client.startDeliveryLoop({ give: () => {}, maxCallsPerSecond: 1 });
    for (let i = 0; i < 100; i++) next.join(`P${i}`);
    // The scheduler's own stats() at once: 100 players on 0.8 calls/s stretch the interval.
    expect(next.stats()).toMatchObject({ online: 100, intervalMs: 125_000 });
    expect(() => client.startDeliveryLoop({ give: () => {} })).toThrow(expect.objectContaining({ code: 'LOOP_RUNNING' }));
    await next.stop();
    await client.startDeliveryLoop({ give: () => {} }).stop();
  });
});
