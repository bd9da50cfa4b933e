/**
 * The bridge's metrics in the Prometheus text format, through prom-client on a registry of
 * its own (never the global one, which a program embedding the bridge may use): the
 * loop's counts read from `stats()` at each scrape, the windows staff have not resolved
 * yet (read from the journal), the HTTP API's requests by route and status, and the gives
 * by kind and outcome (`unverified`: a give whose outcome is unknown, in a window).
 *
 * @module
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { DeliveryLoopStats } from '../index.js';

/** What the rest of the bridge records, and the text a scrape gets. */
export interface BridgeMetrics {
  /** One request of the HTTP API answered. */
  request(route: string, status: number): void;
  /** One give through the sink: `given`, `failed` (it stays pending) or `unverified` (its outcome unknown: a window for staff). */
  give(kind: 'purchase' | 'vote', outcome: GiveOutcome): void;
  /** The Prometheus text. */
  text(): Promise<string>;
  /** Its content type. */
  contentType: string;
}

/** What became of one give. */
export type GiveOutcome = 'given' | 'failed' | 'unverified';

/** The loop's cumulative counts, as Prometheus counters. */
const COUNTS = [
  ['calls', 'Calls sent to the TeamGames service'],
  ['previews', 'Of which previews'],
  ['claims', 'Of which claims'],
  ['granted', 'Items granted and acknowledged'],
  ['unverified', 'Unverified windows reported (for staff): lost claim answers and gives whose outcome is unknown'],
  ['errors', 'Loop runs that ended in an error (network, service, journal)'],
] as const;

/** The loop's current values, as gauges. */
const LEVELS = [
  ['pending', 'Items pending in the journal for online players, as last seen', (s: DeliveryLoopStats) => s.pending],
  ['paused', '1 while the service refuses the key (the loop waits and tries again), else 0', (s: DeliveryLoopStats) => (s.paused ? 1 : 0)],
  ['interval_seconds', 'The poll interval in force, in seconds', (s: DeliveryLoopStats) => s.intervalMs / 1000],
  ['online_players', 'Players online', (s: DeliveryLoopStats) => s.online],
  ['blocked_players', 'Online players whose deliveries are blocked', (s: DeliveryLoopStats) => s.blocked],
  ['backing_off_items', 'Items waiting for their next give attempt', (s: DeliveryLoopStats) => s.backingOff],
] as const;

/** Metrics of the loop whose counts `stats` reads; `openWindows` counts the journal's windows staff have not resolved. */
export function createMetrics(stats: () => DeliveryLoopStats, openWindows?: () => Promise<number>): BridgeMetrics {
  const registry = new Registry();
  if (openWindows !== undefined) {
    new Gauge({
      name: 'teamgames_bridge_open_windows',
      help: 'Unverified windows in the journal that staff have not resolved yet (teamgames journal windows); -1 while the journal cannot be read',
      registers: [registry],
      async collect() {
        this.set(await openWindows().catch(() => -1));
      },
    });
  }
  const seen = new Map<string, number>();
  for (const [name, help] of COUNTS) {
    new Counter({
      name: `teamgames_bridge_${name}_total`,
      help,
      registers: [registry],
      collect() {
        // The loop counts since its start; the counter moves by what is new.
        const now = stats()[name];
        this.inc(Math.max(0, now - (seen.get(name) ?? 0)));
        seen.set(name, now);
      },
    });
  }
  for (const [name, help, read] of LEVELS) {
    new Gauge({
      name: `teamgames_bridge_${name}`,
      help,
      registers: [registry],
      collect() {
        this.set(read(stats()));
      },
    });
  }
  const requests = new Counter({ name: 'teamgames_bridge_http_requests_total', help: 'Requests of the HTTP API by route and status', labelNames: ['route', 'status'], registers: [registry] });
  const gives = new Counter({ name: 'teamgames_bridge_gives_total', help: 'Gives through the sink by kind and outcome', labelNames: ['kind', 'outcome'], registers: [registry] });
  return {
    request: (route, status) => requests.inc({ route, status: String(status) }),
    give: (kind, outcome) => gives.inc({ kind, outcome }),
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
