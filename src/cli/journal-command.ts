/**
 * `teamgames journal`: what a delivery journal holds for staff (lines still to grant,
 * unverified windows), on a journal file or a shared database, and closing a window once
 * it is handled. Loaded by `teamgames` only for this command; the database drivers are
 * the user's optional peers, imported only for `--postgres` / `--mysql`.
 *
 * @module
 */
import { userInfo } from 'node:os';
import { FileJournal } from '../journals/file/journal.js';
import { inspectLock, realFile, type LockState } from '../journals/file/lock.js';
import { readFileSnapshot, type FileSnapshot } from '../journals/file/snapshot.js';
import type { DeliveryJournal, JournalWindow } from '../journals/contract.js';
import { inspectEntries, inspectJournal, resolveWindow, type JournalInspection } from '../delivery/staff.js';
import { InvalidInputError, isStorefrontError } from '../errors.js';
import { MySqlJournal, type MySqlPool } from '../journals/mysql/index.js';
import { PostgresJournal, type PgPool } from '../journals/postgres/index.js';
import { DEFAULT_TABLE, checkTableName, tableText } from '../journals/sql/common.js';
import { UsageError, parseCommandLine } from '../common/command-line.js';
import { writeText } from '../common/output.js';
import { EXIT, answer, table, type JournalDeps, type TeamgamesEnv, type TeamgamesIo } from './shared.js';

export type { JournalDeps } from './shared.js';
import { painter, type Paint, type Tone } from './terminal.js';

/** The text of `teamgames journal --help`. */
export const JOURNAL_USAGE = `Usage: teamgames journal <command> (--file <path> | --postgres <url> | --mysql <url>) [options]

What a delivery journal holds for staff: lines still to grant in game, and unverified
windows (a claim whose answer was lost may have delivered items that no journal line
records: check the player's purchases in that time, grant what is missing, then
resolve the window with a note).

Commands:
  status                          pending lines, open windows, age of the oldest line,
                                  and the journal's health (a file: its lock, size, lines)
  windows [--all]                 the open windows: id, player, from, to, cause, found at;
                                  --all adds the resolved ones (who, when, note)
  pending                         lines still to grant: player, product, state, age,
                                  attempts and the last grant error
  resolve <player> --note <text> [--window <id>] [--by <name>]
                                  closes the player's open window; it is kept as resolved
                                  (who, when, note). --window when the player has several;
                                  --by defaults to your user name

The journal (exactly one):
  --file <path>       a FileJournal file. Read without its lock while a bridge holds
                      it (nothing is changed). resolve needs the file free: stop the
                      bridge first, or resolve from the bridge itself (resolveWindow
                      in its admin command): the lock belongs to the bridge
  --postgres <url>    a PostgresJournal's database (needs the pg package)
  --mysql <url>       a MySqlJournal's database, MySQL or MariaDB (needs mysql2)
  --table <name>      the database journal's table (default teamgames_deliveries)

Options:
  --json              print one JSON document (for scripts)
  -h, --help          show this help

Nothing is created: a missing file or a database without the journal's table is
reported, not made.

Exit codes:
  0  done
  1  failure: the journal cannot be read (missing, damaged, no table, no driver), the
     player has no open window (or not the one given), or the file is held by a bridge
  2  usage: unknown option, missing or bad argument, not exactly one journal
  6  the answer could not be written to stdout: it was written to stderr instead, after
     one line saying so (a resolve in it took effect)
`;

const OPTIONS = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  all: { type: 'boolean', default: false },
  file: { type: 'string' },
  postgres: { type: 'string' },
  mysql: { type: 'string' },
  table: { type: 'string' },
  window: { type: 'string' },
  note: { type: 'string' },
  by: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;

