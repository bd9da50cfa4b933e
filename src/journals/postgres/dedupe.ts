/**
 * {@link recordDelivery}: the game's `deliveryId` dedupe, shared by every node, inside the
 * game's own PostgreSQL transaction.
 *
 * @module
 */
import { JournalError } from '../../errors.js';
import { checkNonBlank, checkOptionsObject, describe, fail } from '../../internal/validate.js';
import { checkTableName, DEFAULT_GRANTED_TABLE } from '../sql/common.js';
import type { PgQueryable } from './journal.js';
import { quoted } from './schema.js';

/** Options of {@link recordDelivery}. */
export interface RecordDeliveryOptions {
  /** The dedupe table: the journal's `grantedTable`. Default `teamgames_granted`. */
  table?: string;
}

const OPTIONS = ['table'] as const satisfies ReadonlyArray<keyof RecordDeliveryOptions>;

// PostgreSQL's undefined_table.
const UNDEFINED_TABLE = '42P01';

/**
 * Records that the game applied `deliveryId`, in the game's own transaction on `db` (the
 * connection of that transaction), and says whether to apply it: `true` the first time,
 * `false` when any node recorded it already. Apply the item in the same transaction only
 * when it returns `true`; a transaction that rolls back takes the record with it, so the
 * grant repeated later applies again.
 *
 * One statement, `INSERT … ON CONFLICT (delivery_id) DO NOTHING`: when another node's
 * transaction holds the same id uncommitted, this one waits for it and then returns
 * `false` (it committed) or `true` (it rolled back).
 *
 * @example
 * ```ts
 * import { recordDelivery } from 'teamgames-sdk/postgres';
 *
 * async function grant(item: DeliveredItem) {
 *   const db = await pool.connect();
 *   try {
 *     await db.query('BEGIN');
 *     if (await recordDelivery(db, item.deliveryId)) {
 *       await db.query('UPDATE inventories SET amount = amount + $1 WHERE player = $2 AND item = $3', [item.quantity_to_grant, item.player_name, item.product_id_string]);
 *     }
 *     await db.query('COMMIT');
 *   } catch (error) {
 *     await db.query('ROLLBACK');
 *     throw error; // deliver keeps the line and grants it again later
 *   } finally {
 *     db.release();
 *   }
 * }
 * ```
 * @throws InvalidInputError when `deliveryId` is blank or the table name invalid.
 * @throws JournalError when the dedupe table does not exist yet (it is created with the
 *   journal's tables: call `journal.createTables()` at startup). Other database errors
 *   (a serialization failure of your transaction …) are rethrown as they are.
 */
export async function recordDelivery(db: PgQueryable, deliveryId: string, options: RecordDeliveryOptions = {}): Promise<boolean> {
  if (typeof db !== 'object' || db === null || typeof (db as Partial<PgQueryable>).query !== 'function') {
    fail('db', `must be a pg client or pool (an object with query), got ${describe(db)}`);
  }
  // PostgreSQL's TEXT column takes an id of any length: only a blank one is refused.
  const id = checkNonBlank(deliveryId, 'deliveryId');
  const { table } = checkOptionsObject(options, OPTIONS, 'options');
  const name = table ?? DEFAULT_GRANTED_TABLE;
  const checked = checkTableName(name, 'options.table');
  try {
    const result = await db.query(`INSERT INTO ${quoted(checked)} (delivery_id) VALUES ($1) ON CONFLICT (delivery_id) DO NOTHING`, [id]);
    return result.rowCount === 1;
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) {
      throw new JournalError(
        `recordDelivery: the dedupe table ${name} does not exist; it is created with the journal's tables (call journal.createTables() at startup, or run postgresSchema())`,
        { cause: error },
      );
    }
    throw error;
  }
}
