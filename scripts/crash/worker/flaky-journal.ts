/**
 * `--flaky-journal`: the worker's journal in trouble part of the time, as a journal file on
 * a full disk or a database that refuses writes for a while would be (#33 point 4).
 *
 * The trouble comes in stretches of the campaign's clock (the mock's, which the nodes
 * share), drawn from the campaign's seed from the clock's value when the campaign began:
 * 0.5 to 2 minutes of calm, then 1 to 3 minutes of trouble, and again. Every node and every
 * restart of one draws the same stretches, as every node of one database would see it
 * fail. During a stretch `acknowledge` is always refused and `append` one call in four (at
 * random); `pending` and the player locks work. Outside the stretches, everything goes to
 * the real journal. Each refusal is logged (`flaky acknowledge refused …`, `flaky append
 * refused …`, and `flaky window-refused {…}` for a window record in a refused append) for
 * the campaign's count. Never in the drain.
 *
 * @module
 */
import type { DeliveryJournal, JournalEntry } from '../../../src/index.js';
import { seededRandom } from '../../../src/mock/service/random.js';
import { now } from './clock.js';
import type { FlakyJournalConfig } from './config.js';
import { log } from './context.js';

const MINUTE = 60_000;
/** Calm, then trouble, in ms of the campaign's clock. */
const CALM_MS = [MINUTE / 2, 2 * MINUTE] as const;
const TROUBLE_MS = [MINUTE, 3 * MINUTE] as const;
/** During a stretch, the share of `append` calls refused (at random). */
const P_APPEND_REFUSED = 0.25;

/** The stretches of trouble, `[from, to)` on the campaign's clock, drawn as far as asked. */
function schedule(config: FlakyJournalConfig): (t: number) => boolean {
  const draw = seededRandom(config.seed);
  const stretches: Array<[number, number]> = [];
  let drawnTo = config.from;
  const between = ([lo, hi]: readonly [number, number]): number => lo + Math.floor(draw() * (hi - lo));
  return (t) => {
    while (drawnTo <= t) {
      const from = drawnTo + between(CALM_MS);
      drawnTo = from + between(TROUBLE_MS);
      stretches.push([from, drawnTo]);
    }
    return stretches.some(([from, to]) => from <= t && t < to);
  };
}

/** What the flaky journal refused, for the log's last line and the `drained` line. */
export const refused = { acknowledge: 0, append: 0 };

/** `journal`, refusing as the module's note says. */
export function flakyJournal(journal: DeliveryJournal, config: FlakyJournalConfig): DeliveryJournal {
  const random = seededRandom((config.seed ^ 0xf1a4e) >>> 0);
  const inTrouble = schedule(config);
  const refuse = (operation: 'acknowledge' | 'append', what: string): never => {
    refused[operation] += 1;
    log(`flaky ${operation} refused ${what}`);
    throw new Error(`the journal refused ${operation} (simulated trouble, --flaky-journal)`);
  };
  const flaky: DeliveryJournal = {
    async append(entries: readonly JournalEntry[]): Promise<void> {
      if (inTrouble(now()) && random() < P_APPEND_REFUSED) {
        // A window record refused: the engine reports the window all the same and keeps it
        // in memory for its next write; a kill before that write leaves it out of the
        // journal (count.ts does not count such a window as not durable).
        for (const e of entries) if (e.state === 'unverified') log(`flaky window-refused ${JSON.stringify({ playerName: e.playerName, from: e.from, to: e.to })}`);
        refuse('append', entries.map((e) => e.deliveryId).join(','));
      }
      return journal.append(entries);
    },
    pending: (playerName?: string) => (playerName === undefined ? journal.pending() : journal.pending(playerName)),
    async acknowledge(deliveryIds: readonly string[]): Promise<void> {
      if (inTrouble(now())) refuse('acknowledge', deliveryIds.join(','));
      return journal.acknowledge(deliveryIds);
    },
    ...(journal.nodeId === undefined ? {} : { nodeId: journal.nodeId }),
  };
  if (journal.withPlayerLock !== undefined) {
    const lock = journal.withPlayerLock.bind(journal);
    flaky.withPlayerLock = (playerName, work) => lock(playerName, work);
  }
  return flaky;
}
