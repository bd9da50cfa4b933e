/**
 * The crash campaign's programs, bundled from the sources with esbuild at start: the
 * worker (scripts/crash/worker/main.ts) and the mock (scripts/crash/mock.ts) load in a
 * fraction of tsx's time, which is the restart the kills measure.
 *
 * @module
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { root } from './children.js';
import { NODE_BUNDLE } from './node-bundle.js';
import { CLUSTER } from './options.js';

const here = dirname(fileURLToPath(import.meta.url));
const bundleDir = join(root, 'bundle');

export interface Bundles {
  worker: string;
  mock: string;
}

export async function bundle(): Promise<Bundles> {
  const startedAt = performance.now();
  await build({
    ...NODE_BUNDLE,
    entryPoints: { 'crash-worker': join(here, 'worker', 'main.ts'), 'crash-mock': join(here, 'mock.ts') },
    outdir: bundleDir,
    outExtension: { '.js': '.mjs' },
    // The database drivers are imported only by database nodes: chunks of their own then,
    // and left out of the FileJournal campaign's bundle (pg-native: pg's optional binding).
    splitting: CLUSTER,
    chunkNames: 'chunks/[name]-[hash]',
    external: CLUSTER ? ['pg-native'] : ['pg-native', 'pg', 'mysql2', 'mysql2/promise'],
  });
  process.stderr.write(`crash: bundled the worker and the mock in ${((performance.now() - startedAt) / 1000).toFixed(1)} s\n`);
  return { worker: join(bundleDir, 'crash-worker.mjs'), mock: join(bundleDir, 'crash-mock.mjs') };
}
