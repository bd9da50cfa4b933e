/**
 * A node that takes a player's lock and holds it until it is killed, for the test of a
 * node dying (SIGKILL) while it holds the lock:
 *
 *   node --import tsx test/databases/lock-holder.ts <postgres|mysql> <url> <table> <player>
 *
 * Prints `locked <nodeId>` once it holds the lock.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { MySqlJournal } from '../../src/journals/mysql/index.js';
import { PostgresJournal } from '../../src/journals/postgres/index.js';

const [engine, url, table, player] = process.argv.slice(2) as [string, string, string, string];
const journal =
  engine === 'postgres' ? new PostgresJournal(new pg.Pool({ connectionString: url, max: 2 }), { table }) : new MySqlJournal(mysql.createPool({ uri: url, connectionLimit: 2 }), { table });

await journal.withPlayerLock(player, async () => {
  process.stdout.write(`locked ${journal.nodeId}\n`);
  // Held until the process is killed.
  await new Promise(() => setInterval(() => undefined, 60_000));
});
