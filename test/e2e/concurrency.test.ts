import { describe, expect, it } from 'vitest';
import { StorefrontClient } from 'teamgames-sdk';
import { KEY } from '../support/fixtures.js';
import { transports, useMockSession } from '../support/mock-session.js';

const http = transports.find((t) => t.name === 'real HTTP via listen()');
if (http === undefined) throw new Error('the HTTP transport is missing');

// Over real HTTP only: 50 separate connections race for one player's purchase.
describe('concurrent claims through the SDK, over real HTTP', () => {
  const session = useMockSession(http);
  const { mock } = session;

  it('50 clients claiming at once for one player: one SUCCESS, 49 RATE_LIMIT, rows delivered once', async () => {
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1, quantity: 3 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 3 });
    // Separate clients (default guard on): each guard is per client, so all 50 go out.
    const clients = Array.from({ length: 50 }, () => new StorefrontClient({ apiKey: KEY, baseUrl: session.baseUrl, now: mock.clock.now }));
    const results = await Promise.all(clients.map((sdk) => sdk.claim('Player1')));

    const successes = results.filter((r) => r.code === 'SUCCESS');
    expect(successes).toHaveLength(1);
    expect(successes[0]?.claims.map((t) => [t.product_id_string, t.quantity_to_grant])).toEqual([
      ['42', 3],
      ['rank_donator', 1],
    ]);
    const refused = results.filter((r) => r.code === 'RATE_LIMIT');
    expect(refused).toHaveLength(49);
    expect(refused.every((r) => r.code === 'RATE_LIMIT' && r.source === 'server' && r.claims.length === 0)).toBe(true);
    expect(results.flatMap((r) => r.claims)).toHaveLength(2);
    expect(mock.purchases(KEY, 'Player1').map((r) => r.deliverystatus)).toEqual(['Delivered', 'Delivered']);
  });
});
