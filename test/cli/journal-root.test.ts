/**
 * `teamgames journal resolve` run as root on the journal of the bridge's own user (the
 * documented systemd setup: `/var/lib/teamgames` and the journal belong to the bridge's
 * user; issue #43 point 3). It resolves, and leaves nothing root owns beside the journal:
 * the lock it held belonged to the journal's owner and group from the moment it took the
 * lock's name (so even a resolve killed while holding it leaves a lock the bridge takes
 * over), and the bridge's user opens the journal again afterwards. Needs root (CI runs as
 * root): the bridge's user is test/support/second-user.ts's, which runs the bundled
 * `teamgames` as that user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal, StorefrontClient } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { createMetrics } from '../../src/bridge/metrics.js';
import { Roster } from '../../src/bridge/roster.js';
import { startBridgeServer } from '../../src/bridge/http/index.js';
import { EXIT } from '../../src/cli/program.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { runCli } from '../support/cli.js';
import { KEY, T0, storeSeed } from '../support/fixtures.js';
import { journalWindow } from '../support/journal.js';
import { needsRoot, secondUser, teamgamesForSecondUser, type CommandForSecondUser, type SecondUser } from '../support/second-user.js';

const now = () => Date.UTC(2026, 0, 2);
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const user = secondUser();
let command: CommandForSecondUser | undefined;
afterAll(async () => {
  await command?.remove();
});

describe.skipIf(user === undefined)(needsRoot('teamgames journal resolve as root on the journal of the bridge user', user), () => {
  const bridgeUser = user ?? { uid: -1, gid: -1 };

  /** /tmp/…/bridge (the bridge's user's, mode 0750) holding journal.jsonl (theirs, mode 0640) with Ann's open window. */
  async function bridgeJournal(): Promise<{ folder: string; path: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'tg-journal-root-'));
    dirs.push(dir);
    chmodSync(dir, 0o755); // as /var/lib
    const folder = join(dir, 'bridge');
    mkdirSync(folder);
    chownSync(folder, bridgeUser.uid, bridgeUser.gid);
    chmodSync(folder, 0o750);
    const path = join(folder, 'journal.jsonl');
    writeFileSync(path, `${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1', 'Ann'), journalWindow('window:w2', 'Bea')] })}\n`, { mode: 0o640 });
    chownSync(path, bridgeUser.uid, bridgeUser.gid);
    return { folder, path };
  }

  it('resolves (exit 0); the lock it held was the bridge user’s; nothing of root is left; the bridge opens the journal again', async () => {
    const { folder, path } = await bridgeJournal();
    // Who owned the lock file the moment it took its name.
    const locks: Array<{ uid: number; gid: number; mode: number }> = [];
    const link = fsCalls.link;
    vi.spyOn(fsCalls, 'link').mockImplementation(async (from, to) => {
      await link(from, to);
      if (String(to).endsWith('.lock')) {
        const { uid, gid, mode } = lstatSync(to);
        locks.push({ uid, gid, mode: mode & 0o777 });
      }
    });

    const r = await runCli(['journal', 'resolve', 'Ann', '--by', 'root:ops', '--note', 'granted by hand', '--file', path], now);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).toMatch(/^Resolved window:w1 of Ann .* by root:ops: granted by hand\n$/);
    expect(locks).toEqual([{ uid: bridgeUser.uid, gid: bridgeUser.gid, mode: 0o640 }]);

    // Only the journal is left, still the bridge user's, its mode unchanged.
    expect(readdirSync(folder)).toEqual(['journal.jsonl']);
    expect(statSync(path)).toMatchObject({ uid: bridgeUser.uid, gid: bridgeUser.gid });
    expect(statSync(path).mode & 0o777).toBe(0o640);

    // The bridge's user opens the journal again, takes its lock and writes (Bea's window).
    const own = await teamgamesAs(bridgeUser, ['journal', 'resolve', 'Bea', '--by', 'teamgames', '--note', 'checked', '--file', path]);
    expect(own).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(readdirSync(folder)).toEqual(['journal.jsonl']);

    // And root's second resolve of Ann's window is told who came first (exit 7).
    const again = await runCli(['journal', 'resolve', 'Ann', '--by', 'root:other', '--note', 'n', '--file', path], now);
    expect(again.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(again.stderr).toContain('window:w1 of Ann was already resolved by root:ops');
  }, 60_000);

  it('a lock left by a root resolve that died (the bridge user’s, naming a gone process) is taken over by the next resolve as root', async () => {
    const { folder, path } = await bridgeJournal();
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: 2 ** 22 + 7, host: hostname(), since: '2026-01-01T00:00:00.000Z' }), { mode: 0o640 });
    chownSync(`${path}.lock`, bridgeUser.uid, bridgeUser.gid);
    const r = await runCli(['journal', 'resolve', 'Ann', '--by', 'root:ops', '--note', 'n', '--file', path], now);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(readdirSync(folder)).toEqual(['journal.jsonl']);
  });

  it('a symbolic link of the bridge user in place of the journal, to a file of root: root resolves nothing there and changes nothing (exit 1)', async () => {
    const { folder, path } = await bridgeJournal();
    // A file of root's elsewhere that reads as a journal (the window, then a tail without a newline a journal would cut off).
    const rootDir = await mkdtemp(join(tmpdir(), 'tg-journal-root-victim-'));
    dirs.push(rootDir);
    const victim = join(rootDir, 'victim');
    const text = `${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1', 'Ann')] })}\nroot's last line`;
    writeFileSync(victim, text, { mode: 0o600 });
    rmSync(path);
    symlinkSync(victim, path);
    lchownSync(path, bridgeUser.uid, bridgeUser.gid);
    const r = await runCli(['journal', 'resolve', 'Ann', '--by', 'root:ops', '--note', 'n', '--file', path], now);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`the symbolic link ${path} on the way to the journal is owned by user ${bridgeUser.uid}, not by this process's user (0) or root`);
    expect(readFileSync(victim, 'utf8')).toBe(text);
    expect(readdirSync(folder)).toEqual(['journal.jsonl']);
  });

  /** The real `teamgames` as the second user (bundled outside the checkout: test/support/second-user.ts), its exit code and output. */
  async function teamgamesAs(as: SecondUser, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    command ??= await teamgamesForSecondUser(as);
    const child = spawn(command.node, [command.script, ...args], { cwd: tmpdir(), uid: as.uid, gid: as.gid, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  }

  it('a member of the journal group: told to go through the bridge (cannot write beside the file); through --bridge, with the token file the group may read, it resolves', async () => {
    const bridgeUid = 4243; // the bridge's user; the staff member is the second user, in the journal's group
    const dir = await mkdtemp(join(tmpdir(), 'tg-journal-group-'));
    dirs.push(dir);
    chmodSync(dir, 0o755);
    const folder = join(dir, 'bridge');
    mkdirSync(folder);
    const path = join(folder, 'journal.jsonl');
    writeFileSync(path, `${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1', 'Ann')] })}\n`, { mode: 0o640 });
    const tokenFile = join(folder, 'bridge-token');
    const token = 'group-bridge-token-0123456789abcdef0123';
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o640 });
    for (const file of [folder, path, tokenFile]) chownSync(file, bridgeUid, bridgeUser.gid);
    chmodSync(folder, 0o750);

    const direct = await teamgamesAs(bridgeUser, ['journal', 'resolve', 'Ann', '--by', 'mod', '--note', 'n', '--file', path]);
    expect(direct.code).toBe(EXIT.FAILURE);
    expect(direct.stderr).toContain(`Your user may read ${path} but not write beside it: resolve through the running bridge (--bridge http://127.0.0.1:<port>, its token from TEAMGAMES_BRIDGE_TOKEN_FILE), or as the bridge's user or root`);
    expect(readdirSync(folder).sort()).toEqual(['bridge-token', 'journal.jsonl']);

    // The bridge's HTTP API (here in this process, over a journal holding the same window).
    const journal = new MemoryJournal();
    await journal.append([journalWindow('window:w1', 'Ann')]);
    const mock = createMockService({ seed: storeSeed, now: T0 });
    const loop = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now, journal }).startDeliveryLoop({ give: () => undefined, giveVoteReward: () => undefined, claimMode: 'fast' });
    const silent = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };
    const server = await startBridgeServer({ loop, roster: new Roster(loop), metrics: createMetrics(() => loop.stats()), log: silent, journal, token, redact: (t) => t, host: '127.0.0.1', port: 0 });
    try {
      const through = await teamgamesAs(bridgeUser, ['journal', 'resolve', 'Ann', '--by', 'mod:group', '--note', 'granted', '--bridge', server.url], { TEAMGAMES_BRIDGE_TOKEN_FILE: tokenFile });
      expect(through).toMatchObject({ code: EXIT.OK, stderr: '' });
      expect(through.stdout).toMatch(/^Resolved window:w1 of Ann .* by mod:group: granted\n$/);
    } finally {
      await server.close(0);
      await loop.stop();
    }
  }, 30_000);
});
