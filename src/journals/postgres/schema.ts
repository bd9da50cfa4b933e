/**
 * The PostgreSQL tables of the journal and of the dedupe record: their DDL, and how a
 * table name is written in SQL.
 *
 * @module
 */
import { checkOptionsObject } from '../../internal/validate.js';
import { checkTableName, DEFAULT_GRANTED_TABLE, DEFAULT_HINTS_TABLE, DEFAULT_TABLE, tableText, type TableName } from '../sql/common.js';

/** Options of {@link postgresSchema}: the same table names as the journal's options. */
export interface PostgresSchemaOptions {
  /** The journal's table. Default `teamgames_deliveries`. */
  table?: string;
  /** The dedupe table of {@link recordDelivery}. Default `teamgames_granted`. */
  grantedTable?: string;
  /** The checkout hints' table (see {@link "teamgames-sdk"!expectCheckout}). Default `teamgames_hints`. */
  hintsTable?: string;
}

const SCHEMA_OPTIONS = ['table', 'grantedTable', 'hintsTable'] as const satisfies ReadonlyArray<keyof PostgresSchemaOptions>;

/** `"schema"."name"`: quoted, which changes nothing for the lower-case names allowed. */
export function quoted(table: TableName, suffix = ''): string {
  return table.schema === undefined ? `"${table.name}${suffix}"` : `"${table.schema}"."${table.name}${suffix}"`;
}

/** The statements, each ending with `;`. @internal */
export function schemaStatements(table: TableName, grantedTable: TableName, hintsTable: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${quoted(table)} (
  seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- insertion order: pending() is oldest first
  delivery_id TEXT NOT NULL UNIQUE,
  player_name TEXT NOT NULL,
  entry       TEXT NOT NULL                                    -- the JournalEntry as JSON
);`,
    `CREATE INDEX IF NOT EXISTS "${table.name}_player_idx" ON ${quoted(table)} (player_name, seq);`,
    `CREATE TABLE IF NOT EXISTS ${quoted(grantedTable)} (
  delivery_id TEXT PRIMARY KEY,                                -- a deliveryId the game applied
  granted_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);`,
    // Times from the database's clock only (the nodes' and the shop's clocks differ). No
    // transaction is '' rather than NULL: the primary key then holds one such hint per player.
    `CREATE TABLE IF NOT EXISTS ${quoted(hintsTable)} (
  player_name    TEXT NOT NULL,
  transaction_id TEXT NOT NULL DEFAULT '',                      -- '' when the hint names none
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at     TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (player_name, transaction_id)
);`,
    `CREATE INDEX IF NOT EXISTS "${hintsTable.name}_created_idx" ON ${quoted(hintsTable)} (created_at);`,
  ];
}

/**
 * The DDL of the journal's table, of the dedupe table and of the checkout hints' table, for those who create tables
 * by hand (migrations). {@link PostgresJournal} runs the same statements on first use
 * unless `createTables: false`.
 *
 * @example
 * ```ts
 * import { postgresSchema } from 'teamgames-sdk/postgres';
 *
 * writeFileSync('migrations/042_teamgames.sql', postgresSchema());
 * ```
 * @throws InvalidInputError when a table name is not a valid name.
 */
export function postgresSchema(options: PostgresSchemaOptions = {}): string {
  const { table, grantedTable, hintsTable } = checkOptionsObject(options, SCHEMA_OPTIONS, 'options');
  const journal = checkTableName(table ?? DEFAULT_TABLE, 'options.table');
  const granted = checkTableName(grantedTable ?? DEFAULT_GRANTED_TABLE, 'options.grantedTable');
  const hints = checkTableName(hintsTable ?? DEFAULT_HINTS_TABLE, 'options.hintsTable');
  return `-- teamgames-sdk: the delivery journal (${tableText(journal)}), the dedupe record (${tableText(granted)}) and the checkout hints (${tableText(hints)})\n${schemaStatements(journal, granted, hints).join('\n')}\n`;
}
