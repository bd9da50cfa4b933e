/**
 * Staff close a window while `teamgames bridge` runs (issue #43 point 3), with real
 * processes: the bridge (the real bin under tsx) holds its file journal and delivers from
 * the mock over HTTP; `teamgames journal resolve --file … --bridge <its API>` resolves
 * through the bridge's HTTP API, the token read from a file as the bridge reads it; the
 * second staff member is told who came first (exit 7); the bridge keeps the file and keeps
 * running, and stops with SIGTERM (exit 0) as before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMockService } from 'teamgames-sdk/mock';
import { EXIT } from '../../src/cli/program.js';
import { runCli } from '../support/cli.js';
import { KEY, storeSeed } from '../support/fixtures.js';
import { journalWindow } from '../support/journal.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'staff-e2e-bridge-token-0123456789abcdef0123';

describe('teamgames journal resolve --bridge beside a running teamgames bridge', () => {
  let dir: string;
  let bridge: ChildProcess;
  let exited: Promise<number | null>;
  let closeMock: () => Promise<void>;
  let api: string;
  let output = '';

  beforeAll(async () => {
    const mock = createMockService({ seed: storeSeed });
    const listening = await mock.listen({ port: 0 });
    closeMock = listening.close;
    dir = await mkdtemp(join(tmpdir(), 'bridge-staff-'));
    // What a lost claim left: Ann's open window, in the journal the bridge will hold.
    await writeFile(join(dir, 'journal.jsonl'), `${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1', 'Ann')] })}\n`, { mode: 0o600 });
    await writeFile(join(dir, 'bridge-token'), `${TOKEN}\n`, { mode: 0o600 });
    const config = join(dir, 'bridge.json');
    await writeFile(config, JSON.stringify({ listen: { port: 0 }, baseUrl: listening.url, journal: { file: 'journal.jsonl' }, give: { webhook: { url: 'http://127.0.0.1:9/game' } } }));
    bridge = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'bridge', '--config', config], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BRIDGE_TOKEN_FILE: join(dir, 'bridge-token') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    bridge.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    bridge.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    exited = new Promise((ok) => bridge.once('exit', (code) => ok(code)));
    api = await vi.waitFor(
      () => {
        if (bridge.exitCode !== null) throw new Error(`the bridge exited ${bridge.exitCode}: ${output}`);
        const banner = output.split('\n').find((line) => line.includes('"api":'));
        if (banner === undefined) throw new Error('no banner yet');
        return (JSON.parse(banner) as { api: string }).api;
      },
      { timeout: 30_000, interval: 100 },
    );
  }, 60_000);

  afterAll(async () => {
    if (bridge.exitCode === null) bridge.kill('SIGKILL');
    await closeMock();
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves through the bridge (exit 0), the second is told who came first (exit 7), the bridge keeps running and stops cleanly', async () => {
    const path = join(dir, 'journal.jsonl');
    const env = { TEAMGAMES_BRIDGE_TOKEN_FILE: join(dir, 'bridge-token') };
    const held = await runCli(['journal', 'status', '--json', '--file', path], Date.now);
    expect(JSON.parse(held.stdout)).toMatchObject({ openWindows: 1, journal: { lock: { state: 'held', pid: bridge.pid, running: true } } });

    const done = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod:alice', '--note', 'granted by hand', '--file', path, '--bridge', api], Date.now, env);
    expect(done).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(done.stdout).toMatch(/^Resolved window:w1 of Ann .* by mod:alice: granted by hand\n$/);
    const again = await runCli(['journal', 'resolve', 'Ann', '--by', 'mod:bob', '--note', 'nothing', '--file', path, '--bridge', api], Date.now, env);
    expect(again.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(again.stderr).toContain('window:w1 of Ann was already resolved by mod:alice');

    // The resolution is in the file the bridge still holds; the bridge logged it.
    const after = await runCli(['journal', 'windows', '--all', '--json', '--file', path], Date.now);
    expect(JSON.parse(after.stdout)).toEqual({ windows: [expect.objectContaining({ deliveryId: 'window:w1', state: 'resolved', resolution: expect.objectContaining({ by: 'mod:alice', note: 'granted by hand' }) })] });
    expect(JSON.parse((await runCli(['journal', 'status', '--json', '--file', path], Date.now)).stdout)).toMatchObject({ journal: { lock: { pid: bridge.pid, running: true } } });
    await vi.waitFor(() => expect(output).toContain('window resolved by staff through the HTTP API'), { timeout: 5_000 });
    expect(output).not.toContain(TOKEN);
    expect(bridge.exitCode).toBeNull();

    bridge.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