/** The commands, their arguments and the options only they take. */
const COMMANDS: Record<string, { args: string[]; options: OptionName[] }> = {
  status: { args: [], options: [] },
  windows: { args: [], options: ['all'] },
  pending: { args: [], options: [] },
  resolve: { args: ['player'], options: ['window', 'note', 'by'] },
};
const ONLY_FOR: readonly OptionName[] = ['all', 'window', 'note', 'by'];
const NAMES = 'status, windows, pending or resolve';

/** A failure of the command (exit 1), said in one line. */
class CommandFailure extends Error {
  override name = 'CommandFailure';
}


/**
 * Runs `teamgames journal` with its arguments (`journal` itself removed) and resolves the
 * exit code. Never throws: every failure is one line on stderr (`--json`: a JSON line).
 */
export async function runJournal(argv: readonly string[], io: TeamgamesIo, env: TeamgamesEnv, deps: JournalDeps = {}): Promise<number> {
  let json = argv.includes('--json');
  const paintOut = painter(io.stdout, env);
  const paintErr = painter(io.stderr, env);
  let source: Source | undefined;
  try {
    const { values, positionals } = parseCommandLine({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    json = values.json;
    if (values.help) return await answer(io, '', false, JOURNAL_USAGE, () => JOURNAL_USAGE, paintOut, paintErr);
    const [command, ...args] = positionals;
    if (command === undefined) throw new UsageError(`missing command (${NAMES})`);
    const spec = COMMANDS[command];
    if (spec === undefined) throw new UsageError(`unknown command "${command}" (${NAMES})`);
    const label = `journal ${command}`;
    if (args.length < spec.args.length) throw new UsageError(`missing <${spec.args[args.length]}>`);
    if (args.length > spec.args.length) throw new UsageError(`unexpected argument "${args[spec.args.length]}"`);
    for (const option of ONLY_FOR) {
      if (values[option] !== undefined && values[option] !== false && !spec.options.includes(option)) throw new UsageError(`--${option} does not apply to this command`);
    }
    if (command === 'resolve') {
      if (values.note === undefined || values.note.trim() === '') throw new UsageError('--note <text> is required (what was found and done)');
      if (values.by !== undefined && values.by.trim() === '') throw new UsageError('--by must not be blank');
    }
    const now = deps.now ?? Date.now;
    source = await openSource(values, deps);
    const print = (value: unknown, human: (paint: Paint) => string) => answer(io, `${label}: `, json, value, human, paintOut, paintErr);

    switch (command) {
      case 'status': {
        const read = await source.read(now());
        const seen = read.seen;
        const report = {
          journal: read.health,
          ...(seen === undefined ? {} : { pending: seen.pending.length, openWindows: seen.openWindows.length, resolvedWindows: seen.resolvedWindows.length, oldestPendingMs: seen.oldestPendingMs }),
        };
        const code = await print(report, (paint) => statusText(read.health, seen, paint));
        // Written to stderr instead (exit 6), the answer already says the journal is unreadable.
        if (read.problem === undefined || code !== EXIT.OK) return code;
        await fail(io, json, `journal: ${read.problem}`, paintErr, 'JOURNAL_FAILED');
        return EXIT.FAILURE;
      }
      case 'windows': {
        const seen = await source.inspect(now());
        const windows = values.all ? [...seen.openWindows, ...seen.resolvedWindows].sort((a, b) => a.recordedAt - b.recordedAt) : seen.openWindows;
        return await print({ windows }, (paint) => windowsText(windows, values.all, paint));
      }
      case 'pending': {
        const seen = await source.inspect(now());
        return await print({ pending: seen.pending, oldestPendingMs: seen.oldestPendingMs }, (paint) => pendingText(seen, paint));
      }
      case 'resolve': {
        const by = values.by ?? defaultUser(deps);
        const resolved = await source.resolve({ player: args[0] as string, windowId: values.window, by, note: values.note as string }, now());
        return await print(resolved, (paint) => `${paint('good', 'Resolved')} ${resolved.deliveryId} of ${resolved.playerName} (${time(resolved.from)} to ${time(resolved.to)}) by ${by}: ${values.note}\n`);
      }
    }
    throw new UsageError(`unknown command "${command}" (${NAMES})`);
  } catch (error) {
    const code = error instanceof UsageError ? EXIT.USAGE : EXIT.FAILURE;
    const message = `journal: ${oneLine(error)}`;
    await fail(io, json, message, paintErr, code === EXIT.USAGE ? 'USAGE' : isStorefrontError(error) ? error.code : 'FAILURE', code === EXIT.USAGE);
    return code;
  } finally {
    await source?.close().catch(() => undefined);
  }
}

/** One line on stderr: `teamgames journal: …`, or with `--json` a JSON line `{ error, message }`. */
async function fail(io: TeamgamesIo, json: boolean, message: string, paint: Paint, code: string, usage = false): Promise<void> {
  await writeText(io.stderr, json ? `${JSON.stringify({ error: code, message })}\n` : `${paint('bad', `teamgames ${message}`)}${usage ? ' (see teamgames journal --help)' : ''}\n`);
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
}

function defaultUser(deps: JournalDeps): string {
  let name: string | undefined;
  try {
    name = (deps.userName ?? (() => userInfo().username))();
  } catch {
    name = undefined;
  }
  if (name === undefined || name.trim() === '') throw new UsageError('no user name to record (the OS has none for this user); pass --by <name>');
  return name;
}

// ----------------------------------------------------------------- journals

/** The journal's health, as `status` reports it (`--json`: as is). */
type Health = FileHealth | { kind: 'postgres' | 'mysql'; url: string; table: string; readable: boolean; problem?: string };

/** A journal file's health: readable (size, lines, a torn tail left out) and who holds its lock. */
interface FileHealth {
  kind: 'file';
  path: string;
  readable: boolean;
  problem?: string;
  bytes?: number;
  lines?: number;
  tornBytes?: number;
  lock: LockState | { state: 'unreadable'; problem: string };
}

/** One journal the command reads (and, for resolve, writes). */
interface Source {
  /** What staff see and the journal's health; `seen` undefined (and `problem` set) when unreadable. */
  read(now: number): Promise<{ seen?: JournalInspection; health: Health; problem?: string }>;
  /** What staff see. @throws when the journal cannot be read. */
  inspect(now: number): Promise<JournalInspection>;
  /** Resolves the player's window. @throws CommandFailure, UsageError, JournalError. */
  resolve(input: { player: string; windowId: string | undefined; by: string; note: string }, now: number): Promise<JournalWindow>;
  close(): Promise<void>;
}

async function openSource(values: { file?: string | undefined; postgres?: string | undefined; mysql?: string | undefined; table?: string | undefined }, deps: JournalDeps): Promise<Source> {
  const given = (['file', 'postgres', 'mysql'] as const).filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new UsageError(given.length === 0 ? 'which journal? pass --file <path>, --postgres <url> or --mysql <url>' : `one journal at a time: got ${given.map((n) => `--${n}`).join(' and ')}`);
  if (values.file !== undefined) {
    if (values.table !== undefined) throw new UsageError('--table applies to --postgres and --mysql, not --file');
    if (values.file.trim() === '') throw new UsageError('--file must not be blank');
    return fileSource(values.file);
  }
  return values.postgres !== undefined ? postgresSource(values.postgres, values.table, deps) : mysqlSource(values.mysql as string, values.table, deps);
}

function fileSource(path: string): Source {
  return {
    async read(now) {
      let snapshot: FileSnapshot;
      try {
        snapshot = await readFileSnapshot(path);
      } catch (error) {
        const problem = oneLine(error);
        return { problem, health: { kind: 'file', path, readable: false, problem, lock: await lockOf(path) } };
      }
      const health: FileHealth = { kind: 'file', path, readable: true, bytes: snapshot.bytes, lines: snapshot.lines, tornBytes: snapshot.tornBytes, lock: await lockOf(path) };
      return { seen: inspectEntries(snapshot.entries, now), health };
    },
    async inspect(now) {
      // A consistent read of the file as it is: no lock taken, nothing changed.
      const snapshot = await readFileSnapshot(path);
      return inspectEntries(snapshot.entries, now);
    },
    async resolve(input, now) {
      // The file must exist (a FileJournal would create it), and no live process hold it.
      const snapshot = await readFileSnapshot(path);
      const lock = await inspectLock(snapshot.realPath);
      if (lock.state === 'held' && lock.running !== false) {
        const where = lock.running === undefined ? `on host ${lock.host} (another host: whether it runs cannot be told from here)` : `on this host (running)`;
        throw new CommandFailure(
          `${path} is held by process ${lock.pid} ${where}, lock file ${lock.path}. The lock belongs to the bridge, so nothing was written. Stop the bridge and run this again, or resolve from the bridge itself: resolveWindow(journal, { playerName, windowId, by, note }) in its admin command`,
        );
      }
      // No one holds it (or its holder died): open it as a journal, taking the lock.
      const journal = new FileJournal(path);
      try {
        return await resolveIn(journal, input, now);
      } finally {
        await journal.close();
      }
    },
    close: async () => {},
  };
}

/** Who holds the file's lock, read without touching it. */
async function lockOf(path: string): Promise<FileHealth['lock']> {
  try {
    return await inspectLock(await realFile(path));
  } catch (error) {
    return { state: 'unreadable', problem: oneLine(error) };
  }
}

/** What `pg` and `mysql2/promise` export that the command uses. */
interface PgModule {
  Pool: new (config: { connectionString: string; max: number; connectionTimeoutMillis: number }) => PgPool & { end(): Promise<void>; on(event: 'error', listener: () => void): unknown };
}
interface MySqlModule {
  createPool(config: { uri: string; connectionLimit: number; connectTimeout: number }): MySqlPool & { end(): Promise<void> };
}

async function loadDriver<T>(deps: JournalDeps, flag: string, name: string, pkg: string): Promise<T> {
  let loaded: unknown;
  try {
    loaded = await (deps.importDriver ?? ((n: string) => import(n)))(name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && oneLine(error).includes(`'${pkg}'`)) throw new CommandFailure(`${flag} needs the ${pkg} package: npm i ${pkg}`);
    throw new CommandFailure(`${flag}: the ${pkg} package could not be loaded (${oneLine(error)})`);
  }
  const module = loaded as { default?: unknown };
  return (module.default ?? module) as T;
}

/** The URL without its password, for what is printed. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

function checkUrl(url: string, flag: string, schemes: readonly string[]): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new UsageError(`${flag} must be a URL (${schemes[0]}//user:password@host/database), got something else`);
  }
  if (!schemes.includes(protocol)) throw new UsageError(`${flag} must be a ${schemes.join(' or ')} URL, got ${protocol}`);
}

function tableOption(table: string | undefined): { table?: string } {
  return table === undefined ? {} : { table };
}

/** The journal's own check of a table name, as a usage error naming `--table`. */
function checkTable(table: string | undefined): string {
  try {
    return tableText(checkTableName(table ?? DEFAULT_TABLE, '--table'));
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(`--table ${error.rule}`);
    throw error;
  }
}

async function postgresSource(url: string, table: string | undefined, deps: JournalDeps): Promise<Source> {
  checkUrl(url, '--postgres', ['postgres:', 'postgresql:']);
  const name = checkTable(table);
  const pg = await loadDriver<PgModule>(deps, '--postgres', 'pg', 'pg');
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 10_000 });
  // An idle connection the server ends must not end the command with an unhandled error.
  pool.on('error', () => undefined);
  // Never creates the table: a database without one is reported, not changed.
  const journal = new PostgresJournal(pool, { ...tableOption(table), createTables: false });
  return sqlSource('postgres', shownUrl(url), name, journal, () => pool.end());
}

