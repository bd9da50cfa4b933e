/**
 * The admin operations: what `mock.addPurchase(…)` and the `/__mock/…` routes do. They
 * exist only in the mock; each refuses what cannot be done with a {@link MockAdminError}.
 */
import { MockAdminError } from '../service/errors.js';
import { JAVA_INT_MAX, MAX_CART_QUANTITY, isValidPlayerName, priceWithSale, unitsToGrant } from '../service/rules.js';
import { describeIssues } from '../service/issues.js';
import type { MockProductPatch, MockRewardPatch, MockSeedProduct, MockSeedReward } from '../service/seed.js';
import { productPatchSchema, productSchema, rewardPatchSchema } from '../service/seed-schema.js';
import { checkoutRecord, newPurchaseRow, serverFor, type MockState } from '../service/state.js';
import type { AddPurchaseInput, MockStateSnapshot, PurchaseRow, VoteRecord } from '../service/types.js';

const BAD_NAME = 'playerName must be non-blank, at most 64 characters, no control or bidi-override characters.';

/**
 * Adds a paid, undelivered row for the catalog product `id`, as if the player had bought
 * and paid for it now. Stock is not touched (an admin grant).
 *
 * @throws MockAdminError 404 for an unknown key or product, 400 for a bad name or quantity
 *   (at most 1,000,000 units, and units to grant within a Java int).
 */
export function addPurchase(state: MockState, apiKey: string, input: AddPurchaseInput): PurchaseRow {
  const server = serverFor(state, apiKey);
  if (!isValidPlayerName(input.playerName)) {
    throw new MockAdminError(400, `addPurchase: ${BAD_NAME}`);
  }
  const quantity = input.quantity ?? 1;
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_CART_QUANTITY) {
    throw new MockAdminError(400, `addPurchase: quantity must be an integer from 1 to ${MAX_CART_QUANTITY}.`);
  }
  const product = server.products.get(input.id);
  if (product === undefined) {
    throw new MockAdminError(404, `addPurchase: no product has the id ${input.id}.`);
  }
  if (unitsToGrant(product, quantity) > JAVA_INT_MAX) {
    throw new MockAdminError(400, `addPurchase: ${quantity} units of product ${input.id} would grant more than ${JAVA_INT_MAX} units.`);
  }
  const row = newPurchaseRow(state, product, input.playerName, quantity, priceWithSale(product, state.clock.now()), {
    transactionid: globalThis.crypto.randomUUID(),
    paymenttype: 'Manual',
    paymentstatus: 'Paid',
  });
  server.purchases.push(row);
  return structuredClone(row);
}

/**
 * Changes fields of a product (any seed product field but `id`); the result must still be
 * a valid seed product. Returns the product as it is now.
 *
 * @throws MockAdminError 404 for an unknown key or product, 400 for an invalid patch.
 */
export function updateProduct(state: MockState, apiKey: string, id: number, patch: MockProductPatch): MockSeedProduct {
  const server = serverFor(state, apiKey);
  const product = server.products.get(id);
  if (product === undefined) {
    throw new MockAdminError(404, `updateProduct: no product has the id ${id}.`);
  }
  const checked = productPatchSchema.safeParse(patch);
  if (!checked.success) {
    throw new MockAdminError(400, `updateProduct: ${describeIssues('patch', checked.error.issues).join('; ')}`);
  }
  const merged = productSchema.safeParse({ ...product, ...checked.data });
  if (!merged.success) {
    throw new MockAdminError(400, `updateProduct: ${describeIssues('product', merged.error.issues).join('; ')}`);
  }
  const known = new Set(server.categories.map((c) => c.id));
  const unknown = (merged.data.categoryIds ?? []).find((c) => !known.has(c));
  if (unknown !== undefined) {
    throw new MockAdminError(400, `updateProduct: unknown category ${unknown}.`);
  }
  const updated = merged.data as MockSeedProduct;
  server.products.set(id, updated);
  return structuredClone(updated);
}

/**
 * Changes fields of a vote reward (its price `cost`, `giveAmount`, `name`), as the owner
 * does on the dashboard: claims from then on pay and give the new figures. Returns the
 * reward as it is now.
 *
 * @throws MockAdminError 404 for an unknown key or reward, 400 for an invalid patch.
 */
