/**
 * `teamgames journal --file` beside a running bridge (issue #24 point 3), with real
 * processes: a child holds a FileJournal open (its lock), the real `teamgames` command runs
 * as another child. Reading works while the lock is held and leaves the file and the lock
 * alone; `resolve` is refused with what to do instead; once the holder is gone (killed: its
 * lock is stale) `resolve` takes the lock, writes, and releases it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, inspectJournal } from 'teamgames-sdk';
import { KEY, inProcessStore } from '../support/reliability.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Node itself with tsx's loader: one process, whose pid is the one that holds the lock.
const NODE_TSX = ['--import', 'tsx'];
const { mock, sleep, client } = inProcessStore();
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  mock.reset();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A journal file with one open window, for Player123. */
async function journalWithAWindow(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-lock-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  const journal = new FileJournal(path);
  mock.addPurchase(KEY, { playerName: 'Player123', id: 4, quantity: 1 });
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
  const c = client(journal);
  await c.deliver('Player123', () => {}, { sleep });
  expect((await c.deliver('Player123', () => {}, { sleep })).unverified).toBeDefined();
  await journal.close();
  return path;
}

/** Starts a process holding the journal; resolves once it holds the lock. */
async function holder(path: string, mode?: 'churn'): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, [...NODE_TSX, 'test/cli/journal-holder.ts', path, ...(mode === undefined ? [] : [mode])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before holding the journal`)));
  });
  expect(line).toBe(`ready ${child.pid}`);
  return child as ChildProcess & { pid: number };
}

/** The real `teamgames` command, as a child process. */
async function teamgames(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...NODE_TSX, 'src/cli/index.ts', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
  return { code, stdout, stderr };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('teamgames journal --file while a bridge holds the file', () => {
  it('reads it (status, windows) without touching the file or the lock; resolve is refused and says what to do', async () => {
    const path = await journalWithAWindow();
    const bridge = await holder(path);
    const file = await readFile(path);
    const lock = await readFile(`${path}.lock`, 'utf8');
    expect(JSON.parse(lock)).toMatchObject({ pid: bridge.pid });

    const status = await teamgames(['journal', 'status', '--file', path]);
    expect(status).toMatchObject({ code: 0, stderr: '' });
    expect(status.stdout).toMatch(new RegExp(`^lock +held by process ${bridge.pid} on host ${hostname()} since \\S+ \\(running\\)$`, 'm'));
    expect(status.stdout).toMatch(/^open windows +1 to check/m);
    const windows = await teamgames(['journal', 'windows', '--json', '--file', path]);
    expect(windows.code).toBe(0);
    expect((JSON.parse(windows.stdout) as { windows: unknown[] }).windows).toMatchObject([{ playerName: 'Player123', state: 'unverified' }]);

    const resolve = await teamgames(['journal', 'resolve', 'Player123', '--note', 'granted by hand', '--by', 'mod:alice', '--file', path]);
    expect(resolve.code).toBe(1);
    expect(resolve.stdout).toBe('');
    expect(resolve.stderr).toBe(
      `teamgames journal: ${path} is held by process ${bridge.pid} on this host (running), lock file ${path}.lock. The lock belongs to the bridge, so nothing was written. Resolve through the bridge while it runs: add --bridge http://127.0.0.1:<port> (its listen address; its token read from TEAMGAMES_BRIDGE_TOKEN_FILE, as the bridge reads it), or stop the bridge and run this again\n`,
    );
    // Nothing changed: the journal, the bridge's lock, the bridge itself.
    expect(await readFile(path)).toEqual(file);
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(lock);
    expect(bridge.exitCode).toBeNull();

    // The bridge dies (its lock is left, stale): now resolve takes the lock, writes, releases it.
    await killed(bridge);
    const stale = await teamgames(['journal', 'status', '--file', path]);
    expect(stale.stdout).toMatch(new RegExp(`^lock +held by process ${bridge.pid} on host .* \\(gone: its lock is stale, the next open takes it over\\)$`, 'm'));
    const done = await teamgames(['journal', 'resolve', 'Player123', '--note', 'granted by hand', '--by', 'mod:alice', '--file', path]);
    expect(done).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toMatch(/^Resolved window:[0-9a-f-]+ of Player123 .* by mod:alice: granted by hand\n$/);
    expect(existsSync(`${path}.lock`)).toBe(false);
    const journal = new FileJournal(path);
    const seen = await inspectJournal(journal);
    await journal.close();
    expect(seen.openWindows).toEqual([]);
    expect(seen.resolvedWindows).toMatchObject([{ playerName: 'Player123', resolution: { by: 'mod:alice', note: 'granted by hand' } }]);
  }, 60_000);

  it('reads a file the bridge is writing and compacting without pause: every read is a state the journal was in', async () => {
    const path = await journalWithAWindow();
    const bridge = await holder(path, 'churn');
    for (let i = 0; i < 4; i++) {
      const status = await teamgames(['journal', 'status', '--json', '--file', path]);
      expect(status.stderr).toBe('');
      expect(status.code).toBe(0);
      const body = JSON.parse(status.stdout) as { openWindows: number; pending: number; journal: { lock: { pid: number; running: boolean } } };
      // The window is never lost to a compaction; an append of three marks is seen whole or not at all.
      expect(body.openWindows).toBe(1);
      expect([0, 3]).toContain(body.pending);
      expect(body.journal.lock).toMatchObject({ pid: bridge.pid, running: true });
    }
    expect(bridge.exitCode).toBeNull();
  }, 60_000);
});
