/**
 * A database written by 0.1.0 (issue #24 point 4), on real PostgreSQL and MariaDB: the
 * journal's table made with 0.1.0's own DDL, holding what a 0.1.0 bridge stopped with (a
 * claimed line, an intent whose claim answer was lost, a claim mark), as JSON rows. The
 * schema did not change in this release (a window is a row like any entry): today's code,
 * two nodes starting at once on the table (their DDL runs on it concurrently), reads every
 * row back, delivers, writes the windows it finds, and a third node lists them, as does
 * `teamgames journal`. The table is left as 0.1.0 made it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inspectJournal } from 'teamgames-sdk';
import { inProcessStore } from '../support/reliability.js';
import { EXIT } from '../../src/cli/program.js';
import { uniqueName } from '../support/databases.js';
import { engineKits, type EngineKit } from './kits.js';
import { v010Insert, v010Schema, v010State } from './v010.js';
import { runCli } from '../support/cli.js';

const store = inProcessStore();
const { mock, sleep, client } = store;
afterEach(() => mock.reset());

const cli = (argv: string[]) => runCli(argv, mock.clock.now);

/** The journal table's columns, in order. */
async function columns(kit: EngineKit, table: string): Promise<string[]> {
  const rows =
    kit.engine === 'postgres'
      ? await kit.query('SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table])
      : await kit.query('SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [table]);
  return rows.map((r) => String(r['name']));
}

describe.each(engineKits())('$label', (kit: EngineKit) => {
  it.skipIf(kit.url === undefined)('a table made and filled by 0.1.0 opens unchanged from two nodes at once, gains the windows, and every node sees them', async () => {
    const names = { table: uniqueName('v010'), grantedTable: uniqueName('v010_granted') };
    for (const statement of v010Schema(kit.engine, names.table, names.grantedTable)) await kit.query(statement);
    const made = await columns(kit, names.table);
    expect(made).toEqual(['seq', 'delivery_id', 'player_name', 'entry']);
    const old = await v010State(store, 'node-0.1.0');
    for (const entry of old.entries) await kit.query(v010Insert(kit.engine, names.table), [entry.deliveryId, entry.playerName, JSON.stringify(entry)]);

    // Two nodes of today's code start together: each journal's first query runs its DDL
    // (createTables defaults to true) on the 0.1.0 table at the same moment.
    const nodes = ['a', 'b'].map((name) => kit.journal(kit.pool(4), { ...names, nodeId: `node-${name}` }));
    const readBack = await Promise.all(nodes.map((journal) => journal.pending()));
    for (const entries of readBack) expect(entries).toEqual(old.entries);

    const granted: string[] = [];
    const reports = await Promise.all(nodes.map((journal) => client(journal).resumeDeliveries((item) => void granted.push(item.deliveryId), { sleep })));
    for (const report of reports) expect(report.errors).toEqual([]);
    // Each line granted once, by whichever node held the player's lock first.
    expect(granted.sort()).toEqual([...old.toGrant].sort());
    expect(reports.flatMap((r) => r.unverified.map((w) => w.playerName)).sort()).toEqual(['Bob', 'Cy']);

    // A third node, which never delivered (and creates nothing), sees the windows.
    const third = kit.journal(kit.pool(2), { ...names, createTables: false });
    const seen = await inspectJournal(third);
    expect(seen.pending).toEqual([]);
    expect(seen.openWindows.map((w) => [w.playerName, w.cause]).sort()).toEqual(old.windows.map((w) => [w.playerName, w.cause]).sort());
    for (const window of seen.openWindows) expect(['node-a', 'node-b']).toContain(window.node);

    // A second start of both nodes: nothing granted again, no new window.
    const again = await Promise.all(nodes.map((journal) => client(journal).resumeDeliveries(() => {
      throw new Error('nothing should be granted twice');
    }, { sleep })));
    for (const report of again) expect(report).toMatchObject({ granted: [], failed: [], errors: [], unverified: [] });
    expect((await inspectJournal(third)).openWindows).toHaveLength(2);

    // The support command lists them too, and the table is still 0.1.0's.
    const flag = kit.engine === 'postgres' ? '--postgres' : '--mysql';
    const windows = await cli(['journal', 'windows', '--json', flag, kit.url as string, '--table', names.table]);
    expect(windows.code).toBe(EXIT.OK);
    expect((JSON.parse(windows.stdout) as { windows: Array<{ playerName: string }> }).windows.map((w) => w.playerName).sort()).toEqual(['Bob', 'Cy']);
    expect(await columns(kit, names.table)).toEqual(made);
  });
});
