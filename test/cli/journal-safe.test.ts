/**
 * Issue #34 points 3, 4 and 5 on `teamgames journal` over files: what a journal and its
 * lock file hold is shown escaped (one row per record; `--json` exact), a key echoed into
 * the journal is not printed, the table prints a million rows, and an impossible time
 * hides nothing. The databases' cases: journal-database.test.ts and
 * test/databases/journal-cli.db.test.ts.
 * Real files; the program runs in process with injected streams.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalDeps } from '../../src/cli/journal-command.js';
import { stream } from '../support/cli.js';
import { printable, printableJson } from '../../src/common/printable.js';
import { EXIT, runTeamgames, table, type TeamgamesEnv } from '../../src/cli/program.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const NOW = Date.UTC(2026, 10, 25, 12);
const HOSTILE = 'x\u001b[2J\u001b[Hcleared\nwindow:forged  Forged  2026-01-01 00:00:00Z\r\u202eevil\u2066\u009b31m\u200b\u2028\u007f';
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

async function run(argv: string[], env: TeamgamesEnv = {}, deps: JournalDeps = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, env, {}, { now: () => NOW, ...deps });
  return { code, ...out };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-safe-'));
  dirs.push(dir);
  return dir;
}

/** A journal file holding `entries`, one line each, as a FileJournal writes them. */
async function journalFile(entries: readonly object[]): Promise<string> {
  const path = join(await tempDir(), 'journal.jsonl');
  let text = '';
  for (const entry of entries) text += `${JSON.stringify({ op: 'put', entries: [entry] })}\n`;
  await writeFile(path, text);
  return path;
}

const window = (id: string, fields: Record<string, unknown> = {}) => ({ deliveryId: `window:${id}`, playerName: 'Player123', state: 'unverified', from: NOW - 60_000, to: NOW - 30_000, cause: 'lostClaim', recordedAt: NOW - 30_000, ...fields });

