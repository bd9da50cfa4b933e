/**
 * `teamgames journal`'s decisions about the journal it opens, in process (issue #46: what
 * journal-race.test.ts and journal-root.test.ts prove with real processes and real users,
 * which a mutation run cannot see): the flags that go with --bridge; whom a resolve waits
 * for and how long (a lock file written by the test as a running holder writes it, the
 * clock faked and moved each time the command looks); a lock another resolve takes at
 * every attempt; a write the file system refuses (EACCES, EPERM injected where the
 * journal creates its lock); a bridge that cannot be reached beside a held file; the
 * messages of a window that is not there; the resolution flushed to disk; a database row
 * changed outside the SDK.
 */
import { chmodSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileJournal } from '../../src/index.js';
import { fsCalls } from '../../src/journals/file/files.js';
import { EXIT, runTeamgames } from '../../src/cli/program.js';
import { openSource } from '../../src/cli/journal-sources.js';
import { UsageError } from '../../src/common/command-line.js';
import { runCli, stream } from '../support/cli.js';
import { fileHandlePrototype, fsError } from '../support/file-journals.js';
import { journalWindow } from '../support/journal.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const T0 = Date.UTC(2026, 0, 2);
const TOKEN = 'b'.repeat(40);
const resolveAnn = (path: string, ...more: string[]) => ['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path, ...more];

/** A journal file holding `entries` (by default Ann's open window window:w1), in a folder of its own. */
async function journalFile(entries: object[] = [journalWindow('window:w1')]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-decisions-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, `${JSON.stringify({ op: 'put', entries })}\n`, { mode: 0o600 });
  return path;
}

/** The lock file as a holder writes it: its pid, host and since. */
function holdBy(path: string, holder: { pid: number; host: string; since: string }): void {
  writeFileSync(`${path}.lock`, JSON.stringify(holder), { mode: 0o600 });
}

/** A live process of this host other than this one: the test runner's parent. */
const otherProcess = () => ({ pid: process.ppid, host: hostname() });

/**
 * The clock (performance.now and Date) faked at T0; it moves only when a test moves it.
 * performance.now() starts an hour in, as on a host that has run for a while: a sum taken
 * for a difference of two of its readings would show.
 */
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ['performance', 'Date'], now: T0 - 3_600_000 });
  vi.advanceTimersByTime(3_600_000);
}

/** Moves the clock `step` ms each time the command opens the lock file of `path` (each look at who holds it). */
function clockMovesOnEachLook(path: string, step: number): void {
  const open = fsCalls.open;
  vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
    if (String(args[0]) === `${path}.lock`) vi.advanceTimersByTime(step);
    return open(...args);
  });
}

/** `teamgames <argv>` and how long it took by the faked clock. */
async function timed(argv: string[], env: Record<string, string> = {}) {
  const started = performance.now();
  const r = await runCli(argv, Date.now, env);
  return { ...r, waited: performance.now() - started };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const windowState = async (path: string) => (await readFile(path, 'utf8')).includes('"state":"resolved"') ? 'resolved' : 'open';

describe('teamgames journal status --file: the journal judged as it was read', () => {
  it('made writable by others just after the read: what was read is shown, its lock judged by the same look (exit 0); the next run refuses it', async () => {
    const path = await journalFile();
    const open = fsCalls.open;
    let changed = false;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      const file = await open(...args);
      if (String(args[0]) === path && !changed) {
        const close = file.close.bind(file);
        file.close = async () => {
          await close();
          changed = true;
          chmodSync(path, 0o622);
        };
      }
      return file;
    });
    const r = await runCli(['journal', 'status', '--file', path], () => T0);
    expect(changed).toBe(true);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/\nreadable +yes: 1 lines, \d+ B\nlock +free \(no bridge holds the file\)\n.*\nopen windows +1 to check/s);
    expect(r.code).toBe(EXIT.OK);
    const next = await runCli(['journal', 'status', '--file', path], () => T0);
    expect(next.stdout).toMatch(/\nreadable +no: .*\(owner \d+, mode 0622\) can be written by its group or others/);
    expect(next.code).toBe(EXIT.FAILURE);
  });
});

