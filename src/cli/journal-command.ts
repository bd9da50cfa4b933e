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
import { stat } from 'node:fs/promises';
import { MemoryJournal } from '../journals/memory.js';
import { manyNames, realFile } from '../journals/file/files.js';
import { inspectLock, type LockState } from '../journals/file/lock.js';
import { checkJournalPath, isRefusal, readerTrust } from '../journals/file/trust.js';
import { readFileSnapshot, type FileSnapshot } from '../journals/file/snapshot.js';
import type { DeliveryJournal, JournalWindow } from '../journals/contract.js';
import { checkResolveInput, inspectEntries, inspectJournal, resolveWindow, type JournalInspection } from '../delivery/staff.js';
import { InvalidInputError, isStorefrontError, type WindowAlreadyResolvedError } from '../errors.js';
import { MySqlJournal, type MySqlPool } from '../journals/mysql/index.js';
import { PostgresJournal, type PgPool } from '../journals/postgres/index.js';
import { DEFAULT_TABLE, checkTableName, tableText } from '../journals/sql/common.js';
import { UsageError, parseCommandLine } from '../common/command-line.js';
import { writeText } from '../common/output.js';
import { EXIT, NO_SECRET, answer, apiKeyOf, firstLineOf, jsonText, keyRedactor, table, type JournalDeps, type Redact, type TeamgamesEnv, type TeamgamesIo } from './shared.js';
import { printable } from '../common/printable.js';

export type { JournalDeps } from './shared.js';
import { painter, type Paint, type Tone } from './terminal.js';

/** The text of `teamgames journal --help`. */
export const JOURNAL_USAGE = `Usage: teamgames journal <command> <journal> [options]

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
  resolve --window <id> --note <text> [--by <name>]
                                  closes an open window; it is kept as resolved (who,
                                  when, note). By the player's name (--window when they
                                  have several), or by the window's id alone (as windows
                                  lists it), whatever the player's name holds. --by
                                  defaults to your user name; --by at most 200
                                  characters, --note at most 2000 (newlines and tabs
                                  allowed), no control or bidi-override characters.
                                  One resolution per window: if someone resolved it
                                  first (another staff member, node or bridge, even at
                                  the same moment), nothing is written, and the command
                                  says who resolved it, when and their note (exit 7)

The journal (exactly one):
  --file <path>            a FileJournal file. Read without its lock while a bridge
                           holds it (nothing is changed). resolve needs the file free:
                           stop the bridge first, or resolve from the bridge itself
                           (resolveWindow in its admin command): the lock belongs to
                           the bridge. A window already resolved is said at once
                           (exit 7), held or not
  --postgres-env <VAR>     a PostgresJournal's database, its URL read from the
                           environment variable VAR (needs the pg package)
  --postgres-file <path>   the same, the URL read from the first line of a file
  --mysql-env <VAR>        a MySqlJournal's database, MySQL or MariaDB (needs mysql2)
  --mysql-file <path>      the same, the URL read from a file
  --postgres <url>         the URL itself. Every user of the machine can read a command
  --mysql <url>            line (ps): a password in it is warned about on stderr; use
                           the -env or -file form
  --table <name>           the database journal's table (default teamgames_deliveries)
  --timeout <ms>           how long the database may take to connect and to answer each
                           step (default 15000); a server that accepts the connection
                           and then never answers, or a lock held on the table, ends the
                           command with exit 4

Options:
  --json              print one JSON document (for scripts)
  -h, --help          show this help

Nothing is created: a missing file or a database without the journal's table is
reported, not made.

A journal file is read only if it is the bridge's own, by the rules the bridge itself
applies (anything else may have been planted by another local user, and is refused
with exit 1 before it is read, saying the path, the owner's uid, the mode and what to
do): the file and its lock belong to you, root, or the owner of the journal's
directory (the bridge's user, when staff read a mode 0640 journal as their own user),
and neither is writable by group or others; every symbolic link on the way belongs to
you, root or the owner of the folder it sits in; every directory from the journal's up
to / belongs to one of those users and is not writable by group or others unless it
has the sticky bit (as /tmp); the file has one name (a hard link is refused, as the
bridge refuses it: its lock could be beside any of its names).

What is printed is safe to look at: in tables and lines, every control character
(C0 such as ESC and newline, DEL, C1), bidi control (U+061C, U+200E, U+200F,
U+202A-U+202E, U+2066-U+2069) and other invisible character (zero-width spaces and
joiners, U+FEFF, U+2028, U+2029, a lone surrogate) that a record, a lock file, a
database row or an error holds is shown as \\u and its code in hex: \\u001b for ESC,
\\u000a for a newline (\\u{e0001} above U+FFFF), and a backslash as \\\\. One record
is one row. --json keeps the exact values (valid JSON, the same characters as \\u
escapes). A database URL is printed with its password and secret parameters
(password=, sslpassword=, …) as ***; with TEAMGAMES_API_KEY set, the key (raw, Base64,
URL-encoded) is shown as <redacted> wherever a record holds it (also with
TEAMGAMES_API_KEY_FILE).

Exit codes:
  0  done
  1  failure: the journal cannot be read (missing, damaged, no table, no driver), the
     player has no window (or not the one given), no window has the id given, the file
     is held by a bridge, or the file or its lock is refused as not the bridge's own
     (see below)
  2  usage: unknown option, missing or bad argument (a --note or --by too long or with
     control characters), not exactly one journal, an unset variable or unreadable file
     for the URL
  4  the database did not answer within --timeout (connecting, logging in, or a
     statement: a silent server, a lock held on the table); a resolve that timed out
     may or may not be written: run windows --all
  6  the answer could not be written to stdout: it was written to stderr instead, after
     one line saying so (a resolve in it took effect)
  7  resolve: the window was already resolved; nothing was written, and stderr says
     who resolved it, when and their note (--json: WINDOW_ALREADY_RESOLVED, with the
     window's resolution)
`;

