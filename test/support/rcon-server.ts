/**
 * A test RCON server on loopback, written from the Source RCON protocol's published
 * description (developer.valvesoftware.com/wiki/Source_RCON_Protocol): each packet is an
 * int32 (little-endian) size of the rest, an int32 id, an int32 type (3 auth, 2 exec
 * command, 2 auth response, 0 response value), a null-terminated body and one more null.
 * A login is answered, as Source servers do, with an empty response value and then the
 * auth response (id -1 when the password is wrong); `authStyle: 'minecraft'` sends the
 * auth response alone, as Minecraft does.
 *
 * It records every command and answers like a Minecraft server (1.13+, en_us): `list` with
 * who is online, `give <player> <item> <count>` with "Gave 3 [Whip] to Steve" or "No
 * player was found", `say`/`tellraw` with nothing, anything else with "Unknown or
 * incomplete command"; and it can be told per command to drop the connection without
 * replying, to stay silent, to answer late, or to split its reply over several writes.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

const AUTH = 3;
const EXEC = 2;
const AUTH_RESPONSE = 2;
const RESPONSE = 0;

/** How the server answers one command. */
export type RconAnswer = string | { drop: true } | { silent: true } | { delayMs: number; reply: string } | { split: number; reply: string };

/** Minecraft's text for `give`: the item's name as the game shows it (`whip` → `Whip`, `minecraft:diamond_sword` → `Diamond Sword`). */
function itemName(id: string): string {
  return (id.split(':').pop() as string)
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

export interface TestRconServerOptions {
  password?: string;
  authStyle?: 'source' | 'minecraft';
}

export class TestRconServer {
  /** Every command received on an authenticated connection, in order. */
  readonly commands: string[] = [];
  /** Logins received, and how many failed. */
  readonly logins = { ok: 0, failed: 0 };
  /**
   * Who is online, as `list` tells and `give` checks; `undefined` (the default): `give`
   * finds anyone, and `list` answers {@link listReply} as set (nobody by default).
   */
  online: string[] | undefined;
  #listReply: string | undefined;
  /** The reply to `list`: who is {@link online}, unless set. */
  get listReply(): string {
    if (this.#listReply !== undefined || this.online === undefined) return this.#listReply ?? 'There are 0 of a max of 20 players online: ';
    return `There are ${this.online.length} of a max of 20 players online: ${this.online.join(', ')}`;
  }
  set listReply(reply: string) {
    this.#listReply = reply;
  }
  /** Refuse every login (a wrong password as the server sees it). */
  refuseAuth = false;
  /** Answer logins; `false`: read them and say nothing (a server that hangs). */
  answerLogin = true;
  /** Answers a command; the default answers as Minecraft does ({@link minecraft}). */
  answer: (command: string) => RconAnswer = (command) => this.minecraft(command);

  /** What a Minecraft server answers to `command` (the texts of its en_us language file). */
  minecraft(command: string): string {
    if (command === 'list') return this.listReply;
    const here = (text: string) => `${text}\n${command}<--[HERE]`;
    const there = (player: string) => this.online === undefined || this.online.includes(player);
    const give = /^give (\S+) (\S+)(?: (\S+))?$/.exec(command);
    if (give !== null) {
      const [, player, item, count = '1'] = give as unknown as [string, string, string, string | undefined];
      if (!/^-?\d+$/.test(count)) return here(`Invalid integer '${count}'`);
      if (Number(count) < 1) return here(`Integer must not be less than 1, found ${count}`);
      if (item.startsWith('unknown')) return here(`Unknown item '${item.includes(':') ? item : `minecraft:${item}`}'`);
      if (!there(player)) return 'No player was found';
      return `Gave ${count} [${itemName(item)}] to ${player}`;
    }
    const tellraw = /^tellraw (\S+) /.exec(command);
    if (tellraw !== null) return there(tellraw[1] as string) ? '' : 'No player was found';
    if (command.startsWith('say ')) return '';
    return here('Unknown or incomplete command, see below for error');
  }

  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #options: Required<TestRconServerOptions>;

  private constructor(options: TestRconServerOptions) {
    this.#options = { password: 'secret', authStyle: 'source', ...options };
    this.#server = createServer((socket) => this.#serve(socket));
  }

  /** Starts a server on 127.0.0.1, on a port of the system's choice. */
  static async start(options: TestRconServerOptions = {}): Promise<TestRconServer> {
    const server = new TestRconServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, '127.0.0.1', resolve));
    return server;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  get password(): string {
    return this.#options.password;
  }

  /** A new password, for the logins from now on (the game's password rotated). */
  set password(password: string) {
    this.#options.password = password;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Drops every open connection (a game server restarting). */
  dropAll(): void {
    for (const socket of this.#sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #serve(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    let authed = false;
    onPackets(socket, (id, type, body) => {
      if (type === AUTH) authed = this.#login(socket, id, body);
      else if (type === EXEC && authed) this.#exec(socket, id, body);
      else socket.destroy();
    });
  }

  #login(socket: Socket, id: number, password: string): boolean {
    const ok = !this.refuseAuth && password === this.#options.password;
    if (ok) this.logins.ok++;
    else this.logins.failed++;
    if (!this.answerLogin) return false;
    if (this.#options.authStyle === 'source') socket.write(packet(id, RESPONSE, ''));
    socket.write(packet(ok ? id : -1, AUTH_RESPONSE, ''));
    return ok;
  }

  #exec(socket: Socket, id: number, command: string): void {
    this.commands.push(command);
    const answer = this.answer(command);
    if (typeof answer === 'string') socket.write(packet(id, RESPONSE, answer));
    else if ('drop' in answer) socket.destroy();
    else if ('delayMs' in answer) setTimeout(() => socket.writable && socket.write(packet(id, RESPONSE, answer.reply)), answer.delayMs);
    else if ('split' in answer) {
      // One packet in pieces of `split` bytes, each its own write (and TCP segment, with no delay).
      const whole = packet(id, RESPONSE, answer.reply);
      socket.setNoDelay(true);
      for (let at = 0; at < whole.length; at += answer.split) socket.write(whole.subarray(at, at + answer.split));
    }
  }
}

/** Calls `handle` for each whole packet the socket receives (however the bytes arrive): its id, type and body. */
export function onPackets(socket: Socket, handle: (id: number, type: number, body: string) => void): void {
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 4 && buffer.length >= 4 + buffer.readInt32LE(0)) {
      const size = buffer.readInt32LE(0);
      // The body ends at its null terminator, before the packet's last null.
      const body = buffer.subarray(12, 4 + size - 2).toString('utf8');
      const id = buffer.readInt32LE(4);
      const type = buffer.readInt32LE(8);
      buffer = buffer.subarray(4 + size);
      handle(id, type, body);
    }
  });
}

/** One packet: size, id, type, the body and its null terminator, and the empty string's null. */
export function packet(id: number, type: number, body: string): Buffer {
  const text = Buffer.from(body, 'utf8');
  const buffer = Buffer.alloc(14 + text.length);
  buffer.writeInt32LE(10 + text.length, 0);
  buffer.writeInt32LE(id, 4);
  buffer.writeInt32LE(type, 8);
  text.copy(buffer, 12);
  return buffer;
}
