/**
 * Crash campaign, focused on the FileJournal's lock: SIGKILLs a process while it takes
 * the lock (the first use of the journal), then checks that the next process recovers
 * the dead one's lock as stale, as promised. The main campaign (`npm run crash`) hits this
 * moment only in a few of its kills; this one aims every kill at it.
 *
 *   npx tsx scripts/crash/lock.ts [--kills 300] [--seed 1]
 *
 * Each round: a pre-started process (node and the SDK already loaded) gets the journal
 * path on stdin, runs `journal.pending()` (which takes `<journal>.lock`) and prints
 * `locked`; it is SIGKILLed after a random delay spread around the time that takes. The
 * next round's process must take the lock (stale) or, when the dead one never created
 * it, take it fresh. A refusal after a kill is a lock that nobody can recover without an
 * operator: counted, printed, and the lock file removed so the rounds go on.
 *
 * Prints: crash lock: kills=… lock_files_left=… empty_lock_files=… refused_after_kill=…
 * Exits 1 when refused_after_kill > 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { seededRandom } from '../../src/mock/service/random.js';
import { median } from '../common/figures.js';
import { commandLine } from '../common/command-line.js';
import { NODE_BUNDLE } from './node-bundle.js';

const cli = commandLine('crash lock', 'usage: npx tsx scripts/crash/lock.ts [--kills 300] [--seed 1]', {
  kills: { type: 'string', default: '300' },
  seed: { type: 'string', default: '1' },
});
const KILLS = cli.integer('kills', 1, Number.MAX_SAFE_INTEGER);
const SEED = cli.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);

const PROBE = `
import { FileJournal, isStorefrontError } from '../../src/index.js';
process.stdin.setEncoding('utf8');
process.stdin.on('end', () => process.exit(0));
process.stdin.once('data', async (path) => {
  try {
    await new FileJournal(path.trim()).pending();
    process.stdout.write('locked\\n');
  } catch (error) {
    process.stdout.write('refused ' + (isStorefrontError(error) ? error.message : String(error)) + '\\n');
    process.exit(3);
  }
});
process.stdout.write('loaded\\n');
`;

const root = mkdtempSync(join(tmpdir(), 'teamgames-crash-lock-'));
const children = new Set<ChildProcess>();
const cleanup = (): void => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

interface Probe {
  proc: ChildProcess;
  out: () => string;
  loaded: Promise<void>;
  closed: Promise<void>;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function probe(file: string): Probe {
  const proc = spawn(process.execPath, [file], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(proc);
  let out = '';
  let onLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => (onLoaded = resolve));
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.includes('loaded\n')) onLoaded();
  });
  proc.stdin?.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    proc.on('close', () => {
      children.delete(proc);
      onLoaded();
      resolve();
    }),
  );
  return { proc, out: () => out, loaded, closed };
}

async function go(p: Probe, journal: string): Promise<void> {
  await p.loaded;
  await new Promise<void>((resolve) => p.proc.stdin?.write(`${journal}\n`, () => resolve()));
}

async function main(): Promise<number> {
  const file = join(root, 'probe.mjs');
  await build({
    stdin: { contents: PROBE, resolveDir: dirname(fileURLToPath(import.meta.url)), sourcefile: 'crash-lock-probe.ts', loader: 'ts' },
    ...NODE_BUNDLE,
    outfile: file,
  });
  const journal = join(root, 'journal.jsonl');
  const lock = `${journal}.lock`;

  // How long taking the lock takes here, to aim the kills around it.
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const p = probe(file);
    await go(p, journal);
    const t = performance.now();
    while (!p.out().includes('locked') && !p.out().includes('refused')) await pause(1);
    times.push(performance.now() - t);
    p.proc.kill('SIGKILL');
    await p.closed;
    rmSync(lock, { force: true });
  }
  const typical = median(times);
  const spread = Math.max(5, Math.ceil(typical * 1.5));
  process.stderr.write(`crash lock: taking the lock takes ~${typical.toFixed(0)} ms here; kills land 0–${spread} ms after the path is sent\n`);

  const random = seededRandom(SEED);
  let left = 0;
  let empty = 0;
  let refused = 0;
  const messages: string[] = [];
  const seen = new Set<string>();
  let spare = probe(file);
  for (let kill = 0; kill < KILLS; kill++) {
    const p = spare;
    await p.loaded;
    spare = probe(file);
    await go(p, journal);
    if (p.out().includes('refused')) {
      // The previous round's dead process left a lock nobody takes over.
      refused += 1;
      if (messages.length < 3) messages.push(p.out().trim().split('\n').pop() as string);
      await p.closed;
      rmSync(lock, { force: true });
      continue;
    }
    await pause(Math.floor(random() * (spread + 1)));
    p.proc.kill('SIGKILL');
    await p.closed;
    const out = p.out();
    if (out.includes('refused')) {
      refused += 1;
      if (messages.length < 3) messages.push(out.trim().split('\n').pop() as string);
      rmSync(lock, { force: true });
      continue;
    }
    if (existsSync(lock)) {
      let text = '';
      let ino = '';
      try {
        const stat = statSync(lock);
        ino = `${stat.ino}:${stat.birthtimeMs}:${stat.ctimeMs}`;
        text = readFileSync(lock, 'utf8');
      } catch {
        // removed meanwhile
      }
      // Counted once per lock file (a next process killed before it read the lock leaves it as is).
      if (!seen.has(ino)) {
        seen.add(ino);
        left += 1;
        if (!/"pid":\s*\d+/.test(text)) empty += 1;
      }
    }
    if ((kill + 1) % 100 === 0) process.stderr.write(`crash lock: ${kill + 1}/${KILLS} kills, ${refused} refused after a kill\n`);
  }
  spare.proc.kill('SIGKILL');
  console.log(`crash lock: kills=${KILLS} lock_files_left=${left} empty_lock_files=${empty} refused_after_kill=${refused}`);
  if (refused > 0) {
    process.stderr.write(`crash lock: FAILED: a process SIGKILLed while taking the lock left a lock file that the next process refused instead of recovering:\n${messages.map((m) => `  ${m}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`crash lock: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
