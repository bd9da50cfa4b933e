/**
 * `teamgames journal --file` reads only what is the bridge's own (issue #34 points 1 and
 * 6): a journal, lock or directory another user could have planted or changed is refused
 * before it is read, with the file journal's own message and exit 1 (a hard link to a held
 * journal: journal-links.test.ts). The cases about another user chown files to a second
 * Unix user, so they need root (CI runs as root).
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { runCli } from '../support/cli.js';
import { journalLine } from '../support/journal.js';
import { needsRoot, secondUser, teamgamesForSecondUser, type CommandForSecondUser } from '../support/second-user.js';

const dirs: string[] = [];
const open: FileJournal[] = [];
// A worker thread (StrykerJS runs the tests in one) may read the umask but not set it: there
// the suite runs under the umask it was given (issue #46 point 3: it failed in this hook).
let umask: number | undefined;
beforeAll(() => {
  if (isMainThread) umask = process.umask(0o022);
});
afterAll(() => {
  if (umask !== undefined) process.umask(umask);
});
afterEach(async () => {
  for (const j of open.splice(0)) await j.close();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const now = () => Date.parse('2026-01-01T00:00:00Z');
const put = (id: string, player = 'Ann') => `${JSON.stringify({ op: 'put', entry: journalLine(id, player) })}\n`;

/** A journal path in a fresh directory of its own (mode 0700). */
async function tempPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-trust-'));
  dirs.push(dir);
  return join(dir, 'journal.jsonl');
}

/** What the file journal itself says about `path`: the message staff must see too. */
async function journalRefusal(path: string): Promise<string> {
  const j = new FileJournal(path);
  open.push(j);
  const error = await j.pending().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

describe('a lock file that is a symbolic link', () => {
  it('status: the lock refused (never followed to what it names), exit 1', async () => {
    const path = await tempPath();
    writeFileSync(path, put('a'));
    const elsewhere = join(dirname(path), 'elsewhere');
    writeFileSync(elsewhere, JSON.stringify({ pid: process.pid, host: hostname() }));
    symlinkSync(elsewhere, `${path}.lock`);
    const r = await runCli(['journal', 'status', '--file', path, '--json'], now);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { journal: { lock: { state: string; problem: string } } };
    expect(report.journal.lock.state).toBe('refused');
    expect(report.journal.lock.problem).toContain(`the lock file ${path}.lock is a symbolic link, which this SDK never makes`);
  });
});

describe('a directory others can write into', () => {
  it('status, pending, windows: the file journal message, exit 1, the file left as it is', async () => {
    const path = await tempPath();
    writeFileSync(path, put('a'));
    chmodSync(dirname(path), 0o777);
    const message = await journalRefusal(path);
    expect(message).toMatch(/can be written by its group or others and has no sticky bit/);
    for (const command of ['status', 'pending', 'windows']) {
      const r = await runCli(['journal', command, '--file', path], now);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
    }
  });
});

const user = secondUser();
describe.skipIf(user === undefined)(needsRoot('files of another Unix user', user), () => {
  const other = user ?? { uid: -1, gid: -1 };

  it('a journal another user planted in a sticky directory: the same message as the bridge, exit 1, for every reading command', async () => {
    const path = await tempPath();
    chmodSync(dirname(path), 0o1777);
    writeFileSync(path, put('invoice:planted', 'Mallory'));
    chownSync(path, other.uid, other.gid);
    const message = await journalRefusal(path);
    expect(message).toContain(`is owned by user ${other.uid} (mode 0644)`);
    for (const command of ['status', 'pending', 'windows']) {
      const r = await runCli(['journal', command, '--file', path], now);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stdout).not.toContain('Mallory');
    }
  });

  it('a lock file another user planted naming a live process: status says refused (not held by that process) and exits 1', async () => {
    const path = await tempPath();
    chmodSync(dirname(path), 0o1777);
    writeFileSync(path, put('a'));
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00Z' }));
    chownSync(`${path}.lock`, other.uid, other.gid);
    const r = await runCli(['journal', 'status', '--file', path, '--json'], now);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { journal: { readable: boolean; lock: { state: string; problem: string } } };
    expect(report.journal.readable).toBe(true);
    expect(report.journal.lock.state).toBe('refused');
    expect(report.journal.lock.problem).toContain(`the lock file ${path}.lock is owned by user ${other.uid}`);
    expect(r.stderr).toContain(`the lock file ${path}.lock is owned by user ${other.uid}`);
  });

  it('resolve on a planted lock: refused, nothing written', async () => {
    const path = await tempPath();
    writeFileSync(path, put('a'));
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 2 ** 22 + 1, host: hostname() }));
    chownSync(`${path}.lock`, other.uid, other.gid);
    const r = await runCli(['journal', 'resolve', 'Ann', '--note', 'checked', '--by', 'mod', '--file', path], now);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the lock file ${path}.lock is owned by user ${other.uid}`);
    expect(readFileSync(path, 'utf8')).toBe(put('a'));
  });

  let command: CommandForSecondUser | undefined;
  afterAll(async () => {
    await command?.remove();
  });

  /**
   * The real `teamgames` as the second user (staff, in the journal's group), its exit code and
   * output: bundled where that user may read it, run from there, never from the checkout,
   * which may lie in a directory only its owner may enter (issue #49).
   */
  async function asStaff(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    command ??= await teamgamesForSecondUser(other);
    const child = spawn(command.node, [command.script, ...args], {
      cwd: tmpdir(),
      uid: other.uid,
      gid: other.gid,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    return { code, stdout, stderr };
  }

  it("staff in a mode 0o640 journal's group read it as their own user (the directory's owner is the bridge's user); a file of anyone else there is refused", async () => {
    const bridgeUid = 4243; // a third user: the bridge's
    const path = await tempPath();
    chmodSync(dirname(path), 0o755);
    const folder = join(dirname(path), 'bridge');
    mkdirSync(folder);
    const journalPath = join(folder, 'journal.jsonl');
    writeFileSync(journalPath, put('a', 'Zezima'), { mode: 0o640 });
    chownSync(folder, bridgeUid, other.gid);
    chmodSync(folder, 0o750);
    chownSync(journalPath, bridgeUid, other.gid);
    const read = await asStaff(['journal', 'pending', '--file', journalPath, '--json']);
    expect(read.stderr).toBe('');
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('Zezima');

    chownSync(journalPath, bridgeUid + 1, other.gid);
    const refused = await asStaff(['journal', 'pending', '--file', journalPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the journal ${journalPath} is owned by user ${bridgeUid + 1} (mode 0640), not by this process's user (${other.uid}) or root`);
  }, 20_000);
});
