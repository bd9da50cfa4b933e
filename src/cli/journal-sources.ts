/**
 * The journals `teamgames journal` reads: a journal file (read beside a running bridge,
 * never locked, its lock inspected), a PostgreSQL or MySQL table (the drivers the user's
 * optional peers, imported only for `--postgres` / `--mysql`, every query bounded by
 * `--timeout`), each as one `Source`: its health, what it holds, resolving a window.
 *
 * @module
 */
import { stat } from 'node:fs/promises';
import { resolve as absolute } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { UsageError } from '../common/command-line.js';
import { inspectEntries, type JournalInspection } from '../delivery/inspect/index.js';
import { inspectJournal, resolveWindow, type ResolveWindowInput } from '../delivery/staff/index.js';
import { InvalidInputError } from '../errors.js';
import type { DeliveryJournal, JournalWindow } from '../journals/contract.js';
import { manyNames, realFile } from '../journals/file/files.js';
import { inspectLock, isLockTaken, type LockState } from '../journals/file/lock.js';
import { readFileSnapshot, type FileSnapshot } from '../journals/file/snapshot.js';
import { FileStore } from '../journals/file/store.js';
import { OWNER_ONLY, checkJournalPath, isRefusal, readerTrust } from '../journals/file/trust.js';
import { MemoryJournal } from '../journals/memory.js';
import { DEFAULT_TABLE, checkTableName, tableText } from '../journals/sql/common.js';
import { CommandFailure, checkUrl, oneLine, openDatabaseJournal, shownUrl, urlHoldsPassword, type JournalDeps } from '../host/databases.js';
import type { TeamgamesEnv } from '../host/io.js';
import { firstLineOf } from '../host/secrets.js';
import { BridgeUnreachable, bridgeTarget, type BridgeTarget, type ResolveArgs } from './journal-bridge.js';

export { CommandFailure, oneLine } from '../host/databases.js';

/** The journal's health, as `status` reports it (`--json`: as is). */
export type Health = FileHealth | { kind: 'postgres' | 'mysql'; url: string; table: string; readable: boolean; problem?: string };

/** A journal file's health: readable (size, lines, a torn tail left out) and who holds its lock. */
export interface FileHealth {
  kind: 'file';
  path: string;
  readable: boolean;
  problem?: string;
  bytes?: number;
  lines?: number;
  tornBytes?: number;
  lock: LockState | { state: 'unreadable'; problem: string } | { state: 'refused'; problem: string };
}

export type { ResolveArgs } from './journal-bridge.js';

/** One journal the command reads (and, for resolve, writes). */
export interface Source {
  /** What staff see and the journal's health; `seen` undefined (and `problem` set) when unreadable. */
  read(now: number): Promise<{ seen?: JournalInspection; health: Health; problem?: string }>;
  /** What staff see. @throws when the journal cannot be read. */
  inspect(now: number): Promise<JournalInspection>;
  /** Resolves the window (the player's, or the one with the id). @throws CommandFailure, UsageError, JournalError, WindowAlreadyResolvedError. */
  resolve(input: ResolveArgs, now: number): Promise<JournalWindow>;
  close(): Promise<void>;
}

/** The journal flags, as parsed. */
type SourceValues = Partial<Record<'file' | 'postgres' | 'postgres-env' | 'postgres-file' | 'mysql' | 'mysql-env' | 'mysql-file' | 'table' | 'timeout' | 'bridge', string>>;

const SOURCE_FLAGS = ['file', 'postgres', 'postgres-env', 'postgres-file', 'mysql', 'mysql-env', 'mysql-file'] as const;

/** How long a database command may take by default, in ms (`--timeout`). */
export const DEFAULT_DATABASE_TIMEOUT_MS = 15_000;
const MAX_DATABASE_TIMEOUT_MS = 600_000;

