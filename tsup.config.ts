import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'mock/index': 'src/mock/index.ts',
    'mock/cli': 'src/mock/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: { entry: { index: 'src/index.ts', 'mock/index': 'src/mock/index.ts' } },
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  splitting: false,
  treeshake: true,
  external: ['ky', 'zod', 'msw'],
});
