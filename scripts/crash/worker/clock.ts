/**
 * The crash worker's clock: the mock's, as the client sees it.
 *
 * @module
 */
import { openSync, readSync, writeSync } from 'node:fs';
import { admin, config, log } from './context.js';


// The client's clock is the mock's: synced at start, then moved by every sleep, which
// moves the mock's clock first (so the service never sees less time pass than the client).
// Database nodes: several nodes move the one mock clock. They share what they learn of it, as machines
// share the wall clock: a file holding the mock's offset from real time (a float64), which
// each node raises to what every answer of the mock shows (the mock's time when it
// answered: never ahead of it) and reads at every `now()`. A node's clock then lags the
// mock's only by the advances in flight; `clock-lag` lines log the largest lag found when
// an answer arrives.
let offset = 0;
/** The largest lag found behind the mock's clock (database nodes). */
export let maxLag = 0;
let clockFd = -1;
const shared = Buffer.alloc(8);
function sharedOffset(): number {
  if (clockFd < 0) return offset;
  return readSync(clockFd, shared, 0, 8, 0) === 8 ? shared.readDoubleLE(0) : offset;
}
export const now = (): number => {
  const s = sharedOffset();
  if (s > offset) offset = s;
  return Date.now() + offset;
};
/** After an answer of the mock carrying its time: what it shows, shared with the other nodes. */
export function resync(mockNow: number): void {
  const synced = mockNow - Date.now();
  const known = Math.max(offset, sharedOffset());
  if (synced - known > maxLag) {
    maxLag = synced - known;
    log(`clock-lag ${maxLag} ms (new max)`);
  }
  offset = Math.max(known, synced);
  if (clockFd >= 0 && offset > sharedOffset()) {
    shared.writeDoubleLE(offset, 0);
    writeSync(clockFd, shared, 0, 8, 0);
  }
}
export async function sleep(ms: number): Promise<void> {
  if (!(ms > 0)) return;
  const step = Math.ceil(ms);
  offset = Math.max(offset, sharedOffset()); // the moves of the other nodes, first
  const clock = await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: step });
  offset += step;
  if (config.journal !== 'file') resync(clock.now);
}
export async function syncClock(): Promise<void> {
  resync((await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 })).now);
}


/** At start: the shared offset's file (database nodes), then the mock's time. */
export async function startClock(): Promise<void> {
  if (config.clockPath !== undefined) clockFd = openSync(config.clockPath, 'r+');
  const clock = await admin<{ now: number }>('POST', '/__mock/clock/advance', { ms: 0 });
  offset = clock.now - Date.now();
  if (config.journal !== 'file') resync(clock.now);
}
