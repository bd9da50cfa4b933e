/**
 * What the two commands (`teamgames` and `teamgames-mock`) share: the exit codes they
 * agree on, and a command-line parser whose errors a person can read.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The exit codes both commands use; `teamgames` adds its own from 3 on. */
export const COMMON_EXIT = {
  /** Done: the command did what was asked (help and version included). */
  OK: 0,
  /** The command was understood but failed. */
  FAILURE: 1,
  /** The command line (or the environment) is wrong: unknown option, missing value, bad argument. */
  USAGE: 2,
} as const;

/**
 * A command line the program cannot run. The message names the option or argument as the
 * user typed it (`--port`, `<player>`); the program adds where to look (`--help`).
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** What {@link parseCommandLine} takes: `parseArgs`' config, with the arguments and the options spelled out. */
export type CommandLineConfig = ParseArgsConfig & { args: string[]; options: NonNullable<ParseArgsConfig['options']> };

/**
 * `parseArgs` in strict mode, with its errors rewritten for a person: `unknown option
 * --prot`, `--port needs a value`, `--json takes no value`, `unexpected argument "x"`,
 * instead of Node's `TypeError [ERR_PARSE_ARGS_…]` text.
 *
 * @throws UsageError for any command line `parseArgs` refuses in strict mode.
 */
export function parseCommandLine<T extends CommandLineConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(describeRefusal(config) ?? firstLine(error));
  }
}

/**
 * Finds what strict mode refused by reading the tokens of a lenient parse. A string
 * option followed by something that starts with `-` has no value: strict mode refuses
 * that too (`--port --host x`), and `--seed=-odd-name` is how to pass such a value.
 */
function describeRefusal(config: CommandLineConfig): string | undefined {
  const { tokens } = parseArgs({ args: config.args, options: config.options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional' && config.allowPositionals !== true) return `unexpected argument ${JSON.stringify(token.value)}`;
    if (token.kind !== 'option') continue;
    const spec = config.options[token.name];
    if (spec === undefined) return `unknown option ${token.rawName}`;
    if (spec.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) return `${token.rawName} needs a value`;
    if (spec.type === 'boolean' && token.value !== undefined) return `${token.rawName} takes no value`;
  }
  return undefined;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? 'bad arguments';
}
