/**
 * `npm run mutate:rooms`: the whole `npm run mutate` scope, room by room (issue #46 point 4).
 * One StrykerJS run over the whole scope takes hours on two cores and must not be
 * interrupted; here each room (a few files that share their suites) is a run of its own,
 * with its own incremental file, its report and time kept in `reports/mutation/rooms/`.
 * The table joins every room's last report, so a full run can be done in pieces (one
 * room today, the rest tomorrow) and a change re-runs only its rooms, and in them only the
 * mutants whose code or tests changed.
 *
 *   npm run mutate:rooms                 every room, in turn; then the joined table
 *   npm run mutate:rooms -- loop votes   only these rooms; then the joined table
 *   npm run mutate:rooms -- --resume     every room but those already run on this commit
 *   npm run mutate:rooms -- --table      only the joined table of the rooms' last reports
 *
 * The rooms are stryker.config.mjs's `rooms` (its `mutate` is their patterns together).
 * Run under `test/support/throwaway-databases.ts` (as `npm run mutate:rooms` is), the
 * database servers start once for every room. A figure, not a test: it exits 0 unless a
 * room's run fails.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(ROOT, 'reports/mutation/rooms');

/** What a room's run left beside its report. */
interface RoomRun {
  room: string;
  commit: string;
  clean: boolean;
  seconds: number;
  at: string;
}

interface MutantResult {
  status: string;
}

interface Report {
  files: Record<string, { mutants: MutantResult[] }>;
}

function git(...args: string[]): string {
  return spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
}

/** The rooms of stryker.config.mjs, in the order a full run takes them: name → patterns. */
type Rooms = Record<string, string[]>;

function runRoom(rooms: Rooms, roomSuites: Record<string, string>, room: string): void {
  const patterns = rooms[room] as string[];
  const suites = roomSuites[room];
  const started = Date.now();
  const commit = git('rev-parse', '--short', 'HEAD');
  const clean = git('status', '--porcelain', '--untracked-files=no') === '';
  console.log(`\n== room ${room}: ${patterns.join(' ')} (commit ${commit}${clean ? '' : ', with changes'}${suites === undefined ? '' : `; suites: ${suites}`})`);
  const env = suites === undefined ? process.env : { ...process.env, MUTATE_ROOM_SUITES: suites };
  const run = spawnSync('npx', ['stryker', 'run', '--mutate', patterns.join(','), '--incrementalFile', `reports/mutation/rooms/${room}.incremental.json`], { cwd: ROOT, stdio: 'inherit', env });
  if (run.status !== 0) throw new Error(`mutate:rooms: the run of room ${room} failed (exit ${run.status ?? run.signal})`);
  copyFileSync(join(ROOT, 'reports/mutation/mutation.json'), join(DIR, `${room}.json`));
  const done: RoomRun = { room, commit, clean, seconds: Math.round((Date.now() - started) / 1000), at: new Date().toISOString() };
  writeFileSync(join(DIR, `${room}.run.json`), `${JSON.stringify(done)}\n`);
}

function lastRun(room: string): RoomRun | undefined {
  const path = join(DIR, `${room}.run.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as RoomRun) : undefined;
}

/** Every room's last report, joined: a line per file, then the totals and the rooms' runs. */
function printTable(rooms: Rooms): void {
  const rows: string[] = [];
  const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0 };
  let below = 0;
  for (const room of Object.keys(rooms)) {
    const path = join(DIR, `${room}.json`);
    if (!existsSync(path)) continue;
    const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
    for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
      const count = (status: string) => mutants.filter((m) => m.status === status).length;
      const c = { killed: count('Killed'), timeout: count('Timeout'), survived: count('Survived'), noCoverage: count('NoCoverage'), ignored: count('Ignored') };
      for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += c[k];
      const valid = c.killed + c.timeout + c.survived + c.noCoverage;
      const score = valid === 0 ? 100 : (100 * (c.killed + c.timeout)) / valid;
      if (score < 95) below += 1;
      rows.push(`${file.padEnd(44)} | ${room.padEnd(9)} | ${score.toFixed(2).padStart(6)} | ${String(c.killed).padStart(6)} | ${String(c.timeout).padStart(7)} | ${String(c.survived).padStart(8)} | ${String(c.noCoverage).padStart(6)} | ${c.ignored}`);
    }
  }
  const valid = total.killed + total.timeout + total.survived + total.noCoverage;
  console.log(`\n${'File'.padEnd(44)} | room      | score  | killed | timeout | survived | no cov | ignored`);
  for (const row of rows) console.log(row);
  console.log(`${'All files'.padEnd(44)} |           | ${valid === 0 ? '  n/a' : ((100 * (total.killed + total.timeout)) / valid).toFixed(2).padStart(6)} | ${String(total.killed).padStart(6)} | ${String(total.timeout).padStart(7)} | ${String(total.survived).padStart(8)} | ${String(total.noCoverage).padStart(6)} | ${total.ignored}`);
  let seconds = 0;
  const runs = Object.keys(rooms).map((room) => {
    const run = lastRun(room);
    if (run === undefined) return `${room}: not run`;
    seconds += run.seconds;
    return `${room}: ${Math.round(run.seconds / 60)} min on ${run.commit}${run.clean ? '' : ' (with changes)'}`;
  });
  console.log(`\nrooms: ${runs.join(', ')}`);
  console.log(`files_below_95=${below} total_minutes=${Math.round(seconds / 60)}`);
}

async function main(argv: string[]): Promise<void> {
  const { rooms, roomSuites } = (await import(pathToFileURL(join(ROOT, 'stryker.config.mjs')).href)) as { rooms: Rooms; roomSuites: Record<string, string> };
  mkdirSync(DIR, { recursive: true });
  const tableOnly = argv.includes('--table');
  const resume = argv.includes('--resume');
  const named = argv.filter((a) => !a.startsWith('--'));
  const unknown = named.filter((r) => !(r in rooms));
  if (unknown.length > 0) throw new Error(`mutate:rooms: no room ${unknown.map((r) => JSON.stringify(r)).join(', ')}; the rooms are ${Object.keys(rooms).join(', ')}`);
  if (!tableOnly) {
    const head = git('rev-parse', '--short', 'HEAD');
    for (const room of named.length > 0 ? named : Object.keys(rooms)) {
      const last = lastRun(room);
      if (resume && last?.commit === head && last.clean) {
        console.log(`room ${room}: already run on ${head}, kept`);
        continue;
      }
      runRoom(rooms, roomSuites, room);
    }
  }
  printTable(rooms);
}

await main(process.argv.slice(2));