const OPTIONS = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  all: { type: 'boolean', default: false },
  file: { type: 'string' },
  postgres: { type: 'string' },
  'postgres-env': { type: 'string' },
  'postgres-file': { type: 'string' },
  mysql: { type: 'string' },
  'mysql-env': { type: 'string' },
  'mysql-file': { type: 'string' },
  table: { type: 'string' },
  timeout: { type: 'string' },
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
  // The store may have echoed the key into what the bridge journaled: never printed. The
  // command needs no key: one that cannot be read only means there is none to hide.
  const apiKey = await apiKeyOf(env).catch(() => undefined);
  const redact: Redact = apiKey === undefined ? NO_SECRET : keyRedactor(apiKey);
  try {
    const { values, positionals } = parseCommandLine({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    json = values.json;
    if (values.help) return await answer(io, '', false, JOURNAL_USAGE, () => JOURNAL_USAGE, paintOut, paintErr);
    const [command, ...args] = positionals;
    if (command === undefined) throw new UsageError(`missing command (${NAMES})`);
    const spec = COMMANDS[command];
    if (spec === undefined) throw new UsageError(`unknown command "${command}" (${NAMES})`);
    const label = `journal ${command}`;
    // resolve takes the window by its id alone, without <player>.
    const needed = command === 'resolve' && values.window !== undefined ? 0 : spec.args.length;
    if (args.length < needed) throw new UsageError(`missing <${spec.args[args.length]}>${command === 'resolve' ? ' (or --window <id>)' : ''}`);
    if (args.length > spec.args.length) throw new UsageError(`unexpected argument "${args[spec.args.length]}"`);
    for (const option of ONLY_FOR) {
      if (values[option] !== undefined && values[option] !== false && !spec.options.includes(option)) throw new UsageError(`--${option} does not apply to this command`);
    }
    let resolving: { player: string | undefined; windowId: string | undefined; by: string; note: string } | undefined;
    if (command === 'resolve') {
      if (values.note === undefined || values.note.trim() === '') throw new UsageError('--note <text> is required (what was found and done)');
      if (values.by !== undefined && values.by.trim() === '') throw new UsageError('--by must not be blank');
      resolving = checkedResolve(args[0], values.window, values.by ?? defaultUser(deps), values.note);
    }
    const now = deps.now ?? Date.now;
    source = await openSource(values, env, deps, (message) => fail(io, json, `journal: ${message}`, paintErr, 'PASSWORD_ON_COMMAND_LINE', false, redact, 'warning'));
    const print = (value: unknown, human: (paint: Paint) => string) => answer(io, `${label}: `, json, value, human, paintOut, paintErr, redact);

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
        await fail(io, json, `journal: ${read.problem}`, paintErr, 'JOURNAL_FAILED', false, redact);
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
        const resolved = await source.resolve(resolving as NonNullable<typeof resolving>, now());
        const { by, note } = resolved.resolution as NonNullable<JournalWindow['resolution']>;
        return await print(resolved, (paint) => `${paint('good', 'Resolved')} ${printable(resolved.deliveryId)} of ${printable(resolved.playerName)} (${time(resolved.from)} to ${time(resolved.to)}) by ${printable(by)}: ${printable(note)}\n`);
      }
    }
    throw new UsageError(`unknown command "${command}" (${NAMES})`);
  } catch (error) {
    if (isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')) {
      await fail(io, json, `journal: ${alreadyResolvedText(error)}`, paintErr, error.code, false, redact, 'error', { windowId: error.windowId, playerName: error.playerName, resolution: error.resolution });
      return EXIT.ALREADY_RESOLVED;
    }
    const code = error instanceof UsageError ? EXIT.USAGE : error instanceof DatabaseTimeout ? EXIT.NETWORK : EXIT.FAILURE;
    const message = `journal: ${oneLine(error)}`;
    const name = code === EXIT.USAGE ? 'USAGE' : code === EXIT.NETWORK ? 'DATABASE_TIMEOUT' : isStorefrontError(error) ? error.code : 'FAILURE';
    await fail(io, json, message, paintErr, name, code === EXIT.USAGE, redact);
    return code;
  } finally {
    await source?.close().catch(() => undefined);
  }
}

