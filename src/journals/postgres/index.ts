/**
 * `teamgames-sdk/postgres`: the delivery journal in PostgreSQL, for several game servers
 * that deliver for one key, and the game's shared `deliveryId` dedupe.
 *
 * Bring your own `pg` (an optional peer dependency): the journal takes your `Pool`, and
 * this entry point never imports `pg` itself.
 *
 * @module teamgames-sdk/postgres
 */
export { PostgresJournal, type PostgresJournalOptions, type PgPool, type PgPoolClient, type PgQueryable, type PgResult } from './journal.js';
export { recordDelivery, type RecordDeliveryOptions } from './dedupe.js';
export { postgresSchema, type PostgresSchemaOptions } from './schema.js';
export type { SqlJournalOptions } from '../sql/common.js';
