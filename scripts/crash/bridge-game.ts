/**
 * The games of `npm run crash -- --bridge webhook|rcon`, kept alive in the campaign's process
 * (which is never killed) while the bridge is SIGKILLed:
 * - the webhook game: a node:http server that checks the bridge's token, answers 500 on a
 *   fraction of POSTs (nothing given), and otherwise gives each `deliveryId` once, counting
 *   the POSTs per id (its dedupe is in memory here: the campaign is never killed);
 * - the RCON game: the test RCON server (test/support/rcon-server.ts) answering as Minecraft
 *   does: `list` names who is in the game; a give for a player not there is answered "No
 *   player was found" and gives nothing (also, now and then, for a player the list just
 *   named: they left in between); a give is answered "Gave 2 [Item] to Player1". Faults: on
 *   a fraction of commands it drops the connection without replying (the command ran: the
 *   game server executes what it received; the reply is lost), or answers "An unexpected
 *   error occurred trying to execute that command" (ran or not, drawn: nobody can tell).
 * Both can tell the campaign the moment something reached them (`onGive`), so that a kill
 * can be aimed right after it: between the game's answer and the bridge's acknowledgement.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One give as the game applied it. */
export interface GameGive {
  deliveryId: string;
  player: string;
  quantity: number;
  /** performance.now() when it was applied. */
  at: number;
}

/** What both games share: the gives, the faults, the hook that aims kills. */
export interface Game {
  /** Gives applied, in order (one per id for the webhook game; one per command run for RCON). */
  readonly gives: GameGive[];
  /** Faults fired: 500 answers (webhook), connections dropped after a command (RCON). */
  faults: number;
  /** The share of requests or commands that meet a fault; 0 turns them off. */
  faultRate: number;
  /** Called after each give reached the game (and, for the webhook, after its answer was written). */
  onGive: (() => void) | undefined;
  /** The players in the game now (the campaign sets it; the bridge is told after each start). */
  online: Set<string>;
  /** Gives that reached the game for a player not in it (the loop promises never to). */
  offlineGives: number;
  close(): Promise<void>;
}

/** The webhook game. */
export interface WebhookGame extends Game {
  url: string;
  /** POSTs per deliveryId (those the dedupe absorbed included; 500s not). */
  readonly posts: Map<string, number>;
  /** POSTs the dedupe absorbed (an id already given). */
  redelivered: number;
  /** POSTs refused for a wrong token or body (must stay 0). */
  refused: number;
}

function body(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}

export async function startWebhookGame(token: string, random: () => number): Promise<WebhookGame> {
  const given = new Set<string>();
  let server!: Server;
  const game: WebhookGame = {
    url: '',
    gives: [],
    posts: new Map(),
    faults: 0,
    faultRate: 0,
    redelivered: 0,
    refused: 0,
    onGive: undefined,
    online: new Set(),
    offlineGives: 0,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  server = createServer((request, response) => {
    void (async () => {
      const text = await body(request).catch(() => '');
      if (request.method !== 'POST' || request.headers.authorization !== `Bearer ${token}`) {
        game.refused += 1;
        response.writeHead(401).end();
        return;
      }
      if (random() < game.faultRate) {
        game.faults += 1;
        response.writeHead(500, { 'content-type': 'text/plain' }).end('the game is busy');
        return;
      }
      let item: { kind?: unknown; deliveryId?: unknown; player?: unknown; quantity?: unknown };
      try {
        item = JSON.parse(text) as typeof item;
      } catch {
        item = {};
      }
      if (item.kind !== 'purchase' || typeof item.deliveryId !== 'string' || typeof item.player !== 'string' || typeof item.quantity !== 'number') {
        game.refused += 1;
        response.writeHead(400).end();
        return;
      }
      const id = item.deliveryId;
      if (!game.online.has(item.player)) game.offlineGives += 1;
      game.posts.set(id, (game.posts.get(id) ?? 0) + 1);
      if (given.has(id)) game.redelivered += 1;
      else {
        given.add(id);
        game.gives.push({ deliveryId: id, player: item.player, quantity: item.quantity, at: performance.now() });
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}', () => game.onGive?.());
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  game.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/teamgames`;
  return game;
}

/** The RCON game. */
export interface RconGame extends Game {
  port: number;
  password: string;
  /** Commands run per deliveryId. */
  readonly runs: Map<string, number>;
  /** The deliveryIds whose command the game ran and dropped the connection without a reply. */
  readonly dropped: Set<string>;
  /** The deliveryIds whose command was answered "An unexpected error occurred" (ran or not). */
  readonly errored: Set<string>;
  /** The deliveryIds whose command was answered "No player was found" (nothing given then), at least once. */
  readonly absent: Set<string>;
  /** Replies "No player was found", all told. */
  absentReplies: number;
  /** Commands that match no purchase template (must stay 0). */
  strange: string[];
}

/** The one command of each purchase: `give <player> item <quantity> <deliveryId>`. */
export const RCON_TEMPLATE = 'give {player} item {quantity} {deliveryId}';
const COMMAND = /^give (\S+) item (\d+) (\S+)$/;

export async function startRconGame(random: () => number): Promise<RconGame> {
  // Loaded here: the webhook campaign needs no RCON server.
  const { TestRconServer } = await import('../../test/support/rcon-server.js');
  const server = await TestRconServer.start({ password: 'crash-rcon-password-0123456789' });
  const game: RconGame = {
    port: server.port,
    password: server.password,
    gives: [],
    runs: new Map(),
    dropped: new Set(),
    errored: new Set(),
    absent: new Set(),
    absentReplies: 0,
    strange: [],
    faults: 0,
    faultRate: 0,
    onGive: undefined,
    online: new Set(),
    offlineGives: 0,
    close: () => server.close(),
  };
  const absent = (id: string) => {
    game.absentReplies += 1;
    game.absent.add(id);
    return 'No player was found';
  };
  server.answer = (command) => {
    if (command === 'list') return `There are ${game.online.size} of a max of 200 players online: ${[...game.online].join(', ')}`;
    const match = COMMAND.exec(command);
    if (match === null) {
      game.strange.push(command);
      return `Unknown or incomplete command, see below for error\n${command}<--[HERE]`;
    }
    const [, player, quantity, id] = match as unknown as [string, string, string, string];
    if (!game.online.has(player)) {
      // Minecraft runs nothing for a player not there, and says so.
      game.offlineGives += 1;
      return absent(id);
    }
    // The player left between the bridge's list and its give (as often as the faults).
    if (random() < game.faultRate) return absent(id);
    const draw = random();
    const drop = draw < game.faultRate;
    const failed = !drop && draw < 1.5 * game.faultRate;
    // "An unexpected error": half the time after the item was given.
    if (failed) {
      game.faults += 1;
      game.errored.add(id);
      if (random() < 0.5) return 'An unexpected error occurred trying to execute that command';
    }
    game.runs.set(id, (game.runs.get(id) ?? 0) + 1);
    game.gives.push({ deliveryId: id, player, quantity: Number(quantity), at: performance.now() });
    if (drop) {
      game.faults += 1;
      game.dropped.add(id);
    }
    // After the answer is on its way (or the connection dropped).
    setImmediate(() => game.onGive?.());
    return drop ? { drop: true } : failed ? 'An unexpected error occurred trying to execute that command' : `Gave ${quantity} [Item] to ${player}`;
  };
  return game;
}