/**
 * One line on stderr: `teamgames journal: …` (printable: whatever a record or a driver put
 * in the message), or with `--json` a JSON line `{ error, message, …more }` (`{ warning, message }`).
 */
async function fail(io: TeamgamesIo, json: boolean, message: string, paint: Paint, code: string, usage: boolean, redact: Redact, kind: 'error' | 'warning' = 'error', more: object = {}): Promise<void> {
  const text = redact(message);
  await writeText(
    io.stderr,
    json ? `${jsonText({ [kind]: code, message: text, ...more }, NO_SECRET)}\n` : `${kind === 'error' ? paint('bad', `teamgames ${printable(text)}`) : `teamgames ${printable(text)}`}${usage ? ' (see teamgames journal --help)' : ''}\n`,
  );
}

/** What the second resolver reads: who came first, when, and their note, on one line (fail makes it printable). */
function alreadyResolvedText(error: WindowAlreadyResolvedError): string {
  const { by, at, note } = error.resolution;
  // A note written before the bounds (or by another tool) may be huge: --json has it whole.
  const cut = note.length > 2_000 ? `${note.slice(0, 2_000)}… (${note.length - 2_000} more characters: --json shows them)` : note;
  return `${error.windowId} of ${error.playerName} was already resolved by ${by.slice(0, 200)} at ${time(at)}: ${cut}. Nothing was written: the first resolution stands`;
}

/**
 * The resolve's arguments checked by the SDK's own rules before the journal is opened,
 * each refusal a usage error naming the flag (nothing is written).
 */
