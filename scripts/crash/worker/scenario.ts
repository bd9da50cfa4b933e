/**
 * The scenario of one crash worker run (scripts/crash/scenario.ts), armed at its start:
 * the journal's write hooks and the client's fetch (scripts/crash/worker/sabotage.ts),
 * and for `two-clients` the journal opened under a second name.
 *
 * @module
 */
import { linkSync, readdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { FileJournal, isStorefrontError } from '../../../src/index.js';
import { config, log, random } from './context.js';
import { ArmedKill, claimAnswers, hookJournalWrites, tearAppend } from './sabotage.js';

/**
 * `two-clients` (#21 point 2 as well): the journal the worker holds, opened again under a
 * second name (a symlink, a hard link), must be refused. Logged as `two-names refused` or
 * `two-names ACCEPTED` (the orchestrator counts both).
 */
export async function openUnderSecondName(path: string): Promise<void> {
  const kind = random() < 0.5 ? 'symlink' : 'hardlink';
  const other = `${dirname(path)}/alias-${process.pid}-${basename(path)}`;
  (kind === 'symlink' ? symlinkSync : linkSync)(path, other);
  const second = new FileJournal(other);
  try {
    await second.pending();
    log(`two-names ACCEPTED: a second FileJournal on a ${kind} to the journal this process holds was not refused`);
    await second.close();
  } catch (error) {
    if (!isStorefrontError(error, 'JOURNAL_FAILED')) throw error;
    log(`two-names refused (${kind}): ${error.message.split('\n')[0]}`);
  } finally {
    unlinkSync(other);
  }
}

/**
 * Second names a killed worker's probe left (a hard link makes the journal a file of
 * several names, which the journal refuses): removed before the journal opens, those of
 * dead processes only (the other worker of a shared campaign may be probing).
 */
export function removeAliases(path: string): void {
  if (config.journal !== 'file') return;
  for (const name of readdirSync(dirname(path))) {
    const pid = /^alias-(\d+)-/.exec(name)?.[1];
    if (pid === undefined || !name.endsWith(basename(path)) || alive(Number(pid))) continue;
    rmSync(`${dirname(path)}/${name}`, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Arms the run's scenario before the journal opens its file (the hooks wrap the handles it
 * opens); returns the client's fetch when the scenario has one.
 */
export function armScenario(): typeof fetch | undefined {
  if (config.drain || config.journal !== 'file') return undefined;
  if (config.scenario === 'torn-append' && config.tear !== undefined) {
    hookJournalWrites(config.journalPath, tearAppend(config.journalPath, config.tear), log);
  } else if (config.scenario === 'no-raw-rows') {
    const kill = new ArmedKill(random);
    hookJournalWrites(config.journalPath, kill.decide, log);
    return claimAnswers({ strip: config.stripRaw ?? 0.5, dieAfter: config.dieAfterClaim ?? 0.4, random, kill, log });
  }
  return undefined;
}
