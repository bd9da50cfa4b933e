import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

// The suites that exercise the delivery engine and the journals, for `npm run mutate`
// (stryker.config.mjs): every other suite reaches none of the mutated files, and StrykerJS
// runs its tests one file at a time, so the rest would only slow each mutant down. The
// database suites run against the servers `npm run mutate` starts once for the whole run
// (through test/support/throwaway-databases.ts); the global setup finds them in the
// environment and starts nothing.
export default mergeConfig(
  // StrykerJS runs vitest in a worker thread, which refuses --expose-gc: no collection after each file.
  { ...base, test: { ...base.test, projects: undefined, execArgv: [] } },
  defineConfig({
    test: {
      include: ['test/delivery/**/*.test.ts', 'test/journals/**/*.test.ts', 'test/cli/journal*.test.ts', 'test/databases/*.db.test.ts'],
      globalSetup: ['test/support/database-servers.ts'],
      // Bundles the CLI from the (instrumented) sources and runs it in a child process: it
      // cannot see a mutant, and the instrumented bundle's output differs.
      exclude: ['**/node_modules/**', 'test/cli/journal-peers.test.ts'],
      testTimeout: 30_000,
      hookTimeout: 90_000,
    },
  }),
);
