/**
 * A journal file written by 0.1.0 (issue #24 point 4): one-entry `put` lines and `ack`
 * lines, left by a bridge that stopped with a line to grant, an intent whose claim answer
 * was lost and a claim mark. `teamgames journal` reads it as it is; today's FileJournal
 * opens it unchanged (its bytes stay the file's first bytes), finishes the work, gains the
 * windows as records, and a second start changes nothing more.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, inspectJournal, type DeliveredItem } from 'teamgames-sdk';
import { inProcessStore } from '../support/reliability.js';
import { EXIT } from '../../src/cli/program.js';
import { v010File, v010State } from '../databases/v010.js';
import { runCli } from '../support/cli.js';

const store = inProcessStore();
const { mock, sleep, client } = store;
const dirs: string[] = [];

afterEach(async () => {
  mock.reset();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const cli = (argv: string[]) => runCli(argv, mock.clock.now);

describe('a journal file written by 0.1.0', () => {
  it('is read by teamgames journal as it is, opens unchanged, gains the windows on first use, and a second start adds nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-journal-v010-'));
    dirs.push(dir);
    const path = join(dir, 'journal.jsonl');
    const old = await v010State(store);
    const text = v010File(old.entries);
    await writeFile(path, text);

    // The support command reads the old file without changing it.
    const before = await cli(['journal', 'pending', '--json', '--file', path]);
    expect(before.code).toBe(EXIT.OK);
    expect((JSON.parse(before.stdout) as { pending: Array<{ playerName: string; state: string }> }).pending.map((p) => [p.playerName, p.state])).toEqual([
      ['Ann', 'claimed'],
      ['Bob', 'intended'],
      ['Cy', 'claiming'],
    ]);
    expect(await readFile(path, 'utf8')).toBe(text);

    // Today's journal reads back exactly what 0.1.0 wrote.
    const journal = new FileJournal(path);
    expect(await journal.pending()).toEqual(old.entries);

    const granted: DeliveredItem[] = [];
    const report = await client(journal).resumeDeliveries((item) => void granted.push(item), { sleep });
    expect(report.errors).toEqual([]);
    expect(granted.map((g) => g.deliveryId).sort()).toEqual([...old.toGrant].sort());
    expect(report.unverified.map((w) => w.playerName).sort()).toEqual(['Bob', 'Cy']);
    await journal.close();

    // Appended to, never rewritten: the 0.1.0 lines are still the file's first bytes.
    const after = await readFile(path, 'utf8');
    expect(after.startsWith(text)).toBe(true);
    const reopened = new FileJournal(path);
    const seen = await inspectJournal(reopened);
    expect(seen.pending).toEqual([]);
    expect(seen.openWindows.map((w) => [w.playerName, w.cause])).toEqual(old.windows.map((w) => [w.playerName, w.cause]));

    // A second start: nothing to grant, no new window.
    const again = await client(reopened).resumeDeliveries(() => {
      throw new Error('nothing should be granted twice');
    }, { sleep });
    expect(again).toMatchObject({ granted: [], failed: [], errors: [], unverified: [] });
    expect((await inspectJournal(reopened)).openWindows).toHaveLength(2);
    await reopened.close();

    const windows = await cli(['journal', 'windows', '--file', path]);
    expect(windows.code).toBe(EXIT.OK);
    expect(windows.stdout).toMatch(/\nwindow:[0-9a-f-]+ +Bob +.* +lost claim answer +/);
    expect(windows.stdout).toMatch(/\nwindow:[0-9a-f-]+ +Cy +.* +claim mark left +/);
  });
});
