/**
 * `npm run bench`: what the SDK costs over calling the API by hand.
 *
 * Starts the mock over HTTP in a child process (so client and server do not share a
 * core) and times each operation three ways on the same server, interleaved in rounds:
 * (a) raw fetch with hand-built headers and bodies, (b) a bare ky call with the same
 * request and no validation, (c) the SDK (cache off, local guard off, a distinct player
 * per call so the service answers the same code every time). Sequential latency
 * (p50/p99) and throughput at concurrency 32. The final ratios are medians of ratios
 * taken within each round, where the three ways ran back to back. Then in-process
 * validation cost, cold import cost and bundle size, and how long an exactly-once
 * `deliver` waits between its preview and its claim, and the deliveries per second through
 * each journal (file, PostgreSQL, MariaDB) at concurrency 50. Figures go to
 * bench-results.json (git-ignored).
 *
 * Flags: --rounds N (default 7), --iterations N per round and way (default 45),
 * --concurrent N calls per concurrency batch (default 256), --quick (CI: small numbers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import ky from 'ky';
import { FileJournal, MemoryJournal, StorefrontClient, type DeliveryJournal } from 'teamgames-sdk';
import { readCatalog } from '../src/wire/catalog.js';
import { readClaim } from '../src/wire/claim.js';
import type { MockSeed } from 'teamgames-sdk/mock';
import { ENGINES, NotInstalledError, useDatabase, type DatabaseServer, type Engine } from '../test/support/throwaway-databases.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    iterations: { type: 'string', default: '45' },
    concurrent: { type: 'string', default: '256' },
    quick: { type: 'boolean', default: false },
  },
});
const ROUNDS = flags.quick ? 3 : Number(flags.rounds);
const ITERATIONS = flags.quick ? 10 : Number(flags.iterations);
const CONCURRENT_CALLS = flags.quick ? 64 : Number(flags.concurrent);
const CONCURRENCY = 32;
const WARMUP = flags.quick ? 10 : 50;

// ---------------------------------------------------------------------------
// The service under test

const SMALL_KEY = 'bench-small-key';
const LARGE_KEY = 'bench-large-key';

function product(id: number) {
  return {
    id,
    productId: id % 3 === 0 ? `item_${id}` : 1000 + id,
    name: `Product ${id}`,
    price: 1 + (id % 50),
    quantity: 1 + (id % 5),
    description: `A benchmark product number ${id} with a description of ordinary length.`,
    image: `https://example.com/img/${id}.png`,
    categoryIds: [1],
    sales: id % 4 === 0 ? [{ saleType: 'percentage' as const, discountPercentage: 10 }] : [],
  };
}

const seed: MockSeed = {
  servers: [
    {
      apiKey: SMALL_KEY,
      name: 'Bench small',
      categories: [{ id: 1, name: 'All' }],
      products: Array.from({ length: 8 }, (_, i) => product(i + 1)),
      rewards: [{ id: 1, name: 'Box', cost: 1 }],
    },
    {
      apiKey: LARGE_KEY,
      name: 'Bench large',
      categories: [{ id: 1, name: 'All' }],
      products: Array.from({ length: 500 }, (_, i) => product(i + 1)),
    },
  ],
};

async function startMock(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-'));
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(seed));
  const child = spawn(process.execPath, ['dist/mock/cli.js', '--port', '0', '--seed', seedFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (match) resolve(match[0]);
    });
    child.once('exit', (code) => reject(new Error(`mock exited early (${code})`)));
  });
  return { url, child, dir };
}

// ---------------------------------------------------------------------------
// The three ways of calling each operation

type Way = 'raw' | 'ky' | 'sdk';
type Call = (i: number) => Promise<unknown>;
const b64 = (key: string) => Buffer.from(key).toString('base64');

let sequence = 0;
const player = () => `bench_${++sequence}`;

function operations(url: string): Record<string, Record<Way, Call>> {
  const sdk = (apiKey: string) => new StorefrontClient({ apiKey, baseUrl: url, catalogCacheTtlMs: 0, rateLimit: false, retry: 0 });
  const small = sdk(SMALL_KEY);
  const large = sdk(LARGE_KEY);
  const bare = ky.create({ prefixUrl: url, retry: 0, timeout: 15_000 });
  const json = (key: string) => ({ authorization: b64(key), 'content-type': 'application/json', accept: 'application/json' });
  const form = { 'x-api-key': SMALL_KEY, 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', accept: 'application/json' };
  const post = (path: string, headers: Record<string, string>, body: string) =>
    fetch(`${url}/${path}`, { method: 'POST', headers, body }).then((r) => r.json());
  const kyPost = (path: string, headers: Record<string, string>, body: string) => bare.post(path, { headers, body }).json();
  const cart = () => JSON.stringify({ username: player(), cartItems: JSON.stringify([{ id: 1, quantity: 1 }]) });

  const catalog = (key: string, client: StorefrontClient): Record<Way, Call> => ({
    raw: () => post('api/v2/client/global/products', json(key), '{}'),
    ky: () => kyPost('api/v2/client/global/products', json(key), '{}'),
    sdk: () => client.getCatalog(),
  });
  return {
    catalog: catalog(SMALL_KEY, small),
    catalog500: catalog(LARGE_KEY, large),
    checkout: {
      raw: () => post('api/v2/client/global/checkout/complete', json(SMALL_KEY), cart()),
      ky: () => kyPost('api/v2/client/global/checkout/complete', json(SMALL_KEY), cart()),
      sdk: () => small.checkout({ username: player(), items: [{ id: 1, quantity: 1 }] }),
    },
    claim: {
      raw: () => post('api/v4/store/transaction/update', json(SMALL_KEY), JSON.stringify({ playerName: player(), preview: false, includeRawTransactions: false })),
      ky: () => kyPost('api/v4/store/transaction/update', json(SMALL_KEY), JSON.stringify({ playerName: player(), preview: false, includeRawTransactions: false })),
      sdk: () => small.claim(player()),
    },
    claimLegacy: {
      raw: () => post('api/v3/store/transaction/update', { ...json(SMALL_KEY), authorization: '', 'x-api-key': SMALL_KEY }, JSON.stringify({ playerName: player() })),
      ky: () => kyPost('api/v3/store/transaction/update', { ...json(SMALL_KEY), authorization: '', 'x-api-key': SMALL_KEY }, JSON.stringify({ playerName: player() })),
      sdk: () => small.claimLegacy(player()),
    },
    vote: {
      raw: () => post('v3/vote/reward/claim', form, new URLSearchParams({ player: player(), reward: '1', amount: 'all' }).toString()),
      ky: () => kyPost('v3/vote/reward/claim', form, new URLSearchParams({ player: player(), reward: '1', amount: 'all' }).toString()),
      sdk: () => small.claimVoteReward({ player: player(), reward: '1', amount: 'all' }),
    },
  };
}

// ---------------------------------------------------------------------------
// Measurement

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function sequential(call: Call, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await call(i);
    into.push(performance.now() - start);
  }
}

/** Calls per second with `CONCURRENCY` calls in flight. */
async function throughput(call: Call, total: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        next++;
        await call(next);
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
}

