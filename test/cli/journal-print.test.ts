/**
 * What `teamgames journal` prints, to the character (issue #33 point 10): the status rows
 * (sizes, counts, every state of the lock), the ages in their two largest units, every
 * kind of pending record (purchase lines, claim marks, vote rewards) and of window cause,
 * and the text of a window already resolved. Real files; the program runs in process.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal } from '../../src/index.js';
import { stream } from '../support/cli.js';
import { EXIT, runTeamgames } from '../../src/cli/program.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const NOW = Date.UTC(2026, 10, 25, 12);
const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function run(argv: string[], tty = false) {
  const out = { stdout: '', stderr: '' };
  const io = (keep: (t: string) => void) => ({ ...stream(keep), isTTY: tty });
  const code = await runTeamgames(argv, { stdout: io((t) => (out.stdout += t)), stderr: io((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, {}, {}, { now: () => NOW });
  return { code, ...out };
}

/** A journal file holding `entries`, one line each, as a FileJournal writes them. */
async function journalFile(entries: readonly object[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-print-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, entries.map((entry) => `${JSON.stringify({ op: 'put', entries: [entry] })}\n`).join(''));
  return path;
}

const item = (id: string, name: string, units: number) => ({ player_name: 'Ann', product_id: 1, product_id_string: id, product_name: name, product_price: 1, quantity_to_grant: units, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 });
const reward = { total_points: '9', vote_points: 3, votes_month: 4, give_amount: 5, reward_id: 12, reward_name: 'Mystery box' };
const window = (id: string, fields: Record<string, unknown> = {}) => ({ deliveryId: `window:${id}`, playerName: 'Ann', state: 'unverified', from: NOW - 2 * HOUR, to: NOW - HOUR, cause: 'lostClaim', recordedAt: NOW - HOUR, ...fields });

/** One record of every kind staff may see, and two they must not (settled marks, counters). */
const everyKind = [
  { deliveryId: 'claim:a:0', playerName: 'Ann', state: 'claimed', item: item('sword', 'Sword', 2), recordedAt: NOW - (2 * DAY + 4 * HOUR + 59 * MINUTE), lastError: { message: 'no\n  such\titem   here', at: NOW, attempts: 3 } },
  { deliveryId: 'intent:b:0', playerName: 'Bo', state: 'intended', item: item('cape', 'Cape', 1), recordedAt: NOW - (5 * HOUR + 3 * MINUTE + 59 * SECOND) },
  { deliveryId: 'intent:c:0', playerName: 'Bo', state: 'intended', settled: true, item: item('cape', 'Cape', 1), recordedAt: NOW - HOUR },
  { deliveryId: 'claim:d', playerName: 'Cy', state: 'claiming', recordedAt: NOW - (3 * MINUTE + 12 * SECOND + 999) },
  { deliveryId: 'vote:e', playerName: 'Dee', state: 'voteClaiming', reward: '12', amount: 'all', recordedAt: NOW - 45 * SECOND },
  { deliveryId: 'vote:f', playerName: 'Dee', state: 'voteClaiming', reward: '12', amount: 1, settled: true, recordedAt: NOW - 45 * SECOND },
  { deliveryId: 'vote:g:0', playerName: 'Eve', state: 'voteClaimed', reward, recordedAt: NOW + 5 * SECOND, lastError: { message: `x${'y'.repeat(100)}`, at: NOW, attempts: 1, stuck: false } },
  { deliveryId: 'votes:Eve', playerName: 'Eve', state: 'voteCounters', totalPoints: 9, votePoints: 3, recordedAt: NOW, prices: [] },
];

