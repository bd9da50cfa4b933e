import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeApiKey } from '../../src/index.js';
import { CliError, loadSeedFile, parseCliArgs, runCli } from '../../src/mock/adapters/cli-program.js';
import { exampleSeed, parseMockSeed } from '../../src/mock/index.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'teamgames-mock-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Test doubles of Node's streams (the callback is called, as Node does); `stdoutFails` fails every stdout write with that code. */
function captureIo(stdoutFails?: string) {
  const out = { stdout: '', stderr: '' };
  const stream = (key: 'stdout' | 'stderr', fails?: string) => ({
    write(text: string, done?: (error?: Error | null) => void) {
      if (fails === undefined) out[key] += text;
      done?.(fails === undefined ? null : Object.assign(new Error(`write ${fails}`), { code: fails }));
      return fails === undefined;
    },
  });
  return { out, io: { stdout: stream('stdout', stdoutFails), stderr: stream('stderr') } };
}

describe('teamgames-mock arguments', () => {
  it('defaults to 127.0.0.1:4010 and the example seed', () => {
    expect(parseCliArgs([])).toEqual({ port: 4010, host: '127.0.0.1', seedFile: undefined, help: false, printSeed: false });
    expect(parseCliArgs(['--port', '0', '--host', '0.0.0.0', '--seed', 's.json'])).toEqual({
      port: 0,
      host: '0.0.0.0',
      seedFile: 's.json',
      help: false,
      printSeed: false,
    });
    expect(parseCliArgs(['-h']).help).toBe(true);
    expect(parseCliArgs(['--print-seed']).printSeed).toBe(true);
  });

  it.each([
    [['--port', 'abc'], '--port must be an integer from 0 to 65535, got "abc"'],
    [['--port', '70000'], '--port must be an integer from 0 to 65535, got "70000"'],
    [['--host', ' '], '--host must not be empty'],
    [['--prot', '1'], 'unknown option --prot'],
    [['-x'], 'unknown option -x'],
    [['--port'], '--port needs a value'],
    [['--seed', '--port', '1'], '--seed needs a value'],
    [['--print-seed=yes'], '--print-seed takes no value'],
    [['extra'], 'unexpected argument "extra"'],
  ])('refuses %j as a usage error (exit 2): "%s"', (argv, message) => {
    let error: unknown;
    try {
      parseCliArgs(argv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 2, message: `${message} (see teamgames-mock --help)` });
  });
});

describe('teamgames-mock seed file', () => {
  it('loads a valid file', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, JSON.stringify(exampleSeed));
    expect(await loadSeedFile(file)).toEqual(exampleSeed);
  });

  it('names a missing file', async () => {
    await expect(loadSeedFile(join(dir, 'missing.json'))).rejects.toThrow(/cannot read seed file ".*missing\.json": no such file/);
  });

  it('names a file that is not JSON', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, '{ servers: ');
    await expect(loadSeedFile(file)).rejects.toThrow(/seed file ".*bad\.json" is not valid JSON/);
  });

  it('names the bad field of an invalid seed', async () => {
    const file = join(dir, 'invalid.json');
    await writeFile(file, JSON.stringify({ servers: [{ apiKey: 'k', products: [{ id: 1, productId: 'a', name: 'A', price: 'free' }] }] }));
    await expect(loadSeedFile(file)).rejects.toThrow(
      /seed file ".*invalid\.json": Invalid mock seed: seed\.servers\[0\]\.products\[0\]\.price: expected a number >= 0$/,
    );
  });

  it('lists every problem of a seed, one per line', async () => {
    const file = join(dir, 'several.json');
    const products = [
      { id: 1, productId: 'a', name: 'A', price: 'free' },
      { id: 2, productId: 'b', name: 'B', price: 1, colour: 'red' },
    ];
    await writeFile(file, JSON.stringify({ servers: [{ apiKey: 'k', products, gateway: { minimumCharge: -5 } }] }));
    const error = await loadSeedFile(file).catch((e: unknown) => e);
    expect(error).toMatchObject({ exitCode: 1 });
    const lines = (error as Error).message.split('\n');
    expect(lines[0]).toMatch(/^seed file ".*several\.json": Invalid mock seed, 3 problems:$/);
    expect(lines.slice(1).sort()).toEqual(
      [
        '  seed.servers[0].gateway.minimumCharge: expected a number >= 0',
        '  seed.servers[0].products[0].price: expected a number >= 0',
        '  seed.servers[0].products[1]: unknown key "colour"',
      ].sort(),
    );
    expect((error as Error).message).not.toContain('more problem');
  });
});

