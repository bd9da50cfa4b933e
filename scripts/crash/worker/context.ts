/**
 * The crash worker's start: its config (read before anything else runs), its seeded
 * random numbers, its log, and how it dies. Every module of the worker imports these.
 *
 * @module
 */
import { openSync, writeSync } from 'node:fs';
import { seededRandom } from '../../../src/mock/service/random.js';
import { mockAdmin } from '../../common/mock-admin.js';
import type { WorkerConfig } from './config.js';

// The orchestrator holds our stdin: when it goes away (even SIGKILLed), so do we.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));

/**
 * The config: argv[2], or else the first line on stdin. The orchestrator starts workers
 * ahead of time (node and the SDK take ~0.25 s to load here) and sends the line when the
 * run begins: the restart itself (lock, inventory, resume) starts from that line.
 */
async function readConfig(): Promise<WorkerConfig> {
  if (process.argv[2] !== undefined) return JSON.parse(process.argv[2]) as WorkerConfig;
  process.stdin.setEncoding('utf8');
  return new Promise((resolve) => {
    let buffer = '';
    let configured = false;
    // The line after the config and every one after it (a --loop worker's presence
    // changes): kept from the first byte, in order, until someone reads them.
    const onData = (chunk: string): void => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!configured) {
          configured = true;
          resolve(JSON.parse(line) as WorkerConfig);
        } else if (line.trim() !== '') {
          if (lineReader === undefined) laterLines.push(line);
          else lineReader(line);
        }
      }
    };
    process.stdin.on('data', onData);
  });
}

const laterLines: string[] = [];
let lineReader: ((line: string) => void) | undefined;
/** The lines the orchestrator sends after the config: those already here, then each as it comes. */
export function readLaterLines(reader: (line: string) => void): void {
  lineReader = reader;
  for (const line of laterLines.splice(0)) reader(line);
}

// A spare worker loads its database driver while it waits for its config.
export const preloading =
  process.env['CRASH_JOURNAL'] === 'postgres'
    ? Promise.all([import('pg'), import('../../../src/journals/postgres/index.js')])
    : process.env['CRASH_JOURNAL'] === 'mysql'
      ? Promise.all([import('mysql2/promise'), import('../../../src/journals/mysql/index.js')])
      : undefined;
preloading?.catch(() => undefined);
export const config = await readConfig();
process.stdin.resume();
export const random = seededRandom(config.seed);
const logFd = openSync(config.logPath, 'a');
const t0 = performance.now();

export function log(text: string): void {
  writeSync(logFd, `${(performance.now() - t0).toFixed(0).padStart(5)}ms r${config.run} p${process.pid} ${text}\n`);
}

export function die(text: string): never {
  log(`FATAL ${text}`);
  process.stderr.write(`crash-worker r${config.run} p${process.pid}: ${text}\n`);
  process.exit(1);
}

process.on('uncaughtException', (error) => die(`uncaught: ${error.stack ?? String(error)}`));
process.on('unhandledRejection', (error) => die(`unhandled rejection: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
/** The campaign's mock, over HTTP (its admin routes). */
export const admin = mockAdmin(config.url);

/** What this run did, for the `drained` line. */
export const stats = { regrants: 0, grantFailures: 0, applied: 0 };