function checkedResolve(player: string | undefined, windowId: string | undefined, by: string, note: string): { player: string | undefined; windowId: string | undefined; by: string; note: string } {
  const flags: Record<string, string> = { 'input.playerName': '<player>', 'input.windowId': '--window', 'input.by': '--by', 'input.note': '--note' };
  try {
    return checkResolveInput({ ...(player === undefined ? {} : { playerName: player }), ...(windowId === undefined ? {} : { windowId }), by, note });
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const hint = error.argument === 'input.playerName' ? '; resolve the window by its id instead: --window <id> (teamgames journal windows lists the ids)' : '';
    throw new UsageError(`invalid ${flags[error.argument] ?? error.argument}: ${error.rule}${hint}`);
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim().replace(URL_PASSWORD, '$1***@');
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
  lock: LockState | { state: 'unreadable'; problem: string } | { state: 'refused'; problem: string };
}

/** What `resolve` was asked: the player, the window's id, or both; who; the note. */
interface ResolveArgs {
  player: string | undefined;
  windowId: string | undefined;
  by: string;
  note: string;
}

/** One journal the command reads (and, for resolve, writes). */
interface Source {
  /** What staff see and the journal's health; `seen` undefined (and `problem` set) when unreadable. */
  read(now: number): Promise<{ seen?: JournalInspection; health: Health; problem?: string }>;
  /** What staff see. @throws when the journal cannot be read. */
  inspect(now: number): Promise<JournalInspection>;
  /** Resolves the window (the player's, or the one with the id). @throws CommandFailure, UsageError, JournalError, WindowAlreadyResolvedError. */
  resolve(input: ResolveArgs, now: number): Promise<JournalWindow>;
  close(): Promise<void>;
}

/** The journal flags, as parsed. */
type SourceValues = Partial<Record<'file' | 'postgres' | 'postgres-env' | 'postgres-file' | 'mysql' | 'mysql-env' | 'mysql-file' | 'table' | 'timeout', string>>;

const SOURCE_FLAGS = ['file', 'postgres', 'postgres-env', 'postgres-file', 'mysql', 'mysql-env', 'mysql-file'] as const;

/** How long a database command may take by default, in ms (`--timeout`). */
export const DEFAULT_DATABASE_TIMEOUT_MS = 15_000;
const MAX_DATABASE_TIMEOUT_MS = 600_000;

async function openSource(values: SourceValues, env: TeamgamesEnv, deps: JournalDeps, warn: (message: string) => Promise<void>): Promise<Source> {
  const given = SOURCE_FLAGS.filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new UsageError(given.length === 0 ? 'which journal? pass --file <path>, --postgres-env <VAR>, --postgres-file <path>, --mysql-env <VAR>, --mysql-file <path> (or --postgres <url>, --mysql <url>)' : `one journal at a time: got ${given.map((n) => `--${n}`).join(' and ')}`);
  if (values.file !== undefined) {
    if (values.table !== undefined) throw new UsageError('--table applies to --postgres and --mysql, not --file');
    if (values.timeout !== undefined) throw new UsageError('--timeout applies to a database journal, not --file');
    if (values.file.trim() === '') throw new UsageError('--file must not be blank');
    return fileSource(values.file);
  }
  const timeoutMs = databaseTimeout(values.timeout);
  const flag = given[0] as Exclude<(typeof SOURCE_FLAGS)[number], 'file'>;
  const engine = flag.startsWith('postgres') ? 'postgres' : 'mysql';
  const url = await databaseUrl(flag, values[flag] as string, env);
  if ((flag === 'postgres' || flag === 'mysql') && urlHoldsPassword(url)) {
    await warn(`warning: the password in --${flag} can be read by every user of this machine (ps, /proc) while the command runs; pass the URL with --${flag}-env <VAR> or --${flag}-file <path> instead`);
  }
  if (flag.endsWith('-file') && urlHoldsPassword(url) && (await modeOf(values[flag] as string)) & 0o077) {
    await warn(`warning: ${values[flag]} holds a password and other users may read it; chmod 600 ${values[flag]}`);
  }
  return engine === 'postgres' ? postgresSource(url, `--${flag}`, values.table, timeoutMs, deps) : mysqlSource(url, `--${flag}`, values.table, timeoutMs, deps);
}

async function modeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).mode;
  } catch {
    return 0;
  }
}

function databaseTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_DATABASE_TIMEOUT_MS;
  if (!/^[1-9]\d*$/.test(text) || Number(text) > MAX_DATABASE_TIMEOUT_MS) throw new UsageError(`--timeout must be a whole number of milliseconds from 1 to ${MAX_DATABASE_TIMEOUT_MS}, got "${text}"`);
  return Number(text);
}

