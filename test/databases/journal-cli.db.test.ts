/**
 * `teamgames journal --postgres` / `--mysql` (issue #24 point 3) on real servers, with the
 * real drivers loaded by the command itself: a database without the journal's table is
 * reported and left without one; on a journal with a lost claim and a failing grant,
 * status, windows, pending and resolve answer what a bridge's inspectJournal sees, and
 * the resolution is what every node then reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inspectJournal, type JournalWindow } from 'teamgames-sdk';
import { KEY, inProcessStore } from '../support/reliability.js';
import { EXIT } from '../../src/cli/program.js';
import { uniqueName, urlWithPassword } from '../support/databases.js';
import { engineKits, type EngineKit } from './kits.js';
import { runCli } from '../support/cli.js';

const { mock, sleep, client } = inProcessStore();
afterEach(() => mock.reset());



describe.each(engineKits())('$label', (kit: EngineKit) => {
  const flag = kit.engine === 'postgres' ? '--postgres' : '--mysql';
  const label = kit.engine === 'postgres' ? 'PostgreSQL' : 'MySQL';
  // A password in the URL on every engine (the throwaway PostgreSQL's has none), so the
  // checks that it is never printed check something.
  const url = urlWithPassword(kit.url);
  const password = url === undefined ? '' : decodeURIComponent(new URL(url).password);
  // The URL as the guide shows it first: from an environment variable, not on the command line.
  const cli = (argv: string[]) => runCli(argv, () => mock.clock.now() + 60_000, { JOURNAL_DB: url ?? '' });
  const source = [`${flag}-env`, 'JOURNAL_DB'];

  it.skipIf(kit.url === undefined)('reports a database without the journal table, and creates none', async () => {
    const table = uniqueName('absent');
    const status = await cli(['journal', 'status', ...source, '--table', table]);
    expect(status.code).toBe(EXIT.FAILURE);
    const missing = `no journal table ${table} in this database (nothing was created). A bridge creates it on first use; check the URL and --table`;
    expect(status.stdout).toMatch(new RegExp(`^journal +${label} ${kit.engine}://.*, table ${table}\\nreadable +no: ${missing.replace(/[.()]/g, '\\$&')}\\n$`));
    expect(status.stderr).toBe(`teamgames journal: ${missing}\n`);
    for (const command of [['windows'], ['pending'], ['resolve', 'Ann', '--note', 'x']]) {
      expect(await cli(['journal', ...command, ...source, '--table', table])).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: `teamgames journal: ${missing}\n` });
    }
    expect(await kit.tableExists(table)).toBe(false);
  });

  it.skipIf(kit.url === undefined)('status, windows, pending and resolve on a shared journal; the resolution is what every node reads', async () => {
    const names = { table: uniqueName('journal'), grantedTable: uniqueName('granted') };
    const journal = kit.journal(kit.pool(3), names);
    const c = client(journal);
    mock.addPurchase(KEY, { playerName: 'Player123', id: 4, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', skip: 1, times: 1 });
    expect((await c.deliver('Player123', () => {}, { sleep })).code).toBe('OUTCOME_UNKNOWN');
    expect((await c.deliver('Player123', () => {}, { sleep })).unverified).toBeDefined();
    mock.addPurchase(KEY, { playerName: 'Zezima', id: 2, quantity: 1 });
    await c.deliver('Zezima', () => Promise.reject(new Error('unknown item minecraft:diamond')), { sleep, mode: 'fast' });
    const args = [...source, '--table', names.table];

    const status = await cli(['journal', 'status', ...args]);
    expect(status).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(status.stdout).toMatch(new RegExp(`^journal +${label} ${kit.engine}://.*, table ${names.table}\\nreadable +yes\\npending +1 line, oldest 1m 0s .*\\nopen windows +1 to check .*\\nresolved windows +0\\n$`));
    expect(password).not.toBe('');
    expect(status.stdout).toContain(':***@');
    expect(status.stdout).not.toContain(`:${password}@`);
    expect(JSON.parse((await cli(['journal', 'status', '--json', ...args])).stdout)).toMatchObject({ journal: { kind: kit.engine, table: names.table, readable: true }, pending: 1, openWindows: 1, resolvedWindows: 0, oldestPendingMs: 60_000 });

    const [window] = (await inspectJournal(journal)).openWindows as [JournalWindow];
    const windows = await cli(['journal', 'windows', ...args]);
    expect(windows.stdout).toMatch(new RegExp(`\\n${window.deliveryId} +Player123 +.* +lost claim answer +`));
    const pending = await cli(['journal', 'pending', '--json', ...args]);
    expect(JSON.parse(pending.stdout)).toMatchObject({ pending: [{ playerName: 'Zezima', state: 'claimed', lastError: { message: 'unknown item minecraft:diamond', attempts: 1 } }] });

    const resolved = await cli(['journal', 'resolve', 'Player123', '--note', 'checked invoice 1: granted', '--by', 'mod:alice', ...args]);
    expect(resolved).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(resolved.stdout).toBe(`Resolved ${window.deliveryId} of Player123 (${at(window.from)} to ${at(window.to)}) by mod:alice: checked invoice 1: granted\n`);
    // Another node reads the resolution.
    const other = kit.journal(kit.pool(2), { ...names, createTables: false });
    const seen = await inspectJournal(other);
    expect(seen.openWindows).toEqual([]);
    expect(seen.resolvedWindows).toEqual([{ ...window, state: 'resolved', resolution: { by: 'mod:alice', at: mock.clock.now() + 60_000, note: 'checked invoice 1: granted' } }]);
    // Once only: the second resolver is told who came first (exit 7).
    const again = await cli(['journal', 'resolve', 'Player123', '--note', 'again', ...args]);
    expect(again).toMatchObject({ code: EXIT.ALREADY_RESOLVED, stdout: '' });
    expect(again.stderr).toMatch(/already resolved by mod:alice at .*: checked invoice 1: granted\. Nothing was written/);
  });
  it.skipIf(kit.url === undefined)('database rows with escape sequences, newlines and bidi controls: shown escaped, one row each; --json exact', async () => {
    const names = { table: uniqueName('hostile'), grantedTable: uniqueName('granted') };
    const journal = kit.journal(kit.pool(2), names);
    const hostile = 'Eve\u001b[2J\u001b[H\nwindow:forged  Mallory\u202e\u009b31m';
    const window = { deliveryId: 'window:1', playerName: hostile, state: 'resolved' as const, from: 1, to: 2, cause: 'lostClaim' as const, recordedAt: 3, resolution: { by: hostile, at: 4, note: `${hostile}\nsecond line` } };
    await journal.append([window]);
    const r = await cli(['journal', 'windows', '--all', ...source, '--table', names.table]);
    expect(r).toMatchObject({ code: EXIT.OK, stderr: '' });
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(r.stdout).toContain('Eve\\u001b[2J\\u001b[H\\u000awindow:forged  Mallory\\u202e\\u009b31m');
    const json = await cli(['journal', 'windows', '--all', '--json', ...source, '--table', names.table]);
    expect(JSON.parse(json.stdout)).toEqual({ windows: [window] });
  });

  it.skipIf(kit.url === undefined)('a server that accepted the login and then never answers (a lock held on the table): exit 4 within --timeout, the URL from an environment variable', async () => {
    const names = { table: uniqueName('locked'), grantedTable: uniqueName('granted') };
    await inspectJournal(kit.journal(kit.pool(2), names)); // creates the tables
    const tx = await kit.begin(kit.pool(2));
    await tx.run(kit.engine === 'postgres' ? `LOCK TABLE ${names.table} IN ACCESS EXCLUSIVE MODE` : `LOCK TABLES ${names.table} WRITE`, []);
    try {
      for (const command of ['status', 'windows']) {
        const started = performance.now();
        const r = await cli(['journal', command, ...source, '--timeout', '1000', '--table', names.table]);
        expect(performance.now() - started).toBeLessThan(6_000);
        expect(r).toMatchObject({ code: EXIT.NETWORK, stdout: '' });
        expect(r.stderr).toMatch(/^teamgames journal: the database did not answer within 1000 ms \(--timeout\)/);
        expect(r.stderr).not.toContain(`:${password}@`);
      }
    } finally {
      if (kit.engine === 'mysql') await tx.run('UNLOCK TABLES', []);
      await tx.rollback();
    }
  });
});

function at(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}
