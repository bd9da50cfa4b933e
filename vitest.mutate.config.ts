import { statSync } from 'node:fs';
import { relative } from 'node:path';
import { defineConfig, mergeConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import base from './vitest.config.js';

/**
 * Quickest files first (vitest runs the slowest first): StrykerJS stops a mutant's run at
 * its first failing test, so a mutant a quick suite kills never waits for the power-loss
 * campaign or the database suites. By the last run's durations, else by size.
 */
class QuickestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cost = (spec: TestSpecification): number => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
      return this.ctx.cache.getFileTestResults(key)?.duration ?? statSync(spec.moduleId).size / 10;
    };
    return [...files].sort((a, b) => cost(a) - cost(b));
  }
}

// The suites that exercise the client core, the delivery engine, the journals and the bridge's sinks, for `npm run mutate`
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
      include: [
        'test/delivery/**/*.test.ts',
        'test/journals/**/*.test.ts',
        'test/cli/journal*.test.ts',
        // The CLI's decisions (#46): `teamgames` itself, its safe output, the in-process suites.
        'test/cli/teamgames.test.ts',
        'test/cli/safe-output.test.ts',
        'test/cli/*-decisions.test.ts',
        'test/databases/*.db.test.ts',
        'test/bridge/**/*.test.ts',
        // The client core (#46): its unit suites, the wire's contract, the end-to-end calls
        // against the mock, the hostile server.
        'test/client/**/*.test.ts',
        'test/wire/**/*.test.ts',
        'test/e2e/**/*.test.ts',
        'test/security/**/*.test.ts',
      ],
      globalSetup: ['test/support/database-servers.ts'],
      exclude: [
        '**/node_modules/**',
        // Bundles the CLI from the (instrumented) sources and runs it in a child process: it
        // cannot see a mutant, and the instrumented bundle's output differs.
        'test/cli/journal-peers.test.ts',
        // The bridge's optional peers: the same (it bundles the bin and runs it).
        'test/bridge/peers.test.ts',
        // The same for the bin against a silent database (it times out in the sandbox).
        'test/cli/journal-bin.test.ts',
        // The bridge's bin as a child process end to end (a child sees no mutant, and its
        // coverage is not counted).
        'test/bridge/e2e.test.ts',
        // The slowest suites (20 to 30 s each on 2 cores: load, the lock against real
        // processes), left out for speed: a mutant that survives pays for every suite that
        // reaches it, and these reach the engine through what quicker suites test. The
        // delivery loop's suite stays in since the loop is mutated too (#33).
        'test/delivery/concurrency.test.ts',
        'test/cli/journal-lock.test.ts',
        // The staff page in Chromium (seconds per run, a browser per file): the same
        // decisions are tested in process by test/bridge/staff-page/server.test.ts.
        'test/bridge/staff-page/browser.test.ts',
      ],
      sequence: { sequencer: QuickestFirst },
      testTimeout: 30_000,
      hookTimeout: 90_000,
    },
  }),
);
