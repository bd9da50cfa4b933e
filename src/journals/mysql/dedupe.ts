/**
 * {@link recordDelivery}: the game's `deliveryId` dedupe, shared by every node, inside the
 * game's own MySQL or MariaDB transaction.
 *
 * @module
 */
import { JournalError } from '../../errors.js';
import { checkOptionsObject, describe, fail } from '../../internal/validate.js';
import { checkDeliveryId, checkTableName, DEFAULT_GRANTED_TABLE } from '../sql/common.js';
import type { MySqlQueryable } from './journal.js';
import { MAX_DELIVERY_ID_BYTES, quoted } from './schema.js';

/** Options of {@link recordDelivery}. */
export interface RecordDeliveryOptions {
  /** The dedupe table: the journal's `grantedTable`. Default `teamgames_granted`. */
  table?: string;
}

const OPTIONS = ['table'] as const satisfies ReadonlyArray<keyof RecordDeliveryOptions>;

/**
 * Records that the game applied `deliveryId`, in the game's own transaction on `db` (the
 * connection of that transaction), and says whether to apply it: `true` the first time,
 * `false` when any node recorded it already. Apply the item in the same transaction only
 * when it returns `true`; a transaction that rolls back takes the record with it, so the
 * grant repeated later applies again.
 *
 * One statement, `INSERT IGNORE` (the id's length is checked first, so IGNORE can only
 * mean "already there"): when another node's transaction holds the same id uncommitted,
 * InnoDB makes this one wait for it, then returns `false` (it committed) or `true` (it
 * rolled back).
 *
 * @example
 * ```ts
 * import { recordDelivery } from 'teamgames-sdk/mysql';
 *
 * async function grant(item: DeliveredItem) {
 *   const db = await pool.getConnection();
 *   try {
 *     await db.beginTransaction();
 *     if (await recordDelivery(db, item.deliveryId)) {
 *       await db.query('UPDATE inventories SET amount = amount + ? WHERE player = ? AND item = ?', [item.quantity_to_grant, item.player_name, item.product_id_string]);
 *     }
 *     await db.commit();
 *   } catch (error) {
 *     await db.rollback();
 *     throw error; // deliver keeps the line and grants it again later
 *   } finally {
 *     db.release();
 *   }
 * }
 * ```
 * @throws InvalidInputError when `deliveryId` is blank or longer than 512 bytes, or the
 *   table name invalid.
 * @throws JournalError when the dedupe table does not exist yet (it is created with the
 *   journal's tables: call `journal.createTables()` at startup). Other database errors
 *   (a deadlock of your transaction …) are rethrown as they are.
 */
export async function recordDelivery(db: MySqlQueryable, deliveryId: string, options: RecordDeliveryOptions = {}): Promise<boolean> {
  if (typeof db !== 'object' || db === null || typeof (db as Partial<MySqlQueryable>).query !== 'function') {
    fail('db', `must be a mysql2/promise connection or pool (an object with query), got ${describe(db)}`);
  }
  const id = checkDeliveryId(deliveryId, MAX_DELIVERY_ID_BYTES, 'recordDelivery');
  const { table } = checkOptionsObject(options, OPTIONS, 'options');
  const name = table ?? DEFAULT_GRANTED_TABLE;
  const checked = checkTableName(name, 'options.table');
  try {
    const [result] = await db.query(`INSERT IGNORE INTO ${quoted(checked)} (delivery_id) VALUES (?)`, [id]);
    return (result as { affectedRows?: unknown }).affectedRows === 1;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ER_NO_SUCH_TABLE') {
      throw new JournalError(
        `recordDelivery: the dedupe table ${name} does not exist; it is created with the journal's tables (call journal.createTables() at startup, or run mysqlSchema())`,
        { cause: error },
      );
    }
    throw error;
  }
}
