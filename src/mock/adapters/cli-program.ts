import { readFile } from 'node:fs/promises';
import { COMMON_EXIT, UsageError, parseCommandLine } from '../../common/command-line.js';
import { writeFailure, writeText, type OutputStream } from '../../common/output.js';
import { exampleSeed } from '../service/example-seed.js';
import { createMockService } from '../index.js';
import { parseMockSeed, type MockSeed } from '../service/seed.js';
import type { MockServerHandle } from './server.js';

/** The options of the `teamgames-mock` command. */
export interface CliOptions {
  port: number;
  host: string;
  /** Path of the seed file; `undefined` means the example seed. */
  seedFile: string | undefined;
  help: boolean;
  /** Print the example seed as JSON and exit. */
  printSeed: boolean;
}

/**
 * A problem the CLI reports before exiting: a bad command line (exit 2, the usage code of
 * both commands) or a failure (exit 1: a seed file it cannot use, a port in use).
 */
export class CliError extends Error {
  override name = 'CliError';
  /** The process's exit code: 1 (failure) or 2 (usage). */
  readonly exitCode: number;

  /** An error that ends the command with `exitCode` (default 1, a failure). */
  constructor(message: string, exitCode: number = COMMON_EXIT.FAILURE) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Where the CLI writes; each `write` calls its callback, as Node's streams do. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
}

/** The text of `teamgames-mock --help`. */
export const USAGE = `Usage: teamgames-mock [--port 4010] [--host 127.0.0.1] [--seed seed.json]
       teamgames-mock --print-seed > seed.json

Runs a local mock of the TeamGames storefront and vote API.

Options:
  --port <n>       TCP port to listen on (default 4010; 0 picks a free port)
  --host <host>    interface to bind (default 127.0.0.1)
  --seed <file>    JSON seed file (default: the built-in example store)
  --print-seed     print the built-in example store as a seed file (JSON) and exit;
                   edit it and pass it back with --seed
  -h, --help       show this help

Exit codes:
  0  stopped with Ctrl-C, or --help / --print-seed done
  1  failure: the seed file cannot be read or is invalid, the port is in use
  2  usage: unknown option, missing or bad option value (the same code as teamgames)

If stdout cannot be written (a closed pipe, a full disk): --help and --print-seed
exit 1 with one line on stderr; the banner goes to stderr and the mock keeps serving.
`;

/**
 * Parses the command line.
 *
 * @throws CliError (exit code 2) for an unknown option, a missing value or a bad port.
 */
export function parseCliArgs(argv: readonly string[]): CliOptions {
  try {
    const { values } = parseCommandLine({
      args: [...argv],
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        seed: { type: 'string' },
        'print-seed': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    const port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65_535) {
      throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
    }
    if (values.host.trim() === '') {
      throw new UsageError('--host must not be empty');
    }
    return { port, host: values.host, seedFile: values.seed, help: values.help, printSeed: values['print-seed'] };
  } catch (error) {
    if (error instanceof UsageError) throw new CliError(`${error.message} (see teamgames-mock --help)`, COMMON_EXIT.USAGE);
    throw error;
  }
}

/**
 * Reads and validates a seed file.
 *
 * @throws CliError naming the file and, for an invalid seed, every bad field (one per line).
 */
export async function loadSeedFile(path: string): Promise<MockSeed> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (code ?? String(error));
    throw new CliError(`cannot read seed file "${path}": ${reason}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CliError(`seed file "${path}" is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return parseMockSeed(data);
  } catch (error) {
    throw new CliError(`seed file "${path}": ${(error as Error).message}`);
  }
}

/** The banner: base URL, each server's name and key, and how to point a plugin at it. */
export function banner(url: string, seed: MockSeed, seedFile: string | undefined): string {
  const servers = seed.servers.map((s, i) => ({ name: s.name ?? `Game server ${i + 1}`, key: s.apiKey }));
  const width = Math.max(...servers.map((s) => s.name.length));
  const first = servers[0];
  return [
    `TeamGames mock listening on ${url}`,
    `Seed: ${seedFile ?? 'built-in example store'}`,
    '',
    'Game servers (sandbox keys, valid only here):',
    ...servers.map((s) => `  ${s.name.padEnd(width)}  ${s.key}`),
    '',
    'Point a plugin or the SDK at it:',
    `  TEAMGAMES_BASE_URL=${url}${first === undefined ? '' : ` TEAMGAMES_API_KEY=${first.key}`}`,
    '',
    `Sandbox admin: GET ${url}/__mock/state, POST ${url}/__mock/reset (routes under /__mock/)`,
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

/**
 * Runs the command: prints help or the example seed, or starts the server and prints the
 * banner. Resolves the exit code when it ends at once, or the running server.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
): Promise<{ exitCode: number } | { server: MockServerHandle }> {
  try {
    const options = parseCliArgs(argv);
    if (options.help || options.printSeed) {
      const failure = await writeText(io.stdout, options.help ? USAGE : `${JSON.stringify(exampleSeed, null, 2)}\n`);
      if (failure !== undefined) throw new CliError(`could not write to stdout (${writeFailure(failure)})`);
      return { exitCode: COMMON_EXIT.OK };
    }
    const seed = options.seedFile === undefined ? exampleSeed : await loadSeedFile(options.seedFile);
    const mock = createMockService({ seed });
    let server: MockServerHandle;
    try {
      server = await mock.listen({ port: options.port, host: options.host });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === 'EADDRINUSE' ? 'the port is already in use' : code ?? String(error);
      throw new CliError(`cannot listen on ${options.host}:${options.port}: ${reason}`);
    }
    const text = banner(server.url, seed, options.seedFile);
    const failure = await writeText(io.stdout, text);
    // The server is up: without the banner nobody would know its URL and keys.
    if (failure !== undefined) {
      await writeText(io.stderr, `teamgames-mock: could not write to stdout (${writeFailure(failure)}); the banner follows on stderr\n${text}`);
    }
    return { server };
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`teamgames-mock: ${error.message}\n`);
      return { exitCode: error.exitCode };
    }
    throw error;
  }
}
