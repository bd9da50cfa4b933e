import { defineConfig, mergeConfig } from 'vitest/config';
import suites from './vitest.mutate.config.js';

/**
 * The client room's suites (`npm run mutate:rooms -- client`, stryker.config.mjs's
 * `roomSuites`): the client's own suites, the wire's contract, the end-to-end calls against
 * the mock and the hostile server. Every delivery, journal and bridge suite calls the client
 * too, so with vitest.mutate.config.ts's whole set a client mutant that survives pays for
 * hundreds of files that test something else. Fewer suites can only kill fewer mutants: what
 * survives here runs again against the whole set (`mutate:rooms`' second pass), and the
 * table counts the second pass's verdict.
 */
export default mergeConfig(
  { ...suites, test: { ...suites.test, include: [] } },
  defineConfig({
    test: {
      include: ['test/client/**/*.test.ts', 'test/wire/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/security/**/*.test.ts'],
    },
  }),
);
