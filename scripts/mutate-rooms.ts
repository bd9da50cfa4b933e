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
 *   npm run mutate:rooms -- --table --survivors
 *                                        with every survivor and why it is equivalent
 *   npm run mutate:rooms -- --table --record
 *                                        and keeps the rooms' results in git's
 *                                        test/mutation-record.json (commit, time, counts,
 *                                        survivors; a room not run here keeps its own)
 *   npm run mutate:rooms -- --from-record
 *                                        the table of that record, in any clone: no
 *                                        report needed, each room flagged when its
 *                                        files changed since the commit it ran on
 *   npm run mutate:rooms -- decisions --concurrency=4
 *                                        StrykerJS's --concurrency for these runs (the
 *                                        bridge's suites wait on sockets and child processes
 *                                        more than they compute: two runners leave the two
 *                                        cores about 70 % idle there)
 *
 * The rooms are stryker.config.mjs's `rooms` (its `mutate` is their patterns together).
 * A room named in its `roomSuites` runs first against those suites, then its survivors
 * again against the whole set, narrowed to their lines (the second pass: `<room>.pass2.json`),
 * and the table counts the second pass's verdict. After the table come the survivors that
 * test/mutation-survivors.json does not explain (a survivor is killed by a test, or judged
 * equivalent there with why), and the ledger's entries that no survivor matches any more.
 * Run under `test/support/throwaway-databases.ts` (as `npm run mutate:rooms` is), the
 * database servers start once for every room. A figure, not a test: it exits 0 unless a
 * room's run fails.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = join(ROOT, 'reports/mutation/rooms');

/** What a room's run left beside its report. */
interface RoomRun {
  room: string;
  commit: string;
  clean: boolean;
  seconds: number;
  /** Of `seconds`, the second pass's (rooms with suites of their own), when it ran. */
  secondPassSeconds?: number;
  /** Whether the run began with no incremental file: every mutant tested, none reused. */
  fromNothing?: boolean;
  at: string;
}

interface MutantResult {
  status: string;
  mutatorName: string;
  replacement?: string;
  /** 1-based lines and columns, the end's column just past the text replaced. */
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

interface Report {
  files: Record<string, { source: string; mutants: MutantResult[] }>;
}

/**
 * A survivor judged equivalent (no input tells it from the original), with why: an entry of
 * test/mutation-survivors.json. It is matched by its file, mutator, replacement and the
 * text of its line, not by the line's number, so an edit elsewhere in the file keeps it.
 */
interface Explained {
  file: string;
  mutator: string;
  replacement: string;
  code: string;
  why: string;
  /** How many lines of the file carry `code` word for word, the reason explaining each; 1 when absent. */
  lines?: number;
  /**
   * The text the mutant replaced, when the line has other mutants of the same mutator and
   * replacement that a test kills (`a || b` and `a` both made `false`): the reason is then
   * only this one's. Absent: every such mutant of the line.
   */
  original?: string;
}

const LEDGER = join(ROOT, 'test/mutation-survivors.json');

function git(...args: string[]): string {
  return spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
}

/** The rooms of stryker.config.mjs, in the order a full run takes them: name → patterns. */
type Rooms = Record<string, string[]>;

function runRoom(rooms: Rooms, roomSuites: Record<string, string>, room: string, concurrency: string[]): void {
  const patterns = rooms[room] as string[];
  const suites = roomSuites[room];
  const started = Date.now();
  const commit = git('rev-parse', '--short', 'HEAD');
  const clean = git('status', '--porcelain', '--untracked-files=no') === '';
  console.log(`\n== room ${room}: ${patterns.join(' ')} (commit ${commit}${clean ? '' : ', with changes'}${suites === undefined ? '' : `; suites: ${suites}`})`);
  rmSync(join(DIR, `${room}.pass2.json`), { force: true });
  const fromNothing = !existsSync(join(DIR, `${room}.incremental.json`));
  stryker(room, patterns, suites, `${room}.incremental.json`, `${room}.json`, concurrency);
  let secondPassSeconds: number | undefined;
  if (suites !== undefined) {
    const second = Date.now();
    secondPass(room, concurrency);
    secondPassSeconds = Math.round((Date.now() - second) / 1000);
  }
  const done: RoomRun = { room, commit, clean, seconds: Math.round((Date.now() - started) / 1000), ...(secondPassSeconds === undefined ? {} : { secondPassSeconds }), fromNothing, at: new Date().toISOString() };
  writeFileSync(join(DIR, `${room}.run.json`), `${JSON.stringify(done)}\n`);
}

/** One StrykerJS run over `patterns` (against `suites`, else vitest.mutate.config.ts's), its report kept as `report`. */
function stryker(room: string, patterns: string[], suites: string | undefined, incremental: string, report: string, concurrency: string[]): void {
  const env: NodeJS.ProcessEnv = { ...process.env, MUTATE_ROOM_SUITES: suites };
  if (suites === undefined) delete env.MUTATE_ROOM_SUITES;
  const run = spawnSync('npx', ['stryker', 'run', '--mutate', patterns.join(','), '--incrementalFile', `reports/mutation/rooms/${incremental}`, ...concurrency], { cwd: ROOT, stdio: 'inherit', env });
  if (run.status !== 0) throw new Error(`mutate:rooms: the run of room ${room} failed (exit ${run.status ?? run.signal})`);
  copyFileSync(join(ROOT, 'reports/mutation/mutation.json'), join(DIR, report));
}

const alive = (m: MutantResult) => m.status === 'Survived' || m.status === 'NoCoverage';
/** The same mutant in two reports of one commit. */
const mutantKey = (m: MutantResult) => `${m.location.start.line}:${m.location.start.column}:${m.mutatorName}:${m.replacement ?? ''}`;

/**
 * A room with suites of its own runs its survivors again against the whole set
 * (vitest.mutate.config.ts), narrowed to their lines: fewer suites can only kill fewer
 * mutants, and a survivor must be one no suite kills. The table counts this pass's verdict.
 */
function secondPass(room: string, concurrency: string[]): void {
  const report = JSON.parse(readFileSync(join(DIR, `${room}.json`), 'utf8')) as Report;
  const lines = new Set<string>();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants.filter(alive)) lines.add(`${file}:${m.location.start.line}-${m.location.end.line}`);
  }
  if (lines.size === 0) return;
  console.log(`\n== room ${room}, second pass: ${lines.size} lines' survivors against every suite`);
  stryker(room, [...lines], undefined, `${room}.pass2.incremental.json`, `${room}.pass2.json`, concurrency);
}