describe('printable: the one escaping rule', () => {
  it.each([
    ['ESC and CSI', 'a\u001b[2Jb', 'a\\u001b[2Jb'],
    ['newline, CR, tab, NUL', 'a\nb\rc\td\u0000', 'a\\u000ab\\u000dc\\u0009d\\u0000'],
    ['DEL and C1', '\u007f\u0085\u009b', '\\u007f\\u0085\\u009b'],
    ['bidi controls', '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c', '\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c'],
    ['invisible format characters', '\u200b\u200d\ufeff\u00ad', '\\u200b\\u200d\\ufeff\\u00ad'],
    ['line and paragraph separators', '\u2028\u2029', '\\u2028\\u2029'],
    ['a lone surrogate, an astral tag', '\ud800 \u{e0041}', '\\ud800 \\u{e0041}'],
    ['a backslash, so that what is shown reads back exactly', 'C:\\u001b', 'C:\\\\u001b'],
    ['anything else as it is', 'Zezima Ünïcödé 名前 🐉 tab-less', 'Zezima Ünïcödé 名前 🐉 tab-less'],
  ])('%s', (_, text, shown) => {
    expect(printable(text)).toBe(shown);
  });

  it('printableJson: the same JSON value, nothing raw a terminal acts on', () => {
    const value = { name: HOSTILE, tag: '\u{e0041}', emoji: '🐉' };
    const text = printableJson(JSON.stringify(value));
    expect(text).not.toMatch(RAW_CONTROL);
    expect(text).not.toContain('\u{e0041}');
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('the table printer', () => {
  it('prints as many columns as it has headers: a longer row\'s extra cells are not shown', () => {
    expect(table(['a'], [['x', 'y']])).toBe('a\n-\nx\n');
    expect(table(['n', 'player'], [['1', 'Ann', 'extra'], ['2']])).toBe('n  player\n-  ------\n1  Ann\n2\n');
  });

  it('prints 1,000,000 rows (no spread of the rows into one call)', () => {
    const rows: string[][] = [];
    for (let i = 0; i < 1_000_000; i++) rows.push([String(i), i === 999_999 ? 'last\nrow' : 'p']);
    const text = table(['n', 'player'], rows);
    expect(text.length).toBeGreaterThan(8_000_000);
    expect(text.endsWith('999999  last\\u000arow\n')).toBe(true);
    let lines = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    expect(lines).toBe(1_000_002);
  });
});

describe('teamgames journal: what records hold is shown, never obeyed', () => {
  const hostileJournal = () =>
    journalFile([
      window('a', { playerName: HOSTILE, node: HOSTILE }),
      { ...window('b', { deliveryId: `window:${HOSTILE}` }), state: 'resolved', resolution: { by: HOSTILE, at: NOW, note: `${HOSTILE}\nsecond line of the note` } },
      {
        deliveryId: 'claim:1:0',
        playerName: HOSTILE,
        state: 'claimed',
        recordedAt: NOW - 5_000,
        item: { player_name: HOSTILE, product_id: 1, product_id_string: HOSTILE, product_name: HOSTILE, product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 },
        lastError: { message: `grant failed: ${HOSTILE}`, at: NOW, attempts: 1 },
      },
    ]);

  it('windows --all: player, id, by and note escaped, one row per window', async () => {
    const r = await run(['journal', 'windows', '--all', '--file', await hostileJournal()]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2 + 2);
    expect(r.stdout).toContain(printable(HOSTILE));
    expect(r.stdout).toContain(`${printable(HOSTILE)}\\u000asecond line of the note`);
  });

  it('windows --json: the exact values, valid JSON, nothing raw', async () => {
    const r = await run(['journal', 'windows', '--all', '--json', '--file', await hostileJournal()]);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const { windows } = JSON.parse(r.stdout) as { windows: Array<{ playerName: string; resolution?: { note: string; by: string } }> };
    expect(windows[0]?.playerName).toBe(HOSTILE);
    expect(windows[1]?.resolution).toEqual({ by: HOSTILE, at: NOW, note: `${HOSTILE}\nsecond line of the note` });
  });

  it('pending: the player, product and grant error escaped, one row', async () => {
    const r = await run(['journal', 'pending', '--file', await hostileJournal()]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(3);
  });

  it("status: the lock file's fields (host, since) and the path escaped", async () => {
    const path = await hostileJournal();
    await writeFile(`${path}.lock`, JSON.stringify({ pid: 999_999_999, host: `other-host${HOSTILE}`, since: HOSTILE }));
    const r = await run(['journal', 'status', '--file', path]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toMatch(/^lock +held by process 999999999 on host other-hostx\\u001b\[2J.* since x\\u001b.*\(another host: cannot tell whether it runs\)\n/m);
    expect(r.stdout.split('\n')).toHaveLength(7);
  });

  it('an error message naming a hostile path is one escaped line', async () => {
    const dir = await tempDir();
    const r = await run(['journal', 'windows', '--file', join(dir, `missing\u001b[2J\n.jsonl`)]);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    // An error is prose: its line breaks are spaces, anything else escaped.
    expect(r.stderr).toContain('missing\\u001b[2J .jsonl');
    expect(r.stderr.split('\n')).toHaveLength(2);
  });

  it('a key echoed into the journal (the store put it in a product name) is not printed when TEAMGAMES_API_KEY is set', async () => {
    const key = 'tg_live_4b1d2c3e5f60718293a4b5c6d7e8f901';
    const b64 = Buffer.from(key).toString('base64');
    const path = await journalFile([{ deliveryId: 'claim:1:0', playerName: 'Zezima', state: 'claimed', recordedAt: NOW, item: { player_name: 'Zezima', product_id: 1, product_id_string: key, product_name: b64, product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 } }]);
    for (const json of [[], ['--json']]) {
      const r = await run(['journal', 'pending', ...json, '--file', path], { TEAMGAMES_API_KEY: key });
      expect(r.stdout + r.stderr).not.toContain(key);
      expect(r.stdout + r.stderr).not.toContain(b64.replace(/=+$/, ''));
      expect(r.stdout).toContain('<redacted>');
    }
  });

  it('a key file refused as a credential (other users may read it, mode 0644) still hides the key it holds, with one warning saying so (issue #43)', async () => {
    const key = 'tg_live_4b1d2c3e5f60718293a4b5c6d7e8f901';
    const b64 = Buffer.from(key).toString('base64');
    const path = await journalFile([{ deliveryId: 'claim:1:0', playerName: 'Zezima', state: 'claimed', recordedAt: NOW, item: { player_name: 'Zezima', product_id: 1, product_id_string: key, product_name: b64, product_price: 1, quantity_to_grant: 1, quantity_purchased: 1, product_amount: 1, amount_purchased: 1 } }]);
    const keyFile = join(await tempDir(), 'key');
    await writeFile(keyFile, `${key}\n`, { mode: 0o644 });
    await chmod(keyFile, 0o644);
    const warning = `teamgames journal: warning: TEAMGAMES_API_KEY_FILE: cannot read ${keyFile} (other users may read or change it, mode 0644: chmod o-rwx ${keyFile}); it is not used as a credential, and what it holds is still shown as <redacted> wherever a record holds it\n`;
    const r = await run(['journal', 'pending', '--file', path], { TEAMGAMES_API_KEY_FILE: keyFile });
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(b64.replace(/=+$/, ''));
    expect(r.stdout).toContain('<redacted>');
    expect(r.stderr).toBe(warning);
    const json = await run(['journal', 'pending', '--json', '--file', path], { TEAMGAMES_API_KEY_FILE: keyFile });
    expect(json.stdout + json.stderr).not.toContain(key);
    expect(JSON.parse(json.stdout)).toMatchObject({ pending: [{ item: { product_id_string: '<redacted>' } }] });
    expect(json.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line))).toEqual([{ warning: 'KEY_FILE_REFUSED', message: warning.slice('teamgames '.length, -1) }]);
    // Owner-only, it is the credential: no warning.
    await chmod(keyFile, 0o600);
    const own = await run(['journal', 'pending', '--file', path], { TEAMGAMES_API_KEY_FILE: keyFile });
    expect(own).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(own.stdout).not.toContain(key);
  });
});

describe('teamgames journal resolve: what it prints back', () => {
  it('a --note with newlines and tabs: one escaped line; --json exact; escape sequences in --by or --note are refused before anything is written', async () => {
    const path = await journalFile([window('a'), window('b', { playerName: 'Eve' })]);
    const note = 'granted\nResolved window:b of Eve (forged)\tdone';
    const r = await run(['journal', 'resolve', 'Player123', '--by', 'mod', '--note', note, '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toBe('Resolved window:a of Player123 (2026-11-25 11:59:00Z to 2026-11-25 11:59:30Z) by mod: granted\\u000aResolved window:b of Eve (forged)\\u0009done\n');
    const json = await run(['journal', 'resolve', 'Eve', '--by', 'mod', '--note', note, '--json', '--file', path]);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(json.stdout)).toMatchObject({ resolution: { by: 'mod', note } });
    for (const [by, hostile] of [['mod\u001b[2J\u202e', 'checked'], ['mod', 'granted\u001b[1A']]) {
      const refused = await run(['journal', 'resolve', '--window', 'window:a', '--by', by as string, '--note', hostile as string, '--file', path]);
      expect(refused.code).toBe(EXIT.USAGE);
      expect(refused.stderr).not.toMatch(RAW_CONTROL);
    }
  });

  it('a window with an impossible time: resolved, printed with the raw number, exit 0', async () => {
    const path = await journalFile([window('far', { from: 1e16, to: 2e16 })]);
    const r = await run(['journal', 'resolve', 'Player123', '--by', 'mod', '--note', 'checked', '--file', path]);
    expect(r).toEqual({ code: EXIT.OK, stderr: '', stdout: 'Resolved window:far of Player123 (10000000000000000 (not a time) to 20000000000000000 (not a time)) by mod: checked\n' });
  });
});

describe('teamgames journal: impossible times', () => {
  it('a window at 1e16 or before 1970 is shown with its raw number and hides no other window', async () => {
    const path = await journalFile([window('ok'), window('future', { from: 1e16, to: 1e16, recordedAt: 1e16 }), window('past', { from: -5, recordedAt: -1 })]);
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2 + 3);
    expect(r.stdout).toMatch(/^window:ok +Player123 +2026-11-25 11:59:00Z/m);
    expect(r.stdout).toMatch(/^window:future +Player123 +10000000000000000 \(not a time\) +10000000000000000 \(not a time\)/m);
    expect(r.stdout).toMatch(/^window:past +Player123 +-5 \(not a time\) +2026-11-25 11:59:30Z +lost claim answer +-1 \(not a time\)$/m);
    const json = JSON.parse((await run(['journal', 'windows', '--json', '--file', path])).stdout) as { windows: Array<{ from: number }> };
    expect(json.windows.map((w) => w.from)).toEqual([NOW - 60_000, 1e16, -5]);
    expect((await run(['journal', 'status', '--file', path])).code).toBe(EXIT.OK);
  });
});

describe('teamgames journal: many rows', () => {
  it('lists 130,000 windows as a table (it overflowed the stack from about 125,000)', async () => {
    const path = join(await tempDir(), 'journal.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < 130_000; i++) lines.push(JSON.stringify({ op: 'put', entries: [window(String(i).padStart(6, '0'))] }));
    await writeFile(path, `${lines.join('\n')}\n`);
    const r = await run(['journal', 'windows', '--file', path]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout.endsWith('lost claim answer  2026-11-25 11:59:30Z\n')).toBe(true);
    expect(r.stdout.split('\n')).toHaveLength(2 + 130_000 + 1);
  }, 60_000);
});
