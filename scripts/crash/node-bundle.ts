/**
 * The esbuild options of every program the crash campaigns bundle (the worker, the mock,
 * the lock campaign's probe): Node 20, ESM, with a `require` of its own.
 *
 * @module
 */
import type { BuildOptions } from 'esbuild';

/** What every bundle of the crash campaigns is built with (the lock campaign's probe too). */
export const NODE_BUNDLE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'error',
  // Some dependencies call require(); an ESM bundle has none of its own.
  banner: { js: "import { createRequire as __crashRequire } from 'node:module'; const require = __crashRequire(import.meta.url);" },
};
