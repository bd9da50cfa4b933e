/**
 * Staff resolving one window of a file journal at the same moment (issue #43 point 3),
 * with real processes: many `teamgames journal resolve` commands start together on one
 * journal file. Exactly one writes; every other exits 7 naming the winner, the time and
 * the note, whether it lost the lock or read the file after the winner wrote. The file
 * holds one resolution and no lock is left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fsCalls } from '../../src/journals/file/files.js';
import { runCli } from '../support/cli.js';
import { journalWindow } from '../support/journal.js';
import { needsRoot, secondUser } from '../support/second-user.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** The real `teamgames` command, as a child process. */
async function teamgames(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
  return { code, stdout, stderr };
}

// As many as a busy two-core machine runs at once without the test taking minutes; on
// today's code before the fix, 12 at once gave several exit 1 ("in use by process N").
const STAFF = 12;

/** A journal holding Player123's open window, in a folder of its own (of `owner`, when given: the bridge's user). */
async function journalWithAWindow(owner?: { uid: number; gid: number }): Promise<{ dir: string; path: string }> {
  const top = await mkdtemp(join(tmpdir(), 'tg-journal-race-'));
  dirs.push(top);
  chmodSync(top, 0o755);
  const dir = join(top, 'bridge');
  mkdirSync(dir, { mode: 0o750 });
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, `${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1', 'Player123')] })}\n`, { mode: 0o600 });
  if (owner !== undefined) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(path, owner.uid, owner.gid);
  }
  return { dir, path };
}

async function race(dir: string, path: string, staff: number): Promise<void> {
  const runs = await Promise.all(
    Array.from({ length: staff }, (_, i) => teamgames(['journal', 'resolve', 'Player123', '--by', `mod:${i}`, '--note', `checked by ${i}`, '--json', '--file', path])),
  );

  // Any other exit, with what it said.
  expect(runs.filter((r) => r.code !== 0 && r.code !== 7).map((r) => `${r.code}: ${r.stderr}`)).toEqual([]);
  const codes = runs.map((r) => r.code).sort();
  expect(codes).toEqual([0, ...Array.from({ length: staff - 1 }, () => 7)]);
  const winner = runs.find((r) => r.code === 0) as { stdout: string; stderr: string };
  expect(winner.stderr).toBe('');
  const won = JSON.parse(winner.stdout) as { deliveryId: string; resolution: { by: string; at: number; note: string } };
  expect(won.deliveryId).toBe('window:w1');
  for (const loser of runs.filter((r) => r.code === 7)) {
    expect(loser.stdout).toBe('');
    expect(JSON.parse(loser.stderr)).toEqual({
      error: 'WINDOW_ALREADY_RESOLVED',
      message: expect.stringContaining(`window:w1 of Player123 was already resolved by ${won.resolution.by} at `),
      windowId: 'window:w1',
      playerName: 'Player123',
      resolution: won.resolution,
    });
  }

  // One resolution in the file, the winner's; the lock released; nothing else left beside it.
  expect(existsSync(`${path}.lock`)).toBe(false);
  expect(readdirSync(dir)).toEqual(['journal.jsonl']);
  const seen = await runCli(['journal', 'windows', '--all', '--json', '--file', path], Date.now);
  expect(JSON.parse(seen.stdout)).toEqual({ windows: [expect.objectContaining({ deliveryId: 'window:w1', state: 'resolved', resolution: won.resolution })] });
}

describe('teamgames journal resolve: many staff at once on one file journal', () => {
  it('exactly one resolves; every other exits 7 naming the winner, the time and the note; no lock is left', async () => {
    const { dir, path } = await journalWithAWindow();
    await race(dir, path, STAFF);
  }, 120_000);

  const user = secondUser();
  it.skipIf(user === undefined)(needsRoot('as root, on the journal of the bridge user: the same, and nothing of root left', user), async () => {
    const owner = user as { uid: number; gid: number };
    const { dir, path } = await journalWithAWindow(owner);
    await race(dir, path, 6);
    expect(statSync(path)).toMatchObject({ uid: owner.uid, gid: owner.gid });
  }, 120_000);
});

describe('teamgames journal resolve: another resolve takes the lock between the look and the take', () => {
  it('and lets it go before the next look: the file is read again, exit 7 naming that resolve', async () => {
    const { path } = await journalWithAWindow();
    const lock = `${path}.lock`;
    const first = { by: 'mod:fast', at: Date.UTC(2026, 0, 1), note: 'done first' };
    // The other resolve (a live process of this host: the test runner's parent) takes the
    // lock just before this one links its own, writes its resolution, and lets go as soon
    // as this one has read who held it.
    const link = fsCalls.link;
    let raced = false;
    vi.spyOn(fsCalls, 'link').mockImplementation(async (from, to) => {
      if (!raced && String(to) === lock) {
        raced = true;
        writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString() }), { mode: 0o600 });
        appendFileSync(path, `${JSON.stringify({ op: 'put', entry: { ...journalWindow('window:w1', 'Player123'), state: 'resolved', resolution: first } })}\n`);
      }
      return link(from, to);
    });
    const open = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      const file = await open(...args);
      if (raced && String(args[0]) === lock) unlinkSync(lock);
      return file;
    });
    const r = await runCli(['journal', 'resolve', 'Player123', '--by', 'mod:slow', '--note', 'n', '--file', path], Date.now);
    expect(raced).toBe(true);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^teamgames journal: window:w1 of Player123 was already resolved by mod:fast at 2026-01-01 00:00:00Z: done first\. Nothing was written/);
    expect(r.code).toBe(7);
  });
});

describe('teamgames journal resolve: whom it waits for', () => {
  it('a lock just taken by another live process of this host (a resolve): waited for; once that one wrote and let go, exit 7 naming it', async () => {
    const { path } = await journalWithAWindow();
    const lock = `${path}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date().toISOString() }), { mode: 0o600 });
    const first = { by: 'mod:fast', at: Date.UTC(2026, 0, 1), note: 'done first' };
    // The other resolve finishes a moment later (real time: the command polls the file).
    const done = setTimeout(() => {
      appendFileSync(path, `${JSON.stringify({ op: 'put', entry: { ...journalWindow('window:w1', 'Player123'), state: 'resolved', resolution: first } })}\n`);
      unlinkSync(lock);
    }, 150);
    try {
      const r = await runCli(['journal', 'resolve', 'Player123', '--by', 'mod:slow', '--note', 'n', '--file', path], Date.now);
      expect(r.code).toBe(7);
      expect(r.stderr).toContain('window:w1 of Player123 was already resolved by mod:fast');
    } finally {
      clearTimeout(done);
    }
  });

  it("a lock taken minutes ago by a live process (the bridge's): not waited for, exit 1 at once pointing to --bridge", async () => {
    const { path } = await journalWithAWindow();
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.ppid, host: hostname(), since: new Date(Date.now() - 5 * 60_000).toISOString() }), { mode: 0o600 });
    const started = performance.now();
    const r = await runCli(['journal', 'resolve', 'Player123', '--by', 'mod', '--note', 'n', '--file', path], Date.now);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`is held by process ${process.ppid} on this host (running)`);
    expect(r.stderr).toContain('add --bridge http://127.0.0.1:<port>');
  });
});
