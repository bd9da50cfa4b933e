/**
 * The RCON connection (src/bridge/rcon/link.ts) against a game, or anything else on the
 * RCON port, that answers a command with a malformed packet: a size field that is
 * negative, shorter than the packet's header, or absurdly large. None may freeze or crash
 * the bridge: the connection is closed, the command's outcome is unknown (a window), and
 * the next item is given on a fresh connection.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, type JournalWindow } from '../../src/index.js';
import { RconWindowError, commandWindowId } from '../../src/bridge/rcon/sink.js';
import { onPackets, packet } from '../support/rcon-server.js';
import { itemOf, rconSuite, recordingLog, whip } from '../support/rcon-sink.js';

const rcon = rconSuite();
const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A test server on loopback, closed with its connections after the test. */
async function listening(server: Server): Promise<number> {
  server.on('connection', (socket: Socket) => sockets.add(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw size field, then `rest`. */
function sized(size: number, rest: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(4);
  head.writeInt32LE(size, 0);
  return Buffer.concat([head, rest]);
}

/**
 * A game that logs in as Source servers do, then answers the first command with `garbage`
 * and every later one properly; it records the commands.
 */
async function garbageGame(garbage: Buffer): Promise<{ port: number; password: string; commands: string[] }> {
  const commands: string[] = [];
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    onPackets(socket, (id, type, body) => {
      if (type === 3) {
        socket.write(Buffer.concat([packet(id, 0, ''), packet(id, 2, '')]));
        return;
      }
      commands.push(body);
      socket.write(commands.length === 1 ? garbage : packet(id, 0, 'Gave 1 [Whip] to Steve'));
    });
  });
  return { port: await listening(server), password: 'secret', commands };
}

const windowOf = async (journal: MemoryJournal, deliveryId: string) => (await journal.pending()).find((e): e is JournalWindow => e.deliveryId === commandWindowId(deliveryId));

describe('a malformed reply packet', () => {
  it.each([
    ['a negative size (rcon-client loops forever on it: the bridge froze)', sized(-4, Buffer.alloc(10))],
    ['a size shorter than the header (rcon-client threw a RangeError from a stream listener: the bridge died)', sized(2, Buffer.alloc(2))],
    ['a size far above any packet (it would be buffered without end)', sized(0x7fffffff, Buffer.alloc(10))],
  ])('%s: the connection is closed, the command becomes a window, the next item is given on a new connection', async (_, garbage) => {
    const game = await garbageGame(garbage);
    const journal = new MemoryJournal();
    const first = whip('invoice:1');
    const second = whip('invoice:2');
    await journal.append([first, second]);
    const log = recordingLog();
    const sink = rcon.sink(game, journal, { timeoutMs: 5_000 }, log);
    // Thrown once the window is durable: the engine acknowledges the line and reports the window.
    await expect(sink.give(itemOf(first))).rejects.toBeInstanceOf(RconWindowError);
    expect(await windowOf(journal, 'invoice:1')).toMatchObject({ cause: 'unknownCommand', command: 'give Steve whip 1' });
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['RCON command outcome unknown; a window for staff, never sent again']);
    // Closed when the packet came, not after the command's timeout.
    expect(log.lines).toContainEqual({ level: 'warn', message: 'RCON connection error', fields: { rcon: `127.0.0.1:${game.port}`, error: expect.stringMatching(/^RCON: a malformed packet \(size -?\d+, outside 10 to 1048576\); the connection is closed$/) } });
    await sink.give(itemOf(second));
    expect(await windowOf(journal, 'invoice:2')).toBeUndefined();
    expect(game.commands).toEqual(['give Steve whip 1', 'give Steve whip 1']);
  });

  it('a well-formed reply split across TCP writes (its size field itself cut in two) is put back together: given, no window', async () => {
    const reply = packet(0, 0, 'Gave 1 [Whip] to Steve');
    const commands: string[] = [];
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.setNoDelay(true);
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        while (buffer.length >= 4 && buffer.length >= 4 + buffer.readInt32LE(0)) {
          const size = buffer.readInt32LE(0);
          const id = buffer.readInt32LE(4);
          const type = buffer.readInt32LE(8);
          const body = buffer.subarray(12, 4 + size - 2).toString('utf8');
          buffer = buffer.subarray(4 + size);
          if (type === 3) {
            socket.write(Buffer.concat([packet(id, 0, ''), packet(id, 2, '')]));
            continue;
          }
          commands.push(body);
          const answer = Buffer.from(reply);
          answer.writeInt32LE(id, 4);
          // Each part in a turn of its own: separate TCP segments on loopback.
          const cuts = [0, 2, 9, answer.length];
          const write = (i: number): void => {
            if (i < cuts.length - 1) socket.write(answer.subarray(cuts[i], cuts[i + 1]), () => setImmediate(() => write(i + 1)));
          };
          write(0);
        }
      });
    });
    const port = await listening(server);
    const journal = new MemoryJournal();
    const line = whip('invoice:4');
    await journal.append([line]);
    const log = recordingLog();
    await rcon.sink({ port, password: 'secret' }, journal, { timeoutMs: 5_000 }, log).give(itemOf(line));
    expect(commands).toEqual(['give Steve whip 1']);
    expect(await windowOf(journal, 'invoice:4')).toBeUndefined();
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 'info', message: 'RCON command run', fields: expect.objectContaining({ reply: 'Gave 1 [Whip] to Steve' }) }));
  });

  it('a malformed packet answering the login: not logged in, nothing sent', async () => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.write(sized(-100, Buffer.alloc(10))));
    });
    const port = await listening(server);
    const journal = new MemoryJournal();
    const line = whip('invoice:3');
    await journal.append([line]);
    const sink = rcon.sink({ port, password: 'secret' }, journal, { timeoutMs: 5_000 });
    await expect(sink.give(itemOf(line))).rejects.toThrow(/could not connect to 127\.0\.0\.1:\d+ and log in \(nothing sent\)/);
    expect(await journal.pending()).toEqual([line]);
  });
});
