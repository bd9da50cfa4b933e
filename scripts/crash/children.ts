/**
 * The crash campaign's child processes (the mock, the workers): started with their stdout
 * read line by line, SIGKILLed, and every one of them killed when the campaign ends (the
 * temp dir removed too, unless --keep).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEEP } from './options.js';

const children = new Set<ChildProcess>();
/** The campaign's temp dir: a folder per mode, the bundles. */
export const root = mkdtempSync(join(tmpdir(), 'teamgames-crash-'));
let cleaned = false;

export function cleanup(): void {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  if (!cleaned && !KEEP) rmSync(root, { recursive: true, force: true });
  cleaned = true;
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    process.stderr.write(`crash: ${signal}, stopping\n`);
    cleanup();
    process.exit(130);
  });
}

export interface Child {
  label: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** When it was spawned, or for a pre-started worker when its run began. */
  spawnedAt: number;
  alive: boolean;
  killedByUs: boolean;
  stderr: string;
  readonly lines: string[];
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waiters: Array<{ match: (line: string) => boolean; resolve: (line: string | undefined) => void }>;
}

export function start(file: string, args: readonly string[], label: string, env?: Record<string, string>): Child {
  const proc = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
  if (proc.pid === undefined) throw new Error(`crash: could not start ${label}`);
  children.add(proc);
  let buffer = '';
  const child: Child = {
    label,
    proc,
    pid: proc.pid,
    spawnedAt: performance.now(),
    alive: true,
    killedByUs: false,
    stderr: '',
    lines: [],
    waiters: [],
    closed: new Promise((resolve) => {
      proc.on('close', (code, signal) => {
        children.delete(proc);
        for (const w of child.waiters) w.resolve(undefined);
        child.waiters = [];
        resolve({ code, signal });
      });
    }),
  };
  proc.on('exit', () => (child.alive = false));
  proc.stdin?.on('error', () => undefined);
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      child.lines.push(line);
      child.waiters = child.waiters.filter((w) => {
        if (!w.match(line)) return true;
        w.resolve(line);
        return false;
      });
    }
  });
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    child.stderr = (child.stderr + chunk).slice(-20_000);
  });
  return child;
}

/** The first stdout line that matches (also one already printed); undefined when the child ends first. */
export function waitForLine(child: Child, match: (line: string) => boolean, timeoutMs: number): Promise<string | undefined> {
  const already = child.lines.find(match);
  if (already !== undefined) return Promise.resolve(already);
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
    return child.closed.then(() => child.lines.find(match));
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crash: ${child.label} printed no matching line within ${timeoutMs} ms; stderr: ${child.stderr.slice(-2000)}`)), timeoutMs);
    child.waiters.push({
      match,
      resolve: (line) => {
        clearTimeout(timer);
        resolve(line);
      },
    });
  });
}

export function kill(child: Child): void {
  if (!child.alive) return;
  child.killedByUs = true;
  child.proc.kill('SIGKILL');
}

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