describe('teamgames journal resolve --bridge: the flags that go with it (exit 2)', () => {
  it.each([
    [['--postgres-env', 'DB'], '--bridge goes with --file, or alone: a database journal (--postgres-env) is resolved directly while the bridge runs'],
    [['--table', 'game.deliveries'], '--table applies to --postgres and --mysql, not --bridge'],
    [['--file', ' '], '--file must not be blank'],
    [['--file', ''], '--file must not be blank'],
  ])('%j', async (flags, message) => {
    const r = await runCli(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--bridge', 'http://127.0.0.1:9', ...flags], () => T0, { TEAMGAMES_BRIDGE_TOKEN: TOKEN });
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
  });

  it('alone, it only resolves: what is read from a journal is refused (a usage error), never asked of the bridge', async () => {
    const source = await openSource({ bridge: 'http://127.0.0.1:9' }, { TEAMGAMES_BRIDGE_TOKEN: TOKEN }, {}, async () => undefined);
    expect(() => source.read(T0)).toThrow(new UsageError('--bridge applies to resolve'));
    expect(() => source.inspect(T0)).toThrow(new UsageError('--bridge applies to resolve'));
  });
});

describe('teamgames journal resolve --file: whom it waits for, and how long', () => {
  it('another live resolve of this host that took the lock just now and never lets go: waited for 10 s, then exit 1 naming it', async () => {
    fakeClock();
    const path = await journalFile();
    holdBy(path, { ...otherProcess(), since: new Date().toISOString() });
    clockMovesOnEachLook(path, 2_500);
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`${path} is held by process ${process.ppid} on this host (running), lock file ${path}.lock. The lock belongs to the bridge, so nothing was written.`);
    // Looked at 2.5, 5 and 7.5 s (waited), then at 10 s: given up, not a look later.
    expect(r.waited).toBe(10_000);
    expect(await windowState(path)).toBe('open');
  });

  it('a process of another host that took the lock just now (whether it runs cannot be told): not waited for, exit 1 at the first look', async () => {
    fakeClock();
    const path = await journalFile();
    holdBy(path, { pid: 4242, host: 'game-2', since: new Date().toISOString() });
    clockMovesOnEachLook(path, 1_000);
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain('is held by process 4242 on host game-2 (another host: whether it runs cannot be told from here)');
    expect(r.waited).toBe(1_000);
  });

  it('a bridge of this very process that just took the lock: not waited for, exit 1 at the first look', async () => {
    fakeClock();
    const path = await journalFile();
    const bridge = new FileJournal(path);
    try {
      await bridge.pending();
      clockMovesOnEachLook(path, 1_000);
      const r = await timed(resolveAnn(path));
      expect(r.code).toBe(EXIT.FAILURE);
      expect(r.stderr).toContain(`is held by process ${process.pid} on this host (running)`);
      expect(r.waited).toBe(1_000);
    } finally {
      await bridge.close();
    }
  });

  it('a live process of this host whose lock is 30 s old at the first look (a bridge, not a resolve): not waited for', async () => {
    fakeClock();
    const path = await journalFile();
    // Taken 29 s before the command starts: the first look, 1 s later, finds it 30 s old.
    holdBy(path, { ...otherProcess(), since: new Date(Date.now() - 29_000).toISOString() });
    clockMovesOnEachLook(path, 1_000);
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`is held by process ${process.ppid} on this host (running)`);
    expect(r.waited).toBe(1_000);
  });

  it('another resolve takes the lock at every attempt and lets it go at once: tried for 10 s, then exit 1 saying who holds the file', async () => {
    fakeClock();
    const path = await journalFile();
    const lock = `${path}.lock`;
    // Each attempt to take the lock (2.5 s apart) finds it just taken by another live process,
    // which lets go as soon as this one has read who it is. After 8 attempts it stops.
    let attempts = 0;
    const link = fsCalls.link;
    vi.spyOn(fsCalls, 'link').mockImplementation(async (from, to) => {
      if (String(to) === lock && ++attempts <= 8) {
        vi.advanceTimersByTime(2_500);
        holdBy(path, { ...otherProcess(), since: new Date().toISOString() });
      }
      return link(from, to);
    });
    const open = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      const file = await open(...args);
      if (String(args[0]) === lock) unlinkSync(lock);
      return file;
    });
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toContain(`is in use by process ${process.ppid} on host ${hostname()}`);
    // Attempts at 2.5, 5 and 7.5 s looked again; the one at 10 s gave up.
    expect(r.waited).toBe(10_000);
    expect(await windowState(path)).toBe('open');
  });
});