export async function openSource(values: SourceValues, env: TeamgamesEnv, deps: JournalDeps, warn: (message: string) => Promise<void>): Promise<Source> {
  const given = SOURCE_FLAGS.filter((name) => values[name] !== undefined);
  if (values.bridge !== undefined) {
    if (given.length > 0 && given[0] !== 'file') throw new UsageError(`--bridge goes with --file, or alone: a database journal (--${given[0]}) is resolved directly while the bridge runs`);
    if (values.table !== undefined) throw new UsageError('--table applies to --postgres and --mysql, not --bridge');
    if (values.file?.trim() === '') throw new UsageError('--file must not be blank');
    const bridge = await bridgeTarget(values.bridge, databaseTimeout(values.timeout), env, warn);
    return values.file === undefined ? bridgeSource(bridge) : fileSource(values.file, bridge);
  }
  if (given.length !== 1) throw new UsageError(given.length === 0 ? 'which journal? pass --file <path>, --postgres-env <VAR>, --postgres-file <path>, --mysql-env <VAR>, --mysql-file <path> (or --postgres <url>, --mysql <url>)' : `one journal at a time: got ${given.map((n) => `--${n}`).join(' and ')}`);
  if (values.file !== undefined) {
    if (values.table !== undefined) throw new UsageError('--table applies to --postgres and --mysql, not --file');
    if (values.timeout !== undefined) throw new UsageError('--timeout applies to a database journal, not --file');
    if (values.file.trim() === '') throw new UsageError('--file must not be blank');
    return fileSource(values.file);
  }
  const timeoutMs = databaseTimeout(values.timeout);
  const flag = given[0] as Exclude<(typeof SOURCE_FLAGS)[number], 'file'>;
  const url = await databaseUrl(flag, values[flag] as string, env);
  if ((flag === 'postgres' || flag === 'mysql') && urlHoldsPassword(url)) {
    await warn(`warning: the password in --${flag} can be read by every user of this machine (ps, /proc) while the command runs; pass the URL with --${flag}-env <VAR> or --${flag}-file <path> instead`);
  }
  if (flag.endsWith('-file') && urlHoldsPassword(url) && (await modeOf(values[flag] as string)) & 0o077) {
    await warn(`warning: ${values[flag]} holds a password and other users may read it; chmod 600 ${values[flag]}`);
  }
  return flag.startsWith('postgres') ? postgresSource(url, `--${flag}`, values.table, timeoutMs, deps) : mysqlSource(url, `--${flag}`, values.table, timeoutMs, deps);
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

/**
 * How long a resolve waits while another `teamgames journal resolve` of this host holds
 * the file (every one of a crowd of staff resolving at once learns who came first), in ms.
 */
const RESOLVE_WAIT_MS = 10_000;
/** How often it looks again meanwhile, in ms. */
const RESOLVE_POLL_MS = 50;
/**
 * A lock taken longer ago than this (by its holder's own `since`) is a bridge's, not a
 * resolve's (which holds it for one write): nothing to wait for. Wall clock, as `since`
 * is: a step only changes whether a lock is waited on, within RESOLVE_WAIT_MS.
 */
const FRESH_LOCK_MS = 30_000;

function fileSource(path: string, bridge?: BridgeTarget): Source {
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
      const started = performance.now();
      for (;;) {
        // The file must exist (a FileJournal would create it). What it already shows comes
        // first: a window resolved already (exit 7, whoever came first) or none to resolve.
        // The resolve is tried on a copy in memory; only an open window needs the lock.
        const snapshot = await readFileSnapshot(path);
        // A lock file another user could have planted is refused before anything else.
        const lock = await inspectLock(snapshot.realPath, readerTrust(), snapshot.dirOwner);
        const view = new MemoryJournal();
        await view.append(snapshot.entries);
        const target = await resolveIn(view, input, now);
        if (lock.state === 'held' && lock.running !== false) {
          if (bridge !== undefined) {
            // By the id this file holds: a bridge of another journal cannot resolve a window of its own instead.
            const done = await throughBridge(bridge, { ...input, windowId: target.deliveryId });
            if (done !== undefined) return done;
          }
          if (!mayWait(lock, started)) throw heldFailure(path, lock, bridge);
        } else {
          // No one holds it (or its holder died): staff take the lock and write as the bridge would.
          try {
            return await resolveDirect(path, input, now);
          } catch (error) {
            // Another process took the lock first (and maybe let it go already): the next round reads what it did.
            if (!isLockTaken(error) || performance.now() - started >= RESOLVE_WAIT_MS) throw cannotWrite(error, path);
          }
        }
        await delay(RESOLVE_POLL_MS);
      }
    },
    close: async () => {},
  };
}

/** Whether to wait for the holder of a file's lock: another live process of this host, which took it moments ago (a resolve, not the bridge). */
function mayWait(lock: Extract<LockState, { state: 'held' }>, started: number): boolean {
  const since = Date.parse(lock.since);
  return lock.running === true && lock.pid !== process.pid && performance.now() - started < RESOLVE_WAIT_MS && Number.isFinite(since) && Math.abs(Date.now() - since) < FRESH_LOCK_MS;
}

function heldFailure(path: string, lock: Extract<LockState, { state: 'held' }>, bridge: BridgeTarget | undefined): CommandFailure {
  const where = lock.running === undefined ? `on host ${lock.host} (another host: whether it runs cannot be told from here)` : `on this host (running)`;
  const todo =
    bridge === undefined
      ? 'Resolve through the bridge while it runs: add --bridge http://127.0.0.1:<port> (its listen address; its token read from TEAMGAMES_BRIDGE_TOKEN_FILE, as the bridge reads it), or stop the bridge and run this again'
      : `The bridge at ${bridge.url} did not answer (nothing was sent): check that it is the bridge holding this file, or stop the holder and run this again`;
  return new CommandFailure(`${path} is held by process ${lock.pid} ${where}, lock file ${lock.path}. The lock belongs to the bridge, so nothing was written. ${todo}`);
}

