import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  splitting: false,
  treeshake: true,
  // Dependencies stay dependencies; msw is the mock's optional peer.
  external: ['ky', 'zod', 'msw'],
};

// dist is emptied by the build script, not here: the two configs run concurrently.
export default defineConfig([
  {
    ...shared,
    entry: { index: 'src/index.ts', 'mock/index': 'src/mock/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: false,
  },
  {
    // The `teamgames-mock` bin: ESM only, like the package.
    ...shared,
    entry: { 'mock/cli': 'src/mock/cli.ts', 'cli/index': 'src/cli/index.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
  },
]);