export function updateReward(state: MockState, apiKey: string, id: number, patch: MockRewardPatch): MockSeedReward {
  const server = serverFor(state, apiKey);
  const reward = server.rewards.get(id);
  if (reward === undefined) {
    throw new MockAdminError(404, `updateReward: no reward has the id ${id}.`);
  }
  const checked = rewardPatchSchema.safeParse(patch);
  if (!checked.success) {
    throw new MockAdminError(400, `updateReward: ${describeIssues('patch', checked.error.issues).join('; ')}`);
  }
  const updated: MockSeedReward = { ...reward, ...(checked.data as MockRewardPatch) };
  server.rewards.set(id, updated);
  return structuredClone(updated);
}

/**
 * Removes a product: it leaves the catalog, and claims of rows that reference it answer
 * `PRODUCT_NOT_FOUND`.
 *
 * @throws MockAdminError 404 for an unknown key or product.
 */
export function removeProduct(state: MockState, apiKey: string, id: number): void {
  if (!serverFor(state, apiKey).products.delete(id)) {
    throw new MockAdminError(404, `removeProduct: no product has the id ${id}.`);
  }
}

/**
 * The purchase rows of a game server, optionally of one player (exact name), in creation order.
 *
 * @throws MockAdminError 404 for an unknown key.
 */
export function purchases(state: MockState, apiKey: string, playerName?: string): PurchaseRow[] {
  const rows = serverFor(state, apiKey).purchases;
  return structuredClone(playerName === undefined ? rows : rows.filter((row) => row.username === playerName));
}

/**
 * Records one vote worth `points` for a player: adds to `vote_points` and `total_points`,
 * counts one in `votes_month`. Returns the player's record.
 *
 * @throws MockAdminError 404 for an unknown key, 400 for a bad name or points, or points
 *   that would take a count past a Java int.
 */
export function recordVote(state: MockState, apiKey: string, playerName: string, points: number): VoteRecord {
  const server = serverFor(state, apiKey);
  if (!isValidPlayerName(playerName)) {
    throw new MockAdminError(400, `recordVote: ${BAD_NAME}`);
  }
  if (!Number.isInteger(points) || points < 1) {
    throw new MockAdminError(400, 'recordVote: points must be a positive integer.');
  }
  const record = server.votes.get(playerName) ?? { playerName, vote_points: 0, votes_month: 0, total_points: 0 };
  if (record.total_points + points > JAVA_INT_MAX || record.votes_month + 1 > JAVA_INT_MAX) {
    throw new MockAdminError(400, `recordVote: the player's points would pass ${JAVA_INT_MAX}.`);
  }
  record.vote_points += points;
  record.total_points += points;
  record.votes_month += 1;
  server.votes.set(playerName, record);
  return { ...record };
}

/** A deep copy of everything the mock holds. */
export function snapshot(state: MockState): MockStateSnapshot {
  const now = state.clock.now();
  return {
    now,
    time: new Date(now).toISOString(),
    servers: state.servers.map((s) =>
      structuredClone({
        name: s.name,
        apiKey: s.apiKey,
        gateway: s.gateway,
        ...(s.transactionMessage === undefined ? {} : { transactionMessage: s.transactionMessage }),
        coupons: s.coupons,
        categories: s.categories,
        products: [...s.products.values()],
        rewards: [...s.rewards.values()],
        votes: [...s.votes.values()],
        voteClaims: s.voteClaims,
        purchases: s.purchases,
        lastAcceptedClaims: s.rateWindows.open(now).map(([playerName, at]) => ({
          playerName,
          at: new Date(at).toISOString(),
        })),
      }),
    ),
    checkouts: [...state.checkouts.values()].map(checkoutRecord),
  };
}

/**
 * How many rate windows the game server holds in memory, expired ones not yet forgotten
 * included. For the tests that check the windows are forgotten.
 *
 * @internal
 * @throws MockAdminError 404 for an unknown key.
 */
export function rateWindowsHeld(state: MockState, apiKey: string): number {
  return serverFor(state, apiKey).rateWindows.size;
}
