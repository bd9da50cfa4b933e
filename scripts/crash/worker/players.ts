/**
 * Which player a crash worker's lane delivers for next: mostly one with a purchase paid
 * and undelivered on the mock (its list refreshed every 300 ms), else any player.
 *
 * @module
 */
import type { PurchaseRowLite } from './config.js';
import { admin, config, random } from './context.js';

let pendingPlayers: string[] = [];
let pendingAt = -Infinity;
let refreshing: Promise<void> | undefined;

/** The mock's rows paid and not delivered yet. */
export async function undelivered(): Promise<PurchaseRowLite[]> {
  const rows = await admin<PurchaseRowLite[]>('GET', `/__mock/purchases?apiKey=${encodeURIComponent(config.apiKey)}`);
  return rows.filter((r) => r.paymentstatus === 'Paid' && r.deliverystatus === 'Undelivered');
}

export async function pickPlayer(): Promise<string> {
  if (performance.now() - pendingAt > 300) {
    refreshing ??= undelivered()
      .then((rows) => {
        pendingPlayers = [...new Set(rows.map((r) => r.username))];
        pendingAt = performance.now();
      })
      .finally(() => (refreshing = undefined));
    await refreshing;
  }
  const from = pendingPlayers.length > 0 && random() < 0.7 ? pendingPlayers : config.players;
  return from[Math.floor(random() * from.length)] as string;
}