describe('teamgames journal pending: every kind of record', () => {
  it('purchase lines, open intents, claim marks and vote rewards, with their ages; settled marks and counters left out', async () => {
    const path = await journalFile(everyKind);
    const r = await run(['journal', 'pending', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).toBe(
      [
        'player  product                       units  state         age     attempts  last error                                                                        id',
        '------  ----------------------------  -----  ------------  ------  --------  --------------------------------------------------------------------------------  ----------',
        'Ann     sword (Sword)                 2      claimed       2d 4h   3         no such item here                                                                 claim:a:0',
        'Bo      cape (Cape)                   1      intended      5h 3m                                                                                               intent:b:0',
        'Cy                                           claiming      3m 12s                                                                                              claim:d',
        'Dee                                          voteClaiming  45s                                                                                                 vote:e',
        `Eve     vote reward 12 (Mystery box)  5      voteClaimed   0s      1         x${'y'.repeat(79)}  vote:g:0`,
        '',
      ].join('\n'),
    );
  });

  it('--json: each record as inspectJournal lists it', async () => {
    const path = await journalFile(everyKind);
    const r = await run(['journal', 'pending', '--json', '--file', path]);
    const [a, b, , d, e, , g] = everyKind as Array<Record<string, unknown>>;
    const age = (entry: Record<string, unknown> | undefined) => Math.max(0, NOW - (entry?.['recordedAt'] as number));
    expect(JSON.parse(r.stdout)).toEqual({
      pending: [
        { deliveryId: 'claim:a:0', playerName: 'Ann', state: 'claimed', item: a?.['item'], recordedAt: a?.['recordedAt'], ageMs: age(a), lastError: a?.['lastError'] },
        { deliveryId: 'intent:b:0', playerName: 'Bo', state: 'intended', item: b?.['item'], recordedAt: b?.['recordedAt'], ageMs: age(b) },
        { deliveryId: 'claim:d', playerName: 'Cy', state: 'claiming', recordedAt: d?.['recordedAt'], ageMs: age(d) },
        { deliveryId: 'vote:e', playerName: 'Dee', state: 'voteClaiming', recordedAt: e?.['recordedAt'], ageMs: age(e) },
        { deliveryId: 'vote:g:0', playerName: 'Eve', state: 'voteClaimed', reward, recordedAt: g?.['recordedAt'], ageMs: 0, lastError: g?.['lastError'] },
      ],
      oldestPendingMs: age(a),
    });
  });
});

const windows = [
  window('a', { cause: 'claimMark' }),
  window('b', { cause: 'lostVote', reward: '12', points: 40 }),
  window('c', { cause: 'lostVote', reward: '7' }),
  // Found first, listed last: --all sorts by the time found.
  { ...window('d', { recordedAt: NOW - 90 * MINUTE }), state: 'resolved', resolution: { by: 'mod:alice', at: NOW - MINUTE, note: 'granted' } },
];

describe('teamgames journal status: every row', () => {
  it('an empty journal: 0 lines, 0 B, nothing pending, no window', async () => {
    const path = await journalFile([]);
    const r = await run(['journal', 'status', '--file', path]);
    expect(r).toEqual({
      code: EXIT.OK,
      stderr: '',
      stdout: `journal           file ${path}\nreadable          yes: 0 lines, 0 B\nlock              free (no bridge holds the file)\npending           0 lines\nopen windows      0\nresolved windows  0\n`,
    });
  });

  it('a missing file: not readable, no counts (--json: none either), exit 1', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'tg-journal-print-')), 'missing.jsonl');
    dirs.push(join(path, '..'));
    const problem = `FileJournal: there is no journal file at ${path} (nothing was created)`;
    expect(await run(['journal', 'status', '--file', path])).toEqual({
      code: EXIT.FAILURE,
      stdout: `journal   file ${path}\nreadable  no: ${problem}\nlock      free (no bridge holds the file)\n`,
      stderr: `teamgames journal: ${problem}\n`,
    });
    const json = await run(['journal', 'status', '--json', '--file', path]);
    expect(JSON.parse(json.stdout)).toEqual({ journal: { kind: 'file', path, readable: false, problem, lock: { state: 'free', path: `${path}.lock` } } });
  });

  it('counts lines in the plural, open and resolved windows', async () => {
    const path = await journalFile([...everyKind, ...windows]);
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toMatch(/^readable +yes: 12 lines, \d\.\d KiB\n/m);
    expect(r.stdout).toContain('\npending           5 lines, oldest 2d 4h (teamgames journal pending)\nopen windows      3 to check (teamgames journal windows)\nresolved windows  1\n');
  });

  it('a journal over a MiB', async () => {
    const line = { deliveryId: 'claim:big', playerName: 'Ann', state: 'claimed', item: item('sword', 'x'.repeat(1_000), 1), recordedAt: NOW };
    const path = await journalFile(Array.from({ length: 1_100 }, (_, i) => ({ ...line, deliveryId: `claim:big:${i}` })));
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.stdout).toMatch(/^readable +yes: 1100 lines, 1\.\d MiB\n/m);
  });

  it.each([
    ['does not name its holder', 'not a holder', (path: string) => `${path}.lock does not name its holder`],
    ['names a process of this host that is gone', JSON.stringify({ pid: 999_999_999, host: hostname(), since: '' }), () => `held by process 999999999 on host ${hostname()} (gone: its lock is stale, the next open takes it over)`],
  ])('a lock file that %s', async (_what, lock, said) => {
    const path = await journalFile([]);
    await writeFile(`${path}.lock`, lock, { mode: 0o600 });
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain(`\nlock              ${said(path)}\n`);
  });

  it('a lock that is a directory: unknown, with why; a lock that is a symbolic link: refused (exit 1)', async () => {
    const path = await journalFile([]);
    await mkdir(`${path}.lock`);
    const dir = await run(['journal', 'status', '--file', path]);
    expect(dir.code).toBe(EXIT.OK);
    expect(dir.stdout).toContain(`\nlock              unknown: FileJournal: the lock file ${path}.lock of ${path} is a directory, not a lock file; remove it (nothing was read)\n`);
    const other = await journalFile([]);
    await symlink(`${other}.x`, `${other}.lock`);
    const link = await run(['journal', 'status', '--file', other]);
    expect(link.code).toBe(EXIT.FAILURE);
    expect(link.stdout).toContain(`\nlock              refused: FileJournal: ${other}: the lock file ${other}.lock is a symbolic link, which this SDK never makes`);
  });

  it('a lock held by a running bridge (this process)', async () => {
    const path = await journalFile([]);
    const bridge = new FileJournal(path);
    try {
      await bridge.pending();
      const r = await run(['journal', 'status', '--file', path]);
      expect(r.stdout).toMatch(new RegExp(`\\nlock +held by process ${process.pid} on host ${hostname()} since \\S+ \\(running\\)\\n`));
    } finally {
      await bridge.close();
    }
  });
});