/** The database URL: given (`--postgres`), or read from an environment variable or a file, so no password is on the command line. */
async function databaseUrl(flag: string, value: string, env: TeamgamesEnv): Promise<string> {
  if (flag.endsWith('-env')) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) throw new UsageError(`--${flag} takes the name of an environment variable (DATABASE_URL), got "${value}"`);
    const url = env[value]?.trim() ?? '';
    if (url === '') throw new UsageError(`--${flag}: the environment variable ${value} is not set`);
    return url;
  }
  if (flag.endsWith('-file')) {
    if (value.trim() === '') throw new UsageError(`--${flag} must not be blank`);
    // The first line: a file written with echo ends with a newline.
    const url = await firstLineOf(value, `--${flag}`);
    if (url === '') throw new UsageError(`--${flag}: ${value} holds no URL`);
    return url;
  }
  return value;
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
      const lock = await lockOf(path, snapshot);
      const health: FileHealth = { kind: 'file', path, readable: true, bytes: snapshot.bytes, lines: snapshot.lines, tornBytes: snapshot.tornBytes, lock };
      // A lock file another user could have planted fails the command, as a planted journal does.
      return { seen: inspectEntries(snapshot.entries, now), health, ...(lock.state === 'refused' ? { problem: lock.problem } : {}) };
    },
    async inspect(now) {
      // A consistent read of the file as it is: no lock taken, nothing changed.
      const snapshot = await readFileSnapshot(path);
      return inspectEntries(snapshot.entries, now);
    },
    async resolve(input, now) {
      // The file must exist (a FileJournal would create it), and no live process hold it.
      const snapshot = await readFileSnapshot(path);
      const lock = await inspectLock(snapshot.realPath, readerTrust(), snapshot.dirOwner);
      if (lock.state === 'held' && lock.running !== false) {
        // What the file already shows comes first: a window resolved already (exit 7, as
        // when the bridge's admin command came first) or none to resolve. The resolve is
        // tried on a copy in memory; only an open window needs the bridge's lock.
        const view = new MemoryJournal();
        await view.append(snapshot.entries);
        await resolveIn(view, input, now);
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

/**
 * Who holds the file's lock, read without touching it, by the reader's rules (a lock file
 * another user could have planted is `refused`). A file with several names is `refused`
 * too: its lock could be beside any of them, so "free" could be false.
 */
async function lockOf(path: string, snapshot?: FileSnapshot): Promise<FileHealth['lock']> {
  try {
    const trust = readerTrust();
    const real = snapshot?.realPath ?? (await realFile(path, trust));
    const dirOwner = snapshot === undefined ? (await checkJournalPath(real, path, trust)).dirOwner : snapshot.dirOwner;
    const names = (await stat(real).catch(() => undefined))?.nlink ?? 1;
    if (names > 1) throw manyNames(path, names);
    return await inspectLock(real, trust, dirOwner);
  } catch (error) {
    return { state: isRefusal(error) ? 'refused' : 'unreadable', problem: oneLine(error) };
  }
}

/** What `pg` and `mysql2/promise` export that the command uses. */
interface PgModule {
  Pool: new (config: { connectionString: string; max: number; connectionTimeoutMillis: number; query_timeout: number }) => PgPool & {
    end(): Promise<void>;
    on(event: 'error', listener: () => void): unknown;
    on(event: 'connect', listener: (client: { query(sql: string): Promise<unknown> }) => void): unknown;
  };
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

// Query parameters that carry a secret (`password`, `sslpassword`, `passwd`, `pwd`, an
// auth token…), masked like the user-info password.
const SECRET_PARAMETER = /pass|pwd|secret|token/i;

/** The URL's secrets: its user-info password and the values of its secret parameters. */
function urlSecrets(url: URL): string[] {
  const secrets = url.password === '' ? [] : [url.password];
  url.searchParams.forEach((value, name) => {
    if (SECRET_PARAMETER.test(name) && value !== '') secrets.push(value);
  });
  return secrets;
}

function urlHoldsPassword(url: string): boolean {
  try {
    return urlSecrets(new URL(url)).length > 0;
  } catch {
    return false;
  }
}

/** The URL as printed: the user-info password and every secret parameter's value shown as `***`. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const name of [...new Set(parsed.searchParams.keys())]) {
      if (SECRET_PARAMETER.test(name)) parsed.searchParams.set(name, '***');
    }
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

// `scheme://user:password@`, anywhere in a driver's message: the password masked.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:)[^\s@/]*@/gi;

function checkUrl(url: string, flag: string, schemes: readonly string[]): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new UsageError(`${flag} must be a URL (${schemes[0]}//user@host:port/database), got something else`);
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

async function postgresSource(url: string, flag: string, table: string | undefined, timeoutMs: number, deps: JournalDeps): Promise<Source> {
  checkUrl(url, flag, ['postgres:', 'postgresql:']);
  const name = checkTable(table);
  const pg = await loadDriver<PgModule>(deps, flag, 'pg', 'pg');
  // Every wait bounded: the connection and login, each statement on the server (a lock held
  // by another session included), and each answer on the client (a server that went silent).
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // An idle connection the server ends must not end the command with an unhandled error.
  pool.on('error', () => undefined);
  // The server's own bound, so that it stops waiting too (a statement behind a lock). Set
  // once connected, queued before any statement of the journal; not as a startup
  // parameter, which PgBouncer refuses by default.
  pool.on('connect', (client) => void client.query(`SET statement_timeout = ${timeoutMs}`).catch(() => undefined));
  // Never creates the table: a database without one is reported, not changed.
  const journal = new PostgresJournal(pool, { ...tableOption(table), createTables: false });
  return sqlSource('postgres', shownUrl(url), name, journal, timeoutMs, () => pool.end());
}

async function mysqlSource(url: string, flag: string, table: string | undefined, timeoutMs: number, deps: JournalDeps): Promise<Source> {
  checkUrl(url, flag, ['mysql:', 'mariadb:']);
  const name = checkTable(table);
  const mysql = await loadDriver<MySqlModule>(deps, flag, 'mysql2/promise', 'mysql2');
  // mysql2 bounds the connection and login; nothing bounds a statement but the command's guard.
  const pool = mysql.createPool({ uri: url.replace(/^mariadb:/, 'mysql:'), connectionLimit: 2, connectTimeout: timeoutMs });
  const journal = new MySqlJournal(pool, { ...tableOption(table), createTables: false });
  return sqlSource('mysql', shownUrl(url), name, journal, timeoutMs, () => pool.end());
}

/** The driver's "no such table" (or schema / database) under the journal's error. */
function missingTable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause !== undefined && ['42P01', '3F000', 'ER_NO_SUCH_TABLE', 'ER_BAD_DB_ERROR'].includes(String(cause.code));
}

/** The database did not answer within `--timeout` (exit 4). */
class DatabaseTimeout extends CommandFailure {
  override name = 'DatabaseTimeout';
}

// What the drivers throw when one of their own bounds ran out: PostgreSQL's statement and lock
// timeouts, pg's login and answer timeouts, mysql2's connect timeout, MySQL's lock and statement ones.
const TIMEOUT_CODES = new Set(['57014', '55P03', 'ETIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_LOCK_WAIT_TIMEOUT', 'ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT']);
const TIMEOUT_MESSAGE = /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout|Query read timeout)/;

function isDriverTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (TIMEOUT_CODES.has(String(code)) || (typeof message === 'string' && TIMEOUT_MESSAGE.test(message))) return true;
  }
  return false;
}

