/**
 * What the RCON sink's suites share: a test RCON server per test, a recording logger, a
 * sink on it, and the items of a claimed line and of a vote reward row.
 */
import { afterEach } from 'vitest';
import type { DeliveredItem, DeliveryJournal, GivenVoteReward, JournalLine, JournalVoteReward } from '../../src/index.js';
import { createRconSink } from '../../src/bridge/rcon/sink.js';
import type { ItemSink, Logger, RconGiveConfig } from '../../src/bridge/rcon/types.js';
import { TestRconServer, type TestRconServerOptions } from './rcon-server.js';
import { journalLine } from './journal.js';
import { TWO_SCROLLS } from './fixtures.js';

/** The wall clock the sinks see. */
export const NOW = 1_767_225_600_000;

/** A logger that keeps every line. */
export function recordingLog(): Logger & { lines: Array<{ level: string; fields: object; message: string }> } {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  const at = (level: string) => (message: string, fields: object = {}) => void lines.push({ level, fields, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), flush: () => undefined };
}

/** Servers and sinks started by a test, closed after it. */
export function rconSuite() {
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });
  return {
    async server(options?: TestRconServerOptions): Promise<TestRconServer> {
      const server = await TestRconServer.start(options);
      opened.push(server);
      return server;
    },
    sink(server: { port: number; password: string }, journal: DeliveryJournal, config: { [K in keyof RconGiveConfig]?: RconGiveConfig[K] | undefined } = {}, log = recordingLog()): ItemSink {
      // A key given as undefined removes the default (e.g. no vote commands at all).
      const given = Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
      const defaults: RconGiveConfig = {
        host: '127.0.0.1',
        port: server.port,
        timeoutMs: 300,
        commands: { '42': ['give {player} whip {quantity}'] },
        voteCommands: { '2': ['give {player} scroll {amount}'] },
        // The suites of the online check turn it on; the others count only the item's commands.
        checkOnline: false,
      };
      for (const key of Object.keys(config)) if (config[key as keyof RconGiveConfig] === undefined) delete defaults[key as keyof RconGiveConfig];
      // The password as the bridge gives it: asked at each connection (the server's, as it is then).
      const sink = createRconSink({ ...defaults, ...given }, { journal, log, now: () => NOW }, async () => server.password);
      opened.push(sink);
      return sink;
    },
  };
}

/** A claimed Whip line for `player`. */
export function whip(deliveryId: string, player = 'Steve'): JournalLine {
  return journalLine(deliveryId, player);
}

/** What the engine hands to give for `line`. */
export function itemOf(line: JournalLine): DeliveredItem {
  return { ...line.item, deliveryId: line.deliveryId };
}

/** A vote reward row for `player` (two scrolls, reward 2) as journaled, and as handed to the give. */
export function scrolls(deliveryId: string, player = 'Steve'): { row: JournalVoteReward; reward: GivenVoteReward } {
  return {
    row: { deliveryId, playerName: player, state: 'voteClaimed', reward: TWO_SCROLLS, recordedAt: 0 },
    reward: { ...TWO_SCROLLS, playerName: player, deliveryId },
  };
}
