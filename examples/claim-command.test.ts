/**
 * Testing a plugin's `/claim` command with the mock, in process: the client's `fetch` is
 * `mock.fetch`, so the mock answers its requests from its state. No network, no port, no
 * msw, no key, no sleeping: the client and the mock share one clock.
 *
 * Run it: `npx vitest run examples/claim-command.test.ts` (part of `npm test`).
 * In your project: `npm install --save-dev vitest`, then copy this file.
 */
// #region setup
import { StorefrontClient } from 'teamgames-sdk';
import { createMockService, type MockSeed } from 'teamgames-sdk/mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { handleClaimCommand, reconcileLostClaim, type Game } from './claim-command.js';

const KEY = 'test-key'; // only valid against the mock
const seed: MockSeed = {
  servers: [
    {
      apiKey: KEY,
      products: [
        { id: 1, productId: 'dragon_scimitar', name: 'Dragon scimitar', price: 4.99 },
        { id: 2, productId: 995, name: 'Coins (1M)', price: 1, quantity: 1_000_000 },
      ],
    },
  ],
};

const mock = createMockService({ seed, now: Date.parse('2026-01-01T00:00:00Z') });

// A fresh client per test (its claim guard is per instance), on the mock's clock.
let client: StorefrontClient;
beforeEach(() => {
  mock.reset();
  // `fetch: mock.fetch`: the mock answers in process. `now`: the client's 10 s guard reads the mock's clock.
  client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now });
});

/** A game that records what the handler did. */
function fakeGame() {
  const given: string[] = [];
  const told: string[] = [];
  const staff: string[] = [];
  const game: Game = {
    give: (player, productId, amount) => given.push(`${player} ${productId} x${amount}`),
    tell: (_player, text) => told.push(text),
    onGameThread: (task) => task(),
    alertStaff: (text) => staff.push(text),
  };
  return { game, given, told, staff };
}
// #endregion setup

describe('/claim', () => {
  // #region grants
  it('grants every paid line once', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 1 });
    mock.addPurchase(KEY, { playerName: 'Player123', id: 2, quantity: 3 });
    const { game, given, told } = fakeGame();

    expect(await handleClaimCommand(client, game, 'Player123')).toBe('SUCCESS');
    expect(given).toEqual(['Player123 dragon_scimitar x1', 'Player123 995 x3000000']);
    expect(told).toEqual(['Transaction has been completed. Thank you for the purchase!']);
    expect(mock.purchases(KEY, 'Player123').every((row) => row.deliverystatus === 'Delivered')).toBe(true);

    mock.clock.advance(10_000); // wait out the 10 s window without sleeping
    expect(await handleClaimCommand(client, game, 'Player123')).toBe('ALREADY_CLAIMED');
    expect(given).toHaveLength(2);
  });
  // #endregion grants

  it('answers a spammed command locally, without a request', async () => {
    const { game, told } = fakeGame();
    expect(await handleClaimCommand(client, game, 'Player123')).toBe('NO_ITEMS');
    mock.clock.advance(4_000);
    expect(await handleClaimCommand(client, game, 'Player123')).toBe('RATE_LIMIT');
    expect(told.at(-1)).toBe('Please wait 6 s before claiming again.');
  });

  it('grants nothing and alerts staff when a product was removed', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 1 });
    mock.removeProduct(KEY, 1);
    const { game, given, staff } = fakeGame();
    expect(await handleClaimCommand(client, game, 'Player123')).toBe('PRODUCT_NOT_FOUND');
    expect(given).toEqual([]);
    expect(staff[0]).toContain('PRODUCT_NOT_FOUND');
  });

  // #region lost
  it('never claims twice when the answer is lost; a preview tells what is left', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 1 });
    // The service handles the claim, then the connection drops before the answer arrives.
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const { game, given, staff } = fakeGame();

    expect(await handleClaimCommand(client, game, 'Player123')).toBe('ERROR');
    expect(given).toEqual([]);
    expect(staff[0]).toContain('outcome unknown');

    mock.clock.advance(10_000);
    expect(await reconcileLostClaim(client, 'Player123')).toEqual([]); // the lost call delivered it
  });
  // #endregion lost
});
