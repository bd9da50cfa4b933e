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
  // database journals' (which take the user's pool and never import them).
  external: ['ky', 'zod', 'msw', 'pg', 'mysql2'],
};

const library = {
  index: 'src/index.ts',
  'mock/index': 'src/mock/index.ts',
  'postgres/index': 'src/journals/postgres/index.ts',
  'mysql/index': 'src/journals/mysql/index.ts',
};

// dist is emptied by the build script, not here: the configs run concurrently.
export default defineConfig([
  {
    // ESM with code splitting, so the file journal's store (loaded by `import()` on the
    // journal's first use) stays out of what `import 'teamgames-sdk'` loads.
    ...shared,
    entry: library,
    format: ['esm'],
    splitting: true,
    dts: true,
  },
  {
    // CJS: one file per entry (tsup's CJS splitting is experimental). The shim gives
    // `import.meta.url` (the mock loads msw on first use with `createRequire`) a value.
    ...shared,
    entry: library,
    format: ['cjs'],
    shims: true,
    dts: true,
  },
  {
    // The `teamgames-mock` and `teamgames` bins: ESM only, like the package.
    ...shared,
    entry: { 'mock/cli': 'src/mock/cli.ts', 'cli/index': 'src/cli/index.ts' },
    format: ['esm'],
    dts: false,
  },
]);
