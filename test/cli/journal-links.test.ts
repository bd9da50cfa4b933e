/**
 * `teamgames journal --file` through another name of the journal (issue #34 point 6): through
 * a hard link to a held journal, `status` never says the lock is free (the file is refused as
 * the engine refuses it), and every reading command is refused. Apart from
 * journal-trust.test.ts, whose umask hook cannot run in a worker thread (StrykerJS's).
 */
import { linkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal } from '../../src/journals/file/journal.js';
import { runCli } from '../support/cli.js';
import { journalLine } from '../support/journal.js';

const dirs: string[] = [];
const open: FileJournal[] = [];
afterEach(async () => {
  for (const j of open.splice(0)) await j.close();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const now = () => Date.parse('2026-01-01T00:00:00Z');
const put = (id: string, player = 'Ann') => `${JSON.stringify({ op: 'put', entry: journalLine(id, player) })}\n`;

/** A journal path in a fresh directory of its own (mode 0700). */
async function tempPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-journal-links-'));
  dirs.push(dir);
  return join(dir, 'journal.jsonl');
}

describe('status through another name of the journal (point 6)', () => {
  it('a hard link to a journal a bridge holds: refused as the engine refuses it, the lock never said free (exit 1)', async () => {
    const path = await tempPath();
    const held = new FileJournal(path);
    open.push(held);
    await held.append([journalLine('a')]);
    const other = join(dirname(path), 'other-name.jsonl');
    linkSync(path, other);

    const r = await runCli(['journal', 'status', '--file', other, '--json'], now);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { journal: { readable: boolean; lock: { state: string; problem?: string } } };
    expect(report.journal.readable).toBe(false);
    expect(report.journal.lock.state).toBe('refused');
    expect(report.journal.lock.problem).toMatch(/has 2 names \(hard links\)/);
    expect(r.stderr).toMatch(/has 2 names \(hard links\)/);

    const text = await runCli(['journal', 'status', '--file', other], now);
    expect(text.code).toBe(1);
    expect(text.stdout).not.toMatch(/free/);
    expect(text.stdout).toMatch(/^lock +refused: .*has 2 names/m);
  });

  it('pending and windows through the hard link: refused too (exit 1)', async () => {
    const path = await tempPath();
    writeFileSync(path, put('a'));
    const other = join(dirname(path), 'other-name.jsonl');
    linkSync(path, other);
    for (const command of ['pending', 'windows']) {
      const r = await runCli(['journal', command, '--file', other], now);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/has 2 names \(hard links\)/);
    }
  });
});
