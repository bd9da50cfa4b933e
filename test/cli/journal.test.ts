/**
 * `teamgames journal` on journal files (issue #24 point 3): status, windows, pending and
 * resolve, as tables and as JSON, the exit codes, the read that changes nothing (a torn
 * last line left in the file, a damaged line named), and the database flags' drivers
 * loaded only when asked. Real files; the program runs in process with injected streams.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, inspectJournal, resolveWindow, type JournalWindow, type StorefrontClient } from 'teamgames-sdk';
import { KEY, inProcessStore } from '../support/reliability.js';
import type { JournalDeps } from '../../src/cli/journal-command.js';
import type { OutputStream } from '../../src/common/output.js';
// Loaded with the suite, not by its first test: see test/support/cli.ts.
import '../support/cli.js';
import { EXIT, USAGE, runTeamgames } from '../../src/cli/program.js';
import type { JournalEntry } from '../../src/journals/contract.js';
import { journalLine, journalWindow } from '../support/journal.js';

const store = inProcessStore();
const { mock, sleep, client } = store;
const dirs: string[] = [];

afterEach(async () => {
  mock.reset();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempPath(name = 'journal.jsonl'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-cli-'));
  dirs.push(dir);
  return join(dir, name);
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function stream(keep: (text: string) => void, isTTY = false, fails?: string): OutputStream {
  return {
    isTTY,
    write(text, done) {
      if (fails === undefined) keep(text);
      done?.(fails === undefined ? null : Object.assign(new Error(`write ${fails}`), { code: fails }));
      return fails === undefined;
    },
  };
}

/** `teamgames <argv>` in process; the clock is the mock's, a minute after its last move. */
async function run(argv: string[], options: { deps?: JournalDeps; stdoutFails?: string; tty?: boolean } = {}): Promise<Run> {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(
    argv,
    {
      stdout: stream((t) => (out.stdout += t), options.tty, options.stdoutFails),
      stderr: stream((t) => (out.stderr += t)),
      interactive: false,
      confirm: async () => false,
    },
    {},
    {},
    { now: () => mock.clock.now() + 60_000, ...options.deps },
  );
  return { code, ...out };
}

/** What staff see in the file, through a FileJournal closed after (its lock released). */
async function inspectFile(path: string) {
  const journal = new FileJournal(path);
  try {
    return await inspectJournal(journal);
  } finally {
    await journal.close();
  }
}

