/**
 * `teamgames-sdk/mysql`: the delivery journal in MySQL or MariaDB, for several game
 * servers that deliver for one key, and the game's shared `deliveryId` dedupe.
 *
 * Bring your own `mysql2` (an optional peer dependency): the journal takes your
 * `mysql2/promise` pool, and this entry point never imports `mysql2` itself.
 *
 * @module teamgames-sdk/mysql
 */
export { MySqlJournal, type MySqlJournalOptions, type MySqlPool, type MySqlPoolConnection, type MySqlQueryable } from './journal.js';
export { recordDelivery, type RecordDeliveryOptions } from './dedupe.js';
export { mysqlSchema, type MySqlSchemaOptions } from './schema.js';
export type { SqlJournalOptions } from '../sql/common.js';