describe('teamgames journal windows: every cause', () => {
  it('lost claim answers, claim marks, lost vote answers with their reward and points', async () => {
    const path = await journalFile(windows);
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r.stdout).toBe(
      [
        'window    player  from                  to                    cause                                        found',
        '--------  ------  --------------------  --------------------  -------------------------------------------  --------------------',
        'window:a  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  claim mark left                              2026-11-25 11:00:00Z',
        'window:b  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  lost vote answer (reward 12, 40 points)      2026-11-25 11:00:00Z',
        'window:c  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  lost vote answer (reward 7, points unknown)  2026-11-25 11:00:00Z',
        '',
      ].join('\n'),
    );
  });

  it('--all adds the resolved ones, with who, when and the note', async () => {
    const path = await journalFile(windows);
    const r = await run(['journal', 'windows', '--all', '--file', path]);
    expect(r.stdout).toBe(
      [
        'window    player  from                  to                    cause                                        found                 state     resolved by  resolved at           note',
        '--------  ------  --------------------  --------------------  -------------------------------------------  --------------------  --------  -----------  --------------------  -------',
        'window:d  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  lost claim answer                            2026-11-25 10:30:00Z  resolved  mod:alice    2026-11-25 11:59:00Z  granted',
        'window:a  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  claim mark left                              2026-11-25 11:00:00Z  open',
        'window:b  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  lost vote answer (reward 12, 40 points)      2026-11-25 11:00:00Z  open',
        'window:c  Ann     2026-11-25 10:00:00Z  2026-11-25 11:00:00Z  lost vote answer (reward 7, points unknown)  2026-11-25 11:00:00Z  open',
        '',
      ].join('\n'),
    );
  });

  it('--all on a journal without windows', async () => {
    const path = await journalFile(everyKind);
    expect(await run(['journal', 'windows', '--all', '--file', path])).toEqual({ code: EXIT.OK, stderr: '', stdout: 'No windows.\n' });
  });
});