/** A claim whose answer is lost, then the call that finds it: one open window for `player`. */
async function lostClaim(c: StorefrontClient, player: string): Promise<void> {
  mock.addPurchase(KEY, { playerName: player, id: 4, quantity: 1 });
  mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
  expect((await c.deliver(player, () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
  expect((await c.deliver(player, () => {}, { sleep })).unverified).toBeDefined();
}

/** A journal file with one open window (Player123) and one line whose grant keeps failing (Zezima). */
async function journalWithACase(): Promise<string> {
  const path = await tempPath();
  const journal = new FileJournal(path);
  const c = client(journal);
  await lostClaim(c, 'Player123');
  mock.addPurchase(KEY, { playerName: 'Zezima', id: 2, quantity: 1 });
  const failing = () => {
    throw new Error('unknown item minecraft:diamond');
  };
  await c.deliver('Zezima', failing, { sleep, mode: 'fast' });
  mock.clock.advance(10_000);
  await c.deliver('Zezima', failing, { sleep, mode: 'fast' });
  await journal.close();
  return path;
}

describe('teamgames journal status', () => {
  it('counts pending lines, open and resolved windows, the oldest age, and says how the file is', async () => {
    const path = await journalWithACase();
    const before = await readFile(path);
    const r = await run(['journal', 'status', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).toContain(`journal           file ${path}\n`);
    expect(r.stdout).toMatch(/^readable +yes: \d+ lines, [\d.]+ KiB\n/m);
    expect(r.stdout).toMatch(/^lock +free \(no bridge holds the file\)\n/m);
    expect(r.stdout).toMatch(/^pending +1 line, oldest 1m 10s \(teamgames journal pending\)\n/m);
    expect(r.stdout).toMatch(/^open windows +1 to check \(teamgames journal windows\)\n/m);
    expect(r.stdout).toMatch(/^resolved windows +0\n/m);
    // Read only: not a byte changed, no lock left.
    expect(await readFile(path)).toEqual(before);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('prints one JSON document with --json', async () => {
    const path = await journalWithACase();
    const r = await run(['journal', 'status', '--json', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    const body = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({
      journal: { kind: 'file', path, readable: true, tornBytes: 0, lock: { state: 'free', path: `${path}.lock` } },
      pending: 1,
      openWindows: 1,
      resolvedWindows: 0,
      oldestPendingMs: 70_000, // the line was written 10 s before its second failed grant
    });
    expect((body['journal'] as { lines: number }).lines).toBe((await readFile(path, 'utf8')).split('\n').length - 1);
  });

  it('reads a torn last line as a bridge mid-write leaves it: left out, and left in the file', async () => {
    const path = await journalWithACase();
    const torn = '{"op":"put","entry":{"deliveryId":"claim:x","playerNa';
    await writeFile(path, torn, { flag: 'a' });
    const before = await readFile(path);
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain(`a torn last line of ${torn.length} bytes left out`);
    expect(r.stdout).toMatch(/^pending +1 line/m);
    expect(await readFile(path)).toEqual(before); // a FileJournal would have cut it off
  });

  it('fails on a damaged line, naming it, and changes nothing (exit 1)', async () => {
    const path = await journalWithACase();
    const good = await readFile(path, 'utf8');
    await writeFile(path, `${good}{"op":"put","entry":{"deliveryId":"x"}}\n{"op":"ack","ids":[]}\n`);
    const before = await readFile(path);
    const lines = good.split('\n').length;
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stdout).toMatch(new RegExp(`^readable +no: FileJournal: .* line ${lines} is not a journal record \\(entry: playerName`, 'm'));
    expect(r.stderr).toMatch(new RegExp(`^teamgames journal: FileJournal: .* line ${lines} is not a journal record`));
    for (const command of ['windows', 'pending']) {
      const other = await run(['journal', command, '--file', path]);
      expect(other.code).toBe(EXIT.FAILURE);
      expect(other.stdout).toBe('');
      expect(other.stderr).toMatch(/line \d+ is not a journal record/);
    }
    expect(await readFile(path)).toEqual(before);
  });

  it('refuses a file that does not exist and creates nothing (exit 1)', async () => {
    const path = await tempPath('missing.jsonl');
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toBe(`teamgames journal: FileJournal: there is no journal file at ${path} (nothing was created)\n`);
    expect(existsSync(path)).toBe(false);
  });

  it('resolve on a file that does not exist: refused, and nothing created, not the journal nor its lock (exit 1)', async () => {
    const path = await tempPath('missing.jsonl');
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'granted by hand', '--by', 'mod:bob', '--file', path]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toBe(`teamgames journal: FileJournal: there is no journal file at ${path} (nothing was created)\n`);
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('colours what needs a look on a terminal: yellow for open windows and pending lines, not in a pipe', async () => {
    const path = await journalWithACase();
    const tty = await run(['journal', 'status', '--file', path], { tty: true });
    expect(tty.stdout).toContain('\u001b[33m1 to check (teamgames journal windows)\u001b[39m');
    expect(tty.stdout).toMatch(/\u001b\[33m1 line, oldest/);
    expect((await run(['journal', 'status', '--file', path])).stdout).not.toContain('\u001b[');
  });

  it('writes the answer to stderr when stdout fails (exit 6)', async () => {
    const path = await journalWithACase();
    const r = await run(['journal', 'status', '--file', path], { stdoutFails: 'EPIPE' });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    expect(r.stderr).toMatch(/^teamgames: journal status: could not write to stdout \(EPIPE\); the answer follows on stderr\n/);
    expect(r.stderr).toMatch(/^open windows +1 to check/m);
  });
});

describe('teamgames journal windows', () => {
  it('lists the open windows: id, player, from, to, cause, found at', async () => {
    const path = await journalWithACase();
    const [window] = (await inspectFile(path)).openWindows as [JournalWindow];
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    const [header, , row] = r.stdout.split('\n');
    expect(header).toMatch(/^window +player +from +to +cause +found$/);
    const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
    expect(row).toMatch(new RegExp(`^${window.deliveryId} +Player123 +${at(window.from)} +${at(window.to)} +lost claim answer +${at(window.recordedAt)}$`));
    const json = JSON.parse((await run(['journal', 'windows', '--json', '--file', path])).stdout) as { windows: JournalWindow[] };
    expect(json.windows).toEqual([window]);
  });

  it('says so when none is open', async () => {
    const path = await tempPath();
    await writeFile(path, '');
    expect((await run(['journal', 'windows', '--file', path])).stdout).toBe('No open windows.\n');
  });
});

describe('teamgames journal pending', () => {
  it('marks an item the delivery loop gave up retrying often as stuck (its attempts reached staffAfterAttempts)', async () => {
    const path = await tempPath();
    const journal = new FileJournal(path);
    const item = { player_name: 'Zed', product_id: 7, product_id_string: '7', product_name: 'Cape', product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 };
    await journal.append([{ deliveryId: 'invoice:9', playerName: 'Zed', state: 'claimed', item, recordedAt: mock.clock.now(), lastError: { message: 'no such item', at: mock.clock.now(), attempts: 5, stuck: true } }]);
    await journal.close();
    const r = await run(['journal', 'pending', '--file', path]);
    expect(r.stdout).toMatch(/\nZed +7 \(Cape\) +1 +claimed +\d+m \d+s +5 \(stuck\) +no such item +invoice:9\n/);
  });


  it('lists the lines still to grant with player, product, state, age, attempts and the last grant error', async () => {
    const path = await journalWithACase();
    const r = await run(['journal', 'pending', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toMatch(/^player +product +units +state +age +attempts +last error +id\n/);
    expect(r.stdout).toMatch(/\nZezima +minecraft:diamond \(Diamonds\) +64 +claimed +1m 10s +2 +unknown item minecraft:diamond +claim:[0-9a-f-]+:0\n/);
    const json = JSON.parse((await run(['journal', 'pending', '--json', '--file', path])).stdout) as { pending: Array<Record<string, unknown>> };
    expect(json.pending).toMatchObject([{ playerName: 'Zezima', state: 'claimed', ageMs: 70_000, lastError: { message: 'unknown item minecraft:diamond', attempts: 2 } }]);
  });
});

describe('teamgames journal resolve', () => {
  it('closes the window with who, when and the note; --by defaults to the OS user; the file is free again after', async () => {
    const path = await journalWithACase();
    const r = await run(['journal', 'resolve', 'Player123', '--note', 'invoice 1 delivered by the lost claim; granted', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    const by = userInfo().username;
    expect(r.stdout).toMatch(new RegExp(`^Resolved window:[0-9a-f-]+ of Player123 \\(.+ to .+\\) by ${by}: invoice 1 delivered by the lost claim; granted\\n$`));
    expect(existsSync(`${path}.lock`)).toBe(false);
    const seen = await inspectFile(path);
    expect(seen.openWindows).toEqual([]);
    expect(seen.resolvedWindows).toMatchObject([{ playerName: 'Player123', state: 'resolved', resolution: { by, at: mock.clock.now() + 60_000, note: 'invoice 1 delivered by the lost claim; granted' } }]);
    // The audit trail: --all lists it with who, when and the note.
    const all = await run(['journal', 'windows', '--all', '--file', path]);
    expect(all.stdout).toMatch(/^window +player +from +to +cause +found +state +resolved by +resolved at +note\n/);
    expect(all.stdout).toMatch(new RegExp(`Player123 .* resolved +${by} +.+ +invoice 1 delivered by the lost claim; granted\\n`));
    expect((await run(['journal', 'windows', '--file', path])).stdout).toBe('No open windows.\n');
  });

  it('asks which window when the player has several (exit 2), resolves the one given, exit 7 when resolved already, and fails when none is open (exit 1)', async () => {
    const path = await tempPath();
    const journal = new FileJournal(path);
    await lostClaim(client(journal), 'Eve');
    mock.clock.advance(10_000);
    await lostClaim(client(journal), 'Eve');
    const ids = (await inspectJournal(journal)).openWindows.map((w) => w.deliveryId);
    await journal.close();
    const which = await run(['journal', 'resolve', 'Eve', '--note', 'n', '--by', 'mod:alice', '--file', path]);
    expect(which.code).toBe(EXIT.USAGE);
    expect(which.stderr).toBe(`teamgames journal: Eve has 2 open windows (${ids.join(', ')}): pass --window <id> (see teamgames journal --help)\n`);
    const one = await run(['journal', 'resolve', 'Eve', '--window', ids[1] as string, '--note', 'n', '--by', 'mod:alice', '--json', '--file', path]);
    expect(one.code).toBe(EXIT.OK);
    expect(JSON.parse(one.stdout)).toMatchObject({ deliveryId: ids[1], state: 'resolved', resolution: { by: 'mod:alice', note: 'n' } });
    expect((await inspectFile(path)).openWindows.map((w) => w.deliveryId)).toEqual([ids[0]]);
    // Resolved already: who came first (exit 7); an id that is not the player's: exit 1.
    const again = await run(['journal', 'resolve', 'Eve', '--window', ids[1] as string, '--note', 'n', '--file', path]);
    expect(again.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(again.stderr).toMatch(new RegExp(`^teamgames journal: ${ids[1]} of Eve was already resolved by mod:alice at .+: n\\. Nothing was written: the first resolution stands\\n$`));
    const wrong = await run(['journal', 'resolve', 'Eve', '--window', 'window:nope', '--note', 'n', '--file', path]);
    expect(wrong).toMatchObject({ code: EXIT.FAILURE, stderr: `teamgames journal: Eve has no window window:nope; open: ${ids[0]}\n` });
    const none = await run(['journal', 'resolve', 'Nobody', '--note', 'n', '--json', '--file', path]);
    expect(none.code).toBe(EXIT.FAILURE);
    expect(JSON.parse(none.stderr)).toEqual({ error: 'FAILURE', message: 'journal: Nobody has no open window (teamgames journal windows --all lists every window)' });
  });

  it('needs --note (exit 2), and a --by that is not blank', async () => {
    const path = await journalWithACase();
    const before = await readFile(path);
    expect(await run(['journal', 'resolve', 'Player123', '--file', path])).toMatchObject({ code: EXIT.USAGE, stderr: 'teamgames journal: --note <text> is required (what was found and done) (see teamgames journal --help)\n' });
    expect((await run(['journal', 'resolve', 'Player123', '--note', 'x', '--by', ' ', '--file', path])).code).toBe(EXIT.USAGE);
    expect((await run(['journal', 'resolve', 'Player123', '--note', 'x', '--file', path], { deps: { userName: () => '' } })).stderr).toMatch(/pass --by <name>/);
    expect(await readFile(path)).toEqual(before);
  });
});

/** A journal file holding `entries`, closed (its lock released). */
async function journalOf(entries: JournalEntry[]): Promise<string> {
  const path = await tempPath();
  const journal = new FileJournal(path);
  await journal.append(entries);
  await journal.close();
  return path;
}

describe('teamgames journal resolve: one resolution per window, by id, bounded (issue #34)', () => {
  it('resolves a window by its id alone whatever its player name holds (escape, bidi, newline); the name is shown escaped', async () => {
    const name = 'Ann\u001b[2J\u202eevil\nforged';
    const path = await journalOf([journalWindow('window:w1', name), journalLine('a')]);
    // By the name: refused as a player name, with the way out.
    const byName = await run(['journal', 'resolve', name, '--note', 'n', '--by', 'mod:alice', '--file', path]);
    expect(byName.code).toBe(EXIT.USAGE);
    expect(byName.stderr).toContain('resolve the window by its id instead: --window <id>');
    const r = await run(['journal', 'resolve', '--window', 'window:w1', '--note', 'checked', '--by', 'mod:alice', '--file', path]);
    expect(r).toEqual({ code: EXIT.OK, stderr: '', stdout: 'Resolved window:w1 of Ann\\u001b[2J\\u202eevil\\u000aforged (2026-01-01 00:00:00Z to 2026-01-01 00:00:10Z) by mod:alice: checked\n' });
    expect((await inspectFile(path)).resolvedWindows).toEqual([{ ...journalWindow('window:w1', name), state: 'resolved', resolution: { by: 'mod:alice', at: mock.clock.now() + 60_000, note: 'checked' } }]);
    const none = await run(['journal', 'resolve', '--window', 'window:nope', '--note', 'n', '--file', path]);
    expect(none).toMatchObject({ code: EXIT.FAILURE, stderr: 'teamgames journal: no window window:nope in this journal (teamgames journal windows --all lists every window)\n' });
  });

  it('the second resolver exits 7 and reads who resolved it, when and their note; nothing is written', async () => {
    const path = await journalOf([journalWindow('window:w1')]);
    // First resolved in a bridge, through the API.
    const bridge = new FileJournal(path);
    await resolveWindow(bridge, { windowId: 'window:w1', by: 'mod:alice', note: 'granted VIP\nby hand' }, { now: Date.UTC(2026, 0, 2, 3, 4, 5) });
    await bridge.close();
    const before = await readFile(path);
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'nothing missing', '--by', 'mod:bob', '--file', path]);
    expect(r).toEqual({
      code: EXIT.ALREADY_RESOLVED,
      stdout: '',
      stderr: 'teamgames journal: window:w1 of Ann was already resolved by mod:alice at 2026-01-02 03:04:05Z: granted VIP\\u000aby hand. Nothing was written: the first resolution stands\n',
    });
    const json = await run(['journal', 'resolve', '--window', 'window:w1', '--note', 'n', '--by', 'mod:bob', '--json', '--file', path]);
    expect(json.code).toBe(7);
    expect(JSON.parse(json.stderr)).toEqual({
      error: 'WINDOW_ALREADY_RESOLVED',
      message: expect.stringContaining('already resolved by mod:alice'),
      windowId: 'window:w1',
      playerName: 'Ann',
      resolution: { by: 'mod:alice', at: Date.UTC(2026, 0, 2, 3, 4, 5), note: 'granted VIP\nby hand' },
    });
    expect(await readFile(path)).toEqual(before);
  });

  it('while a bridge holds the file: a window its admin command resolved is exit 7 (not "stop the bridge"); an open one still needs the lock (exit 1)', async () => {
    const path = await journalOf([journalWindow('window:w1'), journalWindow('window:w2', 'Bob')]);
    const bridge = new FileJournal(path);
    try {
      await resolveWindow(bridge, { windowId: 'window:w1', by: 'mod:alice', note: 'done in game' }, { now: Date.UTC(2026, 0, 2) });
      const before = await readFile(path);
      const first = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod:bob', '--file', path]);
      expect(first).toMatchObject({ code: EXIT.ALREADY_RESOLVED, stderr: expect.stringContaining('window:w1 of Ann was already resolved by mod:alice at 2026-01-02 00:00:00Z: done in game.') });
      const open = await run(['journal', 'resolve', 'Bob', '--note', 'n', '--by', 'mod:bob', '--file', path]);
      expect(open).toMatchObject({ code: EXIT.FAILURE, stderr: expect.stringContaining('The lock belongs to the bridge, so nothing was written') });
      expect(await readFile(path)).toEqual(before);
    } finally {
      await bridge.close();
    }
  });

  it('a first resolution with a huge note (written before the bounds) is cut on the terminal, whole in --json', async () => {
    const note = 'n'.repeat(100_000);
    const path = await journalOf([{ ...journalWindow('window:w1'), state: 'resolved', resolution: { by: 'old-tool', at: 1, note } }]);
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod:bob', '--file', path]);
    expect(r.code).toBe(EXIT.ALREADY_RESOLVED);
    expect(r.stderr.length).toBeLessThan(2_300);
    expect(r.stderr).toContain('… (98000 more characters: --json shows them). Nothing was written');
    const json = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod:bob', '--json', '--file', path]);
    const line = JSON.parse(json.stderr) as { message: string; resolution: { note: string } };
    expect(line.resolution.note).toBe(note);
    expect(line.message.length).toBeLessThan(2_300);
  });

  it('exits 0 after it wrote, even when the window has a time no date holds (1e16), printed as its number', async () => {
    const path = await journalOf([journalWindow('window:w1', 'Ann', { from: 1e16, to: 1e16 })]);
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'checked', '--by', 'mod:alice', '--file', path]);
    expect(r).toEqual({ code: EXIT.OK, stderr: '', stdout: 'Resolved window:w1 of Ann (10000000000000000 (not a time) to 10000000000000000 (not a time)) by mod:alice: checked\n' });
    expect((await inspectFile(path)).resolvedWindows).toHaveLength(1);
  });

  it('windows lists a window with a time no date holds as its number, and every other window with it (exit 0)', async () => {
    const path = await journalOf([journalWindow('window:w1', 'Ann', { from: 1e16, to: -1e16 }), journalWindow('window:w2', 'Bob')]);
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).toMatch(/^window:w1 +Ann +10000000000000000 \(not a time\) +-10000000000000000 \(not a time\) +lost claim answer +2026-01-01 00:00:11Z$/m);
    expect(r.stdout).toMatch(/^window:w2 +Bob +2026-01-01 00:00:00Z +2026-01-01 00:00:10Z +lost claim answer/m);
  });

  it.each([
    ['--note', 'x'.repeat(2001), 'invalid --note: must be at most 2000 characters, got 2001'],
    ['--note', 'ok\u001b]0;owned\u0007', 'invalid --note: must not contain control characters other than line breaks and tabs, nor bidi-override characters'],
    ['--by', 'b'.repeat(201), 'invalid --by: must be at most 200 characters, got 201'],
    ['--by', 'mod:\u202ealice', 'invalid --by: must not contain control or bidi-override characters'],
  ])('refuses %s beyond its bounds (exit 2), writing nothing', async (flag, value, message) => {
    const path = await journalOf([journalWindow('window:w1')]);
    const before = await readFile(path);
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod:alice', flag, value, '--file', path]);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
    expect(await readFile(path)).toEqual(before);
  });
});

describe('teamgames journal: the command line', () => {
  it.each([
    [['journal'], 'missing command (status, windows, pending or resolve)'],
    [['journal', 'list', '--file', 'x'], 'unknown command "list" (status, windows, pending or resolve)'],
    [['journal', 'status'], 'which journal? pass --file <path>, --postgres-env <VAR>, --postgres-file <path>, --mysql-env <VAR>, --mysql-file <path> (or --postgres <url>, --mysql <url>)'],
    [['journal', 'status', '--file', 'x', '--mysql', 'mysql://h/db'], 'one journal at a time: got --file and --mysql'],
    [['journal', 'status', '--file', 'x', '--table', 't'], '--table applies to --postgres and --mysql, not --file'],
    [['journal', 'pending', '--all', '--file', 'x'], '--all does not apply to this command'],
    [['journal', 'status', '--note', 'n', '--file', 'x'], '--note does not apply to this command'],
    [['journal', 'resolve', '--note', 'n', '--file', 'x'], 'missing <player> (or --window <id>)'],
    [['journal', 'status', 'extra', '--file', 'x'], 'unexpected argument "extra"'],
    [['journal', 'status', '--postgres', 'mysql://h/db'], '--postgres must be a postgres: or postgresql: URL, got mysql:'],
    [['journal', 'status', '--postgres', 'not a url'], '--postgres must be a URL (postgres://user@host:port/database), got something else'],
    [['journal', 'status', '--mysql', 'mysql://h/db', '--table', 'Bad-Name'], '--table must be a table name, `name` or `schema.name`, each of lower-case letters, digits and _ (not first), up to 48 characters; got "Bad-Name"'],
    [['journal', 'status', '--fil', 'x'], 'unknown option --fil'],
  ])('%j: exit 2, one line', async (argv, message) => {
    const r = await run(argv);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames journal: ${message} (see teamgames journal --help)\n` });
  });

  it('needs no API key, and is found after options given before it', async () => {
    const path = await journalWithACase();
    expect((await run(['--json', 'journal', 'status', '--file', path])).code).toBe(EXIT.OK);
  });

  it('is listed in teamgames --help, and has its own --help', async () => {
    expect(USAGE).toMatch(/journal status\|windows\|pending/);
    expect(USAGE).toMatch(/journal resolve <player> --note <text> \[--window <id>\] \[--by <name>\]/);
    const help = await run(['journal', '--help']);
    expect(help.code).toBe(EXIT.OK);
    expect(help.stdout).toMatch(/^Usage: teamgames journal <command> <journal> \[options\]\n/);
    // Where staff look: the URL off the command line, the timeout and its exit code, how text is shown.
    expect(help.stdout).toMatch(/--postgres-env <VAR> +a PostgresJournal's database, its URL read from the\n +environment variable VAR/);
    expect(help.stdout).toMatch(/--timeout <ms> +how long the database may take/);
    expect(help.stdout).toMatch(/\n  4  the database did not answer within --timeout/);
    expect(help.stdout).toContain('is shown as \\u and its code in hex: \\u001b for ESC');
    expect(help.stdout).toContain('goes through the\n                           bridge while the bridge holds it (add --bridge <url>');
    expect(help.stdout).toMatch(/^  --bridge <url> +resolve only: through a running bridge's HTTP API/m);
    expect(help.stdout).toContain('still\nread to hide what it holds, with one warning saying so');
    expect(help.stdout).toContain('resolve --window <id> --note <text> [--by <name>]');
    expect(help.stdout).toMatch(/^  7  resolve: the window was already resolved \(before, or by another staff member's\n +resolve at the same moment, on a file, a database or through the bridge\); nothing\n +was written/m);
    expect(USAGE).toMatch(/^  7  journal resolve: the window was already resolved/m);
  });
});

describe('teamgames journal: the database drivers are optional peers', () => {
  const missing = (name: string) => async () => {
    throw Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/teamgames-sdk/dist/cli/index.js`), { code: 'ERR_MODULE_NOT_FOUND' });
  };

  it('--postgres without pg: one line saying what to install (exit 1)', async () => {
    const asked: string[] = [];
    const r = await run(['journal', 'status', '--postgres', 'postgres://u@127.0.0.1:1/db'], {
      deps: { importDriver: (name) => (asked.push(name), missing('pg')()) },
    });
    expect(asked).toEqual(['pg']);
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: --postgres needs the pg package: npm i pg\n' });
  });

  it('--mysql without mysql2: the same (exit 1)', async () => {
    const r = await run(['journal', 'windows', '--mysql', 'mysql://u@127.0.0.1:1/db'], { deps: { importDriver: missing('mysql2') } });
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames journal: --mysql needs the mysql2 package: npm i mysql2\n' });
  });

  it('--file loads no driver', async () => {
    const path = await journalWithACase();
    const r = await run(['journal', 'status', '--file', path], { deps: { importDriver: missing('pg') } });
    expect(r.code).toBe(EXIT.OK);
  });

  it('loads the installed pg for real; an unreachable server is a failure that shows no password (exit 1)', async () => {
    const r = await run(['journal', 'status', '--postgres', 'postgres://u:secret-pw@127.0.0.1:1/db']);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stdout).toMatch(/^journal +PostgreSQL postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db, table teamgames_deliveries\nreadable +no: PostgresJournal: could not read the journal: .*ECONNREFUSED/);
    expect(r.stdout + r.stderr).not.toContain('secret-pw');
  });
});