describe('teamgames journal resolve --file: a write the file system refuses', () => {
  /** The journal's lock (its first file written) refused with `code`, the clock moved 1 s per attempt. */
  function lockRefused(code: string): void {
    const open = fsCalls.open;
    vi.spyOn(fsCalls, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      if (String(args[0]).endsWith('.new')) {
        vi.advanceTimersByTime(1_000);
        throw fsError(code);
      }
      return open(...args);
    });
  }

  it.each(['EACCES', 'EPERM'])('%s (staff of the journal group may read the file, not write beside it): exit 1 at once, pointing to --bridge', async (code) => {
    fakeClock();
    const path = await journalFile();
    lockRefused(code);
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toMatch(
      new RegExp(
        `^teamgames journal: FileJournal: could not write the lock file \\S+\\.new: ${code}: injected failure\\. Your user may read ${path} but not write beside it: resolve through the running bridge \\(--bridge http://127\\.0\\.0\\.1:<port>, its token from TEAMGAMES_BRIDGE_TOKEN_FILE\\), or as the bridge's user or root\n$`,
      ),
    );
    expect(r.waited).toBe(1_000);
    expect(await windowState(path)).toBe('open');
  });

  it('another failure (EIO): said as it is, without the advice, exit 1 at once', async () => {
    fakeClock();
    const path = await journalFile();
    lockRefused('EIO');
    const r = await timed(resolveAnn(path));
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toMatch(/^teamgames journal: FileJournal: could not write the lock file \S+\.new: EIO: injected failure\n$/);
    expect(r.waited).toBe(1_000);
  });
});

describe('teamgames journal resolve --file --bridge: the file is held and the bridge named cannot take it', () => {
  it('nothing listens there (nothing was sent): exit 1, the bridge named as not answering', async () => {
    const path = await journalFile();
    const port = await closedPort();
    const bridge = new FileJournal(path);
    try {
      await bridge.pending();
      const r = await runCli(resolveAnn(path, '--bridge', `http://127.0.0.1:${port}`), () => T0, { TEAMGAMES_BRIDGE_TOKEN: TOKEN });
      expect(r).toEqual({
        code: EXIT.FAILURE,
        stdout: '',
        stderr: `teamgames journal: ${path} is held by process ${process.pid} on this host (running), lock file ${path}.lock. The lock belongs to the bridge, so nothing was written. The bridge at http://127.0.0.1:${port} did not answer (nothing was sent): check that it is the bridge holding this file, or stop the holder and run this again\n`,
      });
    } finally {
      await bridge.close();
    }
  });

  it('it took the request and closed the connection (maybe written): exit 4, BRIDGE_UNREACHABLE with --json', async () => {
    const path = await journalFile();
    const server = createServer((socket) => socket.destroy());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const bridge = new FileJournal(path);
    try {
      await bridge.pending();
      const r = await runCli(resolveAnn(path, '--bridge', `http://127.0.0.1:${port}`, '--json'), () => T0, { TEAMGAMES_BRIDGE_TOKEN: TOKEN });
      expect(r.code).toBe(EXIT.NETWORK);
      expect(r.stdout).toBe('');
      expect(JSON.parse(r.stderr)).toEqual({
        error: 'BRIDGE_UNREACHABLE',
        message: expect.stringMatching(new RegExp(`^journal: could not reach the bridge at http://127\\.0\\.0\\.1:${port} \\(.+\\)\\. The resolve may or may not have been written: teamgames journal windows --all tells$`)),
      });
    } finally {
      await bridge.close();
    }
  });
});

