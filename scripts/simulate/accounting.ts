/**
 * The figures of scripts/simulate.ts: what was paid against what the game was given, per
 * invoice (the mock's rows are the ground truth), and the latencies.
 */
import { KEY, compare, paidUnits, type UnitCounts } from '../../test/support/reliability.js';
import { percentile } from '../common/figures.js';
import type { World } from './world.js';

export interface Figures extends UnitCounts {
  silent: number;
  p50: number;
  p99: number;
  /** The same over purchases granted before the final phase. */
  mainP50: number;
  mainP99: number;
  grantedInFinal: number;
}

/**
 * Lost: units of a paid row never granted. Silent: lost units of a row the service did not
 * deliver inside a reported unverified window of its player. Duplicated: units of an
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
    const delivered = row.delivered === null ? undefined : Date.parse(row.delivered);
    const inWindow = delivered !== undefined && world.windows.some((w) => w.playerName === row.username && w.from <= delivered && delivered <= w.to);
    if (!inWindow) silent += missing;
  }
  for (const left of unmapped.values()) duplicated += Math.max(0, left);
  const all: number[] = [];
  const main: number[] = [];
  let grantedInFinal = 0;
  for (const p of world.purchases.values()) {
    if (p.latency === undefined || p.grantedAt === undefined) continue;
    all.push(p.latency / 1_000);
    if (p.grantedAt <= finalStart) main.push(p.latency / 1_000);
    else grantedInFinal += 1;
  }
  return {
    paid: units.paid,
    granted: units.granted,
    lost,
    duplicated,
    silent,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    mainP50: percentile(main, 0.5),
    mainP99: percentile(main, 0.99),
    grantedInFinal,
  };
}