describe('runCli', () => {
  it('prints help and exits 0', async () => {
    const { out, io } = captureIo();
    expect(await runCli(['--help'], io)).toEqual({ exitCode: 0 });
    expect(out.stdout).toMatch(/^Usage: teamgames-mock/);
    expect(out.stdout).toContain('--print-seed');
    expect(out.stdout).toMatch(/^Exit codes:\n {2}0 .*\n {2}1 {2}failure: .*\n {2}2 {2}usage: unknown option/m);
  });

  it('reports a bad command line as one line and exits 2 (the usage code, as in teamgames)', async () => {
    const { out, io } = captureIo();
    expect(await runCli(['--prot', '4010'], io)).toEqual({ exitCode: 2 });
    expect(out.stderr).toBe('teamgames-mock: unknown option --prot (see teamgames-mock --help)\n');
    expect(out.stdout).toBe('');
  });

  it('--print-seed prints the example store as JSON that --seed loads back', async () => {
    const { out, io } = captureIo();
    expect(await runCli(['--print-seed'], io)).toEqual({ exitCode: 0 });
    expect(out.stderr).toBe('');
    expect(out.stdout.endsWith('}\n')).toBe(true);
    expect(out.stdout).toContain('\n  "servers": [\n'); // pretty, for editing
    expect(parseMockSeed(JSON.parse(out.stdout))).toEqual(exampleSeed);
    const file = join(dir, 'printed.json');
    await writeFile(file, out.stdout);
    expect(await loadSeedFile(file)).toEqual(exampleSeed);
  });

  it('--help and --print-seed with stdout closed: one line on stderr, exit 1', async () => {
    for (const argv of [['--help'], ['--print-seed']]) {
      const { out, io } = captureIo('EPIPE');
      expect(await runCli(argv, io)).toEqual({ exitCode: 1 });
      expect(out.stderr).toBe('teamgames-mock: could not write to stdout (EPIPE)\n');
    }
  });

  it('serving with stdout closed: the banner (URL and keys) goes to stderr after one line, and it keeps serving', async () => {
    const { out, io } = captureIo('EPIPE');
    const result = await runCli(['--port', '0'], io);
    if (!('server' in result)) throw new Error('expected a running server');
    try {
      const { url } = result.server;
      expect(out.stderr).toMatch(/^teamgames-mock: could not write to stdout \(EPIPE\); the banner follows on stderr\nTeamGames mock listening on /);
      expect(out.stderr).toContain(`TEAMGAMES_BASE_URL=${url} TEAMGAMES_API_KEY=demo-key-3f9c2a`);
      expect((await fetch(`${url}/__mock/state`)).status).toBe(200);
    } finally {
      await result.server.close();
    }
  });

  it('reports a bad seed as one line and exits 1', async () => {
    const { out, io } = captureIo();
    expect(await runCli(['--seed', join(dir, 'nope.json')], io)).toEqual({ exitCode: 1 });
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toMatch(/^teamgames-mock: cannot read seed file/);
  });

  it('starts the server and prints the URL, the servers and their keys, and how to point a plugin at it', async () => {
    const { out, io } = captureIo();
    const result = await runCli(['--port', '0'], io);
    if (!('server' in result)) throw new Error('expected a running server');
    try {
      const { url } = result.server;
      expect(out.stdout).toContain(`TeamGames mock listening on ${url}`);
      expect(out.stdout).toMatch(/Demo RSPS\s+demo-key-3f9c2a/);
      expect(out.stdout).toMatch(/Demo Survival\s+demo-key-7b1e04/);
      expect(out.stdout).toContain(`TEAMGAMES_BASE_URL=${url} TEAMGAMES_API_KEY=demo-key-3f9c2a`);
      const res = await fetch(`${url}/api/v2/client/global/products`, {
        method: 'POST',
        headers: { authorization: encodeApiKey('demo-key-3f9c2a'), 'content-type': 'application/json' },
        body: '{}',
      });
      expect(((await res.json()) as { message: string }).message).toBe('SUCCESS');
    } finally {
      await result.server.close();
    }
  });

  it('reports a port in use', async () => {
    const first = await runCli(['--port', '0'], captureIo().io);
    if (!('server' in first)) throw new Error('expected a running server');
    try {
      const port = new URL(first.server.url).port;
      const { out, io } = captureIo();
      expect(await runCli(['--port', port], io)).toEqual({ exitCode: 1 });
      expect(out.stderr).toMatch(/already in use/);
    } finally {
      await first.server.close();
    }
  });
});

