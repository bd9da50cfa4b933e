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

/**
 * The README's quick start (a client, a catalog, a claim) bundled the way bridges ship it
 * (esbuild, minified), ky and zod included, by package, so the figure says whose bytes
 * they are.
 */
async function quickStartSize(): Promise<Size & { byPackage: Record<string, number>; zodClassic: boolean }> {
  const result = await build({
    stdin: {
      contents: `import { StorefrontClient } from ${JSON.stringify(resolvePath('dist/index.js'))};
const client = new StorefrontClient();
const { products } = await client.getCatalog();
console.log(products.length, (await client.claim('Player123')).code);`,
      resolveDir: process.cwd(),
      loader: 'js',
    },
    ...BUNDLED,
    metafile: true,
  });
  const code = result.outputFiles[0]!.contents;
  const byPackage: Record<string, number> = {};
  const inputs = Object.keys(result.metafile.inputs);
  for (const [input, { bytesInOutput }] of Object.entries(Object.values(result.metafile.outputs)[0]!.inputs)) {
    const name = input.includes('node_modules/') ? (input.split('node_modules/')[1]!.split('/')[0] as string) : 'teamgames-sdk';
    byPackage[name] = (byPackage[name] ?? 0) + bytesInOutput;
  }
  // The main entry reads answers with zod/mini; classic zod (the mock's) must stay out.
  const zodClassic = inputs.some((input) => /node_modules\/zod\/(v4\/)?classic\//.test(input));
  return { minified: code.length, gzipped: gzipSync(code).length, byPackage, zodClassic };
}

/** A size in kB, as every size line prints it. */
export const kB = (bytes: number) => `${(bytes / 1024).toFixed(2)} kB`;

export interface Sizes {
  own: Awaited<ReturnType<typeof bundleSize>>;
  all: Awaited<ReturnType<typeof bundleSize>>;
  quickStart: Awaited<ReturnType<typeof quickStartSize>>;
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
  const quickStart = await quickStartSize();
  const parts = Object.entries(quickStart.byPackage).map(([name, bytes]) => `${name} ${kB(bytes)}`).join(', ');
  console.log(`size: the quick start bundled (esbuild, minified, ky and zod included): ${kB(quickStart.minified)}, ${kB(quickStart.gzipped)} gzipped (${quickStartTarget(quickStart)}; minified by package: ${parts}; zod classic: ${quickStart.zodClassic ? 'YES' : 'no'})`);
  const pack = packSize();
  console.log(`size: the package ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked (${pack.files} files; source maps ${kB(pack.maps)})`);
  return { own, all, quickStart, pack };
}

/** Whether the quick start meets its budget, as the lines say it. */
const quickStartTarget = (quickStart: Size) => `target <= ${kB(QUICK_START_TARGET_GZIPPED)}: ${quickStart.gzipped <= QUICK_START_TARGET_GZIPPED ? 'met' : 'MISSED'}`;

/** The summary lines of the sizes. */
export const sizeLines = ({ pack, quickStart }: Sizes): string[] => [
  `bench package: ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked`,
  `bench quickstart bundle: ${kB(quickStart.gzipped)} gzipped (${kB(quickStart.minified)} minified; ${quickStartTarget(quickStart)})`,
];