/** Ratios of the SDK over raw fetch and over bare ky, each the median of per-round ratios. */
interface Ratios {
  p50: number;
  p99: number;
  throughput: number;
  vsKy: number;
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/**
 * Each round runs the three ways back to back (in a shuffled order), so a ratio taken
 * within a round compares calls made under the same machine conditions; the reported
 * ratio is the median over rounds. Absolute figures (the table) pool every round.
 */
async function benchHttp(url: string): Promise<Record<string, { figures: Record<Way, Figures>; ratios: Ratios }>> {
  const ops = operations(url);
  const results: Record<string, { figures: Record<Way, Figures>; ratios: Ratios }> = {};
  for (const [name, ways] of Object.entries(ops)) {
    const latencies: Record<Way, number[][]> = { raw: [], ky: [], sdk: [] };
    const rates: Record<Way, number[]> = { raw: [], ky: [], sdk: [] };
    for (const way of ['raw', 'ky', 'sdk'] as const) await sequential(ways[way], WARMUP, []);
    for (let round = 0; round < ROUNDS; round++) {
      for (const way of shuffle(['raw', 'ky', 'sdk'] as Way[])) {
        const samples: number[] = [];
        await sequential(ways[way], ITERATIONS, samples);
        latencies[way].push(samples.sort((a, b) => a - b));
      }
      for (const way of shuffle(['raw', 'ky', 'sdk'] as Way[])) rates[way].push(await throughput(ways[way], CONCURRENT_CALLS));
    }
    const figures = Object.fromEntries(
      (['raw', 'ky', 'sdk'] as const).map((way) => {
        const all = latencies[way].flat().sort((a, b) => a - b);
        return [way, { p50: percentile(all, 50), p99: percentile(all, 99), rps: median(rates[way]) }];
      }),
    ) as Record<Way, Figures>;
    const perRound = (ratio: (round: number) => number) => median(Array.from({ length: ROUNDS }, (_, round) => ratio(round)));
    const p50 = (way: Way, round: number) => percentile(latencies[way][round]!, 50);
    results[name] = {
      figures,
      ratios: {
        p50: perRound((r) => p50('sdk', r) / p50('raw', r)),
        // One round holds too few calls for a p99 of its own: p99 compares the pooled calls.
        p99: figures.sdk.p99 / figures.raw.p99,
        throughput: perRound((r) => rates.sdk[r]! / rates.raw[r]!),
        vsKy: perRound((r) => p50('sdk', r) / p50('ky', r)),
      },
    };
  }
  return results;
}

/** µs per call: the median of several short windows, so one GC pause or a busy neighbour does not decide it. */
function microsPerCall(run: () => unknown, windows = 9, windowMs = 60): number {
  // Warm up for a while, not a few calls: V8 keeps optimizing zod's parsers for a few
  // hundred milliseconds, and the first figure measured in a process came out highest.
  for (const start = performance.now(); performance.now() - start < 300; ) run();
  const means: number[] = [];
  for (let w = 0; w < windows; w++) {
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < windowMs) {
      run();
      calls++;
    }
    means.push(((performance.now() - start) / calls) * 1000);
  }
  return percentile(means.sort((a, b) => a - b), 50);
}