async function mysqlSource(url: string, table: string | undefined, deps: JournalDeps): Promise<Source> {
  checkUrl(url, '--mysql', ['mysql:', 'mariadb:']);
  const name = checkTable(table);
  const mysql = await loadDriver<MySqlModule>(deps, '--mysql', 'mysql2/promise', 'mysql2');
  const pool = mysql.createPool({ uri: url.replace(/^mariadb:/, 'mysql:'), connectionLimit: 2, connectTimeout: 10_000 });
  const journal = new MySqlJournal(pool, { ...tableOption(table), createTables: false });
  return sqlSource('mysql', shownUrl(url), name, journal, () => pool.end());
}

/** The driver's "no such table" (or schema / database) under the journal's error. */
function missingTable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause !== undefined && ['42P01', '3F000', 'ER_NO_SUCH_TABLE', 'ER_BAD_DB_ERROR'].includes(String(cause.code));
}

function sqlSource(kind: 'postgres' | 'mysql', url: string, table: string, journal: DeliveryJournal, end: () => Promise<void>): Source {
  const noTable = () => new CommandFailure(`no journal table ${table} in this database (nothing was created). A bridge creates it on first use; check the URL and --table`);
  // Every record validated like any read: a row changed outside the SDK is damage, never listed.
  const inspect = async (now: number): Promise<JournalInspection> => {
    try {
      return await inspectJournal(journal, { now });
    } catch (error) {
      if (missingTable(error)) throw noTable();
      throw error;
    }
  };
  return {
    async read(now) {
      try {
        return { seen: await inspect(now), health: { kind, url, table, readable: true } };
      } catch (error) {
        const problem = oneLine(error);
        return { problem, health: { kind, url, table, readable: false, problem } };
      }
    },
    inspect,
    async resolve(input, now) {
      await inspect(now);
      return resolveIn(journal, input, now);
    },
    close: end,
  };
}

