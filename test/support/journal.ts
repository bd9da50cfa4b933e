import type { JournalLine, JournalWindow } from '../../src/journals/contract.js';

/** A journal line for one Whip (merchant id "42") claimed for `playerName`. */
export const journalLine = (deliveryId: string, playerName = 'Ann', state: JournalLine['state'] = 'claimed'): JournalLine => ({
  deliveryId,
  playerName,
  state,
  item: {
    player_name: playerName,
    product_id: 42,
    product_id_string: '42',
    product_name: 'Whip',
    product_price: 10,
    quantity_to_grant: 1,
    quantity_purchased: 1,
    product_amount: 1,
    amount_purchased: 1,
  },
  recordedAt: 0,
});

/** An open unverified window of `playerName` (a lost claim), as the engine writes it. */
export const journalWindow = (deliveryId: string, playerName = 'Ann', times: { from?: number; to?: number } = {}): JournalWindow => ({
  deliveryId,
  playerName,
  state: 'unverified',
  from: times.from ?? 1_767_225_600_000,
  to: times.to ?? 1_767_225_610_000,
  cause: 'lostClaim',
  recordedAt: 1_767_225_611_000,
});
