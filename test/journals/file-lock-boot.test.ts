/**
 * A file journal starts after any reboot (src/journals/file/lock.ts, holder.ts): on Linux a
 * lock records its holder's boot id and start time, so a lock is stale when its holder is
 * not this boot's process that took it, whatever process now has its pid: PID 1 or any
 * program after a power cut, a pid reused by another program, a zombie not yet reaped. A
 * live holder still refuses the start; a lock without those fields (an earlier version of
 * the SDK, or not Linux) is judged by its pid alone, as before.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalError } from '../../src/errors.js';
import { inspectLock } from '../../src/journals/file/lock.js';
import { scratchJournals } from '../support/file-journals.js';
import { journalLine } from '../support/journal.js';

const linux = existsSync('/proc/self/stat') && existsSync('/proc/sys/kernel/random/boot_id');
const { root, file, journal } = scratchJournals('file-lock-boot');
const lockOf = (path: string) => `${path}.lock`;
const holderOf = (path: string) => JSON.parse(readFileSync(lockOf(path), 'utf8')) as { pid: number; host: string; since: string; boot?: string; start?: string };
const plant = (path: string, holder: object) => writeFileSync(lockOf(path), JSON.stringify(holder));
const ids = async (j: ReturnType<typeof journal>) => (await j.pending()).map((e) => e.deliveryId);
/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
const startOf = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19] as string;
};
const thisBoot = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const OTHER_BOOT = '00000000-1111-4222-8333-444444444444';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A process that runs another program (`sleep`), as one that got a dead holder's pid would. */
function otherProgram(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setImmediate(r));
};

/**
 * A process that has exited and is not reaped: a zombie. Its pid. The shell starts `head`,
 * which waits for a byte, then becomes `sleep`, which never waits for children; only then
 * does `head` get its byte and exit. Were `head` to exit before the shell became `sleep`,
 * the shell could reap it first (CI saw it: `sleep 0 &` was gone once in some hundred runs).
 */
async function zombie(): Promise<number> {
  const parent = spawn('sh', ['-c', 'exec 3<&0; head -c1 <&3 >/dev/null & echo $!; exec sleep 60 3<&-'], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(parent);
  const pid = Number(await new Promise<string>((resolve) => parent.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString()))));
  await until(() => readFileSync(`/proc/${parent.pid}/comm`, 'utf8') === 'sleep\n');
  parent.stdin?.end('x');
  await until(() => readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '));
  return pid;
}

/** The lock a real FileJournal of this process writes, as it is left by a crash (its content kept). */
async function realLock(path: string): Promise<{ pid: number; host: string; since: string; boot?: string; start?: string }> {
  const j = journal(path);
  await j.append([journalLine('before')]);
  const holder = holderOf(path);
  await j.close();
  return holder;
}

