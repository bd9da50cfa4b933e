/**
 * The core's records, the front door: what every user of a journal reads back checked
 * (`checked`: the engine, the vote rewards) and the records a give that writes to the
 * journal itself goes through (`itemRecordsOf`: the bridge's RCON sink). A room apart from
 * `core/` because the checks of entries load on first use: nothing the client's entry
 * imports statically comes here (test/architecture/start-set.test.ts).
 *
 * @module
 * @internal
 */
export { checked } from './checked.js';
export { ItemRecords, itemRecordsOf, type ItemRecord } from './item-records.js';
