/**
 * The scripts' command line (the bench, the soak, the simulation, the heap script, the
 * fuzzer, the crash campaigns): `parseArgs` in strict mode through the CLIs' reader
 * (src/common/command-line.ts, whose errors a person can read), `--help`, and numbers
 * checked against their range. A command line the script cannot run prints
 * `<script>: <problem>` and the usage on stderr and exits 2.
 *
 * @module
 */
import type { ParseArgsConfig } from 'node:util';
import { COMMON_EXIT, parseCommandLine } from '../../src/common/command-line.js';

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP = { help: { type: 'boolean', short: 'h', default: false } } as const;
type Value<S> = S extends { type: 'boolean' } ? boolean : string;
/** The parsed values: an option with a default always has one. */
type Values<O extends Options> = { -readonly [K in keyof O]: O[K] extends { default: unknown } ? Value<O[K]> : Value<O[K]> | undefined } & { help: boolean };

/** A script's parsed command line and the checks that end it with its usage. */
export interface ScriptCommandLine<O extends Options> {
  readonly values: Values<O>;
  /** Prints `<script>: <problem>` and the usage on stderr, and exits 2. */
  fail(problem: string): never;
  /** The option as a whole number from `min` to `max`. */
  integer(name: keyof O & string, min: number, max: number): number;
  /** The option as a number from `min` to `max` (decimals allowed). */
  number(name: keyof O & string, min: number, max: number): number;
  /** The option as one of `allowed`. */
  oneOf<const T extends string>(name: keyof O & string, allowed: readonly T[]): T;
}

/**
 * Reads `process.argv` (or `args`) for the script `name`; `--help` (or `-h`) prints the
 * usage on stdout and exits 0.
 */
export function commandLine<const O extends Options>(name: string, usage: string, options: O, args = process.argv.slice(2)): ScriptCommandLine<O> {
  const fail = (problem: string): never => {
    process.stderr.write(`${name}: ${problem}\n${usage}\n`);
    process.exit(COMMON_EXIT.USAGE);
  };
  let values: Values<O>;
  try {
    ({ values } = parseCommandLine({ args, options: { ...options, ...HELP }, strict: true, allowPositionals: false }) as unknown as { values: Values<O> });
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) {
    process.stdout.write(`${usage}\n`);
    process.exit(COMMON_EXIT.OK);
  }
  const text = (option: string): string => {
    const value = (values as Record<string, unknown>)[option];
    return typeof value === 'string' ? value : fail(`--${option} needs a value`);
  };
  const inRange = (option: string, n: number, min: number, max: number, what: string, value: string): number =>
    n >= min && n <= max ? n : fail(`--${option} must be ${what} from ${min} to ${max}, got "${value}"`);
  return {
    values,
    fail,
    integer(option, min, max) {
      const value = text(option);
      const n = Number(value);
      return /^-?\d+$/.test(value) && Number.isSafeInteger(n) ? inRange(option, n, min, max, 'an integer', value) : fail(`--${option} must be an integer from ${min} to ${max}, got "${value}"`);
    },
    number(option, min, max) {
      const value = text(option);
      const n = Number(value);
      return value.trim() !== '' && Number.isFinite(n) ? inRange(option, n, min, max, 'a number', value) : fail(`--${option} must be a number from ${min} to ${max}, got "${value}"`);
    },
    oneOf(option, allowed) {
      const value = text(option);
      const names = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed.join('');
      return (allowed as readonly string[]).includes(value) ? (value as (typeof allowed)[number]) : fail(`--${option} must be ${names}, got "${value}"`);
    },
  };
}
