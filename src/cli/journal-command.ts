/**
 * `teamgames journal`: what a delivery journal holds for staff (lines still to grant,
 * unverified windows), on a journal file or a shared database, and closing a window once
 * it is handled. Loaded by `teamgames` only for this command; the database drivers are
 * the user's optional peers, imported only for `--postgres` / `--mysql`.
 *
 * @module
 */
import { userInfo } from 'node:os';
import type { JournalWindow } from '../journals/contract.js';
import { checkResolveInput } from '../delivery/staff/index.js';
import { isStorefrontError, type InvalidInputError } from '../errors.js';
import { UsageError, parseCommandLine } from '../common/command-line.js';
import { writeText } from '../common/output.js';
import type { JournalDeps } from '../host/databases.js';
import type { TeamgamesEnv, TeamgamesIo } from '../host/io.js';
import { NO_SECRET, keyRedactor, type Redact } from '../host/redact.js';
import { apiKeyOf, firstLineOf } from '../host/secrets.js';
import { EXIT, answer, jsonText, table } from './shared.js';
import { printable } from '../common/printable.js';
import { painter, type Paint } from './terminal.js';
import { alreadyResolvedText, pendingText, statusText, time, windowsText } from './journal-print.js';
import { DatabaseTimeout, oneLine, openSource, type Source } from './journal-sources.js';
import { BridgeUnreachable } from './journal-bridge.js';

export type { JournalDeps } from '../host/databases.js';

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
                                  attempts (with "(stuck)" once the delivery loop marked
                                  the item for staff) and the last grant error
  resolve <player> --note <text> [--window <id>] [--by <name>] [--bridge <url>]
  resolve --window <id> --note <text> [--by <name>] [--bridge <url>]
                                  closes an open window; it is kept as resolved (who,
                                  when, note). By the player's name (--window when they
                                  have several), or by the window's id alone (as windows
                                  lists it), whatever the player's name holds. --by
                                  defaults to your user name; --by at most 200
                                  characters, --note at most 2000 (newlines and tabs
                                  allowed), no control or bidi-override characters.
                                  One resolution per window, on every journal: if
                                  someone resolved it first (another staff member, node
                                  or bridge, even at the same moment), nothing is
                                  written, and the command says who resolved it, when
                                  and their note (exit 7)

The journal (exactly one):
  --file <path>            a FileJournal file. Read without its lock while a bridge
                           holds it (nothing is changed). resolve writes the file
                           itself when no bridge holds it (as root on the bridge's
                           journal too: the lock it takes is given to the journal's
                           owner, so nothing is left to root), and goes through the
                           bridge while the bridge holds it (add --bridge <url>;
                           without it, exit 1 saying so). A window already resolved
                           is said at once (exit 7), held or not; another resolve
                           holding the file for a moment is waited for (at most 10 s)
  --bridge <url>           resolve only: through a running bridge's HTTP API
                           (http://127.0.0.1:8787, its listen address), which
                           resolves in its own journal, any kind. Alone, or with
                           --file (then only when the bridge holds the file). The
                           bridge's token is read as the bridge reads it:
                           TEAMGAMES_BRIDGE_TOKEN_FILE (a file other users may not
                           read) or TEAMGAMES_BRIDGE_TOKEN, never the command line.
                           Staff in the journal's group, who may read the file but
                           not write beside it, resolve this way
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
                           command with exit 4. With --bridge: how long the bridge may
                           take to answer (default 15000)

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
bridge refuses it: its lock could be beside any of its names). resolve writing the file
itself follows only links of yours or root's (give the journal's real path).

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
TEAMGAMES_API_KEY_FILE; a key file other users may read, which is no credential, is still
read to hide what it holds, with one warning saying so: KEY_FILE_REFUSED with --json).

