/**
 * `teamgames journal`'s command line to the message (issue #33 point 10): --json before
 * the line is parsed, --help, the resolve's flags refused with the flag named, the user
 * name it falls back on, the colours of answers, warnings and errors on a terminal, and
 * what it says when stdout fails. Real files; the program runs in process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalDeps } from '../../src/cli/journal-command.js';
import { FileJournal } from '../../src/index.js';
import type { OutputStream } from '../../src/common/output.js';
// Loaded with the suite, not by its first test: see test/support/cli.ts.
import '../support/cli.js';
import { EXIT, runTeamgames } from '../../src/cli/program.js';
import { journalWindow } from '../support/journal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function stream(keep: (text: string) => void, isTTY: boolean, fails: boolean): OutputStream {
  return {
    isTTY,
    write(text, done) {
      if (!fails) keep(text);
      done?.(fails ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : null);
      return !fails;
    },
  };
}

async function run(argv: string[], options: { deps?: JournalDeps; tty?: boolean; stdoutFails?: boolean; env?: Record<string, string> } = {}) {
  const out = { stdout: '', stderr: '' };
  const tty = options.tty ?? false;
  const code = await runTeamgames(
    argv,
    { stdout: stream((t) => (out.stdout += t), tty, options.stdoutFails ?? false), stderr: stream((t) => (out.stderr += t), tty, false), interactive: false, confirm: async () => false },
    options.env ?? {},
    {},
    { now: () => Date.UTC(2026, 0, 2), ...options.deps },
  );
  return { code, ...out };
}

async function journalFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-command-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, text);
  return path;
}

const withWindow = () => journalFile(`${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1')] })}\n`);
const damaged = () => journalFile('{"op":"put","entries":[{"deliveryId":"x"}]}\n');

describe('teamgames journal: --json and --help', () => {
  it('--json holds for a line that does not parse: the usage error is a JSON line', async () => {
    const r = await run(['journal', 'status', '--fil', 'x', '--json']);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: '{"error":"USAGE","message":"journal: unknown option --fil"}\n' });
  });

  it('--help is the text even with --json; when stdout fails it follows on stderr (exit 6)', async () => {
    const r = await run(['journal', '--help', '--json']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toMatch(/^Usage: teamgames journal <command> <journal> \[options\]\n/);
    const failed = await run(['journal', '--help'], { stdoutFails: true });
    expect(failed.code).toBe(EXIT.OUTPUT_FAILED);
    expect(failed.stderr).toMatch(/^teamgames: could not write to stdout \(EPIPE\); the answer follows on stderr\nUsage: teamgames journal /);
  });

  it('a journal that cannot be read: --json says JOURNAL_FAILED on stderr', async () => {
    const path = await damaged();
    for (const command of ['status', 'windows']) {
      const r = await run(['journal', command, '--json', '--file', path]);
      expect(r.code).toBe(EXIT.FAILURE);
      expect(JSON.parse(r.stderr)).toMatchObject({ error: 'JOURNAL_FAILED', message: expect.stringContaining('is not a journal record') });
    }
  });

  it('status on a journal that cannot be read, stdout failing: the answer on stderr says it, exit 6, no second line', async () => {
    const path = await damaged();
    const r = await run(['journal', 'status', '--file', path], { stdoutFails: true });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    expect(r.stderr).toMatch(/^teamgames: journal status: could not write to stdout \(EPIPE\); the answer follows on stderr\n/);
    expect(r.stderr).toMatch(/\nlock +free \(no bridge holds the file\)\n$/);
  });
});

describe('teamgames journal: the API key is never printed', () => {
  it('in an error line naming it (a path that holds it), as text and as JSON', async () => {
    const key = 'tg_live_4b1d2c3e5f60718293a4b5c6d7e8f901';
    const path = join(tmpdir(), `${key}.jsonl`);
    const text = await run(['journal', 'windows', '--file', path], { env: { TEAMGAMES_API_KEY: key } });
    expect(text).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: `teamgames journal: FileJournal: there is no journal file at ${join(tmpdir(), '<redacted>.jsonl')} (nothing was created)\n` });
    const json = await run(['journal', 'windows', '--json', '--file', path], { env: { TEAMGAMES_API_KEY: key } });
    expect(json.stderr).not.toContain(key);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: 'JOURNAL_FAILED', message: expect.stringContaining('<redacted>.jsonl') });
  });

  it('a key file that is not there: no key to hide, no warning, the journal shown', async () => {
    const path = await withWindow();
    const r = await run(['journal', 'windows', '--file', path], { env: { TEAMGAMES_API_KEY_FILE: join(dirname(path), 'no-key') } });
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '', stdout: expect.stringContaining('window:w1') });
  });
});

describe('teamgames journal resolve: its flags, refused with the flag named (exit 2)', () => {
  it.each([
    [['--note', ' ', '--by', 'mod'], '--note <text> is required (what was found and done)'],
    [['--note', 'n', '--by', '  '], '--by must not be blank'],
    [['--note', 'n', '--by', 'mod', '--window', 'window:\u0085'], 'invalid --window: must not contain control or bidi-override characters'],
  ])('%j', async (flags, message) => {
    const path = await withWindow();
    const r = await run(['journal', 'resolve', 'Ann', ...flags, '--file', path]);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
  });

  it('neither <player> nor --window: the player is asked for', async () => {
    const path = await withWindow();
    const r = await run(['journal', 'resolve', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: 'teamgames journal: missing <player> (or --window <id>) (see teamgames journal --help)\n' });
  });

  it('a player name the service would refuse: the way out by id', async () => {
    const path = await withWindow();
    const r = await run(['journal', 'resolve', 'a'.repeat(100), '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/^teamgames journal: invalid <player>: .+; resolve the window by its id instead: --window <id> \(teamgames journal windows lists the ids\) \(see teamgames journal --help\)\n$/);
  });

  it('no user name from the OS, or a blank one: --by is asked for', async () => {
    const path = await withWindow();
    const said = 'teamgames journal: no user name to record (the OS has none for this user); pass --by <name> (see teamgames journal --help)\n';
    const failing = () => {
      throw new Error('uv_os_get_passwd returned ENOENT');
    };
    for (const userName of [failing, () => ' ']) {
      expect(await run(['journal', 'resolve', 'Ann', '--note', 'n', '--file', path], { deps: { userName } })).toEqual({ code: EXIT.USAGE, stdout: '', stderr: said });
    }
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--file', path], { deps: { userName: () => 'deploy' } });
    expect(r).toMatchObject({ code: EXIT.OK, stdout: expect.stringContaining(' by deploy: n\n') });
  });
});

describe('teamgames journal on a terminal', () => {
  it('Resolved in green; an error in red', async () => {
    const path = await withWindow();
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path], { tty: true });
    expect(r.stdout).toBe('\u001b[32mResolved\u001b[39m window:w1 of Ann (2026-01-01 00:00:00Z to 2026-01-01 00:00:10Z) by mod: n\n');
    const again = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path], { tty: true });
    expect(again.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(again.stderr).toMatch(/^\u001b\[31mteamgames journal: window:w1 of Ann was already resolved by mod at 2026-01-02 00:00:00Z: n\. .*\u001b\[39m\n$/);
  });

  it('a warning is not coloured as an error', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const r = await run(['journal', 'status', '--postgres', `postgres://u:pw@127.0.0.1:${port}/db`], { tty: true });
    expect(r.code).toBe(EXIT.FAILURE);
    const [warning, error] = r.stderr.split('\n');
    expect(warning).toMatch(/^teamgames journal: warning: the password in --postgres can be read/);
    expect(error).toMatch(/^\u001b\[31mteamgames journal: PostgresJournal: could not read the journal/);
  });
});

describe('teamgames journal resolve --file: who holds the lock', () => {
  const lockOf = (path: string, holder: object) => writeFile(`${path}.lock`, JSON.stringify(holder), { mode: 0o600 });

  it('a process of another host: cannot tell whether it runs, nothing written (exit 1)', async () => {
    const path = await withWindow();
    await lockOf(path, { pid: 4242, host: 'game-2', since: '2026-01-01T00:00:00.000Z' });
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toEqual({
      code: EXIT.FAILURE,
      stdout: '',
      stderr: `teamgames journal: ${path} is held by process 4242 on host game-2 (another host: whether it runs cannot be told from here), lock file ${path}.lock. The lock belongs to the bridge, so nothing was written. Resolve through the bridge while it runs: add --bridge http://127.0.0.1:<port> (its listen address; its token read from TEAMGAMES_BRIDGE_TOKEN_FILE, as the bridge reads it), or stop the bridge and run this again\n`,
    });
  });

  it('a bridge of this host that runs (this process)', async () => {
    const path = await withWindow();
    const bridge = new FileJournal(path);
    try {
      await bridge.pending();
      const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path]);
      expect(r.stderr).toContain(`${path} is held by process ${process.pid} on this host (running), lock file ${path}.lock. The lock belongs`);
    } finally {
      await bridge.close();
    }
  });

  it('a process of this host that is gone: its stale lock taken over, the window resolved', async () => {
    const path = await withWindow();
    await lockOf(path, { pid: 999_999_999, host: hostname(), since: '' });
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stdout: expect.stringMatching(/^Resolved window:w1 of Ann/) });
  });

  it('an id asked of a player with no window at all', async () => {
    const path = await journalFile(`${JSON.stringify({ op: 'put', entries: [journalWindow('window:w1')] })}\n`);
    const r = await run(['journal', 'resolve', 'Bea', '--window', 'window:w1', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: Bea has no window window:w1; none is open\n' });
  });

  it('an id the player does not have, when none of theirs is open', async () => {
    const path = await journalFile(`${JSON.stringify({ op: 'put', entries: [{ ...journalWindow('window:w1'), state: 'resolved', resolution: { by: 'a', at: 1, note: 'n' } }] })}\n`);
    const r = await run(['journal', 'resolve', 'Ann', '--window', 'window:w2', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: Ann has no window window:w2; none is open\n' });
  });
});
