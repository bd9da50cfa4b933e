/**
 * `npm run graph`: the import graph of `src/`, as figures for a reader (issue #45). Prints
 * each folder (to the room level: `src/delivery/loop`) with its files and lines, the
 * folder-to-folder import edges with their counts (value and type-only apart, `import()`
 * marked), the imports that run back up the floors (the one table of floors,
 * `test/support/floors.ts`, which test/architecture/ holds the sources to), and the
 * cycles, file by file and unit by unit (folders, rooms, the files at the top of `src/`). A figure, not a test: it exits 0.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOORS, floorOf, unitOf } from '../test/support/floors.js';
import { cycles, importEdgesOf, type ImportEdge } from '../test/support/import-graph.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
    .sort();
}

const files = sources('src');
const edges = new Map<string, (ImportEdge & { from: string; to: string })[]>();
const graph = new Map<string, string[]>();
const lines = new Map<string, number>();
for (const file of files) {
  const text = readFileSync(join(ROOT, file), 'utf8');
  lines.set(file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0));
  const out = importEdgesOf(join(ROOT, file), text).map((e) => ({ ...e, from: file, to: relative(ROOT, e.target) }));
  edges.set(file, out);
  graph.set(file, out.map((e) => e.to));
}

console.log('# folders (files, lines)');
const folders = [...new Set(files.map((f) => dirname(f)))].sort();
for (const folder of folders) {
  const inside = files.filter((f) => dirname(f) === folder);
  console.log(`${folder.padEnd(28)} files=${String(inside.length).padStart(2)} lines=${inside.reduce((n, f) => n + (lines.get(f) ?? 0), 0)}`);
}

console.log('\n# folder edges (value imports, type-only imports; lazy = of them by import())');
const count = new Map<string, { value: number; type: number; lazy: number }>();
for (const edge of [...edges.values()].flat()) {
  const [a, b] = [dirname(edge.from), dirname(edge.to)];
  if (a === b) continue;
  const key = `${a} -> ${b}`;
  const c = count.get(key) ?? { value: 0, type: 0, lazy: 0 };
  if (edge.typeOnly) c.type += 1;
  else c.value += 1;
  if (edge.lazy) c.lazy += 1;
  count.set(key, c);
}
for (const [key, c] of [...count].sort(([a], [b]) => a.localeCompare(b))) console.log(`${key.padEnd(50)} value=${c.value} type=${c.type}${c.lazy > 0 ? ` lazy=${c.lazy}` : ''}`);

console.log('\n# floors (lowest first)');
FLOORS.forEach((units, i) => console.log(`${i}: ${units.join(' ')}`));

console.log('\n# imports running back up the floors (importer floor < imported floor)');
let up = 0;
for (const edge of [...edges.values()].flat()) {
  const [from, to] = [unitOf(edge.from), unitOf(edge.to)];
  const [a, b] = [floorOf(from), floorOf(to)];
  if (a === undefined || b === undefined) console.log(`unplaced: ${a === undefined ? from : to}`);
  else if (a < b) {
    up += 1;
    console.log(`${edge.from} (${a}) -> ${edge.to} (${b})${edge.typeOnly ? ' type-only' : ''}${edge.lazy ? ' import()' : ''}`);
  }
}
console.log(`up=${up}`);

console.log('\n# cycles, file level (type-only imports included)');
const fileCycles = cycles(graph);
for (const c of fileCycles) console.log(c.join(' <-> '));
console.log('\n# cycles, unit level (a folder, a room of src/delivery, a file at the top of src/; type-only imports included)');
const unitGraph = new Map<string, string[]>();
for (const [file, targets] of graph) {
  const list = unitGraph.get(unitOf(file)) ?? [];
  for (const t of targets) if (unitOf(t) !== unitOf(file)) list.push(unitOf(t));
  unitGraph.set(unitOf(file), list);
}
const unitCycles = cycles(unitGraph);
for (const c of unitCycles) console.log(c.join(' <-> '));
console.log(`\ngraph folders=${folders.length} files=${files.length} up=${up} file_cycles=${fileCycles.length} unit_cycles=${unitCycles.length} lazy_imports=${[...edges.values()].flat().filter((e) => e.lazy).length}`);
