/**
 * What the `teamgames` command does only for a person at a terminal: colour and a
 * progress line. Both depend on the stream and the environment handed in, so the tests
 * decide what a "terminal" is.
 *
 * @module
 */
import { styleText } from 'node:util';
import type { OutputStream } from '../common/output.js';
import type { TeamgamesEnv } from '../host/io.js';

/** The environment variables that switch the terminal features off. */
export type TerminalEnv = Pick<TeamgamesEnv, 'NO_COLOR' | 'TERM'>;

/** How an outcome reads: done, worth a look, failed. */
export type Tone = 'good' | 'notice' | 'bad';

/** Colours a text for its tone (or leaves it plain). */
export type Paint = (tone: Tone, text: string) => string;

const COLOURS = { good: 'green', notice: 'yellow', bad: 'red' } as const;

/** Whether a person watches `stream` on a terminal that understands escape sequences. */
export function isTerminal(stream: OutputStream, env: TerminalEnv): boolean {
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/**
 * Returns a function that colours text by tone on `stream`, or leaves it alone when the
 * stream is not a terminal or `NO_COLOR` is set.
 */
export function painter(stream: OutputStream, env: TerminalEnv): (tone: Tone, text: string) => string {
  if (!isTerminal(stream, env) || (env.NO_COLOR ?? '') !== '') return (_tone, text) => text;
  // The decision is ours (the stream may be a test double): styleText must not check process.stdout.
  return (tone, text) => styleText(COLOURS[tone], text, { validateStream: false });
}

// Carriage return, then erase the whole line.
const CLEAR_LINE = '\r\u001b[2K';

/**
 * One line of progress on a terminal (`retrying…`), rewritten in place and erased before
 * anything else is written. Writes nothing when the stream is not a terminal.
 */
export class ProgressLine {
  readonly #stream: OutputStream;
  readonly #enabled: boolean;
  #shown = false;

  /** A progress line on `stream`, drawn only when it is a terminal. */
  constructor(stream: OutputStream, env: TerminalEnv) {
    this.#stream = stream;
    this.#enabled = isTerminal(stream, env);
  }

  /** Whether the line is ever drawn. */
  get enabled(): boolean {
    return this.#enabled;
  }

  /** Replaces the line with `text`. */
  show(text: string): void {
    if (!this.#enabled) return;
    this.#stream.write(`${CLEAR_LINE}${text}`);
    this.#shown = true;
  }

  /** Erases the line, if one is shown. */
  clear(): void {
    if (!this.#shown) return;
    this.#stream.write(CLEAR_LINE);
    this.#shown = false;
  }
}