describe.runIf(linux)('a lock whose pid runs, but not as its holder (Linux)', () => {
  it('records this boot and the holder\'s start time', async () => {
    const path = file();
    const held = journal(path);
    await held.pending();
    expect(holderOf(path)).toEqual({ pid: process.pid, host: hostname(), since: expect.any(String), boot: thisBoot(), start: startOf(process.pid) });
    await held.close();
  });

  it('its pid now another program\'s (reused): taken over at the restart, nothing lost', async () => {
    const path = file();
    const left = await realLock(path);
    plant(path, { ...left, pid: otherProgram() });
    expect(await ids(journal(path))).toEqual(['before']);
    expect(holderOf(path)).toMatchObject({ pid: process.pid, boot: thisBoot() });
  });

  it('before a reboot (another boot id), naming PID 1 or a process of this boot with its own start time: taken over', async () => {
    for (const pid of [1, otherProgram()]) {
      const path = file();
      const left = await realLock(path);
      // Only the boot differs: the start time is that process's own.
      plant(path, { ...left, pid, boot: OTHER_BOOT, start: startOf(pid) });
      expect(await ids(journal(path))).toEqual(['before']);
    }
  });

  it('a zombie not yet reaped: taken over, with or without the new fields', async () => {
    const pid = await zombie();
    for (const fields of [{}, { boot: thisBoot(), start: startOf(pid) }]) {
      const path = file();
      plant(path, { pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', ...fields });
      expect(await ids(journal(path))).toEqual([]);
    }
  });

  it('its holder running in this boot (the same start time): refused, and left alone', async () => {
    const path = file();
    const pid = otherProgram();
    plant(path, { pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', boot: thisBoot(), start: startOf(pid) });
    const before = readFileSync(lockOf(path), 'utf8');
    const error = await journal(path).pending().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toContain(`in use by process ${pid} on host ${hostname()}`);
    expect(readFileSync(lockOf(path), 'utf8')).toBe(before);
  });

  it('a holder whose command name reads like a zombie\'s state (`x) Z 1`): its real state is read, and it refuses the start', async () => {
    // The name in /proc/<pid>/stat is the program's file name, in parentheses, as it is.
    const program = join(root, 'x) Z 1');
    symlinkSync(execFileSync('sh', ['-c', 'command -v sleep'], { encoding: 'utf8' }).trim(), program);
    const child = spawn(program, ['60'], { stdio: 'ignore' });
    children.push(child);
    const pid = child.pid as number;
    await vi.waitFor(() => expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toContain('(x) Z 1)'));
    const path = file();
    plant(path, { pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', boot: thisBoot(), start: startOf(pid) });
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${pid}`);
  });

  it('a lock without boot and start (an earlier version) naming a running process: refused, as before', async () => {
    const path = file();
    const pid = otherProgram();
    plant(path, { pid, host: hostname(), since: '2026-01-01T00:00:00.000Z' });
    await expect(journal(path).pending()).rejects.toThrow(`in use by process ${pid}`);
  });
});

describe.runIf(linux)('what staff are shown (inspectLock, read by `teamgames journal`)', () => {
  it('a lock of another boot or of a reused pid: held, not running; its holder in this boot: running', async () => {
    const path = file();
    const pid = otherProgram();
    const lock = { pid, host: hostname(), since: 'then' };
    for (const [fields, running] of [[{ boot: OTHER_BOOT, start: startOf(pid) }, false], [{ boot: thisBoot(), start: '1' }, false], [{ boot: thisBoot(), start: startOf(pid) }, true]] as const) {
      plant(path, { ...lock, ...fields });
      expect(await inspectLock(path)).toEqual({ state: 'held', path: lockOf(path), ...lock, running });
    }
  });
});

describe.runIf(linux)('boot and start not in the form this SDK writes', () => {
  it('(numbers, other text) are read as absent: the pid alone decides, and a running one refuses the start', async () => {
    const pid = otherProgram();
    for (const fields of [{ boot: 42, start: 7 }, { boot: 'another boot!', start: 'soon' }, { boot: `${OTHER_BOOT}\n`, start: `${startOf(pid)}0 ` }]) {
      const path = file();
      plant(path, { pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', ...fields });
      await expect(journal(path).pending()).rejects.toThrow(`in use by process ${pid}`);
    }
  });
});

describe.runIf(linux)('a restart after a SIGKILL, the holder\'s pid then taken by another program', () => {
  const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const moduleUrl = new URL('../../src/journals/file/journal.ts', import.meta.url).href;

  it('the next process starts on the journal and finds what the killed one wrote', { timeout: 30_000 }, async () => {
    const path = file();
    const code = `
      const { FileJournal } = await import(${JSON.stringify(moduleUrl)});
      await new FileJournal(${JSON.stringify(path)}).append([${JSON.stringify(journalLine('from-child'))}]);
      process.stdout.write('ready\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--import', loader, '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()));
    const left = holderOf(path);
    expect(left).toMatchObject({ pid: child.pid, boot: thisBoot(), start: startOf(child.pid as number) });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // The kernel gives the dead holder's pid to another program: a live pid, not the holder.
    plant(path, { ...left, pid: otherProgram() });
    expect(await ids(journal(path))).toEqual(['from-child']);
  });
});
