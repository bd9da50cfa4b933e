/**
 * `npm run heap`: what the client keeps per call, the figure of a bridge that runs for
 * months. Makes N calls against the in-process mock (`mock.fetch`: no sockets, so nothing
 * but the SDK and the mock is measured), forces a GC every `--every` calls and prints the
 * heap used after it. The growth is measured from the heap after the first 1,000 calls
 * (warm-up: JIT, ky's and zod's lazily built state) to the heap after the last call.
 *
 * Flags: --calls N (default 100000), --every N (default 10000), --op claim|preview|getCatalog|mixed
 * (default mixed: claims, previews, catalog reads and claims with a per-call signal in
 * turn), --signal (every call also gets a long-lived signal; default true), --guard
 * (the local claim guard; default true), --max-growth-mb N (exit 1 above it; default none:
 * a figure, not a test), --verbose (a line per --every calls).
 *
 * Last line: `heap calls=… node=… op=… growth_mb=… per_call_bytes=…`.
 */
import { StorefrontClient } from '../src/index.js';
import { createMockService, type MockSeed } from '../src/mock/index.js';
import { commandLine } from './common/command-line.js';
import { exposeGc } from './common/gc.js';

const USAGE =
  'usage: npm run heap -- [--calls 100000] [--every 10000] [--op claim|preview|getCatalog|mixed] [--signal true|false] [--guard true|false]\n' +
  '                       [--turns true|false] [--max-growth-mb <n>] [--verbose]';
const cli = commandLine('heap', USAGE, {
  calls: { type: 'string', default: '100000' },
  every: { type: 'string', default: '10000' },
  op: { type: 'string', default: 'mixed' },
  signal: { type: 'string', default: 'true' },
  guard: { type: 'string', default: 'true' },
  turns: { type: 'string', default: 'true' },
  'max-growth-mb': { type: 'string' },
  verbose: { type: 'boolean', default: false },
});
const flags = cli.values;
const CALLS = cli.integer('calls', 1, Number.MAX_SAFE_INTEGER);
const EVERY = cli.integer('every', 1, Number.MAX_SAFE_INTEGER);
const WARMUP = Math.min(1_000, CALLS);
const OP = cli.oneOf('op', ['claim', 'preview', 'getCatalog', 'mixed']);
/** Exit 1 when the heap grew more (MB); none: a figure, not a test. */
const limit = flags['max-growth-mb'] === undefined ? undefined : cli.number('max-growth-mb', 0, Number.POSITIVE_INFINITY);

const gc = exposeGc();

const TURNS = flags.turns !== 'false';
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/**
 * The heap used after a full GC. With turns, the event loop turns between collections, so
 * FinalizationRegistry callbacks run (undici's Request registers one per signal; the
 * memory it holds goes only then), as they do in any process that does I/O.
 */
async function heapAfterGc(): Promise<number> {
  for (let i = 0; TURNS && i < 3; i++) {
    gc();
    await tick();
  }
  gc();
  return process.memoryUsage().heapUsed;
}

const KEY = 'heap-key';
const seed: MockSeed = {
  servers: [{ apiKey: KEY, products: [{ id: 1, productId: 1, name: 'Cape', price: 1, quantity: 1 }] }],
};
const mock = createMockService({ seed, now: Date.parse('2026-01-01T00:00:00Z') });
const client = new StorefrontClient({
  apiKey: KEY,
  baseUrl: 'http://127.0.0.1:9',
  fetch: mock.fetch,
  catalogCacheTtlMs: 0,
  rateLimit: flags.guard !== 'false',
  // The mock's clock for the guard: each claim moves both 10 s on, so every claim reaches
  // the mock, and the mock's rate windows stay one entry.
  now: mock.clock.now,
});
// What a bridge passes to every call: its shutdown signal, alive for months.
const lifetime = new AbortController();
const withSignal = flags.signal === 'false' ? {} : { signal: lifetime.signal };

async function call(i: number): Promise<void> {
  const op = OP === 'mixed' ? (['claim', 'preview', 'getCatalog', 'perCall'] as const)[i % 4] : OP;
  switch (op) {
    case 'getCatalog':
      await client.getCatalog(withSignal);
      return;
    case 'perCall': {
      // A signal of this call only (a request's own deadline).
      const perCall = new AbortController();
      mock.clock.advance(10_000);
      await client.claim('Heap', { preview: true, signal: perCall.signal });
      return;
    }
    default:
      mock.clock.advance(10_000);
      await client.claim('Heap', { preview: op === 'preview', ...withSignal });
  }
}

const started = performance.now();
for (let i = 0; i < WARMUP; i++) {
  await call(i);
  if (TURNS) await tick();
}
const base = await heapAfterGc();
if (flags.verbose) console.log(`calls=${WARMUP} heap_mb=${(base / 1e6).toFixed(1)}`);
for (let i = WARMUP; i < CALLS; i++) {
  await call(i);
  if (TURNS) await tick();
  if (flags.verbose && (i + 1) % EVERY === 0) console.log(`calls=${i + 1} heap_mb=${(await heapAfterGc() / 1e6).toFixed(1)}`);
}
const end = await heapAfterGc();
const measured = Math.max(1, CALLS - WARMUP);
const growth = end - base;
const seconds = (performance.now() - started) / 1000;
console.log(
  `heap calls=${CALLS} node=${process.version} op=${OP} signal=${flags.signal} turns=${TURNS} growth_mb=${(growth / 1e6).toFixed(2)} per_call_bytes=${Math.round(growth / measured)} heap_mb=${(end / 1e6).toFixed(1)} seconds=${seconds.toFixed(1)}`,
);
if (!TURNS) {
  // What the microtask-only loop held only because no finalizer could run: one turn later.
  await tick();
  gc();
  await tick();
  gc();
  const turned = process.memoryUsage().heapUsed;
  console.log(`heap after one turn of the event loop: growth_mb=${((turned - base) / 1e6).toFixed(2)} per_call_bytes=${Math.round((turned - base) / measured)}`);
}
lifetime.abort();
if (limit !== undefined && growth / 1e6 > limit) {
  console.error(`heap: grew ${(growth / 1e6).toFixed(2)} MB over ${measured} calls, above --max-growth-mb ${limit}`);
  process.exitCode = 1;
}
