import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests and examples import the package by its public name, resolved to the sources
// (the same mapping as tsconfig's `paths`, which tsx uses for the demo and examples).
const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^teamgames-sdk\/mock$/, replacement: src('mock/index.ts') },
      { find: /^teamgames-sdk$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    testTimeout: 10_000,
  },
});
