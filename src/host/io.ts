/**
 * What a command-line program of the package takes from outside: the streams it writes to,
 * how it asks a person, and the environment it reads. `teamgames` (src/cli/) and
 * `teamgames bridge` (src/bridge/) both run on them.
 *
 * @module
 * @internal
 */
import type { OutputStream } from '../common/output.js';

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

/** The environment variables the programs read. */
export interface TeamgamesEnv {
  TEAMGAMES_API_KEY?: string | undefined;
  TEAMGAMES_BASE_URL?: string | undefined;
  /** A file whose first line is the API key, read when `TEAMGAMES_API_KEY` is not set. */
  TEAMGAMES_API_KEY_FILE?: string | undefined;
  /** Set to anything but the empty string: no colour (https://no-color.org). */
  NO_COLOR?: string | undefined;
  /** `dumb`: a terminal that understands no escape sequence. */
  TERM?: string | undefined;
  /**
   * Any other: the one
   * `teamgames journal --postgres-env <VAR>` names for the database URL, those a bridge's
   * config names for its secrets.
   */
  [name: string]: string | undefined;
}
