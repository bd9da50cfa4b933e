/**
 * Power-loss campaign of the file journal (issue #27 point 3): `npm run crash -- --power-loss`,
 * or `tsx scripts/crash/power-loss.ts` alone.
 *
 *   npm run crash -- --power-loss [--states all|<n>] [--seed 1] [--random 2]
 *                                 [--break none|sync|dirsync|batch] [--verbose]
 *
 * A killed process leaves its writes in the page cache, so the SIGKILL campaigns never test
 * an fsync: a power cut does. A dozen delivery runs (both modes; purchases during the 10 s
 * wait; lost claim answers; a grant that throws once; compactions) are recorded through the
 * journal's file calls (test/support/power-loss.ts); at every step (or `--states` sampled evenly)
 * the disk a power cut would leave (only what was synced; everything written; each last
 * write torn at every line end and 4 KiB boundary; `--random` random mixes per step, names
 * of unsynced directories lost or kept; the power gone before the next call or as the last
 * one returned) is opened by a NEW FileJournal, which resumes and
 * delivers for every player (test/support/power-loss-campaign.ts has the rules and the counts).
 *
 * Prints one line:
 *   crash mode=power-loss journal=file states=<n> lost=<n> silent=<n> duplicated=<n>
 * (lost: paid units never granted; silent: lost units outside every reported unverified
 * window; duplicated: units granted beyond what was paid), details on stderr, and exits 1
 * when silent > 0, duplicated > 0, a record the journal acknowledged is gone after a cut
 * (forgotten), or a recovery fails.
 *
 * `--break` removes a safeguard on purpose, to prove the campaign sees it (the line then
 * names it: `journal=file break=<what>`, and it must show silent > 0): `sync` makes the
 * journal's `datasync()` a no-op, `dirsync` the directory sync, `batch` writes an append of
 * several entries as one line per entry (what 0.1.0 did).
 *
 * @module
 */
import { campaign } from '../../test/support/power-loss-campaign.js';
import type { Breakage } from '../../test/support/power-loss.js';
import { commandLine } from '../common/command-line.js';

const USAGE = 'usage: npm run crash -- --power-loss [--states all|<n>] [--seed 1] [--random 2] [--break none|sync|dirsync|batch] [--verbose]';

const cli = commandLine('crash', USAGE, {
  'power-loss': { type: 'boolean', default: false },
  states: { type: 'string', default: 'all' },
  seed: { type: 'string', default: '1' },
  random: { type: 'string', default: '2' },
  break: { type: 'string', default: 'none' },
  verbose: { type: 'boolean', default: false },
});
const { values } = cli;
const states = values.states === 'all' ? undefined : cli.integer('states', 1, 1_000_000);
const seed = cli.integer('seed', 0, 0xffff_ffff);
const randomChoices = cli.integer('random', 0, 100);
const breakage: Breakage = cli.oneOf('break', ['none', 'sync', 'dirsync', 'batch']);

const result = await campaign({
  seed,
  breakage,
  randomChoices,
  ...(states === undefined ? {} : { states }),
  onState: (s) => {
    if (values.verbose && (s.silent > 0 || s.duplicated > 0 || s.forgotten > 0 || s.error !== undefined)) {
      process.stderr.write(`crash power-loss: ${s.scenario} cut before step ${s.step} (${s.choice}): ${s.error ?? s.details.join('; ')}\n`);
    }
  },
});

const broken = breakage === 'none' ? '' : ` break=${breakage}`;
process.stdout.write(`crash mode=power-loss journal=file${broken} states=${result.states} lost=${result.lost} silent=${result.silent} duplicated=${result.duplicated}\n`);
process.stderr.write(
  `crash power-loss: ${result.seconds.toFixed(1)} s, ${result.steps} steps in 12 runs (both modes), ${result.states} power-cut states checked; ` +
    `acknowledged records gone after a cut ${result.forgotten}, recoveries that failed ${result.errors}\n`,
);
for (const example of result.examples) process.stderr.write(`crash power-loss: e.g. ${example}\n`);
process.exit(result.silent > 0 || result.duplicated > 0 || result.forgotten > 0 || result.errors > 0 ? 1 : 0);