/** Through the bridge; `undefined` when nothing could be sent (the connection refused: not the bridge that holds the file). */
async function throughBridge(bridge: BridgeTarget, input: ResolveArgs): Promise<JournalWindow | undefined> {
  try {
    return await bridge.resolve(input);
  } catch (error) {
    if (error instanceof BridgeUnreachable && error.notSent) return undefined;
    throw error;
  }
}

/**
 * Resolves in the file itself, holding its lock: as root (or the bridge's user) on the
 * bridge's journal, the files are checked by the reader's rules and the lock is given to
 * the journal's owner (FileStore's `staff`), so the bridge can always open the journal again.
 */
async function resolveDirect(path: string, input: ResolveArgs, now: number): Promise<JournalWindow> {
  const journal = new FileStore(absolute(path), 1_000, true, OWNER_ONLY, true);
  try {
    return await resolveIn(journal, input, now);
  } finally {
    await journal.close();
  }
}

/** A write refused by the file system (staff in the journal's group may read it, not write it): what to do instead. */
function cannotWrite(error: unknown, path: string): unknown {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  if (code !== 'EACCES' && code !== 'EPERM') return error;
  return new CommandFailure(
    `${oneLine(error)}. Your user may read ${path} but not write beside it: resolve through the running bridge (--bridge http://127.0.0.1:<port>, its token from TEAMGAMES_BRIDGE_TOKEN_FILE), or as the bridge's user or root`,
  );
}

/** `resolve --bridge <url>` alone: the bridge resolves in its own journal, whichever it is. */
function bridgeSource(bridge: BridgeTarget): Source {
  const only = (): never => {
    throw new UsageError('--bridge applies to resolve');
  };
  return {
    read: only,
    inspect: only,
    resolve: (input) => bridge.resolve(input),
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

/** The journal's own check of a table name, as a usage error naming `--table`. */
function checkTable(table: string | undefined): string {
  try {
    // Stryker disable next-line StringLiteral: the name labels checkTableName's error, of which only the rule is said (below)
    return tableText(checkTableName(table ?? DEFAULT_TABLE, '--table'));
  } catch (error) {
    // checkTableName throws nothing else.
    throw new UsageError(`--table ${(error as InvalidInputError).rule}`);
  }
}

async function postgresSource(url: string, flag: string, table: string | undefined, timeoutMs: number, deps: JournalDeps): Promise<Source> {
  return databaseSource('postgres', url, flag, table, timeoutMs, deps);
}

async function mysqlSource(url: string, flag: string, table: string | undefined, timeoutMs: number, deps: JournalDeps): Promise<Source> {
  return databaseSource('mysql', url, flag, table, timeoutMs, deps);
}

async function databaseSource(kind: 'postgres' | 'mysql', url: string, flag: string, table: string | undefined, timeoutMs: number, deps: JournalDeps): Promise<Source> {
  checkUrl(url, flag, kind === 'postgres' ? ['postgres:', 'postgresql:'] : ['mysql:', 'mariadb:']);
  const name = checkTable(table);
  // Never creates the table: a database without one is reported, not changed.
  const { journal, end } = await openDatabaseJournal(kind, url, { origin: flag, table, timeoutMs, connections: 2, createTables: false }, deps);
  return sqlSource(kind, shownUrl(url), name, journal, timeoutMs, end);
}

/** The driver's "no such table" (or schema / database) under the journal's error. */
function missingTable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause !== undefined && ['42P01', '3F000', 'ER_NO_SUCH_TABLE', 'ER_BAD_DB_ERROR'].includes(String(cause.code));
}

/** The database did not answer within `--timeout` (exit 4). */
export class DatabaseTimeout extends CommandFailure {
  // Stryker disable next-line StringLiteral: the command tells a timeout by instanceof (exit 4, DATABASE_TIMEOUT); this name is printed nowhere
  override name = 'DatabaseTimeout';
}

// What the drivers throw when one of their own bounds ran out: PostgreSQL's statement and lock
// timeouts, pg's login and answer timeouts, mysql2's connect timeout, MySQL's lock and statement ones.
const TIMEOUT_CODES = new Set(['57014', '55P03', 'ETIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_LOCK_WAIT_TIMEOUT', 'ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT']);
const TIMEOUT_MESSAGE = /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout|Query read timeout)/;

function isDriverTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (TIMEOUT_CODES.has(String(code)) || TIMEOUT_MESSAGE.test(String(message))) return true;
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
    // The guard's own DatabaseTimeout has neither a driver's code nor its message: thrown as it is.
    if (isDriverTimeout(error)) throw new DatabaseTimeout(timeoutText(timeoutMs, oneLine(error)));
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
    // An undefined field is an absent one to resolveWindow (checkResolveInput).
    return await resolveWindow(journal, { playerName: player, windowId, by, note } as ResolveWindowInput, { now });
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new CommandFailure(player === undefined ? `no window ${windowId} in this journal (teamgames journal windows --all lists every window)` : `${player}: ${error.rule}`);
  }
}
