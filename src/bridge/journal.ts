/**
 * The bridge's journal: a file by default (locked by this process, as any FileJournal), or
 * a PostgreSQL or MySQL/MariaDB table for several game servers on one key, opened by the
 * same code as `teamgames journal` (src/host/databases.ts), with its tables created on
 * first use.
 *
 * @module
 */
import { openDatabaseJournal, shownUrl, type JournalDeps } from '../host/databases.js';
import type { DeliveryJournal } from '../journals/contract.js';
import { FileJournal } from '../journals/file/journal.js';
import type { BridgeJournalConfig } from './config.js';

/** An open journal, where it is (for the banner, no password), and how to close it. */
export interface BridgeJournal {
  journal: DeliveryJournal;
  where: string;
  close(): Promise<void>;
}

// A bridge's database waits are bounded as the journal command's are by default.
const DATABASE_TIMEOUT_MS = 15_000;
const CONNECTIONS = 4;

/** Opens the journal the config names (`databaseUrl` read from its env var or file). */
export async function openBridgeJournal(config: BridgeJournalConfig, databaseUrl: string | undefined, deps: JournalDeps = {}): Promise<BridgeJournal> {
  if (config.kind === 'file') {
    const journal = new FileJournal(config.path);
    return { journal, where: `file ${config.path}`, close: () => journal.close() };
  }
  const origin = `journal.${config.kind}.${config.urlEnv === undefined ? 'urlFile' : 'urlEnv'}`;
  const { journal, end } = await openDatabaseJournal(config.kind, databaseUrl as string, { origin, table: config.table, timeoutMs: DATABASE_TIMEOUT_MS, connections: CONNECTIONS, createTables: true }, deps);
  return { journal, where: `${config.kind} ${shownUrl(databaseUrl as string)}${config.table === undefined ? '' : ` table ${config.table}`}`, close: end };
}
