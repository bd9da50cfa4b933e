/**
 * The seam between the bridge and how items reach the game: the webhook sink
 * (`webhook.ts`) and the RCON sink (`rcon.ts`) both implement it.
 *
 * @module
 */
import type { DeliveredItem, GivenVoteReward } from '../index.js';

/** How items reach the game, chosen per bridge by the config's `give` section. */
export interface ItemSink {
  /** Gives one purchase item; resolves once given; throws (an Error with a short message) to leave it pending, retried with the loop's backoff. */
  give(item: DeliveredItem): Promise<void>;
  /** Gives one vote reward (loop option giveVoteReward); same rules. */
  giveVoteReward(reward: GivenVoteReward): Promise<void>;
  /** Players online as the game (or RCON `list`) says; undefined when the game reports joins/leaves over the HTTP API. */
  players?: { start(onList: (players: string[]) => void): void; stop(): Promise<void> };
  close(): Promise<void>;
}
