/**
 * Runs the real `teamgames` program in process, as the CLI suites and the database suites
 * that check `teamgames journal` do: its stdout and stderr collected, no terminal, no
 * prompt, the journal command's clock injected.
 */
import type { OutputStream } from '../../src/common/output.js';
import { runTeamgames, type ClientOverrides, type TeamgamesEnv } from '../../src/cli/program.js';
import type { MockService } from '../../src/mock/index.js';
// `teamgames` loads the journal command (and what it prints and reads) on first use; here it is
// loaded with the suite, so that StrykerJS counts the module-level constants as static (left
// out, ignoreStatic) rather than as covered only by whichever test ran a journal command first.
import '../../src/cli/journal-command.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** An output stream that hands each write to `keep` and reports it done (no terminal, never full). */
export function stream(keep: (text: string) => void): OutputStream {
  return {
    write(text, done) {
      keep(text);
      done?.(null);
      return true;
    },
  };
}

/** `teamgames <argv>` with `now` as the journal command's clock (ages, resolutions), and `env` as its environment. */
export async function runCli(argv: string[], now: () => number, env: Record<string, string> = {}): Promise<CliRun> {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((text) => (out.stdout += text)), stderr: stream((text) => (out.stderr += text)), interactive: false, confirm: async () => false }, env, {}, { now });
  return { code, ...out };
}

/** How `against`'s run is called: the environment, the client's overrides, the streams, the person's answer to a prompt. */
export interface CliRunOptions {
  /** The environment; the mock's key as TEAMGAMES_API_KEY if not given. */
  env?: TeamgamesEnv;
  overrides?: ClientOverrides;
  stdout?: OutputStream;
  stderr?: OutputStream;
  /** A person at a terminal, answering the prompt; no terminal if not given. */
  confirm?: () => Promise<boolean>;
}

/** `teamgames <argv>` in process against `mock`'s fetch and clock, without retries; what is not given a stream is collected. */
export function against(mock: MockService, key: string): (argv: string[], options?: CliRunOptions) => Promise<CliRun> {
  return async (argv, options = {}) => {
    const out = { stdout: '', stderr: '' };
    const code = await runTeamgames(
      argv,
      {
        stdout: options.stdout ?? stream((text) => (out.stdout += text)),
        stderr: options.stderr ?? stream((text) => (out.stderr += text)),
        interactive: options.confirm !== undefined,
        confirm: options.confirm ?? (async () => false),
      },
      options.env ?? { TEAMGAMES_API_KEY: key },
      { fetch: mock.fetch, now: mock.clock.now, retry: 0, ...options.overrides },
    );
    return { code, ...out };
  };
}

/** A fetch that answers every call with `body` (as the store would, HTTP 200). */
export const answering = (body: unknown): ClientOverrides => ({ fetch: async () => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }) });
