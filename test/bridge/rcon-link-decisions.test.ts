/**
 * The RCON connection's decisions, in process against the loopback test server (issue #46
 * point 1): a command is "not sent" only when its bytes were not written (the
 * `bytesWritten` check), "unknown" once they were; the login (its answer checked on the
 * wire, its timeout, the password read at each connection); one connection reused while it
 * is usable; every packet's size held to 10 bytes .. 1 MiB, at both edges; close.
 */
import net, { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { MAX_PACKET_SIZE, RconLink, messageOf, type Sent } from '../../src/bridge/rcon/link.js';
import { TestRconServer, onPackets, packet, type TestRconServerOptions } from '../support/rcon-server.js';

const servers: TestRconServer[] = [];
const links: RconLink[] = [];
const raw: Server[] = [];
const rawSockets = new Set<Socket>();
afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
  for (const server of servers.splice(0)) await server.close();
  for (const socket of rawSockets) socket.destroy();
  rawSockets.clear();
  for (const server of raw.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const log = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };

async function game(options: TestRconServerOptions = {}): Promise<TestRconServer> {
  const server = await TestRconServer.start(options);
  servers.push(server);
  return server;
}

function linkTo(port: number, password: () => Promise<string> = async () => 'secret', timeoutMs = 2_000): RconLink {
  const link = new RconLink({ host: '127.0.0.1', port, password, timeoutMs }, log);
  links.push(link);
  return link;
}

/** The client sockets rcon-client opens from now on (it connects through node:net's `connect`), in order. */
function clientSockets(): () => Socket[] {
  const spy = vi.spyOn(net, 'connect');
  onTestFinished(() => spy.mockRestore());
  return () => spy.mock.results.map((result) => result.value as Socket);
}

const text = (sent: Sent) => ('reply' in sent ? `reply ${sent.reply}` : 'notSent' in sent ? `notSent ${sent.notSent.message}` : `unknown ${sent.unknown.message}`);

describe('send', () => {
  it('before any connection: not sent', async () => {
    const server = await game();
    expect(text(await linkTo(server.port).send('say hi'))).toBe('notSent RCON: not connected');
    expect(server.commands).toEqual([]);
  });

  it('a reply is the reply; the connection is reused for the next command', async () => {
    const server = await game();
    const link = linkTo(server.port);
    await link.connect();
    expect(text(await link.send('give Steve whip 1'))).toBe('reply Gave 1 [Whip] to Steve');
    await link.connect();
    expect(text(await link.send('say hi'))).toBe('reply ');
    expect(server.logins).toEqual({ ok: 1, failed: 0 });
    expect(server.commands).toEqual(['give Steve whip 1', 'say hi']);
  });

  it('a command whose bytes could not be written now (the client busy with another) is not sent, and the connection is dropped', async () => {
    const server = await game();
    server.answer = (command) => (command === 'first' ? { delayMs: 50, reply: 'late' } : 'ok');
    const link = linkTo(server.port);
    await link.connect();
    const first = link.send('first');
    const second = await link.send('second');
    expect(text(second)).toBe('notSent RCON: the command could not be written');
    // The first was written: dropped under it, its outcome is unknown (never "not sent").
    expect(text(await first)).toMatch(/^unknown RCON: /);
    expect(server.commands).not.toContain('second');
    expect(text(await link.send('third'))).toBe('notSent RCON: not connected');
  });

  it('a connection lost after the command was written: outcome unknown; the next exchange logs in afresh', async () => {
    const server = await game();
    server.answer = (command) => (command === 'drop' ? { drop: true } : 'ok');
    let reads = 0;
    const link = linkTo(server.port, async () => (reads++, 'secret'));
    await link.connect();
    expect(text(await link.send('drop'))).toMatch(/^unknown RCON: /);
    await link.connect();
    expect(text(await link.send('after'))).toBe('reply ok');
    expect(server.logins.ok).toBe(2);
    expect(reads).toBe(2);
  });

  it('no reply within the timeout: outcome unknown', async () => {
    const server = await game();
    server.answer = () => ({ silent: true });
    const link = linkTo(server.port, async () => 'secret', 100);
    await link.connect();
    expect(text(await link.send('silent'))).toMatch(/^unknown RCON: /);
    expect(server.commands).toEqual(['silent']);
  });

  it('a connection the game closed is not used again: not connected; the next exchange logs in afresh', async () => {
    const server = await game();
    const sockets = clientSockets();
    const link = linkTo(server.port);
    await link.connect();
    const socket = sockets()[0] as Socket;
    const closed = new Promise((resolve) => socket.once('close', resolve));
    server.dropAll();
    // Once closed for good (rcon-client has let go of its socket), as well as while closing.
    await closed;
    expect(text(await link.send('say hi'))).toBe('notSent RCON: not connected');
    expect(server.commands).toEqual([]);
    await link.connect();
    expect(text(await link.send('say hi'))).toBe('reply ');
    expect(server.logins.ok).toBe(2);
  });

  it('a connection that is ending (no longer writable, not yet closed) is not used: the next exchange logs in afresh', async () => {
    const server = await game();
    const sockets = clientSockets();
    const link = linkTo(server.port);
    await link.connect();
    expect(sockets()).toHaveLength(1);
    // Ending is at once; the close comes turns later, once the game has answered the end.
    sockets()[0]?.end();
    expect(text(await link.send('say hi'))).toBe('notSent RCON: not connected');
    await link.connect();
    expect(sockets()).toHaveLength(2);
    expect(text(await link.send('say hi'))).toBe('reply ');
    expect(server.logins.ok).toBe(2);
    expect(server.commands).toEqual(['say hi']);
  });
});

describe('connect', () => {
  it('a wrong password (auth response id -1 after the empty response value) is not a login: nothing sent', async () => {
    const server = await game();
    const link = linkTo(server.port, async () => 'wrong');
    await expect(link.connect()).rejects.toThrow(`RCON: could not connect to 127.0.0.1:${server.port} and log in (nothing sent): Authentication failed`);
    expect(server.logins.failed).toBe(1);
    expect(text(await link.send('x'))).toBe('notSent RCON: not connected');
  });

  it('a Minecraft login (the auth response alone) is a login', async () => {
    const server = await game({ authStyle: 'minecraft' });
    const link = linkTo(server.port);
    await link.connect();
    expect(text(await link.send('say hi'))).toBe('reply ');
  });

  it('no login answer within timeoutMs: refused, and the socket closed', async () => {
    const server = await game();
    server.answerLogin = false;
    const link = linkTo(server.port, async () => 'secret', 100);
    await expect(link.connect()).rejects.toThrow(`RCON: could not connect to 127.0.0.1:${server.port} and log in (nothing sent): no login answer within 100 ms`);
    await expect.poll(() => server.connections).toBe(0);
  });

  it('a password that cannot be read rejects, nothing connected', async () => {
    const server = await game();
    const link = linkTo(server.port, async () => Promise.reject(new Error('the password file is gone')));
    await expect(link.connect()).rejects.toThrow('the password file is gone');
    expect(server.logins).toEqual({ ok: 0, failed: 0 });
  });

  it('after close: refused, nothing sent', async () => {
    const server = await game();
    const link = linkTo(server.port);
    await link.connect();
    await link.close();
    await expect(link.connect()).rejects.toThrow('RCON: the bridge is stopping');
    expect(text(await link.send('x'))).toBe('notSent RCON: not connected');
    await expect.poll(() => server.connections).toBe(0);
  });

  it('a server that answers the login with the empty response value, then closes before the auth response: not logged in', async () => {
    const server = createServer((socket: Socket) => {
      rawSockets.add(socket);
      socket.on('error', () => undefined);
      // rcon-client takes that first packet for the answer; the auth response never comes.
      socket.once('data', (chunk: Buffer) => socket.end(packet(chunk.readInt32LE(4), 0, '')));
    });
    raw.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const link = linkTo((server.address() as AddressInfo).port);
    await expect(link.connect()).rejects.toThrow(/^RCON: could not connect to .* and log in \(nothing sent\): Authentication failed$/);
    expect(text(await link.send('x'))).toBe('notSent RCON: not connected');
  });

  it('a login answer that arrives a few bytes at a time is read whole', async () => {
    const server = createServer((socket: Socket) => {
      rawSockets.add(socket);
      socket.on('error', () => undefined);
      socket.setNoDelay(true);
      let buffer = Buffer.alloc(0);
      socket.on('data', async (more: Buffer) => {
        buffer = Buffer.concat([buffer, more]);
        while (buffer.length >= 4 && buffer.length >= 4 + buffer.readInt32LE(0)) {
          const [size, id, type] = [buffer.readInt32LE(0), buffer.readInt32LE(4), buffer.readInt32LE(8)];
          buffer = buffer.subarray(4 + size);
          if (type !== 3) {
            socket.write(packet(id, 0, 'pong'));
            continue;
          }
          // A response value with a body first: its header arrives well before its end.
          const answer = Buffer.concat([packet(id, 0, 'x'.repeat(30)), packet(id, 2, '')]);
          for (let at = 0; at < answer.length; at += 12) {
            socket.write(answer.subarray(at, at + 12));
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        }
      });
    });
    raw.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const link = linkTo((server.address() as AddressInfo).port);
    await link.connect();
    expect(text(await link.send('ping'))).toBe('reply pong');
  });

  it("leaves none of the login's listeners on the socket once logged in: only rcon-client's own", async () => {
    const server = await game();
    const sockets = clientSockets();
    const link = linkTo(server.port);
    await link.connect();
    const socket = sockets()[0] as Socket;
    // rcon-client reads the socket through one pipe ('data') and clears its state on one 'close'.
    expect({ data: socket.listenerCount('data'), close: socket.listenerCount('close') }).toEqual({ data: 1, close: 1 });
  });

  it('leaves no timer behind once logged in', async () => {
    const server = await game();
    const made: NodeJS.Timeout[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      const timer = real(fn, ms);
      if (ms === 60_000) made.push(timer);
      return timer;
    }) as typeof setTimeout);
    const link = linkTo(server.port, async () => 'secret', 60_000);
    await link.connect();
    spy.mockRestore();
    expect(made.length).toBeGreaterThan(0);
    expect(made.filter((t) => !(t as unknown as { _destroyed: boolean })._destroyed)).toEqual([]);
  });
});

