/**
 * The MySQL / MariaDB tables of the journal and of the dedupe record: their DDL, and how
 * a table name is written in SQL.
 *
 * @module
 */
import { checkOptionsObject } from '../../internal/validate.js';
import { checkTableName, DEFAULT_GRANTED_TABLE, DEFAULT_TABLE, tableText, type TableName } from '../sql/common.js';

/** Options of {@link mysqlSchema}: the same table names as the journal's options. */
export interface MySqlSchemaOptions {
  /** The journal's table. Default `teamgames_deliveries`. */
  table?: string;
  /** The dedupe table of {@link recordDelivery}. Default `teamgames_granted`. */
  grantedTable?: string;
}

const SCHEMA_OPTIONS = ['table', 'grantedTable'] as const satisfies ReadonlyArray<keyof MySqlSchemaOptions>;

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
export function schemaStatements(table: TableName, grantedTable: TableName): string[] {
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
  ];
}

/**
 * The DDL of the journal's table and of the dedupe table, for those who create tables
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
  const { table, grantedTable } = checkOptionsObject(options, SCHEMA_OPTIONS, 'options');
  const journal = checkTableName(table ?? DEFAULT_TABLE, 'options.table');
  const granted = checkTableName(grantedTable ?? DEFAULT_GRANTED_TABLE, 'options.grantedTable');
  return `-- teamgames-sdk: the delivery journal (${tableText(journal)}) and the dedupe record (${tableText(granted)})\n${schemaStatements(journal, granted).join('\n')}\n`;
}
