/**
 * The layout's rule: no import cycle in `src/`, `scripts/` or `test/support/`, type-only
 * imports included (a type cycle still ties two modules together for whoever reads or moves
 * them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, importsOf } from '../support/import-graph.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('the import graph of src/, scripts/ and test/support/', () => {
  it.each(['src', 'scripts', 'test/support'])('%s has no cycle, type-only imports included', (folder) => {
    const graph = new Map(sources(join(ROOT, folder)).map((file) => [file, importsOf(file, readFileSync(file, 'utf8'))]));
    expect(cycles(graph).map((c) => c.map((f) => relative(ROOT, f)))).toEqual([]);
  });

  it('the check finds a type-only cycle (so it cannot pass by reading nothing)', () => {
    const a = '/x/a.ts';
    const b = '/x/b.ts';
    const graph = new Map([
      [a, importsOf(a, "import type { B } from './b.js';")],
      [b, importsOf(b, "export type { A } from './a.js';")],
    ]);
    expect(cycles(graph)).toEqual([[a, b]]);
  });
});
