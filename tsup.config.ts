import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  target: 'node20',
  platform: 'node',
  // Maps without `sourcesContent`: with `node --enable-source-maps` a stack trace names
  // src/ files and lines (read on GitHub or in a clone), while the package does not ship
  // every source a second time inside its maps (1.8 of its 3 MB unpacked).
  sourcemap: true,
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
  splitting: false,
  treeshake: true,
  clean: false,
  // Dependencies stay dependencies; msw is the mock's optional peer, pg and mysql2 the
  // database journals' (which take the user's pool and never import them), pino,
  // prom-client and rcon-client the bridge's (`teamgames bridge`, loaded by import() only
  // when that command runs).
  external: ['ky', 'zod', 'msw', 'pg', 'mysql2', 'pino', 'prom-client', 'rcon-client'],
};

const library = {
  index: 'src/index.ts',
  'mock/index': 'src/mock/index.ts',
  'postgres/index': 'src/journals/postgres/index.ts',
  'mysql/index': 'src/journals/mysql/index.ts',
};

// The bins: ESM only, like the package; built with the ESM library (shared chunks).
const bins = { 'mock/cli': 'src/mock/cli.ts', 'cli/index': 'src/cli/index.ts' };

// dist is emptied by the build script, not here: the configs run concurrently.
export default defineConfig([
  {
    // ESM with code splitting, so the file journal's store (loaded by `import()` on the
    // journal's first use) stays out of what `import 'teamgames-sdk'` loads. The
    // `teamgames-mock` and `teamgames` bins are entries of this build too: they share its
    // chunks (the SDK, the mock) instead of each bundling a second copy.
    ...shared,
    entry: { ...library, ...bins },
    format: ['esm'],
    splitting: true,
  },
  {
    // CJS: declarations only (`.d.cts`), the package's one set of declarations. The `.cjs`
    // entries and the `.d.ts` of the `import` condition are one line each, written by
    // scripts/cjs-entries.ts: `require` loads the ESM build (Node 20.19 and later), and the
    // ESM declarations re-export the `.d.cts`, so no module is shipped twice.
    ...shared,
    entry: library,
    format: ['cjs'],
    dts: { only: true },
  },
]);
