/**
 * `teamgames bridge` starts after a reboot or a crash whatever process now has the pid its
 * journal's lock names (src/journals/file/lock.ts, holder.ts): the bridge as a real process
 * (the `teamgames` bin under tsx), its file journal's lock left as a power cut or a
 * `SIGKILL` leaves it. Before, a lock naming any live process made it exit 1 at every start,
 * and its systemd unit restarted it in a loop. A lock whose holder really runs still
 * refuses the start, naming the lock file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import { KEY, storeSeed } from '../support/fixtures.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'restart-bridge-token-0123456789abcdef0123456789';
const linux = existsSync('/proc/self/stat') && existsSync('/proc/sys/kernel/random/boot_id');
const OTHER_BOOT = '00000000-1111-4222-8333-444444444444';
const thisBoot = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const startOf = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19] as string;
};

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** Another program, running (as one that got a dead bridge's pid would be). */
function otherProgram(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

describe.runIf(linux)('teamgames bridge restarted with its journal\'s lock left behind', () => {
  let closeMock: () => Promise<void>;
  let config: string;
  let journal: string;

  beforeAll(async () => {
    const mock = createMockService({ seed: storeSeed });
    const listening = await mock.listen({ port: 0 });
    closeMock = listening.close;
    const dir = await mkdtemp(join(tmpdir(), 'bridge-restart-'));
    config = join(dir, 'bridge.json');
    journal = join(dir, 'journal.jsonl');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: listening.url, journal: { file: journal }, give: { webhook: { url: 'http://127.0.0.1:9/teamgames' } } }));
  });

  afterAll(async () => {
    await closeMock();
  });

  /** Starts the bridge; resolves its pid once it serves (its banner), or its exit code and stderr if it cannot start. */
  async function start(): Promise<{ child: ChildProcess; pid?: number; code?: number | null; err: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'bridge', '--config', config], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    return vi.waitFor(
      () => {
        if (child.exitCode !== null) return { child, code: child.exitCode, err };
        const banner = out.split('\n').find((line) => line.includes('"api":'));
        if (banner === undefined) throw new Error('no banner yet');
        return { child, pid: (JSON.parse(banner) as { pid: number }).pid, err };
      },
      { timeout: 30_000, interval: 100 },
    );
  }

  async function stop(child: ChildProcess): Promise<number | null> {
    const exited = new Promise<number | null>((ok) => child.once('exit', ok));
    child.kill('SIGTERM');
    return exited;
  }

  it('after a power cut (a lock of another boot naming PID 1, or naming this live test process): starts, takes the lock, stops with 0', { timeout: 60_000 }, async () => {
    for (const pid of [1, process.pid]) {
      writeFileSync(`${journal}.lock`, JSON.stringify({ pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', boot: OTHER_BOOT, start: startOf(pid) }));
      const bridge = await start();
      expect(bridge.err).toBe('');
      expect(bridge.pid).toBeDefined();
      expect(JSON.parse(readFileSync(`${journal}.lock`, 'utf8'))).toMatchObject({ pid: bridge.pid, boot: thisBoot() });
      expect(await stop(bridge.child)).toBe(0);
      expect(existsSync(`${journal}.lock`)).toBe(false);
    }
  });

  it('after a crash whose pid another program now has (this boot, another start time): starts; a lock whose holder runs: exits 1 naming the lock', { timeout: 60_000 }, async () => {
    const pid = otherProgram();
    writeFileSync(`${journal}.lock`, JSON.stringify({ pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', boot: thisBoot(), start: `${Number(startOf(pid)) - 1}` }));
    const bridge = await start();
    expect(bridge.pid).toBeDefined();
    expect(await stop(bridge.child)).toBe(0);

    writeFileSync(`${journal}.lock`, JSON.stringify({ pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', boot: thisBoot(), start: startOf(pid) }));
    const refused = await start();
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`in use by process ${pid} on host ${hostname()}`);
    expect(refused.err).toContain(`${journal}.lock`);
  });
});