describe('teamgames journal resolve --file: a window that is not there (exit 1)', () => {
  it('an id the player does not have: their open windows listed', async () => {
    const path = await journalFile([journalWindow('window:w1'), journalWindow('window:w2')]);
    const r = await runCli(['journal', 'resolve', 'Ann', '--window', 'window:w9', '--note', 'n', '--by', 'mod', '--file', path], () => T0);
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: Ann has no window window:w9; open: window:w1, window:w2\n' });
  });

  it('an id alone that no window has', async () => {
    const path = await journalFile();
    const r = await runCli(['journal', 'resolve', '--window', 'window:w9', '--note', 'n', '--by', 'mod', '--file', path], () => T0);
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: no window window:w9 in this journal (teamgames journal windows --all lists every window)\n' });
  });
});

describe('teamgames journal resolve --file: the resolution is durable', () => {
  it('flushed to disk (fdatasync) after it is written, before Resolved is printed', async () => {
    const path = await journalFile();
    const handles = await fileHandlePrototype(join(path, '..'));
    const write = vi.spyOn(handles, 'write');
    const datasync = vi.spyOn(handles, 'datasync');
    const r = await runCli(resolveAnn(path), () => T0);
    expect(r.code).toBe(EXIT.OK);
    expect(await windowState(path)).toBe('resolved');
    expect(datasync).toHaveBeenCalled();
    expect(datasync.mock.invocationCallOrder.at(-1)).toBeGreaterThan(write.mock.invocationCallOrder.at(-1) as number);
  });
});

describe('teamgames journal --postgres-env: the variable is a name, not a file', () => {
  it('a file of that name in the working directory, readable by others, is never looked at: no warning about its mode', async () => {
    // src, in the repository's root (the tests' working directory, a mutation run's sandbox too), is mode 0755.
    const r = await runCli(['journal', 'status', '--postgres-env', 'src'], () => T0, { src: 'http://u:pw@127.0.0.1/db' });
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: 'teamgames journal: --postgres-env must be a postgres: or postgresql: URL, got http: (see teamgames journal --help)\n' });
  });
});

describe('teamgames journal --postgres-env: a row changed outside the SDK', () => {
  /** A `pg` whose every query answers one row that is not a journal entry. */
  const damagedPg = async () => ({
    Pool: class {
      query = async () => ({ rows: [{ entry: '{"deliveryId":"x"}' }], rowCount: 1 });
      connect = async () => Promise.reject(new Error('no connection in this test'));
      on() {
        return this;
      }
      end = async () => undefined;
    },
  });

  it("is the journal's own failure, said as it is: not readable, exit 1", async () => {
    const out = { stdout: '', stderr: '' };
    const io = { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false };
    const code = await runTeamgames(['journal', 'status', '--postgres-env', 'DB'], io, { DB: 'postgres://u@h/db' }, {}, { now: () => T0, importDriver: damagedPg });
    expect(code).toBe(EXIT.FAILURE);
    const said = 'PostgresJournal: a row of the journal is not a journal entry';
    expect(out.stdout).toMatch(new RegExp(`^journal +PostgreSQL postgres://u@h/db, table teamgames_deliveries\nreadable +no: ${said} \\(.+\\); it was changed outside the SDK\n$`));
    expect(out.stderr).toMatch(new RegExp(`^teamgames journal: ${said} \\(.+\\); it was changed outside the SDK\n$`));
  });
});
