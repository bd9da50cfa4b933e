/**
 * The bridge's one RCON connection (rcon-client for the protocol): connected and logged in
 * on demand, one exchange at a time, and every command's fate told apart as a reply, a
 * command certainly not sent (no connection, no login: safe to retry), or a command whose
 * outcome is unknown (its bytes were written, then the connection was lost or no reply
 * came in time: never to be sent again).
 *
 * @module
 * @internal
 */
import type { Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { Rcon } from 'rcon-client';
import type { Logger } from './types.js';

/** What became of one command. @internal */
export type Sent = { reply: string } | { notSent: Error } | { unknown: Error };

/** Where and how to connect. @internal */
export interface LinkOptions {
  host: string;
  port: number;
  /** Read at each connection (a rotated password is picked up); throws when it cannot be had. */
  password: () => Promise<string>;
  timeoutMs: number;
}

const AUTH_RESPONSE = 2;
/** The smallest packet's size field: id, type and two nulls. */
const MIN_SIZE = 10;
/**
 * The largest size field accepted: games send at most 4,096 bytes of body per packet
 * (Minecraft, Source); anything far above is garbage, never buffered.
 */
export const MAX_PACKET_SIZE = 1024 * 1024;

/** One RCON connection, its exchanges serialized. @internal */
export class RconLink {
  readonly #options: LinkOptions;
  readonly #log: Logger;
  #rcon: Rcon | undefined;
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: LinkOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
  }

  /**
   * Runs `work` once every exchange queued before it has settled: rcon-client's own queue
   * is then always free, so a command's packet is written in the very turn it is sent.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(work, work);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Connects and logs in, unless connected. @throws Error when it could not: nothing was sent. */
  async connect(): Promise<void> {
    if (this.#closed) throw new Error('RCON: the bridge is stopping');
    if (this.#usable() !== undefined) return;
    this.#drop();
    const { host, port, timeoutMs } = this.#options;
    const password = await this.#options.password();
    const rcon = new Rcon({ host, port, password, timeout: timeoutMs });
    // rcon-client re-emits socket errors on its emitter: without a listener, one would crash the process.
    rcon.on('error', (error: unknown) => this.#log.warn('RCON connection error', { rcon: `${host}:${port}`, error: messageOf(error) }));
    try {
      await withTimeout(loggedIn(rcon), timeoutMs, `no login answer within ${timeoutMs} ms`);
    } catch (error) {
      rcon.socket?.destroy();
      throw new Error(`RCON: could not connect to ${host}:${port} and log in (nothing sent): ${messageOf(error)}`);
    }
    this.#rcon = rcon;
  }

  /** Sends one command on the connection `connect` made; never throws. */
  async send(command: string): Promise<Sent> {
    const usable = this.#usable();
    if (usable === undefined) return { notSent: new Error('RCON: not connected') };
    const { rcon, socket } = usable;
    // rcon-client writes the packet synchronously within send() when its queue is free;
    // the socket's byte count tells whether it did: only then may the game have run it.
    const before = socket.bytesWritten;
    const answer = rcon.send(command);
    if (socket.bytesWritten === before) {
      answer.catch(() => undefined);
      this.#drop();
      return { notSent: new Error('RCON: the command could not be written') };
    }
    try {
      return { reply: await answer };
    } catch (error) {
      // A reply that comes late would answer nothing: start afresh.
      this.#drop();
      return { unknown: new Error(`RCON: ${messageOf(error)}`) };
    }
  }

  /** Closes the connection once the exchange in progress has settled; no exchange starts after. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.exclusive(async () => this.#drop());
  }

  /**
   * The connection and its socket while commands can be written on it. rcon-client sets
   * `socket` to null once the connection closed (and keeps an Rcon here only once logged
   * in); a socket that is ending or destroyed is no longer `writable`.
   */
  #usable(): { rcon: Rcon; socket: Socket } | undefined {
    const rcon = this.#rcon;
    if (rcon === undefined) return undefined;
    const socket = rcon.socket;
    return socket !== null && socket.writable ? { rcon, socket } : undefined;
  }

  #drop(): void {
    this.#rcon?.socket?.destroy();
    this.#rcon = undefined;
  }
}

/**
 * rcon-client's login, checked on the wire too: Source servers (per the protocol's
 * description) answer a login with an empty response packet and then the auth response
 * (id -1 on a wrong password); rcon-client takes the first for the answer, so the login
 * counts only once an auth response with the request's id was seen.
 */
async function loggedIn(rcon: Rcon): Promise<void> {
  const connecting = rcon.connect();
  // rcon-client opens its socket synchronously, within connect().
  const socket = rcon.socket as Socket;
  guardFrames(socket);
  let confirmed!: (ok: boolean) => void;
  const authAnswer = new Promise<boolean>((resolve) => (confirmed = resolve));
  let buffer = Buffer.alloc(0);
  const sniff = (chunk: Buffer): void => {
    buffer = Buffer.concat([buffer, chunk]);
    // A whole packet is at least 4 + MIN_SIZE bytes (a smaller size field is refused by frameCheck, which ends the login).
    while (buffer.length >= 4 + MIN_SIZE && buffer.length >= 4 + buffer.readInt32LE(0)) {
      const [size, id, type] = [buffer.readInt32LE(0), buffer.readInt32LE(4), buffer.readInt32LE(8)];
      buffer = buffer.subarray(4 + Math.max(size, 8));
      if (type === AUTH_RESPONSE) confirmed(id !== -1);
    }
  };
  const closed = (): void => confirmed(false);
  socket.on('data', sniff);
  socket.once('close', closed);
  try {
    await connecting;
    if (!(await authAnswer)) throw new Error('Authentication failed');
  } finally {
    socket.off('data', sniff);
    socket.off('close', closed);
  }
}

/**
 * Puts a check of every packet's size between the socket and rcon-client's own frame
 * splitter: rcon-client trusts the size field, so a negative one loops forever (the whole
 * process frozen) and one under the header's length throws a RangeError from a stream
 * listener (the process dies). A packet whose size is out of bounds ends the connection
 * instead: a command waiting for its reply then has an unknown outcome, and the next
 * exchange connects afresh. rcon-client pipes the socket into its splitter once connected:
 * that pipe goes through the check.
 */
function guardFrames(socket: Socket): void {
  const pipe = socket.pipe.bind(socket);
  socket.pipe = (<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T => {
    socket.pipe = pipe;
    return pipe(frameCheck(socket)).pipe(destination, options);
  }) as typeof socket.pipe;
}

/** Passes whole packets only, each with a size from {@link MIN_SIZE} to {@link MAX_PACKET_SIZE}; destroys `socket` on any other. */
function frameCheck(socket: Socket): Transform {
  let buffer: Buffer = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 4) {
        const size = buffer.readInt32LE(0);
        if (size < MIN_SIZE || size > MAX_PACKET_SIZE) {
          buffer = Buffer.alloc(0);
          socket.destroy(new Error(`RCON: a malformed packet (size ${size}, outside ${MIN_SIZE} to ${MAX_PACKET_SIZE}); the connection is closed`));
          return done();
        }
        if (buffer.length < 4 + size) break;
        this.push(buffer.subarray(0, 4 + size));
        buffer = buffer.subarray(4 + size);
      }
      done();
    },
  });
}

async function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error's message, for logs and errors. @internal */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