/** Picks the player's window (saying which exist), then resolves it through the SDK's call. */
async function resolveIn(journal: DeliveryJournal, input: { player: string; windowId: string | undefined; by: string; note: string }, now: number): Promise<JournalWindow> {
  const { player, windowId, by, note } = input;
  let seen: JournalInspection;
  try {
    seen = await inspectJournal(journal, { playerName: player, now });
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(`invalid <player>: ${error.rule}`);
    throw error;
  }
  const open = seen.openWindows;
  const ids = open.map((w) => w.deliveryId).join(', ');
  if (open.length === 0) throw new CommandFailure(`${player} has no open window (teamgames journal windows --all lists every window)`);
  if (windowId !== undefined && !open.some((w) => w.deliveryId === windowId)) throw new CommandFailure(`${player} has no open window ${windowId}; open: ${ids}`);
  if (windowId === undefined && open.length > 1) throw new UsageError(`${player} has ${open.length} open windows (${ids}): pass --window <id>`);
  const chosen = windowId ?? (open[0] as JournalWindow).deliveryId;
  try {
    return await resolveWindow(journal, { playerName: player, windowId: chosen, by, note }, { now });
  } catch (error) {
    // Another hand resolved it between the read and the write.
    if (error instanceof InvalidInputError) throw new CommandFailure(`${player}: ${error.rule}`);
    throw error;
  }
}

