/**
 * `npx teamgames bridge` (or an npm script) stopped with SIGTERM stops the bridge too
 * (src/bridge/command.ts). npm runs the command through `sh -c` and passes a SIGTERM on
 * to that shell, not to the bridge, which was left running, orphaned, holding its port and
 * the journal's lock, so the next start was refused. A bridge that npm started (npm sets
 * `npm_command`) now stops gracefully when the npm process that started it is gone.
 *
 * The real npm runs the bridge here (`npm exec -- node --import tsx src/cli/index.ts
 * bridge`, as `npx teamgames bridge` runs the package's bin), against the mock over HTTP;
 * then, in process, the watch itself: only a bridge that npm started stops with its
 * parent (one a shell ran in the background, `nohup … &`, must outlive that shell).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import type { RunningBridge } from '../../src/bridge/bridge.js';
import { runBridgeCommand } from '../../src/bridge/command.js';
import { stream } from '../support/cli.js';
import { KEY, storeSeed } from '../support/fixtures.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'npx-bridge-token-0123456789abcdef0123456789';

/** Whether process `pid` still runs (a zombie counts as gone). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !existsSync(`/proc/${pid}/stat`) || !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

describe('a bridge started by npm (npx teamgames bridge)', () => {
  let closeMock: () => Promise<void>;
  let config: string;
  let journal: string;
  const started: number[] = [];

  beforeAll(async () => {
    const mock = createMockService({ seed: storeSeed });
    const listening = await mock.listen({ port: 0 });
    closeMock = listening.close;
    const dir = await mkdtemp(join(tmpdir(), 'bridge-npx-'));
    config = join(dir, 'bridge.json');
    journal = join(dir, 'journal.jsonl');
    // Nothing is bought: no item goes to the game, whose webhook nobody answers.
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: listening.url, journal: { file: journal }, give: { webhook: { url: 'http://127.0.0.1:9/teamgames' } } }));
  });

  afterAll(async () => {
    // A bridge this test left orphaned (the bug) must not outlive it.
    for (const pid of started) if (running(pid)) process.kill(pid, 'SIGKILL');
    await closeMock();
  });

  it('stops with npm on SIGTERM: the bridge logs why, exits, and frees the journal', { timeout: 30_000 }, async () => {
    const npm: ChildProcess = spawn('npm', ['exec', '--', process.execPath, '--import', 'tsx', 'src/cli/index.ts', 'bridge', '--config', config], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    npm.stderr?.on('data', () => undefined);
    // The bridge holds the pipe after npm is gone: its end is the bridge's exit.
    const closed = new Promise<void>((ok) => npm.stdout?.once('close', ok));
    const pid = await vi.waitFor(
      () => {
        const banner = out.split('\n').find((line) => line.includes('"api":'));
        if (banner === undefined) throw new Error(`no banner yet: ${out}`);
        return (JSON.parse(banner) as { pid: number }).pid;
      },
      { timeout: 30_000, interval: 100 },
    );
    started.push(pid);
    expect(pid).not.toBe(npm.pid); // npm's child is a shell, whose child is the bridge
    expect(existsSync(`${journal}.lock`)).toBe(true);

    npm.kill('SIGTERM');
    await closed;
    expect(running(pid)).toBe(false);
    expect(out).toContain('stopping (the npm process that started it exited)');
    expect(out).toContain('"msg":"stopped"');
    expect(existsSync(`${journal}.lock`)).toBe(false);
  });
});

describe('the watch on the parent, in process', () => {
  let config: string;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-parent-'));
    config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: 'http://127.0.0.1:9', journal: { file: join(dir, 'journal.jsonl') }, give: { webhook: { url: 'http://127.0.0.1:9/x' } } }));
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs the bridge command on real signals (no stopSignal), its parent's pid as the test says; the second's check on fake time. */
  async function start(env: Record<string, string>) {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let parent = 4_000;
    const lines: Array<{ msg: string }> = [];
    let started: RunningBridge | undefined;
    const before = process.listeners('SIGTERM');
    const io = { stdout: stream(() => {}), stderr: stream(() => {}), interactive: false, confirm: async () => false };
    const done = runBridgeCommand(['--config', config], io, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN, ...env }, {
      parentPid: () => parent,
      onStarted: (b) => (started = b),
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) },
    });
    // The start is real work (a journal opened, a port bound): on a loaded machine it takes more than poll's default second.
    await expect.poll(() => started, { timeout: 20_000 }).toBeDefined();
    const sigterm = process.listeners('SIGTERM').filter((l) => !before.includes(l));
    return { done, lines, sigterm, orphan: () => (parent = 1) };
  }

  it('started by npm (npm_command set): stops, exit 0, within a second of its parent changing', async () => {
    const bridge = await start({ npm_command: 'exec' });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(bridge.lines.some((l) => l.msg.startsWith('stopping'))).toBe(false); // the same parent: runs on
    bridge.orphan();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await bridge.done).toBe(0);
    expect(bridge.lines.map((l) => l.msg)).toContain('stopping (the npm process that started it exited)');
  });

  it('not started by npm: a parent that exits (a shell that ran it in the background) does not stop it; SIGTERM does', async () => {
    const bridge = await start({});
    bridge.orphan();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(bridge.lines.some((l) => l.msg.startsWith('stopping'))).toBe(false);
    expect(bridge.sigterm).toHaveLength(1);
    (bridge.sigterm[0] as (name: string) => void)('SIGTERM');
    expect(await bridge.done).toBe(0);
    expect(bridge.lines.map((l) => l.msg)).toContain('stopping (SIGTERM)');
  });
});