function timeoutText(timeoutMs: number, detail?: string): string {
  return `the database did not answer within ${timeoutMs} ms (--timeout)${detail === undefined ? '' : `: ${detail}`}. Check that the server is up and that no session holds a lock on the journal's table; a resolve may or may not have been written (teamgames journal windows --all)`;
}

/**
 * Runs `work` under the command's overall bound: whatever the driver does (a server that
 * accepted the login and then went silent, a lock held elsewhere), the command ends.
 */
async function bounded<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // A little after the drivers' own bounds, so that theirs (which also free the server) fire first.
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeout(timeoutText(timeoutMs))), timeoutMs + 1_000);
  });
  try {
    return await Promise.race([work(), guard]);
  } catch (error) {
    if (!(error instanceof DatabaseTimeout) && isDriverTimeout(error)) throw new DatabaseTimeout(timeoutText(timeoutMs, oneLine(error)));
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function sqlSource(kind: 'postgres' | 'mysql', url: string, table: string, journal: DeliveryJournal, timeoutMs: number, end: () => Promise<void>): Source {
  const noTable = () => new CommandFailure(`no journal table ${table} in this database (nothing was created). A bridge creates it on first use; check the URL and --table`);
  // Every record validated like any read: a row changed outside the SDK is damage, never listed.
  const inspect = (now: number): Promise<JournalInspection> =>
    bounded(async () => {
      try {
        return await inspectJournal(journal, { now });
      } catch (error) {
        if (missingTable(error)) throw noTable();
        throw error;
      }
    }, timeoutMs);
  return {
    async read(now) {
      try {
        return { seen: await inspect(now), health: { kind, url, table, readable: true } };
      } catch (error) {
        // A silent server is not a verdict on the journal: the command fails with exit 4.
        if (error instanceof DatabaseTimeout) throw error;
        const problem = oneLine(error);
        return { problem, health: { kind, url, table, readable: false, problem } };
      }
    },
    inspect,
    async resolve(input, now) {
      await inspect(now);
      return bounded(() => resolveIn(journal, input, now), timeoutMs);
    },
    // Ending a pool waits for its connections: bounded too, the process exits regardless.
    close: () => bounded(end, 0).catch(() => undefined),
  };
}

/**
 * Says which windows the player has when the one asked for is not there, then resolves
 * through the SDK's call, which is compare-and-set: a window resolved first (by anyone,
 * at any moment up to the write) is a WindowAlreadyResolvedError, nothing written.
 */
async function resolveIn(journal: DeliveryJournal, input: ResolveArgs, now: number): Promise<JournalWindow> {
  const { player, windowId, by, note } = input;
  if (player !== undefined) {
    const seen = await inspectJournal(journal, { playerName: player, now });
    const open = seen.openWindows.map((w) => w.deliveryId);
    const known = [...open, ...seen.resolvedWindows.map((w) => w.deliveryId)];
    const ids = open.length === 0 ? 'none is open' : `open: ${open.join(', ')}`;
    if (windowId === undefined && open.length > 1) throw new UsageError(`${player} has ${open.length} open windows (${open.join(', ')}): pass --window <id>`);
    if (windowId === undefined && known.length === 0) throw new CommandFailure(`${player} has no open window (teamgames journal windows --all lists every window)`);
    if (windowId !== undefined && !known.includes(windowId)) throw new CommandFailure(`${player} has no window ${windowId}; ${ids}`);
  }
  try {
    return await resolveWindow(journal, { ...(player === undefined ? {} : { playerName: player }), ...(windowId === undefined ? {} : { windowId }), by, note }, { now });
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new CommandFailure(player === undefined ? `no window ${windowId} in this journal (teamgames journal windows --all lists every window)` : `${player}: ${error.rule}`);
  }
}

// ----------------------------------------------------------------- output

// The last instant a Date can hold (year 275760): a record's time beyond it cannot be a date.
const LAST_DATE_MS = 8.64e15;

/**
 * `2026-01-01 00:00:00Z`: UTC to the second. A time no clock could have written (before
 * 1970, beyond year 275760, not a number) is shown as it is, the raw epoch ms, so one
 * absurd record neither hides the others nor passes for a date.
 */
function time(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0 || ms > LAST_DATE_MS) return `${ms} (not a time)`;
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

/** The lock file's fields as printed: whatever it holds, escaped. */
function lockText(lock: FileHealth['lock']): string {
  return printable(lockWords(lock));
}

function lockWords(lock: FileHealth['lock']): string {
  switch (lock.state) {
    case 'free':
      return 'free (no bridge holds the file)';
    case 'unknown':
      return `${lock.path} does not name its holder`;
    case 'unreadable':
      return `unknown: ${lock.problem}`;
    case 'refused':
      return `refused: ${lock.problem}`;
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
    rows.push(['journal', `file ${printable(health.path)}`]);
    rows.push(['readable', health.readable ? paint('good', `yes: ${health.lines} lines, ${size(health.bytes ?? 0)}${health.tornBytes ? `, a torn last line of ${health.tornBytes} bytes left out` : ''}`) : paint('bad', `no: ${printable(health.problem ?? '')}`)]);
    rows.push(['lock', lockText(health.lock)]);
  } else {
    rows.push(['journal', `${health.kind === 'postgres' ? 'PostgreSQL' : 'MySQL'} ${printable(health.url)}, table ${printable(health.table)}`]);
    rows.push(['readable', health.readable ? paint('good', 'yes') : paint('bad', `no: ${printable(health.problem ?? '')}`)]);
  }
  if (seen !== undefined) {
    const pending = seen.pending.length;
    rows.push(['pending', pending === 0 ? '0 lines' : paint('notice', `${pending} line${pending === 1 ? '' : 's'}, oldest ${age(seen.oldestPendingMs)} (teamgames journal pending)`)]);
    const open = seen.openWindows.length;
    rows.push(['open windows', open === 0 ? '0' : paint('notice', `${open} to check (teamgames journal windows)`)]);
    rows.push(['resolved windows', String(seen.resolvedWindows.length)]);
  }
  const width = rows.reduce((w, [k]) => Math.max(w, k.length), 0);
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
