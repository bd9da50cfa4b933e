import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { exampleSeed } from './example-seed.js';
import { createMockService } from './index.js';
import { parseMockSeed, type MockSeed } from './seed.js';
import type { MockServerHandle } from './server.js';

/** The options of the `teamgames-mock` command. */
export interface CliOptions {
  port: number;
  host: string;
  /** Path of the seed file; `undefined` means the example seed. */
  seedFile: string | undefined;
  help: boolean;
}

/** A problem the CLI reports as one line before exiting with status 1. */
export class CliError extends Error {
  override name = 'CliError';
}

/** Where the CLI writes. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The text of `teamgames-mock --help`. */
export const USAGE = `Usage: teamgames-mock [--port 4010] [--host 127.0.0.1] [--seed seed.json]

Runs a local mock of the TeamGames storefront and vote API.

Options:
  --port <n>       TCP port to listen on (default 4010; 0 picks a free port)
  --host <host>    interface to bind (default 127.0.0.1)
  --seed <file>    JSON seed file (default: the built-in example store)
  -h, --help       show this help
`;

/**
 * Parses the command line.
 *
 * @throws CliError for an unknown option or a bad port.
 */
export function parseCliArgs(argv: readonly string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)} (see --help)`);
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) {
    throw new CliError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  if (values.host.trim() === '') {
    throw new CliError('--host must not be empty');
  }
  return { port, host: values.host, seedFile: values.seed, help: values.help };
}

/**
 * Reads and validates a seed file.
 *
 * @throws CliError naming the file and, for an invalid seed, the field.
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
    throw new CliError(`seed file "${path}": ${error instanceof Error ? error.message : String(error)}`);
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
 * Runs the command: prints help, or starts the server and prints the banner.
 * Resolves the exit code when it ends at once, or the running server.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
): Promise<{ exitCode: number } | { server: MockServerHandle }> {
  try {
    const options = parseCliArgs(argv);
    if (options.help) {
      io.stdout.write(USAGE);
      return { exitCode: 0 };
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
    io.stdout.write(banner(server.url, seed, options.seedFile));
    return { server };
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`teamgames-mock: ${error.message}\n`);
      return { exitCode: 1 };
    }
    throw error;
  }
}