/** A room's last report, its survivors given the second pass's verdict where it ran. */
function roomReport(room: string): Report | undefined {
  const path = join(DIR, `${room}.json`);
  if (!existsSync(path)) return undefined;
  const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
  const secondPath = join(DIR, `${room}.pass2.json`);
  if (!existsSync(secondPath)) return report;
  const second = JSON.parse(readFileSync(secondPath, 'utf8')) as Report;
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const again = new Map((second.files[file]?.mutants ?? []).map((m) => [mutantKey(m), m.status]));
    for (const m of mutants) if (alive(m)) m.status = again.get(mutantKey(m)) ?? m.status;
  }
  return report;
}

function lastRun(room: string): RoomRun | undefined {
  const path = join(DIR, `${room}.run.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as RoomRun) : undefined;
}

/** A file's mutants by verdict. */
interface Counts {
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  ignored: number;
}

/** A mutant alive after the room's run: where it is, what it replaced, the text of its line. */
interface Survivor {
  file: string;
  line: number;
  column: number;
  status: string;
  mutator: string;
  replacement: string;
  code: string;
  /** The text replaced (its lines joined by a newline when it spans several). */
  original: string;
}

/**
 * A room's result as the table reads it: from its reports in `reports/mutation/rooms/`, or
 * from the record kept in git (test/mutation-record.json, written by `--record`), which any
 * clone can read without running anything.
 */
interface RoomResult {
  run: RoomRun;
  /** The room's last run without an incremental file (every mutant tested): what a clean clone costs. */
  fromNothing?: RoomRun;
  files: Record<string, Counts>;
  survivors: Survivor[];
}

const RECORD = join(ROOT, 'test/mutation-record.json');

/** The room's result from its reports here, when it has run here. */
function localResult(room: string): RoomResult | undefined {
  const [report, run] = [roomReport(room), lastRun(room)];
  if (report === undefined || run === undefined) return undefined;
  const files: Record<string, Counts> = {};
  const survivors: Survivor[] = [];
  for (const [file, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
    const count = (status: string) => mutants.filter((m) => m.status === status).length;
    files[file] = { killed: count('Killed'), timeout: count('Timeout'), survived: count('Survived'), noCoverage: count('NoCoverage'), ignored: count('Ignored') };
    const lines = source.split('\n');
    for (const m of mutants.filter(alive)) {
      const { start, end } = m.location;
      const text = lines.slice(start.line - 1, end.line);
      // The end's column counts in the last line: that line is cut first (it may be the first too).
      text[text.length - 1] = (text[text.length - 1] ?? '').slice(0, end.column - 1);
      text[0] = (text[0] ?? '').slice(start.column - 1);
      const original = text.join('\n');
      survivors.push({ file, line: start.line, column: start.column, status: m.status, mutator: m.mutatorName, replacement: m.replacement ?? '', code: (lines[start.line - 1] ?? '').trim(), original });
    }
  }
  return { run, ...(run.fromNothing === true ? { fromNothing: run } : {}), files, survivors };
}

function readRecord(): Record<string, RoomResult> {
  return existsSync(RECORD) ? (JSON.parse(readFileSync(RECORD, 'utf8')) as Record<string, RoomResult>) : {};
}

/**
 * The room's files changed since the commit its result was measured on (the working tree
 * against that commit): its figures may no longer hold for them.
 */
function changedSince(result: RoomResult): string[] | 'unknown commit' {
  if (spawnSync('git', ['cat-file', '-e', `${result.run.commit}^{commit}`], { cwd: ROOT }).status !== 0) return 'unknown commit';
  const changed = git('diff', '--name-only', result.run.commit, '--', ...Object.keys(result.files));
  return changed === '' ? [] : changed.split('\n');
}

const score = (c: Counts) => {
  const valid = c.killed + c.timeout + c.survived + c.noCoverage;
  return valid === 0 ? 100 : (100 * (c.killed + c.timeout)) / valid;
};

/** Every room's result, joined: a line per file, then the totals and the rooms' runs. */
function printTable(rooms: Rooms, results: Record<string, RoomResult>, all: boolean): void {
  const rows: string[] = [];
  const total: Counts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0 };
  let below = 0;
  for (const room of Object.keys(rooms)) {
    for (const [file, c] of Object.entries(results[room]?.files ?? {})) {
      for (const k of Object.keys(total) as (keyof Counts)[]) total[k] += c[k];
      if (score(c) < 95) below += 1;
      rows.push(`${file.padEnd(44)} | ${room.padEnd(9)} | ${score(c).toFixed(2).padStart(6)} | ${String(c.killed).padStart(6)} | ${String(c.timeout).padStart(7)} | ${String(c.survived).padStart(8)} | ${String(c.noCoverage).padStart(6)} | ${c.ignored}`);
    }
  }
  const valid = total.killed + total.timeout + total.survived + total.noCoverage;
  console.log(`\n${'File'.padEnd(44)} | room      | score  | killed | timeout | survived | no cov | ignored`);
  for (const row of rows) console.log(row);
  console.log(`${'All files'.padEnd(44)} |           | ${valid === 0 ? '  n/a' : score(total).toFixed(2).padStart(6)} | ${String(total.killed).padStart(6)} | ${String(total.timeout).padStart(7)} | ${String(total.survived).padStart(8)} | ${String(total.noCoverage).padStart(6)} | ${total.ignored}`);
  let seconds = 0;
  let changedRooms = 0;
  let [fullSeconds, unknownFull] = [0, 0];
  const commits = new Set<string>();
  const runs = Object.keys(rooms).map((room) => {
    const result = results[room];
    if (result === undefined) return `${room}: not run`;
    const { run } = result;
    seconds += run.seconds;
    commits.add(run.commit);
    const changed = changedSince(result);
    if (changed === 'unknown commit' || changed.length > 0) changedRooms += 1;
    const how = run.fromNothing === undefined ? '' : run.fromNothing ? ', from nothing' : ', incremental';
    const since = changed === 'unknown commit' ? ' (a commit this clone does not have)' : changed.length > 0 ? ` (changed since: ${changed.join(', ')})` : '';
    const full = result.fromNothing;
    if (full === undefined) unknownFull += 1;
    else fullSeconds += full.seconds;
    const whole = full === undefined || full.at === run.at ? '' : `; from nothing: ${Math.round(full.seconds / 60)} min on ${full.commit}`;
    return `${room}: ${Math.round(run.seconds / 60)} min on ${run.commit}${run.clean ? '' : ' with changes'}${how}${since}${whole}`;
  });
  console.log(`\nrooms:\n  ${runs.join('\n  ')}`);
  console.log(`files_below_95=${below} total_minutes=${Math.round(seconds / 60)} commits=${[...commits].join(',') || 'none'} rooms_changed_since=${changedRooms}`);
  // What a clean clone costs: every room's last run from nothing, added up.
  console.log(`from_nothing_minutes=${Math.round(fullSeconds / 60)}${unknownFull === 0 ? '' : ` (${unknownFull} rooms never timed from nothing)`}`);
  printSurvivors(rooms, results, all);
}

/**
 * Every survivor of the rooms' results, each with the ledger's reason
 * (test/mutation-survivors.json) or listed as unexplained; `all` prints the explained ones too.
 */
function printSurvivors(rooms: Rooms, results: Record<string, RoomResult>, all: boolean): void {
  const ledger = JSON.parse(readFileSync(LEDGER, 'utf8')) as Explained[];
  const used = new Set<Explained>();
  const unexplained: string[] = [];
  const explained: string[] = [];
  const measured = new Set<string>();
  for (const room of Object.keys(rooms)) {
    const result = results[room];
    if (result === undefined) continue;
    for (const file of Object.keys(result.files)) measured.add(file);
    for (const m of result.survivors) {
      const entry = ledger.find((e) => e.file === m.file && e.mutator === m.mutator && e.replacement === m.replacement && e.code === m.code && (e.original === undefined || e.original === m.original));
      const where = `${m.file}:${m.line}:${m.column} ${m.status} ${m.mutator} -> ${JSON.stringify(m.replacement)}`;
      if (entry === undefined) unexplained.push(`${where}\n    ${m.code}`);
      else {
        used.add(entry);
        explained.push(`${where}: ${entry.why}`);
      }
    }
  }
  if (all) for (const line of explained) console.log(line);
  if (unexplained.length > 0) console.log(`\nunexplained survivors (test/mutation-survivors.json has no reason for them):\n${unexplained.join('\n')}`);
  // An entry of a measured file that matches no survivor: killed since, or its line changed.
  const stale = ledger.filter((e) => measured.has(e.file) && !used.has(e));
  if (stale.length > 0) console.log(`\nreasons that match no survivor any more (remove them, or update their code):\n${stale.map((e) => `${e.file} ${e.mutator} -> ${JSON.stringify(e.replacement)}\n    ${e.code}`).join('\n')}`);
  console.log(`survivors explained=${explained.length} unexplained=${unexplained.length} stale_reasons=${stale.length}`);
}

async function main(argv: string[]): Promise<void> {
  const { rooms, roomSuites } = (await import(pathToFileURL(join(ROOT, 'stryker.config.mjs')).href)) as { rooms: Rooms; roomSuites: Record<string, string> };
  mkdirSync(DIR, { recursive: true });
  const tableOnly = argv.includes('--table') || argv.includes('--from-record');
  if (argv.includes('--from-record') && argv.includes('--record')) throw new Error('mutate:rooms: --record writes what ran here; --from-record only reads the record');
  const resume = argv.includes('--resume');
  const named = argv.filter((a) => !a.startsWith('--'));
  const concurrency = argv.filter((a) => a.startsWith('--concurrency=')).map((a) => {
    if (!/^--concurrency=[1-9]\d*$/.test(a)) throw new Error(`mutate:rooms: ${a}: the concurrency must be a positive integer`);
    return a;
  });
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
      runRoom(rooms, roomSuites, room, concurrency);
    }
  }
  const fromRecord = argv.includes('--from-record');
  const recorded = readRecord();
  const results: Record<string, RoomResult> = {};
  for (const room of Object.keys(rooms)) {
    const result = fromRecord ? recorded[room] : localResult(room);
    if (result !== undefined) results[room] = result;
  }
  printTable(rooms, results, argv.includes('--survivors'));
  if (argv.includes('--record')) {
    // The rooms run here replace theirs, keeping their last time from nothing when this run
    // was incremental; a room not run here keeps its recorded result.
    const kept: Record<string, RoomResult> = { ...recorded };
    for (const [room, result] of Object.entries(results)) {
      const fromNothing = result.fromNothing ?? recorded[room]?.fromNothing;
      kept[room] = { run: result.run, ...(fromNothing === undefined ? {} : { fromNothing }), files: result.files, survivors: result.survivors };
    }
    writeFileSync(RECORD, `${JSON.stringify(kept, null, 1)}\n`);
    console.log(`recorded in ${relative(ROOT, RECORD)}: ${Object.keys(results).join(', ') || 'no room'}`);
  }
}

await main(process.argv.slice(2));
