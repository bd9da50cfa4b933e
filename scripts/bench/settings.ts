/**
 * The bench's command line and the sizes it derives (parsed once, at import).
 *
 * Flags: --rounds N (default 7), --iterations N per round and way (default 45),
 * --concurrent N calls per concurrency batch (default 256), --quick (CI: small numbers),
 * --only <operation> (that operation's HTTP rounds alone, e.g. catalog500).
 *
 * @module
 */
import { commandLine } from '../common/command-line.js';

/** The operations the HTTP rounds time, in their order. */
export const OPERATIONS = ['catalog', 'catalog500', 'checkout', 'claim', 'claimLegacy', 'vote'] as const;
export type Operation = (typeof OPERATIONS)[number];

const USAGE = `usage: npm run bench -- [--rounds 7] [--iterations 45] [--concurrent 256] [--quick] [--only ${OPERATIONS.join('|')}]`;

const cli = commandLine('bench', USAGE, {
  rounds: { type: 'string', default: '7' },
  iterations: { type: 'string', default: '45' },
  concurrent: { type: 'string', default: '256' },
  quick: { type: 'boolean', default: false },
  only: { type: 'string' },
});

/** `--only`: one operation's HTTP rounds and nothing else (to profile or compare it). */
export const ONLY: Operation | undefined = cli.values.only === undefined ? undefined : cli.oneOf('only', OPERATIONS);
/** `--quick`: the small numbers CI runs. */
export const QUICK = cli.values.quick;
/** HTTP rounds; each runs the three ways back to back. */
export const ROUNDS = QUICK ? 3 : cli.integer('rounds', 1, 1_000);
/** Sequential calls per round and way. */
export const ITERATIONS = QUICK ? 10 : cli.integer('iterations', 1, 100_000);
/** Calls per concurrency batch. */
export const CONCURRENT_CALLS = QUICK ? 64 : cli.integer('concurrent', 1, 1_000_000);
/** Calls in flight in a concurrency batch. */
export const CONCURRENCY = 32;
/** Calls per way before the rounds. */
export const WARMUP = QUICK ? 10 : 50;
/** Deliveries in flight in the journal rounds. */
export const JOURNAL_CONCURRENCY = 50;
