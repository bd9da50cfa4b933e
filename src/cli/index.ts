#!/usr/bin/env node
/**
 * The `teamgames` support command (package `bin`). See `teamgames --help`.
 */
import { createInterface } from 'node:readline/promises';
import { surviveWriteErrors } from '../common/output.js';
import { runTeamgames } from './program.js';

// A closed stdout must not kill the process after a claim: the program hears of it and
// writes the answer to stderr (exit 6).
surviveWriteErrors(process.stdout, process.stderr);

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^(y|yes)$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

const code = await runTeamgames(
  process.argv.slice(2),
  {
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    confirm,
  },
  process.env,
).catch((error: unknown) => {
  // runTeamgames reports its own failures; this is a bug, still one line and no stack.
  process.stderr.write(`teamgames: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
process.exitCode = code;
// Everything is written (each answer waits for its write). A database connection stuck on a
// server that stopped answering must not keep the process alive after the command ended:
// the timer does not hold the process itself, it only ends one that something else holds.
setTimeout(() => process.exit(code), 1_000).unref();
