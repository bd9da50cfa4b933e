/**
 * The house says what it is (issue #45): ARCHITECTURE.md's folder map names every folder
 * of `src/`, no folder outside the mock holds more than 15 files, a room of
 * `src/delivery/` is entered only through its `index.ts`, and no import runs back up the
 * floors (the one table: test/support/floors.ts). Each rule has a self-test that it can fail.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { roomBreaches, upArrows, type Arrow } from '../support/floors.js';
import { importEdgesOf } from '../support/import-graph.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function folders(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [join(dir, e.name), ...folders(join(dir, e.name))]);
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

function arrowsOf(files: readonly string[]): Arrow[] {
  return files.flatMap((from) => importEdgesOf(join(ROOT, from), readFileSync(join(ROOT, from), 'utf8')).map((e) => ({ from, to: relative(ROOT, e.target) })));
}

/** The folders a folder map (the ```text block under "## The folders") names, as paths: `src/journals/file`. */
function mappedFolders(markdown: string): Set<string> {
  const block = /## The folders\s*```text\n([\s\S]*?)```/.exec(markdown)?.[1] ?? '';
  const named = new Set<string>();
  const stack: string[] = [];
  for (const line of block.split('\n')) {
    const match = /^( *)([\w.-]+)\/(?:\s|$)/.exec(line);
    if (match === null) continue;
    const depth = (match[1] as string).length / 2;
    stack.length = depth;
    stack.push(match[2] as string);
    named.add(stack.join('/'));
  }
  return named;
}

/** The folders of `src/` the map does not name, and the names of the map under `src/` no folder has. */
function mapProblems(map: Set<string>, actual: readonly string[]): string[] {
  const missing = actual.filter((f) => !map.has(f)).map((f) => `not in the map: ${f}`);
  const stale = [...map].filter((f) => f.startsWith('src/') && !actual.includes(f)).map((f) => `no such folder: ${f}`);
  return [...missing, ...stale];
}

/** The folders holding more than `max` .ts files of their own. */
function crowded(files: readonly string[], max: number): string[] {
  const count = new Map<string, number>();
  for (const file of files) count.set(dirname(file), (count.get(dirname(file)) ?? 0) + 1);
  return [...count].filter(([, n]) => n > max).map(([folder, n]) => `${folder} (${n} files)`);
}

// Folders over 15 files kept for now, each with why.
const CROWDED_FOR_A_REASON: Record<string, string> = {};

describe('the house says what it is', () => {
  const src = sources('src');

  it("every folder under src/ is named in ARCHITECTURE.md's folder map, and the map names no folder that is gone", () => {
    expect(mapProblems(mappedFolders(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8')), folders('src'))).toEqual([]);
  });

  it('the map check fails on a folder the map does not name, and on a name with no folder', () => {
    const map = mappedFolders('## The folders\n\n```text\nsrc/\n  wire/     what the service answers\n    gone/   renamed since\n  index.ts\n```\n');
    expect([...map]).toEqual(['src', 'src/wire', 'src/wire/gone']);
    expect(mapProblems(map, ['src/wire', 'src/delivery'])).toEqual(['not in the map: src/delivery', 'no such folder: src/wire/gone']);
  });

  it('no folder of src/ outside src/mock/ holds more than 15 .ts files', () => {
    const over = crowded(src.filter((f) => !f.startsWith('src/mock/')), 15);
    expect(over.filter((folder) => !(folder in CROWDED_FOR_A_REASON))).toEqual([]);
    // A folder back under the bound drops its reason.
    expect(Object.keys(CROWDED_FOR_A_REASON).filter((folder) => !over.includes(folder))).toEqual([]);
  });

  it('the count fails on a folder of 16 files', () => {
    const many = Array.from({ length: 16 }, (_, i) => `src/delivery/f${i}.ts`);
    expect(crowded([...many, 'src/delivery/core/a.ts'], 15)).toEqual(['src/delivery (16 files)']);
  });

  it('a room of src/delivery/ is imported from outside it only through its index.ts', () => {
    expect(roomBreaches(arrowsOf(src))).toEqual([]);
  });

  it('the room check fails on an import of a room’s internals from another room or from src/, and passes inside a room', () => {
    const arrows = [
      { from: 'src/delivery/loop/scheduler.ts', to: 'src/delivery/engine/report.ts' },
      { from: 'src/client.ts', to: 'src/delivery/votes/votes.ts' },
      { from: 'src/client.ts', to: 'src/delivery/votes/index.ts' },
      { from: 'src/delivery/loop/scheduler.ts', to: 'src/delivery/loop/player.ts' },
    ];
    expect(roomBreaches(arrows)).toEqual(['src/delivery/loop/scheduler.ts -> src/delivery/engine/report.ts', 'src/client.ts -> src/delivery/votes/votes.ts']);
  });

  it('no import runs back up the floors, type-only ones included', () => {
    expect(upArrows(arrowsOf(src))).toEqual([]);
  });

  it('the floors check fails on an arrow up, and on a unit no floor names', () => {
    const arrows = [
      { from: 'src/wire/checkout.ts', to: 'src/internal/validate.ts' },
      { from: 'src/internal/validate.ts', to: 'src/errors.ts' },
      { from: 'src/somewhere/new.ts', to: 'src/errors.ts' },
    ];
    expect(upArrows(arrows)).toEqual(['src/wire/checkout.ts (2) -> src/internal/validate.ts (3)', 'src/somewhere/new.ts -> src/errors.ts (unplaced: src/somewhere)']);
  });
});
