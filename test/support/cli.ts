/**
 * Runs the real `teamgames` program in process, as the CLI suites and the database suites
 * that check `teamgames journal` do: its stdout and stderr collected, no terminal, no
 * prompt, the journal command's clock injected.
 */
import type { OutputStream } from '../../src/common/output.js';
import { runTeamgames } from '../../src/cli/program.js';
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