Exit codes:
  0  done
  1  failure: the journal cannot be read (missing, damaged, no table, no driver), the
     player has no window (or not the one given), no window has the id given, the file
     is held by a bridge and no --bridge was given, your user cannot write beside the
     file (resolve through --bridge), the bridge refused the token or did not resolve,
     or the file or its lock is refused as not the bridge's own (see below)
  2  usage: unknown option, missing or bad argument (a --note or --by too long or with
     control characters), not exactly one journal, an unset variable or unreadable file
     for the URL
  4  the database did not answer within --timeout (connecting, logging in, or a
     statement: a silent server, a lock held on the table), or the bridge (--bridge)
     could not be reached (nothing was sent) or did not answer within --timeout; a
     resolve that timed out may or may not be written: run windows --all
  6  the answer could not be written to stdout: it was written to stderr instead, after
     one line saying so (a resolve in it took effect)
  7  resolve: the window was already resolved (before, or by another staff member's
     resolve at the same moment, on a file, a database or through the bridge); nothing
     was written, and stderr says who resolved it, when and their note (--json:
     WINDOW_ALREADY_RESOLVED, with the window's resolution)
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
  bridge: { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;

/** The commands, their arguments and the options only they take. */
const COMMANDS: Record<string, { args: string[]; options: OptionName[] }> = {
  status: { args: [], options: [] },
  windows: { args: [], options: ['all'] },
  pending: { args: [], options: [] },
  resolve: { args: ['player'], options: ['window', 'note', 'by', 'bridge'] },
};
const ONLY_FOR: readonly OptionName[] = ['all', 'window', 'note', 'by', 'bridge'];
const NAMES = 'status, windows, pending or resolve';



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
  const { apiKey, refused } = await keyToHide(env);
  const redact: Redact = apiKey === undefined ? NO_SECRET : keyRedactor(apiKey);
  try {
    const { values, positionals } = parseCommandLine({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: true });
    json = values.json;
    if (values.help) return await answer(io, '', false, JOURNAL_USAGE, () => JOURNAL_USAGE, paintOut, paintErr);
    if (refused !== undefined) {
      await fail(io, json, `journal: warning: ${refused}; it is not used as a credential, and what it holds is still shown as <redacted> wherever a record holds it`, paintErr, 'KEY_FILE_REFUSED', false, redact, 'warning');
    }
    const [command, ...args] = positionals;
    if (command === undefined) throw new UsageError(`missing command (${NAMES})`);
    const spec = COMMANDS[command];
    if (spec === undefined) throw new UsageError(`unknown command "${command}" (${NAMES})`);
    const label = `journal ${command}`;
    // resolve takes the window by its id alone, without <player> (no other command takes an argument).
    const needed = values.window !== undefined ? 0 : spec.args.length;
    // Only resolve takes an argument, its <player>, which --window stands for.
    if (args.length < needed) throw new UsageError(`missing <${spec.args[args.length]}> (or --window <id>)`);
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
      default: {
        // resolve: COMMANDS has no other command.
        const resolved = await source.resolve(resolving as NonNullable<typeof resolving>, now());
        const { by, note } = resolved.resolution as NonNullable<JournalWindow['resolution']>;
        return await print(resolved, (paint) => `${paint('good', 'Resolved')} ${printable(resolved.deliveryId)} of ${printable(resolved.playerName)} (${time(resolved.from)} to ${time(resolved.to)}) by ${printable(by)}: ${printable(note)}\n`);
      }
    }
  } catch (error) {
    if (isStorefrontError(error, 'WINDOW_ALREADY_RESOLVED')) {
      await fail(io, json, `journal: ${alreadyResolvedText(error)}`, paintErr, error.code, false, redact, 'error', { windowId: error.windowId, playerName: error.playerName, resolution: error.resolution });
      return EXIT.ALREADY_RESOLVED;
    }
    const code = error instanceof UsageError ? EXIT.USAGE : error instanceof DatabaseTimeout || error instanceof BridgeUnreachable ? EXIT.NETWORK : EXIT.FAILURE;
    const message = `journal: ${oneLine(error)}`;
    const name = code === EXIT.USAGE ? 'USAGE' : error instanceof BridgeUnreachable ? 'BRIDGE_UNREACHABLE' : code === EXIT.NETWORK ? 'DATABASE_TIMEOUT' : isStorefrontError(error) ? error.code : 'FAILURE';
    await fail(io, json, message, paintErr, name, code === EXIT.USAGE, redact);
    return code;
  } finally {
    await source?.close().catch(() => undefined);
  }
}

/**
 * The API key to hide from what is printed. A key file refused as a credential (other
 * users may read it) still holds the key, maybe the real one: it is read all the same, for
 * redaction only, and `refused` says why it is no credential (one warning).
 */
async function keyToHide(env: TeamgamesEnv): Promise<{ apiKey?: string | undefined; refused?: string }> {
  try {
    return { apiKey: await apiKeyOf(env) };
  } catch (error) {
    // apiKeyOf fails only on the key file it was given.
    const path = env.TEAMGAMES_API_KEY_FILE as string;
    const held = await firstLineOf(
      path,
      // Stryker disable next-line StringLiteral: the label names the file in firstLineOf's refusals, which are dropped here (nothing to hide)
      'TEAMGAMES_API_KEY_FILE',
    ).catch(() => '');
    return held === '' ? {} : { apiKey: held, refused: (error as Error).message };
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


/**
 * The resolve's arguments checked by the SDK's own rules before the journal is opened,
 * each refusal a usage error naming the flag (nothing is written).
 */
function checkedResolve(player: string | undefined, windowId: string | undefined, by: string, note: string): { player: string | undefined; windowId: string | undefined; by: string; note: string } {
  const flags: Record<string, string> = { 'input.playerName': '<player>', 'input.windowId': '--window', 'input.by': '--by', 'input.note': '--note' };
  try {
    // An undefined field is an absent one to checkResolveInput.
    return checkResolveInput({ playerName: player, windowId, by, note });
  } catch (error) {
    // checkResolveInput throws nothing else (every field is a string or absent here).
    const { argument, rule } = error as InvalidInputError;
    const hint = argument === 'input.playerName' ? '; resolve the window by its id instead: --window <id> (teamgames journal windows lists the ids)' : '';
    throw new UsageError(`invalid ${flags[argument] ?? argument}: ${rule}${hint}`);
  }
}

function defaultUser(deps: JournalDeps): string {
  let name: string | undefined;
  try {
    name = (deps.userName ?? (() => userInfo().username))();
  } catch {
    // The OS has none (no passwd entry): asked for below.
  }
  if (name === undefined || name.trim() === '') throw new UsageError('no user name to record (the OS has none for this user); pass --by <name>');
  return name;
}
