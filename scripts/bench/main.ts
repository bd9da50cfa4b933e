/**
 * `npm run bench`: what the SDK costs over calling the API by hand.
 *
 * Starts the mock over HTTP in a child process (service.ts) and times each operation three
 * ways on the same server, interleaved in rounds (http.ts: raw fetch, bare ky, the SDK;
 * p50/p99 and throughput at concurrency 32, the ratios medians of per-round ratios). Then
 * in-process validation cost (validation.ts), cold import cost (cold-import.ts) and the
 * sizes (size.ts), how long an exactly-once `deliver` waits between its preview and its
 * claim (deliver.ts), and the deliveries per second through each journal (file,
 * PostgreSQL, MariaDB) at concurrency 50 (journals.ts). Figures go to bench-results.json
 * (git-ignored); the summary lines come last.
 *
 * Flags (settings.ts): --rounds N (default 7), --iterations N per round and way (default
 * 45), --concurrent N calls per concurrency batch (default 256), --quick (CI: small numbers),
 * --only <operation> (that operation's HTTP rounds alone: its table rows and its line).
 *
 * @module
 */
import { rmSync, writeFileSync } from 'node:fs';
import { coldImports } from './cold-import.js';
import { deliverWait } from './deliver.js';
import { benchHttp, httpLines, printHttp } from './http.js';
import { journalBench, journalLines, printJournals } from './journals.js';
import { startMock } from './service.js';
import { CONCURRENCY, CONCURRENT_CALLS, ITERATIONS, ONLY, ROUNDS } from './settings.js';
import { sizeLines, sizes } from './size.js';
import { printValidation, validationBodies, validationCost } from './validation.js';

const { url, child, dir } = await startMock();
try {
  console.log(`bench: mock at ${url}; ${ROUNDS} rounds × ${ITERATIONS} sequential calls per way, ${CONCURRENT_CALLS} calls at concurrency ${CONCURRENCY}`);
  if (ONLY !== undefined) {
    const http = await benchHttp(url, ONLY);
    printHttp(http);
    console.log('');
    for (const line of httpLines(http)) console.log(line);
  } else await everything(url, dir);
} finally {
  child.kill('SIGINT');
  rmSync(dir, { recursive: true, force: true });
}

/** The whole bench: every section, bench-results.json, the summary lines. */
async function everything(url: string, dir: string): Promise<void> {
  const bodies = await validationBodies(url);
  const http = await benchHttp(url);
  printHttp(http);
  const validation = validationCost(bodies);
  printValidation(validation);
  const imports = coldImports();
  const size = await sizes();
  const wait = await deliverWait(url);
  const journals = await journalBench(url, dir);
  printJournals(journals);
  const lines = [
    ...httpLines(http),
    ...sizeLines(size),
    `deliver exactlyOnce wait: p50=${wait.p50.toFixed(0)} ms max=${wait.max.toFixed(0)} ms claims_refused_for_arriving_early=${wait.claimsRefused}`,
    ...journalLines(journals),
  ];
  writeFileSync(
    'bench-results.json',
    JSON.stringify({ date: new Date().toISOString(), node: process.version, settings: { ROUNDS, ITERATIONS, CONCURRENT_CALLS, CONCURRENCY }, http, validation, imports, size, deliverWait: wait, journals }, null, 2),
  );
  console.log('\nfigures written to bench-results.json\n');
  for (const line of lines) console.log(line);
}