/**
 * The bodies the validation figures parse: the mock's own answers (a 500-product catalog,
 * a claim preview of 200 purchases), so they have the shapes the HTTP rounds saw.
 */
async function validationBodies(url: string): Promise<{ catalogText: string; claimText: string }> {
  const post = async (path: string, headers: Record<string, string>, body: unknown) => {
    const response = await fetch(`${url}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    return response.text();
  };
  const playerName = 'bench_validation';
  for (let i = 0; i < 200; i++) await post('__mock/purchases', {}, { apiKey: SMALL_KEY, playerName, id: 1 + (i % 8) });
  const catalogText = await post('api/v2/client/global/products', { authorization: b64(LARGE_KEY) }, {});
  const claimText = await post('api/v4/store/transaction/update', { authorization: b64(SMALL_KEY) }, { playerName, preview: true, includeRawTransactions: false });
  const claims = (JSON.parse(claimText) as { data?: { claims?: unknown[] } }).data?.claims?.length;
  if (claims !== 200) throw new Error(`the claim preview lists ${claims} purchases, not 200`);
  return { catalogText, claimText };
}

function validationCost({ catalogText, claimText }: { catalogText: string; claimText: string }) {
  // Bodies arrive as text: JSON.parse is part of the cost, reported apart as well.
  const catalogParsed = JSON.parse(catalogText) as unknown;
  const claimParsed = JSON.parse(claimText) as unknown;
  return {
    catalog500Us: microsPerCall(() => readCatalog(JSON.parse(catalogText))),
    catalog500JsonParseUs: microsPerCall(() => JSON.parse(catalogText)),
    catalog500ValidateUs: microsPerCall(() => readCatalog(catalogParsed)),
    claim200Us: microsPerCall(() => readClaim(JSON.parse(claimText))),
    claim200JsonParseUs: microsPerCall(() => JSON.parse(claimText)),
    claim200ValidateUs: microsPerCall(() => readClaim(claimParsed)),
  };
}

/** One cold load in a fresh process: of the SDK, or of ky and zod alone. */
function coldLoadMs(kind: 'import' | 'require', target: 'sdk' | 'deps'): number {
  const code =
    kind === 'import'
      ? target === 'sdk'
        ? `const t = performance.now(); await import('teamgames-sdk'); process.stdout.write(String(performance.now() - t));`
        : `const t = performance.now(); await import('ky'); await import('zod'); process.stdout.write(String(performance.now() - t));`
      : target === 'sdk'
        ? `const t = performance.now(); require('teamgames-sdk'); process.stdout.write(String(performance.now() - t));`
        : `const t = performance.now(); require('ky'); require('zod'); process.stdout.write(String(performance.now() - t));`;
  const out = spawnSync(process.execPath, kind === 'import' ? ['--input-type=module', '-e', code] : ['-e', code], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${kind} ${target} failed: ${out.stderr}`);
  return Number(out.stdout);
}

/** Cold loads of the SDK and of ky + zod, in pairs: the ratio is the median of the pairs' ratios. */
function coldLoad(kind: 'import' | 'require', pairs = flags.quick ? 7 : 15): { sdkMs: number; depsMs: number; ratio: number } {
  const sdk: number[] = [];
  const deps: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    // Alternate which goes first, so neither always runs right after the other.
    let sdkMs: number;
    let depsMs: number;
    if (i % 2 === 0) {
      sdkMs = coldLoadMs(kind, 'sdk');
      depsMs = coldLoadMs(kind, 'deps');
    } else {
      depsMs = coldLoadMs(kind, 'deps');
      sdkMs = coldLoadMs(kind, 'sdk');
    }
    sdk.push(sdkMs);
    deps.push(depsMs);
    ratios.push(sdkMs / depsMs);
  }
  return { sdkMs: median(sdk), depsMs: median(deps), ratio: median(ratios) };
}

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

