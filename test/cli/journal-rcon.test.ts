/**
 * `teamgames journal windows|pending` on what the bridge's RCON delivery leaves: a window
 * of a command whose outcome is unknown names the command(s) (escaped, one row), and a
 * line with its `sending` mark says since when.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stream } from '../support/cli.js';
import { EXIT, runTeamgames } from '../../src/cli/program.js';
import { journalLine } from '../support/journal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const NOW = Date.UTC(2026, 10, 25, 12);

async function run(argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, {}, {}, { now: () => NOW });
  return { code, ...out };
}

async function journalFile(entries: readonly object[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-rcon-'));
  dirs.push(dir);
  const path = join(dir, 'journal.jsonl');
  await writeFile(path, entries.map((entry) => `${JSON.stringify({ op: 'put', entries: [entry] })}\n`).join(''));
  return path;
}

const commandWindow = { deliveryId: 'window:command:invoice:1', playerName: 'Steve', state: 'unverified', from: NOW - 60_000, to: NOW - 30_000, cause: 'unknownCommand', recordedAt: NOW - 30_000, command: 'give Steve whip 1\nsay Steve \u001b[2Jthanks' };

describe('teamgames journal and RCON commands', () => {
  it('windows: the cause names every command of the item on one escaped row', async () => {
    const r = await run(['journal', 'windows', '--file', await journalFile([commandWindow])]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(r.stdout).toContain('command outcome unknown: give Steve whip 1 | say Steve \\u001b[2Jthanks');
  });

  it('windows --json: the command exactly as written', async () => {
    const r = await run(['journal', 'windows', '--json', '--file', await journalFile([commandWindow])]);
    expect((JSON.parse(r.stdout) as { windows: Array<{ command: string }> }).windows[0]?.command).toBe(commandWindow.command);
  });

  it('windows: a command window whose command is unknown says so', async () => {
    const r = await run(['journal', 'windows', '--file', await journalFile([{ ...commandWindow, command: undefined }])]);
    expect(r.stdout).toContain('command outcome unknown: ?');
  });

  it('pending: a line with its sending mark says since when', async () => {
    const r = await run(['journal', 'pending', '--file', await journalFile([{ ...journalLine('invoice:2', 'Steve'), sending: NOW - 1_000 }, journalLine('invoice:3', 'Alex')])]);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toMatch(/Steve .*claimed, sending since 2026-11-25 11:59:59Z/);
    expect(r.stdout).toMatch(/Alex .* claimed  /);
  });
});
