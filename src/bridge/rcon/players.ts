/**
 * The players online as the game's RCON `list` command tells: polled every `intervalMs`,
 * its reply parsed (Minecraft's `There are N of a max of M players online: a, b`, or a
 * plain list separated by commas or newlines), and the list handed to the bridge, which
 * reconciles the loop's online set. A reply that is neither form, or that fills a whole
 * packet (it may have been cut), is logged and ignored: guessing would make players
 * leave. A server with hundreds of players online reports them over the HTTP API instead
 * (`players.source: "game"`).
 *
 * @module
 * @internal
 */
import { messageOf, type Sent } from './link.js';
import type { Game } from './replies.js';
import { valueProblem } from './template.js';
import type { Logger } from './types.js';

/** What the poller needs of the connection (the sink's {@link RconLink}). @internal */
export interface ListLink {
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  connect(): Promise<void>;
  send(command: string): Promise<Sent>;
}

/** The poller the sink exposes as `players`. @internal */
export interface PlayerListSource {
  start(onList: (players: string[]) => void): void;
  stop(): Promise<void>;
}

/** The longest reply one packet carries, in bytes (Minecraft's limit; Source's is about as long). */
const MAX_PACKET_REPLY = 4096;
// Minecraft's formatting codes (§ and one character), which some servers put in the reply.
const FORMATTING = /§./gsu;

/**
 * The player names of a `list` reply, or `undefined` when it is neither Minecraft's form
 * nor a plain list of names a command may hold (an error text, a greeting, garbage).
 * @internal
 */
export function parsePlayerList(reply: string): string[] | undefined {
  // A reply as long as one packet may have been cut there (Minecraft splits long replies
  // into packets of 4096 bytes, and rcon-client keeps the first): the players after the
  // cut would be taken as gone, a cut name as someone who joined.
  if (Buffer.byteLength(reply) >= MAX_PACKET_REPLY) return undefined;
  const text = reply.replace(FORMATTING, '').trim();
  // "There are 2 of a max of 20 players online: a, b" (1.13 and later; "a max 20" in some
  // versions) and "There are 2/20 players online:" followed by a line of names (before 1.13).
  // (`.*` with the s flag runs to the end: no `$` needed.)
  const minecraft = /^There are (\d+)(?: of a max(?: of)? |\/)(\d+) players online:?(.*)/su.exec(text);
  const names = (minecraft === null ? text : (minecraft[3] as string))
    .split(/[,\n]/)
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.some((name) => valueProblem('player', name) !== undefined)) return undefined;
  if (minecraft !== null && names.length > Number(minecraft[1])) return undefined;
  return names;
}

/**
 * The player names of a reply to `game`'s list command, or `undefined` when it cannot be
 * read: ARK's `ListPlayers` (`0. Name, 7656…` a line, or `No Players Connected`), a Source
 * game's `status` (a `# userid "name" …` line per player), else (Minecraft's, a game not
 * named) {@link parsePlayerList}.
 * @internal
 */
export function parseOnline(reply: string, game: Game | undefined): string[] | undefined {
  if (game === 'ark') return parseLines(reply, /^No Players Connected\.?$/iu, /^\d+\. (.+), [0-9A-Za-z]+$/u);
  if (game === 'source') return parseSourceStatus(reply);
  return parsePlayerList(reply);
}

/** Every non-empty line names a player by `line`, or the reply says nobody (`none`). */
function parseLines(reply: string, none: RegExp, line: RegExp): string[] | undefined {
  if (Buffer.byteLength(reply) >= MAX_PACKET_REPLY) return undefined;
  const lines = reply.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (lines.length === 1 && none.test(lines[0] as string)) return [];
  const names: string[] = [];
  for (const text of lines) {
    const found = line.exec(text);
    if (found === null) return undefined;
    names.push(found[1] as string);
  }
  return names;
}

/** A Source `status`: its player lines are `# <userid> [<slot>] "<name>" <uniqueid> …`; the header line (`# userid name …`) has no quotes. */
function parseSourceStatus(reply: string): string[] | undefined {
  if (Buffer.byteLength(reply) >= MAX_PACKET_REPLY || !/^hostname\s*:/imu.test(reply)) return undefined;
  const names: string[] = [];
  for (const line of reply.split('\n')) {
    const found = /^#\s*\d+(?:\s+\d+)?\s+"(.*)"/u.exec(line.trim());
    if (found !== null) names.push(found[1] as string);
  }
  return names;
}

/** Polls `listCommand` on `link` every `intervalMs` once started. @internal */
export function listPlayers(link: ListLink, options: { listCommand: string; intervalMs: number; game?: Game }, log: Logger): PlayerListSource {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function poll(onList: (players: string[]) => void): Promise<void> {
    try {
      const sent = await link.exclusive(async () => {
        await link.connect();
        return link.send(options.listCommand);
      });
      if (!('reply' in sent)) throw 'notSent' in sent ? sent.notSent : sent.unknown;
      const players = parseOnline(sent.reply, options.game);
      if (players === undefined) log.warn('RCON list reply not understood; online players unchanged', { command: options.listCommand, reply: sent.reply.slice(0, 200) });
      else onList(players);
    } catch (error) {
      log.warn('RCON list failed; online players unchanged', { command: options.listCommand, error: messageOf(error) });
    }
  }

  // Called by start() (never once stopped) and by the timer (cleared by stop()).
  function next(onList: (players: string[]) => void): void {
    running = poll(onList).then(() => {
      if (!stopped) timer = setTimeout(() => next(onList), options.intervalMs);
    });
  }

  return {
    start(onList) {
      if (running !== undefined || stopped) return;
      next(onList);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
