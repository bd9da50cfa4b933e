/**
 * What the SDK weighs: the ESM entry bundled (without and with ky and zod, and what it
 * loads only on first use), the README's quick start bundled, and the package as npm
 * packs it.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { relative, resolve as resolvePath } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

interface Size {
  minified: number;
  gzipped: number;
}

/** How every size here is bundled: the way bridges ship (esbuild, minified, ESM for Node), in memory. */
const BUNDLED = { bundle: true, minify: true, format: 'esm', platform: 'node', write: false } as const;

/**
 * What `import 'teamgames-sdk'` loads, minified and gzipped: dist/index.js and what it
 * imports statically. Code behind a dynamic import() (today the file journal's store)
 * loads on first use and is measured apart, without what the entry already loaded.
 */
async function bundleSize(withDependencies: boolean): Promise<Size & { pullsMock: boolean; lazy: (Size & { files: string[] }) | undefined }> {
  const external = withDependencies ? [] : ['ky', 'zod'];
  const lazyFiles = new Set<string>();
  const result = await build({
    ...BUNDLED,
    entryPoints: ['dist/index.js'],
    metafile: true,
    external,
    plugins: [
      {
        name: 'lazy-chunks',
        setup: (b) =>
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind !== 'dynamic-import') return undefined;
            lazyFiles.add(relative(process.cwd(), resolvePath(args.resolveDir, args.path)));
            return { path: args.path, external: true };
          }),
      },
    ],
  });
  const code = result.outputFiles[0]!.contents;
  const loaded = new Set(Object.keys(result.metafile.inputs));
  const pullsMock = [...loaded].some((input) => input.includes('mock') || input.includes('msw'));
  // The lazy parts are sized without dependencies only: they import ky and zod, which the
  // entry has loaded already.
  const lazy = withDependencies ? undefined : await lazySize([...lazyFiles], loaded, external);
  return { minified: code.length, gzipped: gzipSync(code).length, pullsMock, lazy };
}