describe('teamgames journal: the edges of times and sizes', () => {
  it('the first and the last instant a date holds are dates', async () => {
    const path = await journalFile([window('a', { from: 0, to: 8.64e15 })]);
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r.stdout).toMatch(/\nwindow:a +Ann +1970-01-01 00:00:00Z +\+275760-09-13 00:00:00Z +lost claim answer/);
  });

  /** A journal file of exactly `bytes` bytes: claimed lines, the last one's product name padded. */
  async function journalOfSize(bytes: number): Promise<string> {
    const line = (i: number, pad: number) => `${JSON.stringify({ op: 'put', entries: [{ deliveryId: `claim:s:${i}`, playerName: 'Ann', state: 'claimed', item: item('s', 'x'.repeat(pad), 1), recordedAt: NOW }] })}\n`;
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; ; i++) {
      const whole = line(i, 1_000);
      if (size + whole.length + line(i + 1, 0).length > bytes) {
        lines.push(line(i, bytes - size - line(i, 0).length));
        break;
      }
      lines.push(whole);
      size += whole.length;
    }
    const path = await journalFile([]);
    await writeFile(path, lines.join(''));
    return path;
  }

  it.each([
    [1_023, '1023 B'],
    [1_024, '1.0 KiB'],
    [1_048_575, '1024.0 KiB'],
    [1_048_576, '1.0 MiB'],
  ])('a file of %i bytes is %s', async (bytes, shown) => {
    const r = await run(['journal', 'status', '--file', await journalOfSize(bytes)]);
    expect(r.stdout).toMatch(new RegExp(`^readable +yes: \\d+ lines, ${shown.replace('.', '\\.')}\\n`, 'm'));
  });
});

describe('teamgames journal on a terminal: green for all clear, red for unreadable', () => {
  it('status, windows and pending', async () => {
    const empty = await journalFile([]);
    const status = await run(['journal', 'status', '--file', empty], true);
    expect(status.stdout).toContain('readable          \u001b[32myes: 0 lines, 0 B\u001b[39m\n');
    expect((await run(['journal', 'windows', '--file', empty], true)).stdout).toBe('\u001b[32mNo open windows.\u001b[39m\n');
    expect((await run(['journal', 'pending', '--file', empty], true)).stdout).toBe('\u001b[32mNothing pending.\u001b[39m\n');
    expect((await run(['journal', 'pending', '--file', empty])).stdout).toBe('Nothing pending.\n');
    const missing = join(empty, '..', 'missing.jsonl');
    expect((await run(['journal', 'status', '--file', missing], true)).stdout).toContain(`readable  \u001b[31mno: FileJournal: there is no journal file at ${missing} (nothing was created)\u001b[39m\n`);
  });
});

describe('teamgames journal resolve: the first resolution, as the second resolver reads it', () => {
  it('a note of 2,000 characters whole; a by over 200 (written by another tool) cut to 200', async () => {
    const note = 'n'.repeat(2_000);
    const by = `${'b'.repeat(200)}TAIL`;
    const path = await journalFile([{ ...window('w1'), state: 'resolved', resolution: { by, at: NOW, note } }]);
    const r = await run(['journal', 'resolve', 'Ann', '--note', 'n', '--by', 'mod', '--file', path]);
    expect(r).toEqual({ code: EXIT.ALREADY_RESOLVED, stdout: '', stderr: `teamgames journal: window:w1 of Ann was already resolved by ${'b'.repeat(200)} at 2026-11-25 12:00:00Z: ${note}. Nothing was written: the first resolution stands\n` });
  });
});
