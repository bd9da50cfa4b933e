/**
 * The seams the RCON sink is built against, written here until the bridge's own modules
 * (`sink.ts`, `config.ts`, `log.ts`) are merged: the same shapes as the bridge's plan, so
 * that merging is an import change.
 *
 * @module
 * @internal
 */
import type { DeliveredItem, DeliveryJournal, GivenVoteReward } from '../index.js';

/** How items reach the game (the bridge's `sink.ts`). @internal */
export interface ItemSink {
  /** Gives one purchase item; resolves once given; throws (an Error with a short message) to leave it pending, retried with the loop's backoff. */
  give(item: DeliveredItem): Promise<void>;
  /** Gives one vote reward (loop option giveVoteReward); same rules. */
  giveVoteReward(reward: GivenVoteReward): Promise<void>;
  /** Players online as the game (or RCON `list`) says; undefined when the game reports joins/leaves over the HTTP API. */
  players?: { start(onList: (players: string[]) => void): void; stop(): Promise<void> };
  /** Stops everything the sink runs and closes its connection. */
  close(): Promise<void>;
}

/** The `give.rcon` section of bridge.json, validated (the bridge's `config.ts`). @internal */
export interface RconGiveConfig {
  /** The game's RCON host. */
  host: string;
  /** The game's RCON port. */
  port: number;
  /** The RCON password, when the bridge already read it from its environment variable or file. */
  password?: string;
  /** The environment variable holding the RCON password. */
  passwordEnv?: string;
  /** The file holding the RCON password. */
  passwordFile?: string;
  /** How long one command (or the connection and login) may take, in ms, before its outcome is unknown. */
  timeoutMs: number;
  /** Command templates per product id (`product_id`, or `product_id_string`), `"*"` for any other product. */
  commands: Record<string, readonly string[]>;
  /** Command templates per vote reward id, `"*"` for any other reward. */
  voteCommands?: Record<string, readonly string[]>;
  /** Where the list of online players comes from: the game over the HTTP API, or the RCON `list` command. */
  players?: { source: 'game' } | { source: 'list'; listCommand?: string; intervalMs?: number };
}

/** The bridge's logger: JSON lines (pino's call shape), never a secret in them. @internal */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What the RCON sink needs from the bridge. @internal */
export interface RconSinkDeps {
  /** The bridge's journal, the same object the delivery loop writes. */
  journal: DeliveryJournal;
  /** The bridge's logger. */
  log: Logger;
  /** The wall clock, epoch ms (the journal's timestamps). */
  now: () => number;
}
