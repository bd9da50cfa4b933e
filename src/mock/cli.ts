#!/usr/bin/env node
/**
 * The `teamgames-mock` command: serves the mock over HTTP until Ctrl-C.
 *
 * @module
 */
import { surviveWriteErrors } from '../common/output.js';
import { runCli } from './adapters/cli-program.js';

// A closed stdout is reported by runCli in one line, never as an unhandled 'error' event.
surviveWriteErrors(process.stdout, process.stderr);

async function main(): Promise<void> {
  const result = await runCli(process.argv.slice(2), process);
  if ('exitCode' in result) {
    process.exitCode = result.exitCode;
    return;
  }
  const stop = (): void => {
    void result.server.close().then(() => {
      process.stdout.write('TeamGames mock stopped.\n');
      process.exit(0);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`teamgames-mock: unexpected error: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
