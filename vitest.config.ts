import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests and examples import the package by its public names, resolved to the sources: the
// same mapping as tsconfig's `paths` (which tsx uses for the demo and examples), read from
// there so that a new entry point is mapped in one place.
const tsconfig = JSON.parse(readFileSync(new URL('./tsconfig.json', import.meta.url), 'utf8')) as {
  compilerOptions: { paths: Record<string, [string]> };
};
const aliases = Object.entries(tsconfig.compilerOptions.paths).map(([name, [path]]) => ({
  find: new RegExp(`^${name.replace('/', '\\/')}$`),
  replacement: fileURLToPath(new URL(path, import.meta.url)),
}));

// Suites that need a real PostgreSQL and MariaDB are named `*.db.test.ts`. They form
// their own project, whose global setup starts the throwaway servers
// (test/support/throwaway-databases.ts): only runs that include one of them pay for the start.
const DATABASE_SUITES = 'test/**/*.db.test.ts';

export default defineConfig({
  resolve: { alias: aliases },
  test: {
    testTimeout: 10_000,
    // vitest's default is one worker fewer than the cores: a single worker on a 2-core
    // machine, where many files wait on sockets, child processes and the database servers
    // rather than compute. At least two workers keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A full garbage collection after each file: a FileHandle left open is reported by
    // Node (DEP0137) in this run's output, where CI looks for warnings, not at random.
    execArgv: ['--expose-gc'],
    setupFiles: ['test/support/collect-garbage.ts'],
    // vi.stubEnv and vi.stubGlobal are undone after each test.
    unstubEnvs: true,
    unstubGlobals: true,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: ['**/node_modules/**', DATABASE_SUITES],
          // tsc over the type tests and the sources they import; without `tsconfig`, vitest
          // runs tsc over the whole project (scripts, examples: twice the files),
          // which `npm run typecheck` checks.
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'test/tsconfig.type-tests.json' },
        },
      },
      {
        extends: true,
        test: {
          name: 'databases',
          include: [DATABASE_SUITES],
          globalSetup: ['test/support/database-servers.ts'],
          // Real servers: lock waits and server round trips take real time.
          testTimeout: 30_000,
          hookTimeout: 90_000,
        },
      },
    ],
  },
});
