/**
 * {@link expectCheckout}: a web shop on another machine sends the checkout hint through the
 * delivery journal it shares with the game servers (#47).
 *
 * @module
 */
import { describeSecret, fail } from '../internal/validate.js';
import { checkSharedHintArguments, type CheckoutHint } from './checkout-hints.js';
import type { DeliveryJournal } from './contract.js';

/**
 * Tells the game servers that a player just checked out, through the delivery journal they
 * share: a web shop on another machine, whose only link to the game is the shared
 * PostgreSQL or MySQL journal, writes the hint there, and every node's delivery loop reads
 * it within a few seconds; the node holding the player online then claims for them once
 * per 10 s window until the purchase arrives or the hint expires, as
 * {@link DeliveryLoop.expect} does in one process. The hint's times are the database's
 * (the shop's clock does not matter). A hint is only a hint: if it is lost, the routine
 * polls deliver the purchase.
 *
 * The journal must be shared by the game's nodes and implement
 * {@link DeliveryJournal.addCheckoutHint}: `PostgresJournal` or `MySqlJournal` on the same
 * tables as the game's, or a `MemoryJournal` for tests in one process. The file journal
 * does not (it belongs to one process).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { expectCheckout, StorefrontClient } from 'teamgames-sdk';
 * import { PostgresJournal } from 'teamgames-sdk/postgres';
 *
 * const journal = new PostgresJournal(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * const result = await client.checkout({ username: 'Player123', items: [{ id: 42, quantity: 1 }] });
 * if (result.outcome === 'PAYMENT_REQUIRED' || result.outcome === 'FREE') {
 *   await expectCheckout(journal, 'Player123', { transactionId: result.transactionId }).catch((error) => log.warn('checkout hint not written', error));
 * }
 * ```
 * @throws InvalidInputError naming `playerName`, `hint…` or `journal` when an argument is
 *   not valid or the journal cannot carry hints; nothing was written then.
 * @throws JournalError when the journal could not write it (the database is down).
 * @see [Building a storefront: a shop on another machine](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/building-a-storefront.md#a-shop-on-another-machine-through-the-shared-journal)
 */
export async function expectCheckout(journal: DeliveryJournal, playerName: string, hint?: CheckoutHint): Promise<void> {
  const checked = checkSharedHintArguments(playerName, hint);
  const add = (journal as Partial<DeliveryJournal> | null | undefined)?.addCheckoutHint;
  if (typeof add !== 'function') {
    fail('journal', `must be a journal the game's nodes share that carries checkout hints (with addCheckoutHint): a PostgresJournal or MySqlJournal on the game's tables, or a MemoryJournal for tests in one process; got ${describeSecret(journal)}`, 'expectCheckout');
  }
  const written: CheckoutHint = checked.transactionId === undefined ? { expiresInMs: checked.expiresInMs } : { transactionId: checked.transactionId, expiresInMs: checked.expiresInMs };
  await add.call(journal, checked.playerName, written);
}
