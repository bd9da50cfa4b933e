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
 * The rooms together are exactly `mutate` of stryker.config.mjs: the script refuses to run
 * when a pattern of the config is in no room, or a room names one the config does not.
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

/** The rooms, in the order a full run takes them. */
const ROOMS: Record<string, string[]> = {
  core: ['src/delivery/core/shared.ts', 'src/delivery/core/locks.ts', 'src/delivery/core/give.ts', 'src/delivery/core/thrown.ts', 'src/delivery/records/item-records.ts', 'src/delivery/records/checked.ts'],
  engine: ['src/delivery/engine/engine.ts', 'src/delivery/engine/modes.ts', 'src/delivery/engine/records.ts', 'src/delivery/engine/grants.ts', 'src/delivery/engine/report.ts', 'src/delivery/engine/options.ts'],
  votes: ['src/delivery/staff/staff.ts', 'src/delivery/inspect/inspect.ts', 'src/delivery/votes/votes.ts', 'src/delivery/votes/recovery.ts'],
  loop: ['src/delivery/loop/scheduler.ts', 'src/delivery/loop/player.ts', 'src/delivery/loop/start.ts', 'src/delivery/loop/votes.ts', 'src/delivery/loop/call-budget.ts', 'src/delivery/loop/due-heap.ts'],
  hints: ['src/delivery/loop/hints.ts', 'src/delivery/loop/shared-hints.ts'],
  cli: ['src/cli/journal-command.ts', 'src/cli/journal-sources.ts', 'src/cli/journal-print.ts', 'src/host/databases.ts'],
  journals: ['src/journals/**/*.ts'],
  sinks: ['src/bridge/rcon/sink.ts', 'src/bridge/rcon/template.ts', 'src/bridge/webhook/sink.ts', 'src/bridge/rcon/players.ts', 'src/bridge/roster.ts'],
  staffPage: ['src/bridge/staff-page/routes.ts', 'src/bridge/staff-page/sessions.ts', 'src/bridge/staff-page/accounts.ts', 'src/bridge/staff-page/html.ts'],
  client: ['src/client.ts', 'src/client-parts.ts', 'src/client-options.ts', 'src/endpoints.ts', 'src/auth.ts', 'src/errors.ts', 'src/errors/*.ts', 'src/wire/*.ts', 'src/internal/*.ts', '!src/internal/clock.ts', '!src/wire/options.ts'],
  decisions: [
    'src/bridge/http/server.ts',
    'src/bridge/http/routes.ts',
    'src/bridge/secrets.ts',
    'src/host/secrets.ts',
    'src/host/redact.ts',
    'src/bridge/config.ts',
    'src/bridge/log.ts',
    'src/bridge/rcon/link.ts',
    'src/bridge/rcon/replies.ts',
    'src/bridge/bridge.ts',
    'src/delivery/loop/types.ts',
    'src/cli/shared.ts',
    'src/cli/program.ts',
  ],
};

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

/** The rooms' patterns against the config's: each in exactly one room, none the config lacks. */
async function checkRooms(): Promise<void> {
  const config = (await import(pathToFileURL(join(ROOT, 'stryker.config.mjs')).href)) as { default: { mutate: string[] } };
  const inRooms = Object.values(ROOMS).flat();
  const configured = config.default.mutate;
  const missing = configured.filter((p) => !inRooms.includes(p));
  const extra = inRooms.filter((p) => !configured.includes(p));
  const twice = inRooms.filter((p, i) => inRooms.indexOf(p) !== i);
  if (missing.length + extra.length + twice.length > 0) {
    throw new Error(`mutate:rooms: the rooms do not match stryker.config.mjs's mutate: ${[...missing.map((p) => `${p} is in no room`), ...extra.map((p) => `${p} is not in the config`), ...twice.map((p) => `${p} is in two rooms`)].join('; ')}`);
  }
}

function runRoom(room: string): void {
  const patterns = ROOMS[room] as string[];
  const started = Date.now();
  const commit = git('rev-parse', '--short', 'HEAD');
  const clean = git('status', '--porcelain', '--untracked-files=no') === '';
  console.log(`\n== room ${room}: ${patterns.join(' ')} (commit ${commit}${clean ? '' : ', with changes'})`);
  const run = spawnSync('npx', ['stryker', 'run', '--mutate', patterns.join(','), '--incrementalFile', `reports/mutation/rooms/${room}.incremental.json`], { cwd: ROOT, stdio: 'inherit' });
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
function printTable(): void {
  const rows: string[] = [];
  const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0 };
  let below = 0;
  for (const room of Object.keys(ROOMS)) {
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
  const runs = Object.keys(ROOMS).map((room) => {
    const run = lastRun(room);
    if (run === undefined) return `${room}: not run`;
    seconds += run.seconds;
    return `${room}: ${Math.round(run.seconds / 60)} min on ${run.commit}${run.clean ? '' : ' (with changes)'}`;
  });
  console.log(`\nrooms: ${runs.join(', ')}`);
  console.log(`files_below_95=${below} total_minutes=${Math.round(seconds / 60)}`);
}

async function main(argv: string[]): Promise<void> {
  await checkRooms();
  mkdirSync(DIR, { recursive: true });
  const tableOnly = argv.includes('--table');
  const resume = argv.includes('--resume');
  const named = argv.filter((a) => !a.startsWith('--'));
  const unknown = named.filter((r) => !(r in ROOMS));
  if (unknown.length > 0) throw new Error(`mutate:rooms: no room ${unknown.map((r) => JSON.stringify(r)).join(', ')}; the rooms are ${Object.keys(ROOMS).join(', ')}`);
  if (!tableOnly) {
    const head = git('rev-parse', '--short', 'HEAD');
    for (const room of named.length > 0 ? named : Object.keys(ROOMS)) {
      const last = lastRun(room);
      if (resume && last?.commit === head && last.clean) {
        console.log(`room ${room}: already run on ${head}, kept`);
        continue;
      }
      runRoom(room);
    }
  }
  printTable();
}

await main(process.argv.slice(2));
