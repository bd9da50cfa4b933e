/**
 * The crash campaign of two workers on ONE journal file (`--processes 2 --shared`):
 * whichever holds the journal's lock delivers, the other must be refused (JournalError)
 * and retries a little later; kills hit the holder (and, 10% of the time, whoever is
 * alive). It fails when no worker was ever refused or two held the lock at once.
 *
 * @module
 */
import { rmSync } from 'node:fs';
import { seededRandom } from '../../src/mock/service/random.js';
import type { Campaign } from './campaign.js';
import { between, pick } from './draws.js';
import { kill, pause, type Child } from './children.js';
import { KILLS, KILL_DELAY_MS, P_EARLY_KILL } from './options.js';

export async function runShared(c: Campaign): Promise<void> {
  // Two slots on one journal: the lock holder delivers, the other is refused and retries.
  let holder: Child | undefined;
  let noHolderSince = performance.now();
  let violations = 0;
  let unnamed = 0;
  let lastRefusal = '';
  const slot = async (index: number): Promise<void> => {
    const slotRandom = seededRandom(c.base ^ (0x51a7 + index));
    let wasKilled = false;
    while (!c.stopping) {
      if (wasKilled) await c.betweenRuns();
      await c.gate;
      if (c.stopping) break;
      const w = c.workers.spawn(false);
      const line = await c.workers.started(w);
      if (line === 'ready' && !c.stopping) {
        if (holder !== undefined && holder.alive) {
          violations += 1;
          c.problem(`${w.label} took the journal's lock while ${holder.label} (pid ${holder.pid}) held it and was alive`);
        }
        holder = w;
      }
      const how = await c.workers.ended(w);
      if (holder === w) {
        holder = undefined;
        noHolderSince = performance.now();
      }
      wasKilled = how === 'killed';
      if (how === 'refused') {
        c.refused += 1;
        lastRefusal = c.workers.refusal(w);
        if (!/ in use by process \d+/.test(lastRefusal)) {
          unnamed += 1;
          if (unnamed === 1) c.notes.push(`refused without naming the holder: ${lastRefusal}`);
        }
        await pause(between(slotRandom, [100, 400]));
      }
    }
  };
  const slots = [slot(0), slot(1)];
  while (c.kills < KILLS) {
    if (c.killRandom() < P_EARLY_KILL) {
      // Anyone alive, right now: a worker starting, taking the lock, being refused.
      await pause(between(c.killRandom, [0, 100]));
      const candidates = [...c.workers.live].filter((w) => w.alive);
      if (candidates.length === 0) continue;
      const victim = pick(c.killRandom, candidates);
      kill(victim);
      if ((await c.workers.ended(victim)) === 'killed') c.kills += 1;
    } else {
      let unlocks = 0;
      while (holder === undefined || !holder.alive) {
        await pause(5);
        if (performance.now() - noHolderSince > 15_000) {
          // Both slots keep being refused with nobody holding the lock: a lock left behind
          // that is never taken over. Do what the message tells an operator to do.
          c.problem(`no worker could take the journal's lock for 15 s (the lock of a killed worker was not recovered); last refusal: ${lastRefusal}`);
          if (++unlocks > 3) throw new Error(`crash ${c.mode}: the journal keeps refusing; stopping`);
          rmSync(`${c.paths.journalPath}.lock`, { force: true });
          noHolderSince = performance.now();
        }
      }
      const victim = holder;
      await Promise.race([pause(between(c.killRandom, KILL_DELAY_MS)), victim.closed]);
      kill(victim);
      if ((await c.workers.ended(victim)) === 'killed') c.kills += 1;
    }
    c.progress();
  }
  c.stopping = true;
  await c.workers.killUntil(Promise.all(slots));
  if (c.refused === 0) c.problem('no worker was ever refused: two processes on one journal file were never told apart');
  if (violations > 0) c.problem(`${violations} times two workers held the journal's lock at once`);
  if (unnamed > 0) c.notes.push(`${unnamed} of ${c.refused} refusals did not name the holder's pid (the other worker was creating the lock file: it exists, still empty)`);
}
