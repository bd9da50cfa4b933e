/**
 * The seams the RCON sink is built against: the sink's own view of the `give.rcon`
 * config (what it reads of it), the bridge's logger and sink types.
 *
 * @module
 * @internal
 */
import type { DeliveryJournal } from '../../index.js';
import type { BridgeLogger } from '../log.js';
import type { Game, ReplyPatterns } from './replies.js';

export type { ItemSink } from '../sink.js';

/** The `give.rcon` section of bridge.json, validated (the bridge's `config.ts`). @internal */
export interface RconGiveConfig {
  /** The game's RCON host. */
  host: string;
  /** The game's RCON port. */
  port: number;
  /** How long one command (or the connection and login) may take, in ms, before its outcome is unknown. */
  timeoutMs: number;
  /** Command templates per product id (`product_id`, or `product_id_string`), `"*"` for any other product. */
  commands: Record<string, readonly string[]>;
  /** Command templates per vote reward id, `"*"` for any other reward. */
  voteCommands?: Record<string, readonly string[]>;
  /** Where the list of online players comes from: the game over the HTTP API, or the RCON `list` command. */
  players?: { source: 'game' } | { source: 'list'; listCommand?: string; intervalMs?: number };
  /** Whose replies the preset patterns read: `minecraft` (vanilla, Paper, Spigot; the default), `source`, `ark`, or `custom` (the config's patterns only). */
  game?: Game;
  /** Reply patterns of the game, tried before the preset's. */
  replies?: ReplyPatterns;
  /** Reply patterns per product id (as `commands` is keyed, `"*"` for any other), tried before the game's. */
  productReplies?: Record<string, ReplyPatterns>;
  /** Check that the player is online (the game's list command, on the same connection) before the first command of an item. Default: `true` where the game has a list command. */
  checkOnline?: boolean;
}

/** The bridge's logger (log.ts): JSON lines, never a secret in them. @internal */
export type Logger = BridgeLogger;

/** What the RCON sink needs from the bridge. @internal */
export interface RconSinkDeps {
  /** The bridge's journal, the same object the delivery loop writes. */
  journal: DeliveryJournal;
  /** The bridge's logger. */
  log: Logger;
  /** The wall clock, epoch ms (the journal's timestamps). */
  now: () => number;
}

/**
 * The RCON password, asked at each connection (a rotated one is used at the next login):
 * the bridge reads it as every secret (bridge/secrets.ts over host/secrets.ts: its
 * variable or its file, the file's owner and mode checked) and redacts it. Rejects when it
 * cannot be had. @internal
 */
export type RconPassword = () => Promise<string>;