/** The lazily loaded chunks together, without the modules the entry already loaded. */
async function lazySize(files: string[], loaded: Set<string>, external: string[]): Promise<Size & { files: string[] }> {
  const result = await build({
    ...BUNDLED,
    entryPoints: files,
    outdir: 'lazy',
    splitting: true,
    external,
    plugins: [
      {
        name: 'already-loaded',
        setup: (b) =>
          b.onResolve({ filter: /^\./ }, (args) => {
            const path = relative(process.cwd(), resolvePath(args.resolveDir, args.path));
            return loaded.has(path) || args.kind === 'dynamic-import' ? { path: args.path, external: true } : undefined;
          }),
      },
    ],
  });
  let minified = 0;
  let gzipped = 0;
  for (const file of result.outputFiles) {
    minified += file.contents.length;
    gzipped += gzipSync(file.contents).length;
  }
  return { minified, gzipped, files: files.map((f) => f.replace(/^dist\//, '').replace(/-[A-Z0-9]{8}\.js$/, '')) };
}

/** What `npm publish` would upload (the tarball) and what `npm install` unpacks, from `npm pack --dry-run`. */
function packSize(): { packed: number; unpacked: number; files: number; maps: number } {
  const { stdout, status } = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (status !== 0) throw new Error(`npm pack --dry-run: exit ${status}`);
  const [report] = JSON.parse(stdout) as [{ size: number; unpackedSize: number; entryCount: number; files: { path: string; size: number }[] }];
  const maps = report.files.filter((f) => f.path.endsWith('.map')).reduce((sum, f) => sum + f.size, 0);
  return { packed: report.size, unpacked: report.unpackedSize, files: report.entryCount, maps };
}

/** The budget for the quick start bundled, ky and zod included (#15). */
const QUICK_START_TARGET_GZIPPED = 40 * 1024;
/** #35: the package unpacks to at most 1.5 MB (1,500,000 bytes), source maps and guides included. */
const PACKAGE_TARGET_UNPACKED = 1_500_000;

/** The README's quick start: a client, a catalog, a claim. */
const QUICK_START = `const client = new StorefrontClient();
const { products } = await client.getCatalog();
console.log(products.length, (await client.claim('Player123')).code);`;

/** A web shop that only lists the catalog and checks out (no delivery, no loop, no staff). */
const WEB_SHOP = `const client = new StorefrontClient();
const { products } = await client.getCatalog();
const result = await client.checkout({ username: 'Player123', items: [{ id: products[0].id, quantity: 1 }] });
console.log(result.code);`;

/**
 * A program using the SDK bundled the way bridges ship it (esbuild, minified, code
 * splitting so what the SDK loads by `import()` on first use lands in chunks of its own),
 * ky and zod included: what the program loads at start (its entry and the chunks it
 * imports statically), by package so the figure says whose bytes they are, and apart what
 * it would load only on first use (delivery, the loop's deliveries, vote rewards, the file
 * journal's store), never for a program that does not call them.
 */
async function programSize(program: string): Promise<Size & { byPackage: Record<string, number>; zodClassic: boolean; onFirstUse: Size }> {
  const result = await build({
    stdin: {
      contents: `import { StorefrontClient } from ${JSON.stringify(resolvePath('dist/index.js'))};\n${program}`,
      resolveDir: process.cwd(),
      loader: 'js',
    },
    ...BUNDLED,
    splitting: true,
    outdir: 'program',
    metafile: true,
  });
  const outputs = result.metafile.outputs;
  const entry = Object.keys(outputs).find((name) => outputs[name]!.entryPoint !== undefined)!;
  // The entry and what it imports statically, transitively: what loads at start.
  const atStart = new Set<string>([entry]);
  for (const name of atStart) for (const imported of outputs[name]!.imports) if (imported.kind === 'import-statement' && !imported.external) atStart.add(imported.path);
  const byPackage: Record<string, number> = {};
  const inputs = new Set<string>();
  let minified = 0;
  let gzipped = 0;
  const onFirstUse = { minified: 0, gzipped: 0 };
  for (const file of result.outputFiles) {
    const name = relative(process.cwd(), file.path);
    if (!atStart.has(name)) {
      onFirstUse.minified += file.contents.length;
      onFirstUse.gzipped += gzipSync(file.contents).length;
      continue;
    }
    minified += file.contents.length;
    gzipped += gzipSync(file.contents).length;
    for (const [input, { bytesInOutput }] of Object.entries(outputs[name]!.inputs)) {
      inputs.add(input);
      const owner = input.includes('node_modules/') ? (input.split('node_modules/')[1]!.split('/')[0] as string) : 'teamgames-sdk';
      byPackage[owner] = (byPackage[owner] ?? 0) + bytesInOutput;
    }
  }
  // The main entry reads answers with zod/mini; classic zod (the mock's) must stay out.
  const zodClassic = [...inputs].some((input) => /node_modules\/zod\/(v4\/)?classic\//.test(input));
  return { minified, gzipped, byPackage, zodClassic, onFirstUse };
}

/** A size in kB, as every size line prints it. */
export const kB = (bytes: number) => `${(bytes / 1024).toFixed(2)} kB`;

export interface Sizes {
  own: Awaited<ReturnType<typeof bundleSize>>;
  all: Awaited<ReturnType<typeof bundleSize>>;
  quickStart: Awaited<ReturnType<typeof programSize>>;
  webShop: Awaited<ReturnType<typeof programSize>>;
  pack: ReturnType<typeof packSize>;
}

/** Every size, printed. */
export async function sizes(): Promise<Sizes> {
  const own = await bundleSize(false);
  const all = await bundleSize(true);
  console.log(
    `size: ESM entry min+gz ${kB(own.gzipped)} (${own.gzipped} bytes) without dependencies, ${kB(all.gzipped)} with ky and zod; ` +
      `mock pulled in by the main entry: ${own.pullsMock || all.pullsMock ? 'YES' : 'no'}`,
  );
  console.log(`size: loaded on first use, not on import: ${kB(own.lazy!.gzipped)} min+gz (${own.lazy!.files.join(', ')})`);
  const quickStart = await programSize(QUICK_START);
  const parts = Object.entries(quickStart.byPackage).map(([name, bytes]) => `${name} ${kB(bytes)}`).join(', ');
  console.log(
    `size: the quick start bundled (esbuild, minified, splitting, ky and zod included), loaded at start: ${kB(quickStart.minified)}, ${kB(quickStart.gzipped)} gzipped ` +
      `(${quickStartTarget(quickStart)}; minified by package: ${parts}; zod classic: ${quickStart.zodClassic ? 'YES' : 'no'}); on first use only: ${kB(quickStart.onFirstUse.gzipped)} gzipped`,
  );
  const webShop = await programSize(WEB_SHOP);
  console.log(
    `size: a web shop bundled (catalog and checkout only; esbuild, minified, splitting, ky and zod included), loaded at start: ${kB(webShop.minified)}, ${kB(webShop.gzipped)} gzipped ` +
      `(${quickStartTarget(webShop)}); on first use only: ${kB(webShop.onFirstUse.gzipped)} gzipped`,
  );
  const pack = packSize();
  console.log(`size: the package ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked (${pack.files} files; source maps ${kB(pack.maps)}; ${packageTarget(pack)})`);
  return { own, all, quickStart, webShop, pack };
}

/** Whether the quick start meets its budget, as the lines say it. */
const quickStartTarget = (quickStart: Size) => `target <= ${kB(QUICK_START_TARGET_GZIPPED)}: ${quickStart.gzipped <= QUICK_START_TARGET_GZIPPED ? 'met' : 'MISSED'}`;

/** Whether the package meets its budget, as the lines say it. */
const packageTarget = (pack: { unpacked: number }) => `target <= ${kB(PACKAGE_TARGET_UNPACKED)} unpacked: ${pack.unpacked <= PACKAGE_TARGET_UNPACKED ? 'met' : 'MISSED'}`;

/** The summary lines of the sizes. */
export const sizeLines = ({ pack, quickStart, webShop }: Sizes): string[] => [
  `bench package: ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked (${packageTarget(pack)})`,
  `bench quickstart bundle: ${kB(quickStart.gzipped)} gzipped (${kB(quickStart.minified)} minified; ${quickStartTarget(quickStart)})`,
  `bench web shop bundle: ${kB(webShop.gzipped)} gzipped (${kB(webShop.minified)} minified; ${quickStartTarget(webShop)})`,
];
