/**
 * What the `teamgames` commands share, below all of them: the exit codes, the streams and
 * environment the program takes, the text table and how an answer is written (to stderr
 * when stdout fails). `program.ts` and `journal-command.ts` both import it, and it
 * imports neither.
 *
 * @module
 * @internal
 */
import { Credentials } from '../auth.js';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { COMMON_EXIT, UsageError } from '../common/command-line.js';
import { writeFailure, writeText, type OutputStream } from '../common/output.js';
import { printable, printableJson } from '../common/printable.js';
import type { Paint, TerminalEnv } from './terminal.js';

/**
 * Exit codes of `teamgames`, documented in `--help` and the testing guide. 0, 1 and 2
 * mean the same in `teamgames-mock`.
 */
export const EXIT = {
  /** The service answered; the outcome (even `NO_ITEMS` or `RATE_LIMIT`) is printed. */
  OK: COMMON_EXIT.OK,
  /** Any other failure: an unexpected HTTP status or response, a claim not confirmed. */
  FAILURE: COMMON_EXIT.FAILURE,
  /** Bad command line or environment: unknown option, missing argument, no key, bad URL. */
  USAGE: COMMON_EXIT.USAGE,
  /** The service refused the API key. */
  AUTH: 3,
  /** The service could not be reached (connection refused, DNS, timeout). */
  NETWORK: 4,
  /** A claim or vote was sent but its answer was lost: the items may be delivered. */
  OUTCOME_UNKNOWN: 5,
  /**
   * The answer could not be written to stdout (its reader closed it, a full disk) and was
   * written to stderr instead; what it reports happened (a claim's items are delivered).
   */
  OUTPUT_FAILED: 6,
  /**
   * `teamgames journal resolve`: the window was already resolved (by another staff
   * member, another node, a bridge's admin command, maybe at the same moment). Nothing
   * was written; stderr says who resolved it, when, and their note.
   */
  ALREADY_RESOLVED: 7,
} as const;

/**
 * Where the program writes, and how it asks for confirmation. A stream with `isTTY: true`
 * is a terminal: outcomes are coloured there (unless `NO_COLOR` is set), and stderr shows
 * a progress line while a read is retried. Each `write` calls its callback, as Node's
 * streams do: that is how the program learns that stdout failed.
 */
export interface TeamgamesIo {
  stdout: OutputStream;
  stderr: OutputStream;
  /** True when a person can answer a prompt (stdin and stdout are terminals). */
  interactive: boolean;
  /** Asks a yes/no question; resolves true only for an explicit yes. */
  confirm(question: string): Promise<boolean>;
}

/** The environment variables the program reads. */
export interface TeamgamesEnv extends TerminalEnv {
  TEAMGAMES_API_KEY?: string | undefined;
  TEAMGAMES_BASE_URL?: string | undefined;
  /** A file whose first line is the API key, read when `TEAMGAMES_API_KEY` is not set. */
  TEAMGAMES_API_KEY_FILE?: string | undefined;
  /** Any other: `teamgames journal --postgres-env <VAR>` reads the database URL from the one it names. */
  [name: string]: string | undefined;
}

/**
 * Renders rows as an aligned text table, every cell through {@link printable} (one row
 * per record, whatever a cell holds). Loops, never spreads: a million rows print.
 */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = rows.map((row) => row.map(printable));
  const widths = headers.map((h) => h.length);
  for (const row of cells) {
    for (let i = 0; i < widths.length; i++) widths[i] = Math.max(widths[i] as number, (row[i] ?? '').length);
  }
  const line = (row: readonly string[]) => {
    let text = '';
    for (let i = 0; i < widths.length; i++) text += (i === 0 ? '' : '  ') + (row[i] ?? '').padEnd(widths[i] as number);
    return `${text.trimEnd()}\n`;
  };
  const parts: string[] = [line(headers), line(widths.map((w) => '-'.repeat(w)))];
  for (const row of cells) parts.push(line(row));
  return parts.join('');
}

/**
 * What every answer goes through before it is written: the secrets the command knows (the
 * API key in every form the SDK's redaction knows) replaced by `<redacted>`, in the human
 * text and in every string of a `--json` value, which is otherwise printed exactly (its
 * unprintable characters as JSON escapes).
 * @internal
 */
export type Redact = (text: string) => string;

/**
 * The API key: `TEAMGAMES_API_KEY`, else the first line of the file `TEAMGAMES_API_KEY_FILE`
 * names (a secrets manager's or systemd's credential file); `undefined` when neither is set.
 * @throws UsageError when the file cannot be read or holds no key.
 * @internal
 */
export async function apiKeyOf(env: TeamgamesEnv, ownerMustBeMe = false): Promise<string | undefined> {
  const key = env.TEAMGAMES_API_KEY?.trim() ?? '';
  if (key !== '') return key;
  const path = env.TEAMGAMES_API_KEY_FILE ?? '';
  if (path.trim() === '') return undefined;
  const first = await firstLineOf(path, 'TEAMGAMES_API_KEY_FILE', true, ownerMustBeMe);
  if (first === '') throw new UsageError(`TEAMGAMES_API_KEY_FILE: ${path} holds no key on its first line`);
  return first;
}

