/**
 * The loop as the client starts it (src/delivery/loop-start.ts): the options and the
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
    const loop = client.startDeliveryLoop({ give: () => {} });
    // The one-loop rule holds before the scheduler has loaded.
    expect(() => client.startDeliveryLoop({ give: () => {} })).toThrow(expect.objectContaining({ code: 'LOOP_RUNNING' }));
    expect(() => loop.join('bad\u0007name')).toThrow(InvalidInputError);
    loop.join('Ann');
    loop.join('Bo');
    loop.leave('Bo');
    expect(loop.stats()).toMatchObject({ online: 1, calls: 0 });
    const status = await loop.status('Ann');
    expect(status.online).toBe(true);
    expect(loop.stats().online).toBe(1);
    expect((await loop.claim('Bo')).code).toBe('OFFLINE');
    await loop.stop();
    // Stopped: the journal takes a new loop.
    await client.startDeliveryLoop({ give: () => {} }).stop();
  });
});
