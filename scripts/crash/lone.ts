/**
 * The crash campaign of one worker on a FileJournal (the default): a worker runs, is
 * SIGKILLed at a random moment (mostly 50–1500 ms after it is ready, 10% of the time 0–100
 * ms after its run began: while it takes the journal's lock, loads, resumes; a torn-append
 * run waits longer, for its moment), purchases arrive, the next one starts.
 *
 * @module
 */
import { rmSync } from 'node:fs';
import type { Campaign } from './campaign.js';
import { between } from './draws.js';
import { kill, pause } from './children.js';
import { KILLS, KILL_DELAY_MS, KILL_DELAY_MS_LOOP, LOOP, P_EARLY_KILL } from './options.js';
import { killDelayFor } from './scenario.js';

export async function runLone(c: Campaign): Promise<void> {
  let manualUnlocks = 0;
  while (c.kills < KILLS) {
    if (c.workers.run > 0) await c.betweenRuns();
    const w = c.workers.spawn(false);
    if (c.killRandom() < P_EARLY_KILL) {
      void c.workers.started(w);
      await Promise.race([pause(between(c.killRandom, [0, 100])), w.closed]);
    } else {
      const delay = between(c.killRandom, killDelayFor(c.workers.scenarioOf(w), LOOP ? KILL_DELAY_MS_LOOP : KILL_DELAY_MS));
      if ((await c.workers.started(w)) === 'ready') await Promise.race([pause(delay), w.closed]);
    }
    kill(w);
    const how = await c.workers.ended(w);
    if (how === 'killed') {
      c.kills += 1;
      manualUnlocks = 0;
      c.progress();
    } else if (how === 'refused') {
      // One process at a time here: a refusal means the lock a SIGKILLed worker left was
      // not recovered. Do what the message tells an operator to do, a few times in a row.
      c.problem(`${w.label}: the journal refused a lone worker after a kill (the dead worker's lock was not recovered): ${c.workers.refusal(w)}`);
      manualUnlocks += 1;
      if (manualUnlocks > 3) throw new Error(`crash ${c.mode}: the journal keeps refusing; stopping`);
      rmSync(`${c.paths.journalPath}.lock`, { force: true });
    }
  }
}