describe('teamgames-mock as a process', () => {
  let cli = '';
  beforeAll(async () => {
    // No tsx here: bundle the bin (dependencies included) into a temp dir and run it with node.
    const outDir = join(dir, 'bin');
    await build({
      config: false,
      entry: { cli: fileURLToPath(new URL('../../src/mock/cli.ts', import.meta.url)) },
      outDir,
      format: ['esm'],
      platform: 'node',
      target: 'node20',
      noExternal: [/.*/],
      silent: true,
      dts: false,
      sourcemap: false,
    });
    cli = join(outDir, 'cli.js');
  }, 60_000);

  /** Runs the bin; with `closeStdout`, its stdout is a pipe whose reader is gone (as after `| head -c0`). */
  function start(argv: string[], closeStdout = false) {
    const child = spawn(process.execPath, [cli, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    if (closeStdout) child.stdout.destroy();
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const output = () => ({ stdout, stderr });
    return { child, exited, output };
  }

  it('serves until SIGINT, then exits 0', async () => {
    const run = start(['--port', '0']);
    const url = await new Promise<string>((resolve, reject) => {
      run.child.stdout.on('data', () => {
        const match = /listening on (http:\/\/\S+)/.exec(run.output().stdout);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      run.exited.then((code) => reject(new Error(`exited early with ${code}: ${run.output().stderr}`)), reject);
    });
    const res = await fetch(`${url}/api/v2/client/global/products`, {
      method: 'POST',
      headers: { authorization: encodeApiKey('demo-key-3f9c2a'), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output().stdout).toMatch(/stopped/);
  });

  it('--print-seed writes the seed to stdout and exits 0', async () => {
    const run = start(['--print-seed']);
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.output().stdout)).toEqual(exampleSeed);
  });

  it('with stdout closed: --print-seed exits 1 with one line, no stack', async () => {
    const run = start(['--print-seed'], true);
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toBe('teamgames-mock: could not write to stdout (EPIPE)\n');
  });

  it('with stdout closed: serves, the banner on stderr, and exits 0 on SIGINT', async () => {
    const run = start(['--port', '0'], true);
    const url = await new Promise<string>((resolve, reject) => {
      run.child.stderr.on('data', () => {
        const match = /listening on (http:\/\/\S+)/.exec(run.output().stderr);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      run.exited.then((code) => reject(new Error(`exited early with ${code}: ${run.output().stderr}`)), reject);
    });
    expect(run.output().stderr).toMatch(/^teamgames-mock: could not write to stdout \(EPIPE\); the banner follows on stderr\n/);
    expect((await fetch(`${url}/__mock/state`)).status).toBe(200);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.output().stderr).not.toMatch(/\n\s+at |Unhandled/);
  });

  it('exits 2 with one line for an unknown option', async () => {
    const run = start(['--prot', '4010']);
    expect(await run.exited).toBe(2);
    expect(run.output().stderr).toBe('teamgames-mock: unknown option --prot (see teamgames-mock --help)\n');
  });

  it('exits 1 with one line for a bad seed file', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, JSON.stringify({ servers: [{ apiKey: 'k', gateway: { minimumCharge: -5 } }] }));
    const run = start(['--seed', file]);
    expect(await run.exited).toBe(1);
    expect(run.output().stderr).toMatch(/^teamgames-mock: seed file ".*broken\.json": Invalid mock seed: seed\.servers\[0\]\.gateway\.minimumCharge: expected a number >= 0\n$/);
  });
});
