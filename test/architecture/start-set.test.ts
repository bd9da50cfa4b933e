/**
 * What a program that only lists the catalog and claims loads at start (#35): bundled from
 * the sources the way bridges ship (esbuild, code splitting), the modules of delivery,
 * the loop, staff and the journals' entry checks must sit in chunks loaded on first use.
 * A static import of one of them from the client's import path (even of a module a lazy
 * chunk also uses) puts it back at start; `npm run bench` prints the bytes.
 */
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

async function loadedAtStart(program: string): Promise<Set<string>> {
  const result = await build({
    stdin: { contents: `import { StorefrontClient } from ${JSON.stringify(resolve('src/index.ts'))};\n${program}`, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    write: false,
    splitting: true,
    outdir: 'start-set',
    metafile: true,
    logLevel: 'error',
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((name) => outputs[name]!.entryPoint !== undefined)!;
  const chunks = new Set<string>([entry]);
  for (const name of chunks) for (const imported of outputs[name]!.imports) if (imported.kind === 'import-statement' && !imported.external) chunks.add(imported.path);
  const modules = new Set<string>();
  for (const name of chunks) for (const [input, { bytesInOutput }] of Object.entries(outputs[name]!.inputs)) if (bytesInOutput > 0) modules.add(input);
  return modules;
}

describe('the quick start loads at start only what it calls', () => {
  it('leaves the loop, staff, the inspection and the entries checks to first use', async () => {
    const atStart = await loadedAtStart(`const client = new StorefrontClient();
const { products } = await client.getCatalog();
console.log(products.length, (await client.claim('Player123')).code);`);
    expect([...atStart].some((m) => m.endsWith('src/client.ts'))).toBe(true);
    const late = ['src/delivery/loop/scheduler.ts', 'src/delivery/loop/player.ts', 'src/delivery/inspect/inspect.ts', 'src/delivery/staff/staff.ts', 'src/delivery/engine/modes.ts', 'src/delivery/votes/votes.ts', 'src/journals/entry-checks.ts', 'src/journals/vote-entries.ts', 'src/journals/file/store.ts'];
    expect(late.filter((m) => atStart.has(m))).toEqual([]);
  }, 30_000);
});
