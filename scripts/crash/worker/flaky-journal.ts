/**
 * `--flaky-journal`: the worker's journal in trouble part of the time, as a journal file on
 * a full disk or a database that refuses writes for a while would be (#33 point 4).
 *
 * The trouble comes in stretches of the campaign's clock (the mock's, which the nodes
 * share): each minute of that clock starts a stretch with probability P_STRETCH, lasting 1
 * to 3 minutes. Whether a minute starts one, and how long it lasts, is drawn from the
 * campaign's seed and the minute's number alone, so every node (and every restart of one)
 * sees the same stretches, as every node of one database would. During a stretch
 * `acknowledge` is always refused and `append` one call in P_APPEND_REFUSED_INV; `pending`
 * and the player locks work. Outside the stretches, everything goes to the real journal.
 * Each refusal is logged (`flaky acknowledge refused …`, `flaky append refused …`, and
 * `flaky window-refused {…}` for a window record in a refused append) for the campaign's
 * count. Never in the drain.
 *
 * @module
 */
import type { DeliveryJournal, JournalEntry } from '../../../src/index.js';
import { seededRandom } from '../../../src/mock/service/random.js';
import { now } from './clock.js';
import { log } from './context.js';

const MINUTE = 60_000;
/** Chance that a minute of the campaign's clock starts a stretch of trouble. */
const P_STRETCH = 0.2;
/** During a stretch, `append` is refused one call in this many (at random). */
const P_APPEND_REFUSED = 0.25;

/** The stretch starting at minute `m` (its length in minutes, 1–3), or 0 when none starts there. */
function stretchAt(seed: number, m: number): number {
  const draw = seededRandom((seed ^ Math.imul(m, 0x9e3779b1)) >>> 0);
  draw(); // the first draws of nearby seeds are alike: skip one
  return draw() < P_STRETCH ? 1 + Math.floor(draw() * 3) : 0;
}

/** Whether the journal is in trouble at `t` (ms of the campaign's clock). */
export function inTrouble(seed: number, t: number): boolean {
  const m = Math.floor(t / MINUTE);
  for (let start = m - 2; start <= m; start++) {
    const length = stretchAt(seed, start);
    if (length > 0 && m < start + length) return true;
  }
  return false;
}

/** What the flaky journal refused, for the log's last line and the `drained` line. */
export const refused = { acknowledge: 0, append: 0 };

/** `journal`, refusing as the module's note says. */
export function flakyJournal(journal: DeliveryJournal, seed: number): DeliveryJournal {
  const random = seededRandom((seed ^ 0xf1a4e) >>> 0);
  const refuse = (operation: 'acknowledge' | 'append', what: string): never => {
    refused[operation] += 1;
    log(`flaky ${operation} refused ${what}`);
    throw new Error(`the journal refused ${operation} (simulated trouble, --flaky-journal)`);
  };
  const flaky: DeliveryJournal = {
    async append(entries: readonly JournalEntry[]): Promise<void> {
      if (inTrouble(seed, now()) && random() < P_APPEND_REFUSED) {
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
      if (inTrouble(seed, now())) refuse('acknowledge', deliveryIds.join(','));
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
