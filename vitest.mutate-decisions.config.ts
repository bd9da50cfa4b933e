import { defineConfig, mergeConfig } from 'vitest/config';
import suites from './vitest.mutate.config.js';

/**
 * The decisions room's suites (`npm run mutate:rooms -- decisions`, stryker.config.mjs's
 * `roomSuites`): the bridge's in-process suites, the CLI's decisions and `teamgames` itself,
 * and the loop's suites (the loop's option bounds, `delivery/loop/types.ts`, are in this
 * room). Left out, from vitest.mutate.config.ts's set: the journals', the databases', the
 * client's and the engine's suites, which reach these files only through the ones above,
 * and the `teamgames journal` suites. What survives here runs again against the whole set
 * (`mutate:rooms`' second pass), and the table counts the second pass's verdict.
 */
export default mergeConfig(
  { ...suites, test: { ...suites.test, include: [] } },
  defineConfig({
    test: {
      include: [
        'test/bridge/**/*.test.ts',
        'test/cli/*-decisions.test.ts',
        'test/cli/teamgames.test.ts',
        'test/cli/safe-output.test.ts',
        'test/delivery/loop*.test.ts',
      ],
      // Added to vitest.mutate.config.ts's: it starts the throwaway database servers' journals.
      exclude: ['test/bridge/journal.db.test.ts'],
    },
  }),
);
