import { defineConfig, mergeConfig } from 'vitest/config';
import suites from './vitest.mutate.config.js';

/**
 * The journals room's suites (`npm run mutate:rooms -- journals`, stryker.config.mjs's
 * `roomSuites`): every suite of the journals, the database suites, the delivery suites
 * (which run every journal's contract through the engine and the loop), and the in-process
 * `teamgames journal` suites. Left out, from vitest.mutate.config.ts's set: the suites that
 * run `teamgames journal` or the bridge in child processes (a child sees no mutant, yet each
 * pays its seconds for every journal mutant its setup reaches; at about 6 mutants a minute,
 * the room took over 5 hours with them), and the client's, the wire's and the bridge's other
 * suites, which reach the journals only through those above. Fewer suites can only kill fewer
 * mutants: the room's scores are lower bounds of what the whole set would give.
 */
export default mergeConfig(
  { ...suites, test: { ...suites.test, include: [] } },
  defineConfig({
    test: {
      include: [
        'test/journals/**/*.test.ts',
        'test/databases/*.db.test.ts',
        'test/delivery/**/*.test.ts',
        'test/bridge/journal.db.test.ts',
        'test/cli/journal.test.ts',
        'test/cli/journal-command.test.ts',
        'test/cli/journal-print.test.ts',
        'test/cli/journal-drivers.test.ts',
        'test/cli/journal-upgrade.test.ts',
        'test/cli/journal-trust.test.ts',
        'test/cli/journal-sources-decisions.test.ts',
      ],
      // Added to vitest.mutate.config.ts's: `teamgames journal --postgres/--mysql` run as child processes.
      exclude: ['test/databases/journal-cli.db.test.ts'],
    },
  }),
);