// A key or a URL is short: a larger file is not one, and is never read whole.
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * The first non-blank line of a small regular file, trimmed (`''` when there is none),
 * for a secret kept out of the command line. A FIFO, a device (`/dev/zero`) or a
 * directory is refused without blocking, and with `ownOnly` so is a file other users may
 * read or change, or its group may change (its group may read it: a game server in the
 * bridge's group reads the same token); with `ownerMustBeMe` also one another user than
 * this process's or root owns (the bridge's own secrets: that user could plant a token);
 * only the first 64 KiB are read.
 * @throws UsageError naming `what` and why the file cannot be read.
 * @internal
 */
export async function firstLineOf(path: string, what: string, ownOnly = false, ownerMustBeMe = false): Promise<string> {
  const refuse = (why: string) => new UsageError(`${what}: cannot read ${path} (${why})`);
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw refuse(typeof code === 'string' ? code : 'unreadable');
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw refuse('not a regular file');
    if (ownOnly && process.platform !== 'win32') {
      // Like ssh with a private key: a secret every local user may read (or replace) is not
      // one, nor one another user or the group may change (a token planted by them).
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      const me = process.geteuid?.();
      if (ownerMustBeMe && me !== undefined && stat.uid !== me && stat.uid !== 0) throw refuse(`owned by user ${stat.uid}, who may change it, not by this process's user (${me}) or root: chown ${me} ${path}`);
      if ((stat.mode & 0o007) !== 0) throw refuse(`other users may read or change it, mode ${mode}: chmod o-rwx ${path}`);
      if ((stat.mode & 0o020) !== 0) throw refuse(`its group may change it, mode ${mode}: chmod g-w ${path}`);
    }
    const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES);
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return (text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '').trim();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as { code?: unknown }).code;
    throw refuse(typeof code === 'string' ? code : 'unreadable');
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** No secret to remove. @internal */
export const NO_SECRET: Redact = (text) => text;

/** Removes the API key, in every form the SDK's redaction knows (raw, URL-encoded, Base64, base64url). @internal */
export function keyRedactor(apiKey: string): Redact {
  const credentials = new Credentials(apiKey);
  // A table shows the key's unprintable characters or backslashes escaped: that form too.
  const shown = printable(apiKey);
  if (shown === apiKey) return (text) => credentials.redact(text);
  return (text) => credentials.redact(text).split(shown).join('<redacted>');
}

/** `value` with `redact` applied to every string in it (keys included); other values as they are. */
export function redactValue(value: unknown, redact: Redact): unknown {
  if (redact === NO_SECRET) return value;
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactValue(v, redact);
    return out;
  }
  return value;
}

/** The `--json` text of `value`: secrets removed, exact otherwise, valid JSON, nothing a terminal acts on. */
export function jsonText(value: unknown, redact: Redact, indent?: number): string {
  return printableJson(JSON.stringify(redactValue(value, redact), null, indent));
}

/**
 * Writes the answer to stdout and resolves the exit code. When stdout fails (its reader
 * closed it, the disk is full) the service has already answered, a claim has already
 * marked the items delivered: the answer is not lost with stdout. One line on stderr says
 * what failed, then the answer follows there (with `--json`, a JSON error line, then the
 * result on one line). The human text is built from printable cells and lines; `redact`
 * removes the secrets from it and from the JSON.
 * @internal
 */
export async function answer(io: TeamgamesIo, label: string, json: boolean, value: unknown, human: (paint: Paint) => string, paintOut: Paint, paintErr: Paint, redact: Redact = NO_SECRET): Promise<number> {
  const failure = await writeText(io.stdout, json ? `${jsonText(value, redact, 2)}\n` : redact(human(paintOut)));
  if (failure === undefined) return EXIT.OK;
  const message = `${label}could not write to stdout (${writeFailure(failure)}); the answer follows on stderr`;
  await writeText(
    io.stderr,
    json
      ? `${JSON.stringify({ error: 'OUTPUT_FAILED', message: printable(message) })}\n${jsonText(value, redact)}\n`
      : `${paintErr('bad', `teamgames: ${printable(message)}`)}\n${redact(human(paintErr))}`,
  );
  return EXIT.OUTPUT_FAILED;
}

/** What `teamgames journal` takes from outside, injectable for tests. */
export interface JournalDeps {
  /** Loads an optional database driver (`pg`, `mysql2/promise`). Default: `import()`. */
  importDriver?: (name: string) => Promise<unknown>;
  /** The clock for ages and a resolution's time, epoch ms. Default: `Date.now`. */
  now?: () => number;
  /** Who resolves when `--by` is not given. Default: the OS user name. */
  userName?: () => string;
}