/** The issue's budget for the quick start bundled, ky and zod included (#15). */
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

/**
 * How long exactly-once `deliver` waits between its preview and its claim, against the
 * mock over HTTP. The mock's clock runs in real time; `sleep` moves it (and the client's
 * `now`) forward instead of waiting, so every request really crosses the loopback while
 * the 10 s windows cost nothing. The figure is the total a delivery slept: one window
 * less the preview's round trip when the claim is timed right, two when it arrives early.
 */
async function deliverWait(url: string, deliveries = flags.quick ? 10 : 40): Promise<{ p50: number; max: number; claimsRefused: number }> {
  let skew = 0;
  const admin = (path: string, body: unknown) =>
    fetch(`${url}/__mock/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => {
      if (!r.ok) throw new Error(`mock ${path}: HTTP ${r.status}`);
    });
  const client = new StorefrontClient({ apiKey: SMALL_KEY, baseUrl: url, journal: new MemoryJournal(), now: () => Date.now() + skew, retry: 0 });
  const waits: number[] = [];
  let claimsRefused = 0;
  for (let i = 0; i < deliveries; i++) {
    const name = player();
    await admin('purchases', { apiKey: SMALL_KEY, playerName: name, id: 1 + (i % 8), quantity: 1 });
    let slept = 0;
    const report = await client.deliver(name, () => {}, {
      sleep: async (ms) => {
        slept += ms;
        await admin('clock/advance', { ms });
        skew += ms;
      },
    });
    if (report.code !== 'SUCCESS') throw new Error(`bench deliver: ${report.code}`);
    if (slept > 10_000) claimsRefused += 1;
    waits.push(slept);
  }
  waits.sort((a, b) => a - b);
  return { p50: waits[Math.floor(waits.length / 2)] as number, max: waits[waits.length - 1] as number, claimsRefused };
}

type JournalKind = 'file' | Engine;
interface JournalFigure {
  journal: JournalKind;
  /** Deliveries per second, all timed rounds together; undefined when skipped. */
  rate?: number;
  deliveries: number;
  seconds: number;
  /** Per round, deliveries per second. */
  rounds: number[];
  skipped?: string;
}

const JOURNAL_CONCURRENCY = 50;

/**
 * Deliveries per second through each journal, against the mock over HTTP: exactly-once
 * mode (the default: preview, intent journaled, the 10 s window waited out by a `sleep`
 * that moves the mock's clock and the client's together, claim, grant, acknowledge),
 * one player per delivery with one purchase each, 50 deliveries in flight at once, a grant
 * that does nothing (the figure is the SDK and its journal, not a game). The file journal
 * fdatasyncs each write; the database servers are the throwaway ones of
 * test/support/throwaway-databases.ts (or TEAMGAMES_TEST_*_URL), whose fsync is off. The journals
 * take turns within each round, in a rotating order, so a drift of the mock (its rows
 * grow) or of the machine falls on all of them.
 */
async function journalBench(url: string, dir: string): Promise<{ figures: JournalFigure[]; fileNoFsync: number }> {
  const perRound = flags.quick ? 100 : 300;
  const rounds = flags.quick ? 2 : 3;
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const r = await fetch(`${url}/__mock/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`mock ${path}: HTTP ${r.status}`);
    return (await r.json()) as T;
  };
  // One clock for every client here, the mock's: each sleep moves both by the same amount.
  let skew = (await post<{ now: number }>('clock/advance', { ms: 0 })).now - Date.now();
  const now = () => Date.now() + skew;
  const sleep = async (ms: number) => {
    const step = Math.ceil(ms);
    await post('clock/advance', { ms: step });
    skew += step;
  };

  const servers: DatabaseServer[] = [];
  const closers: Array<() => Promise<void>> = [];
  const journals = new Map<JournalKind, DeliveryJournal>();
  const figures = new Map<JournalKind, JournalFigure>();
  const table = `bench_${process.pid.toString(36)}_${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  journals.set('file', new FileJournal(join(dir, 'journal.jsonl')));
  const fileNoFsyncJournal = new FileJournal(join(dir, 'journal-nofsync.jsonl'), { fsync: false });
  closers.push(async () => {
    await (journals.get('file') as FileJournal).close();
    await fileNoFsyncJournal.close();
  });

  // The servers start here, not during the HTTP rounds: initdb would take their cores.
  const started = performance.now();
  const engines: Engine[] = ['postgres', 'mysql'];
  const outcomes = await Promise.allSettled(engines.map((engine) => useDatabase(engine)));
  for (const [i, engine] of engines.entries()) {
    const outcome = outcomes[i]!;
    if (outcome.status === 'rejected') {
      const why = outcome.reason instanceof NotInstalledError ? outcome.reason.message : `${ENGINES[engine].label} could not be started: ${String((outcome.reason as Error)?.message ?? outcome.reason).split('\n')[0]}`;
      figures.set(engine, { journal: engine, deliveries: 0, seconds: 0, rounds: [], skipped: why });
      continue;
    }
    const server = outcome.value;
    servers.push(server);
    // A lock connection per delivery in flight, and some more.
    const poolSize = JOURNAL_CONCURRENCY + 5;
    if (engine === 'postgres') {
      const { default: pg } = await import('pg');
      const { PostgresJournal } = await import('teamgames-sdk/postgres');
      const pool = new pg.Pool({ connectionString: server.url, max: poolSize });
      pool.on('error', () => undefined);
      const journal = new PostgresJournal(pool, { table: `${table}_journal`, grantedTable: `${table}_granted` });
      await journal.createTables();
      journals.set(engine, journal);
      closers.push(async () => {
        await pool.query(`DROP TABLE IF EXISTS ${table}_journal, ${table}_granted`);
        await pool.end();
      });
    } else {
      const { default: mysql } = await import('mysql2/promise');
      const { MySqlJournal } = await import('teamgames-sdk/mysql');
      const pool = mysql.createPool({ uri: server.url, connectionLimit: poolSize });
      const journal = new MySqlJournal(pool, { table: `${table}_journal`, grantedTable: `${table}_granted` });
      await journal.createTables();
      journals.set(engine, journal);
      closers.push(async () => {
        await pool.query(`DROP TABLE IF EXISTS ${table}_journal, ${table}_granted`);
        await pool.end();
      });
    }
  }
  const serversMs = performance.now() - started;

  /** Purchases for `n` new players (not timed), then their deliveries, 50 at once (timed). */
  const batch = async (journal: DeliveryJournal, n: number): Promise<{ deliveries: number; seconds: number }> => {
    const client = new StorefrontClient({ apiKey: SMALL_KEY, baseUrl: url, journal, now, retry: 0 });
    const names = Array.from({ length: n }, () => player());
    for (const [i, name] of names.entries()) await post('purchases', { apiKey: SMALL_KEY, playerName: name, id: 1 + (i % 8), quantity: 1 });
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(JOURNAL_CONCURRENCY, n) }, async () => {
        while (next < names.length) {
          const name = names[next++]!;
          const report = await client.deliver(name, () => {}, { sleep });
          if (report.code !== 'SUCCESS' || report.granted.length !== 1) {
            throw new Error(`bench deliver (${journal.constructor.name}): ${report.code} granted=${report.granted.length}${report.error ? ` ${report.error.message}` : ''}${report.journalError ? ` ${report.journalError.message}` : ''}`);
          }
        }
      }),
    );
    return { deliveries: n, seconds: (performance.now() - t) / 1000 };
  };

  try {
    const kinds = [...journals.keys()];
    for (const kind of kinds) await batch(journals.get(kind)!, JOURNAL_CONCURRENCY); // warm-up: connections, tables, JIT
    await batch(fileNoFsyncJournal, JOURNAL_CONCURRENCY);
    const totals = new Map<JournalKind, { deliveries: number; seconds: number; rounds: number[] }>(kinds.map((k) => [k, { deliveries: 0, seconds: 0, rounds: [] }]));
    let noFsync = { deliveries: 0, seconds: 0 };
    for (let round = 0; round < rounds; round++) {
      const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
      for (const kind of order) {
        const r = await batch(journals.get(kind)!, perRound);
        const total = totals.get(kind)!;
        total.deliveries += r.deliveries;
        total.seconds += r.seconds;
        total.rounds.push(r.deliveries / r.seconds);
      }
      const r = await batch(fileNoFsyncJournal, perRound);
      noFsync = { deliveries: noFsync.deliveries + r.deliveries, seconds: noFsync.seconds + r.seconds };
    }
    for (const [kind, total] of totals) figures.set(kind, { journal: kind, rate: total.deliveries / total.seconds, ...total });
    console.log(
      `\njournals: ${rounds} rounds × ${perRound} exactly-once deliveries per journal at concurrency ${JOURNAL_CONCURRENCY}, ${((performance.now() - started) / 1000).toFixed(1)} s in all` +
        `${servers.length > 0 ? `; database servers ready in ${(serversMs / 1000).toFixed(1)} s (${servers.map((s) => `${s.engine}${s.started ? ' throwaway, fsync off' : ' from the environment'}`).join(', ')})` : ''}`,
    );
    return { figures: (['file', 'postgres', 'mysql'] as const).map((k) => figures.get(k)!), fileNoFsync: noFsync.deliveries / noFsync.seconds };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    for (const server of servers) await server.stop();
  }
}

// ---------------------------------------------------------------------------

const { url, child, dir } = await startMock();
try {
  console.log(`bench: mock at ${url}; ${ROUNDS} rounds × ${ITERATIONS} sequential calls per way, ${CONCURRENT_CALLS} calls at concurrency ${CONCURRENCY}`);
  const bodies = await validationBodies(url);
  const http = await benchHttp(url);

  const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);
  console.log(`\n${'operation'.padEnd(12)} ${'way'.padEnd(4)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'req/s@32'.padStart(9)}`);
  for (const [name, { figures }] of Object.entries(http)) {
    for (const way of ['raw', 'ky', 'sdk'] as const) {
      const f = figures[way];
      console.log(`${name.padEnd(12)} ${way.padEnd(4)} ${fmt(f.p50, 3)} ${fmt(f.p99, 3)} ${fmt(f.rps, 0)}`);
    }
  }

  const validation = validationCost(bodies);
  const us = (n: number) => n.toFixed(0);
  console.log(
    `\nvalidation: catalog of 500 products ${us(validation.catalog500Us)} µs/call (JSON.parse ${us(validation.catalog500JsonParseUs)} + zod and normalize ${us(validation.catalog500ValidateUs)}); ` +
      `claim of 200 transactions ${us(validation.claim200Us)} µs/call (JSON.parse ${us(validation.claim200JsonParseUs)} + zod and normalize ${us(validation.claim200ValidateUs)})`,
  );

  const imports = { import: coldLoad('import'), require: coldLoad('require') };
  console.log(
    `import: cold import('teamgames-sdk') ${imports.import.sdkMs.toFixed(1)} ms vs ky+zod ${imports.import.depsMs.toFixed(1)} ms (ratio ${imports.import.ratio.toFixed(2)}); ` +
      `require ${imports.require.sdkMs.toFixed(1)} ms vs ${imports.require.depsMs.toFixed(1)} ms (ratio ${imports.require.ratio.toFixed(2)})`,
  );


  const own = await bundleSize(false);
  const all = await bundleSize(true);
  const kB = (bytes: number) => `${(bytes / 1024).toFixed(2)} kB`;
  console.log(
    `size: ESM entry min+gz ${kB(own.gzipped)} (${own.gzipped} bytes) without dependencies, ${kB(all.gzipped)} with ky and zod; ` +
      `mock pulled in by the main entry: ${own.pullsMock || all.pullsMock ? 'YES' : 'no'}`,
  );
  console.log(`size: loaded on first use, not on import: ${kB(own.lazy!.gzipped)} min+gz (${own.lazy!.files.join(', ')})`);
  const quickStart = await quickStartSize();
  const parts = Object.entries(quickStart.byPackage).map(([name, bytes]) => `${name} ${kB(bytes)}`).join(', ');
  const target = `target <= ${kB(QUICK_START_TARGET_GZIPPED)}: ${quickStart.gzipped <= QUICK_START_TARGET_GZIPPED ? 'met' : 'MISSED'}`;
  console.log(`size: the quick start bundled (esbuild, minified, ky and zod included): ${kB(quickStart.minified)}, ${kB(quickStart.gzipped)} gzipped (${target}; minified by package: ${parts}; zod classic: ${quickStart.zodClassic ? 'YES' : 'no'})`);

  const pack = packSize();
  console.log(`size: the package ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked (${pack.files} files; source maps ${kB(pack.maps)})`);

  const wait = await deliverWait(url);
  const journalFigures = await journalBench(url, dir);
  const fileRate = journalFigures.figures[0]!.rate!;
  for (const f of journalFigures.figures) {
    console.log(
      f.rate === undefined
        ? `journal ${f.journal}: skipped (${f.skipped})`
        : `journal ${f.journal}: ${f.rate.toFixed(0)} deliveries/s (rounds ${f.rounds.map((r) => r.toFixed(0)).join(', ')})${f.journal === 'file' ? `; without fsync ${journalFigures.fileNoFsync.toFixed(0)}/s` : ''}`,
    );
  }
  const lines = Object.entries(http).map(
    ([name, { ratios: r }]) => `bench ${name}: p50=${r.p50.toFixed(2)} p99=${r.p99.toFixed(2)} throughput=${r.throughput.toFixed(2)} vsKy=${r.vsKy.toFixed(2)}`,
  );
  lines.push(`bench package: ${kB(pack.packed)} packed, ${kB(pack.unpacked)} unpacked`);
  lines.push(`bench quickstart bundle: ${kB(quickStart.gzipped)} gzipped (${kB(quickStart.minified)} minified; ${target})`);
  lines.push(`deliver exactlyOnce wait: p50=${wait.p50.toFixed(0)} ms max=${wait.max.toFixed(0)} ms claims_refused_for_arriving_early=${wait.claimsRefused}`);
  for (const f of journalFigures.figures) {
    lines.push(f.rate === undefined ? `deliver journal=${f.journal}: skipped (${f.skipped})` : `deliver journal=${f.journal}: ${f.rate.toFixed(0)}/s at concurrency ${JOURNAL_CONCURRENCY}`);
  }
  const ratios = journalFigures.figures.filter((f) => f.journal !== 'file' && f.rate !== undefined).map((f) => `${f.journal}/file=${(f.rate! / fileRate).toFixed(2)}`);
  if (ratios.length > 0) lines.push(`deliver journal ratio: ${ratios.join(' ')} (target >= 0.50; exactly-once, the database servers without fsync, the file journal with)`);
  writeFileSync(
    'bench-results.json',
    JSON.stringify({ date: new Date().toISOString(), node: process.version, settings: { ROUNDS, ITERATIONS, CONCURRENT_CALLS, CONCURRENCY }, http, validation, imports, size: { own, all, quickStart, pack }, deliverWait: wait, journals: journalFigures }, null, 2),
  );
  console.log('\nfigures written to bench-results.json\n');
  for (const line of lines) console.log(line);
} finally {
  child.kill('SIGINT');
  rmSync(dir, { recursive: true, force: true });
}