describe('packet sizes', () => {
  /** A game that logs in, then answers the command with `reply` as its raw bytes. */
  async function rawGame(reply: (id: number) => Buffer): Promise<number> {
    const server = createServer((socket: Socket) => {
      rawSockets.add(socket);
      socket.on('error', () => undefined);
      onPackets(socket, (id, type) => void socket.write(type === 3 ? Buffer.concat([packet(id, 0, ''), packet(id, 2, '')]) : reply(id)));
    });
    raw.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  it(`a reply of ${MAX_PACKET_SIZE} bytes (the largest size field) is taken whole, even in pieces`, async () => {
    expect(MAX_PACKET_SIZE).toBe(1024 * 1024);
    const body = 'x'.repeat(MAX_PACKET_SIZE - 10);
    const link = linkTo(await rawGame((id) => packet(id, 0, body)));
    await link.connect();
    const sent = await link.send('big');
    expect('reply' in sent && sent.reply.length).toBe(body.length);
  });

  it('one byte more is refused: the connection closed, the outcome unknown', async () => {
    const link = linkTo(await rawGame((id) => packet(id, 0, 'x'.repeat(MAX_PACKET_SIZE - 9))));
    await link.connect();
    expect(text(await link.send('big'))).toMatch(/^unknown RCON: /);
  });

  it('a bad size field is refused as soon as its 4 bytes arrive, without waiting for more', async () => {
    const link = linkTo(
      await rawGame(() => {
        const bad = Buffer.alloc(4);
        bad.writeInt32LE(-1, 0);
        return bad;
      }),
      async () => 'secret',
      60_000,
    );
    await link.connect();
    expect(text(await link.send('x'))).toMatch(/^unknown RCON: /);
  });

  it('the smallest packet (size 10, an empty body) is a reply; 9 is refused', async () => {
    const empty = linkTo(await rawGame((id) => packet(id, 0, '')));
    await empty.connect();
    expect(text(await empty.send('x'))).toBe('reply ');
    const nine = linkTo(
      await rawGame(() => {
        const bad = Buffer.alloc(13);
        bad.writeInt32LE(9, 0);
        return bad;
      }),
      async () => 'secret',
      500,
    );
    await nine.connect();
    expect(text(await nine.send('x'))).toMatch(/^unknown RCON: /);
  });
});

describe('exclusive', () => {
  it('runs each work after the one before has settled, a failure included', async () => {
    const link = linkTo(1);
    const order: string[] = [];
    let release!: () => void;
    const first = link.exclusive(() => new Promise<void>((resolve) => (release = resolve)).then(() => void order.push('first')));
    const failing = link.exclusive(async () => {
      order.push('failing');
      throw new Error('no');
    });
    const third = link.exclusive(async () => (order.push('third'), 3));
    await Promise.resolve();
    expect(order).toEqual([]);
    release();
    await first;
    await expect(failing).rejects.toThrow('no');
    expect(await third).toBe(3);
    expect(order).toEqual(['first', 'failing', 'third']);
  });
});

describe('messageOf', () => {
  it("is an error's message, or any value as text", () => {
    expect(messageOf(new Error('m'))).toBe('m');
    expect(messageOf('s')).toBe('s');
    expect(messageOf(7)).toBe('7');
  });
});
