/**
 * The figures of scripts/simulate.ts: what was paid against what the game was given, per
 * invoice (the mock's rows are the ground truth), and the latencies.
 */
import { KEY, T0, compare, paidUnits, type UnitCounts } from '../../test/support/reliability.js';
import { percentile } from '../common/figures.js';
import type { PurchaseRow } from '../../src/mock/index.js';
import type { World } from './world.js';

export interface Figures extends UnitCounts {
  silent: number;
  /** Unverified windows reported (the events staff get), per 1,000 purchases. */
  windowsPer1000: number;
  /** Purchase to grant, routine purchases (no checkout hint). */
  p50: number;
  p99: number;
  /** Payment to grant, purchases whose checkout sent a hint, granted before the final phase (the loop that was given the hints). */
  hintedP50: number;
  hintedP99: number;
  /** The same over every hinted purchase, and how many of them the final phase granted. */
  hintedAllP50: number;
  hintedAllP99: number;
  hintedAfterRestart: number;
  hinted: number;
  /** The same over purchases granted before the final phase. */
  mainP50: number;
  mainP99: number;
  grantedInFinal: number;
}

/**
 * A window of the row's player covers it: the row was bought (its `created` time, when
 * `addPurchase` made it paid) and delivered by the service inside `[from, to]`. A window
 * that starts after the purchase does not: staff looking between `from` and `to` would not
 * find it (#33 point 1).
 */
function covered(world: World, row: PurchaseRow): boolean {
  if (row.delivered === null) return false;
  // A checkout's row is created at the checkout and paid later: the simulation knows when.
  const bought = world.purchases.get(row.invoice)?.boughtAt;
  const paid = bought === undefined ? Date.parse(row.created) : T0 + bought;
  const delivered = Date.parse(row.delivered);
  return world.windows.some((w) => w.playerName === row.username && w.from <= paid && paid <= w.to && w.from <= delivered && delivered <= w.to);
}

/**
 * Lost: units of a paid row never granted. Silent: lost units of a row not covered by a
 * reported unverified window of its player (bought and delivered inside it). Duplicated: units of an
 * invoice granted under more than one deliveryId (grants naming no invoice first cover
 * what is missing of their player and product; the rest counts as duplicated).
 */
export function account(world: World, finalStart: number): Figures {
  const rows = world.mock.purchases(KEY).filter((r) => r.paymentstatus === 'Paid');
  const units = compare(paidUnits(rows), world.game.applied);
  const unmapped = new Map(world.unmapped);
  let lost = 0;
  let silent = 0;
  let duplicated = 0;
  for (const row of rows) {
    const ids = world.idsByInvoice.get(row.invoice)?.size ?? 0;
    if (ids > 1) duplicated += (ids - 1) * row.givequantity;
    if (ids > 0) continue;
    const key = `${row.username}\u0000${row.productid}`;
    const cover = Math.min(unmapped.get(key) ?? 0, row.givequantity);
    unmapped.set(key, (unmapped.get(key) ?? 0) - cover);
    const missing = row.givequantity - cover;
    if (missing === 0) continue;
    lost += missing;
    if (!covered(world, row)) silent += missing;
  }
  for (const left of unmapped.values()) duplicated += Math.max(0, left);
  const all: number[] = [];
  const hinted: number[] = [];
  const hintedMain: number[] = [];
  const main: number[] = [];
  let grantedInFinal = 0;
  for (const p of world.purchases.values()) {
    if (p.latency === undefined || p.grantedAt === undefined) continue;
    (p.hinted ? hinted : all).push(p.latency / 1_000);
    if (p.hinted && p.grantedAt <= finalStart) hintedMain.push(p.latency / 1_000);
    if (p.grantedAt <= finalStart) main.push(p.latency / 1_000);
    else grantedInFinal += 1;
  }
  return {
    paid: units.paid,
    granted: units.granted,
    lost,
    duplicated,
    silent,
    windowsPer1000: world.purchases.size === 0 ? 0 : (1_000 * world.windows.length) / world.purchases.size,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    hintedP50: percentile(hintedMain, 0.5),
    hintedP99: percentile(hintedMain, 0.99),
    hintedAllP50: percentile(hinted, 0.5),
    hintedAllP99: percentile(hinted, 0.99),
    hintedAfterRestart: hinted.length - hintedMain.length,
    hinted: [...world.purchases.values()].filter((p) => p.hinted).length,
    mainP50: percentile(main, 0.5),
    mainP99: percentile(main, 0.99),
    grantedInFinal,
  };
}
