/**
 * The rows of the SQL journals as real servers give them back (a throwaway PostgreSQL and
 * MariaDB): a row changed outside the SDK is a JournalError naming the journal and what
 * is wrong, never an item to grant, and a table made by hand with a binary entry column
 * reads back the entries written. Each test uses tables of its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError } from 'teamgames-sdk';
import { inProcessStore } from '../support/reliability.js';
import { uniqueName } from '../support/databases.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { journalLine } from '../support/journal.js';
import { engineKits, type EngineKit } from './kits.js';

const { mock, sleep, client } = inProcessStore();
afterEach(() => mock.reset());

const tables = () => ({ table: uniqueName('rows'), grantedTable: uniqueName('rows_granted') });

describe.each(engineKits())('$label', (kit: EngineKit) => {
  const name = kit.engine === 'postgres' ? 'PostgresJournal' : 'MySqlJournal';
  const quote = (table: string) => (kit.engine === 'postgres' ? `"${table}"` : `\`${table}\``);
  const setEntry = (table: string, deliveryId: string, entry: string) =>
    kit.query(kit.engine === 'postgres' ? `UPDATE ${quote(table)} SET entry = $1 WHERE delivery_id = $2` : `UPDATE ${quote(table)} SET entry = ? WHERE delivery_id = ?`, [entry, deliveryId]);

  it.skipIf(kit.url === undefined)('a row changed outside the SDK is a JournalError saying what is wrong, and nothing is granted from it', async () => {
    const names = tables();
    const journal = kit.journal(kit.pool(3), names);
    await journal.append([journalLine('claim:x:0', 'Ann'), journalLine('claim:x:1', 'Ann')]);
    await setEntry(names.table, 'claim:x:1', JSON.stringify({ ...journalLine('claim:x:1', 'Ann'), item: undefined }));
    const error = expectInstance(await failureOf(journal.pending()), JournalError);
    expect(error.message).toBe(`${name}: a row of the journal is not a journal entry (item is not an object (undefined)); it was changed outside the SDK`);

    const granted: string[] = [];
    const resumed = await failureOf(client(journal).resumeDeliveries((item) => void granted.push(item.deliveryId), { sleep }));
    expect(resumed).toBeInstanceOf(JournalError);
    expect((resumed as Error).message).toMatch(/item is not an object/);
    expect(granted).toEqual([]);

    await setEntry(names.table, 'claim:x:1', '{"deliveryId":"claim:x:1",');
    const notJson = expectInstance(await failureOf(journal.pending('Ann')), JournalError);
    expect(notJson.message).toMatch(new RegExp(`^${name}: a row of the journal is not JSON \\(.+\\); it was changed outside the SDK$`));
    expect(notJson.cause).toBeInstanceOf(SyntaxError);
  });

  // Registered for MariaDB only (not a skipped test on PostgreSQL).
  if (kit.engine === 'mysql') it.skipIf(kit.url === undefined)('a table made by hand with a binary entry column (LONGBLOB: the driver gives bytes) reads back the entries written', async () => {
    const names = tables();
    await kit.query(`CREATE TABLE ${quote(names.table)} (
      seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, delivery_id VARBINARY(512) NOT NULL, player_name VARBINARY(320) NOT NULL,
      entry LONGBLOB NOT NULL, PRIMARY KEY (seq), UNIQUE KEY delivery_id (delivery_id), KEY player_seq (player_name, seq)) ENGINE=InnoDB`);
    const journal = kit.journal(kit.pool(3), names);
    const lines = [journalLine('a', 'Änn'), { ...journalLine('b', 'Bo', 'intended'), invoice: '7', node: 'n', previewedAt: 1 }];
    await journal.append(lines);
    const [row] = await kit.query(`SELECT entry FROM ${quote(names.table)} ORDER BY seq LIMIT 1`);
    expect(Buffer.isBuffer(row?.['entry'])).toBe(true);
    expect(await journal.pending()).toEqual(lines);
  });
});