// ----------------------------------------------------------------- output

/** `2026-01-01 00:00:00Z`: UTC to the second. */
function time(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}

/** An age in its two largest units: `45s`, `3m 12s`, `5h 3m`, `2d 4h`. */
function age(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000);
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor((s % 86_400) / 3_600), Math.floor((s % 3_600) / 60)];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function lockText(lock: FileHealth['lock']): string {
  switch (lock.state) {
    case 'free':
      return 'free (no bridge holds the file)';
    case 'unknown':
      return `${lock.path} does not name its holder`;
    case 'unreadable':
      return `unknown: ${lock.problem}`;
    case 'held': {
      const since = lock.since === '' ? '' : ` since ${lock.since}`;
      const state = lock.running === true ? 'running' : lock.running === false ? 'gone: its lock is stale, the next open takes it over' : 'another host: cannot tell whether it runs';
      return `held by process ${lock.pid} on host ${lock.host}${since} (${state})`;
    }
  }
}

function statusText(health: Health, seen: JournalInspection | undefined, paint: Paint): string {
  const rows: Array<[string, string]> = [];
  if (health.kind === 'file') {
    rows.push(['journal', `file ${health.path}`]);
    rows.push(['readable', health.readable ? paint('good', `yes: ${health.lines} lines, ${size(health.bytes ?? 0)}${health.tornBytes ? `, a torn last line of ${health.tornBytes} bytes left out` : ''}`) : paint('bad', `no: ${health.problem}`)]);
    rows.push(['lock', lockText(health.lock)]);
  } else {
    rows.push(['journal', `${health.kind === 'postgres' ? 'PostgreSQL' : 'MySQL'} ${health.url}, table ${health.table}`]);
    rows.push(['readable', health.readable ? paint('good', 'yes') : paint('bad', `no: ${health.problem}`)]);
  }
  if (seen !== undefined) {
    const pending = seen.pending.length;
    rows.push(['pending', pending === 0 ? '0 lines' : paint('notice', `${pending} line${pending === 1 ? '' : 's'}, oldest ${age(seen.oldestPendingMs)} (teamgames journal pending)`)]);
    const open = seen.openWindows.length;
    rows.push(['open windows', open === 0 ? '0' : paint('notice', `${open} to check (teamgames journal windows)`)]);
    rows.push(['resolved windows', String(seen.resolvedWindows.length)]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
}

const CAUSES: Record<JournalWindow['cause'], string> = { lostClaim: 'lost claim answer', claimMark: 'claim mark left', lostVote: 'lost vote answer' };

/** The cause column; a vote window also names the reward and the points unaccounted for. */
function causeText(w: JournalWindow): string {
  const cause = CAUSES[w.cause] ?? w.cause;
  if (w.cause !== 'lostVote') return cause;
  return `${cause} (reward ${w.reward ?? '?'}, ${w.points === undefined ? 'points unknown' : `${w.points} points`})`;
}

function windowsText(windows: readonly JournalWindow[], all: boolean, paint: Paint): string {
  if (windows.length === 0) return all ? 'No windows.\n' : `${paint('good', 'No open windows.')}\n`;
  const headers = ['window', 'player', 'from', 'to', 'cause', 'found', ...(all ? ['state', 'resolved by', 'resolved at', 'note'] : [])];
  return table(
    headers,
    windows.map((w) => [
      w.deliveryId,
      w.playerName,
      time(w.from),
      time(w.to),
      causeText(w),
      time(w.recordedAt),
      ...(all ? [w.state === 'unverified' ? 'open' : 'resolved', w.resolution?.by ?? '', w.resolution === undefined ? '' : time(w.resolution.at), w.resolution?.note ?? ''] : []),
    ]),
  );
}

function pendingText(seen: JournalInspection, paint: Paint): string {
  if (seen.pending.length === 0) return `${paint('good', 'Nothing pending.')}\n`;
  return table(
    ['player', 'product', 'units', 'state', 'age', 'attempts', 'last error', 'id'],
    seen.pending.map((p) => [
      p.playerName,
      p.item !== undefined ? `${p.item.product_id_string} (${p.item.product_name})` : p.reward !== undefined ? `vote reward ${p.reward.reward_id} (${p.reward.reward_name})` : '',
      p.item !== undefined ? String(p.item.quantity_to_grant) : p.reward !== undefined ? String(p.reward.give_amount) : '',
      p.state,
      age(p.ageMs),
      p.lastError === undefined ? '' : String(p.lastError.attempts),
      p.lastError === undefined ? '' : p.lastError.message.replace(/\s+/g, ' ').slice(0, 80),
      p.deliveryId,
    ]),
  );
}
