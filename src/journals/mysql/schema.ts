/**
 * The MySQL / MariaDB tables of the journal and of the dedupe record: their DDL, and how
 * a table name is written in SQL.
 *
 * @module
 */
import { checkOptionsObject } from '../../internal/validate.js';
import { checkTableName, DEFAULT_GRANTED_TABLE, DEFAULT_HINTS_TABLE, DEFAULT_TABLE, tableText, type TableName } from '../sql/common.js';

/** Options of {@link mysqlSchema}: the same table names as the journal's options. */
export interface MySqlSchemaOptions {
  /** The journal's table. Default `teamgames_deliveries`. */
  table?: string;
  /** The dedupe table of {@link recordDelivery}. Default `teamgames_granted`. */
  grantedTable?: string;
  /** The checkout hints' table (see {@link "teamgames-sdk"!expectCheckout}). Default `teamgames_hints`. */
  hintsTable?: string;
}

const SCHEMA_OPTIONS = ['table', 'grantedTable', 'hintsTable'] as const satisfies ReadonlyArray<keyof MySqlSchemaOptions>;

/** The longest `deliveryId` the tables hold, in bytes (UTF-8). @internal */
export const MAX_DELIVERY_ID_BYTES = 512;

/** `` `schema`.`name` ``. @internal */
export function quoted(table: TableName): string {
  return table.schema === undefined ? `\`${table.name}\`` : `\`${table.schema}\`.\`${table.name}\``;
}

/**
 * The statements. Ids and names are binary strings: compared byte for byte (exact names,
 * no case folding, no trailing-space padding), whatever the server's default collation.
 * @internal
 */
export function schemaStatements(table: TableName, grantedTable: TableName, hintsTable: TableName): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${quoted(table)} (
  seq         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,      -- insertion order: pending() is oldest first
  delivery_id VARBINARY(${MAX_DELIVERY_ID_BYTES}) NOT NULL,
  player_name VARBINARY(320) NOT NULL,
  entry       LONGTEXT CHARACTER SET utf8mb4 NOT NULL,      -- the JournalEntry as JSON
  PRIMARY KEY (seq),
  UNIQUE KEY delivery_id (delivery_id),
  KEY player_seq (player_name, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`,
    `CREATE TABLE IF NOT EXISTS ${quoted(grantedTable)} (
  delivery_id VARBINARY(${MAX_DELIVERY_ID_BYTES}) NOT NULL,  -- a deliveryId the game applied
  granted_at  TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (delivery_id)
) ENGINE=InnoDB;`,
    // Times are epoch ms of the database's clock (never a node's or the shop's), UTC
    // whatever the session's time zone. No transaction is '' rather than NULL: the primary
    // key then holds one such hint per player.
    `CREATE TABLE IF NOT EXISTS ${quoted(hintsTable)} (
  player_name    VARBINARY(320) NOT NULL,
  transaction_id VARBINARY(128) NOT NULL DEFAULT '',         -- '' when the hint names none
  created_ms     BIGINT NOT NULL,
  expires_ms     BIGINT NOT NULL,
  PRIMARY KEY (player_name, transaction_id),
  KEY created_ms (created_ms)
) ENGINE=InnoDB;`,
  ];
}

/**
 * The DDL of the journal's table, of the dedupe table and of the checkout hints' table, for those who create tables
 * by hand (migrations). {@link MySqlJournal} runs the same statements on first use
 * unless `createTables: false`.
 *
 * @example
 * ```ts
 * import { mysqlSchema } from 'teamgames-sdk/mysql';
 *
 * writeFileSync('migrations/042_teamgames.sql', mysqlSchema());
 * ```
 * @throws InvalidInputError when a table name is not a valid name.
 */
export function mysqlSchema(options: MySqlSchemaOptions = {}): string {
  const { table, grantedTable, hintsTable } = checkOptionsObject(options, SCHEMA_OPTIONS, 'options');
  const journal = checkTableName(table ?? DEFAULT_TABLE, 'options.table');
  const granted = checkTableName(grantedTable ?? DEFAULT_GRANTED_TABLE, 'options.grantedTable');
  const hints = checkTableName(hintsTable ?? DEFAULT_HINTS_TABLE, 'options.hintsTable');
  return `-- teamgames-sdk: the delivery journal (${tableText(journal)}), the dedupe record (${tableText(granted)}) and the checkout hints (${tableText(hints)})\n${schemaStatements(journal, granted, hints).join('\n')}\n`;
}
