/**
 * Fuzz the client with fast-check: arbitrary responses for every operation and arbitrary
 * inputs to every method (see test/support/fuzz-properties.ts for the two properties).
 *
 *   npm run fuzz [-- --runs 10000] [--seed 42]
 *
 * Prints one line per property; exits 1 on the first counterexample (shrunk) or on any
 * unhandled rejection.
 */
import fc from 'fast-check';
import { INPUT_CALLS, OPERATIONS, inputProperty, responseProperty } from '../test/support/fuzz-properties.js';
import { commandLine } from './common/command-line.js';

const cli = commandLine('fuzz', 'usage: npm run fuzz -- [--runs <n>] [--seed <n>]', {
  runs: { type: 'string', default: '10000' },
  seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
});
const numRuns = cli.integer('runs', 1, Number.MAX_SAFE_INTEGER);
const seed = cli.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);

let unhandled = 0;
process.on('unhandledRejection', (reason) => {
  unhandled += 1;
  console.error('unhandled rejection:', reason);
});

console.log(`fuzz: ${numRuns} cases per property, seed ${seed}`);
const started = performance.now();
let failed = false;
const properties: Array<{ label: string; check: () => Promise<fc.RunDetails<unknown>> }> = [
  ...OPERATIONS.map((op) => ({ label: `responses ${op.name}`, check: () => fc.check(responseProperty(op), { numRuns, seed }) as Promise<fc.RunDetails<unknown>> })),
  ...INPUT_CALLS.map((call) => ({ label: `inputs ${call.name}`, check: () => fc.check(inputProperty(call), { numRuns, seed }) as Promise<fc.RunDetails<unknown>> })),
];
for (const { label, check } of properties) {
  const t0 = performance.now();
  const details = await check();
  const ms = performance.now() - t0;
  if (details.failed) {
    failed = true;
    console.log(`FAIL ${label}: ${fc.defaultReportMessage(details) ?? String(details.errorInstance)}`);
    break;
  }
  console.log(`ok   ${label}: ${details.numRuns} cases (${(ms / 1000).toFixed(1)} s)`);
}
// Let stray promises settle before judging.
await new Promise((resolve) => setTimeout(resolve, 100));
if (unhandled > 0) {
  console.log(`FAIL: ${unhandled} unhandled rejection(s)`);
  failed = true;
}
console.log(`fuzz: ${failed ? 'FAILED' : 'passed'} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
