/**
 * What the `teamgames` commands share, below all of them: the exit codes, the text table
 * and how an answer is written (to stderr when stdout fails). `program.ts` and
 * `journal-command.ts` both import it, and it imports neither. What `teamgames bridge`
 * shares with them (the streams and environment, secrets, redaction, the database
 * journals) is in src/host/, below both.
 *
 * @module
 * @internal
 */
import { COMMON_EXIT } from '../common/command-line.js';
import { writeFailure, writeText } from '../common/output.js';
import { printable, printableJson } from '../common/printable.js';
import type { TeamgamesIo } from '../host/io.js';
import { NO_SECRET, redactValue, type Redact } from '../host/redact.js';
import type { Paint } from './terminal.js';

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
