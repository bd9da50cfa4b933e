/**
 * Runs the real `teamgames` program in process, as the CLI suites and the database suites
 * that check `teamgames journal` do: its stdout and stderr collected, no terminal, no
 * prompt, the journal command's clock injected.
 */
import type { OutputStream } from '../../src/common/output.js';
import { runTeamgames } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `teamgames <argv>` with `now` as the journal command's clock (ages, resolutions), and `env` as its environment. */
export async function runCli(argv: string[], now: () => number, env: Record<string, string> = {}): Promise<CliRun> {
  const out = { stdout: '', stderr: '' };
  const stream = (key: 'stdout' | 'stderr'): OutputStream => ({
    write(text, done) {
      out[key] += text;
      done?.(null);
      return true;
    },
  });
  const code = await runTeamgames(argv, { stdout: stream('stdout'), stderr: stream('stderr'), interactive: false, confirm: async () => false }, env, {}, { now });
  return { code, ...out };
}
