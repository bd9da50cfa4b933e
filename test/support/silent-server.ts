/**
 * Loopback servers that accept connections and never answer (a database gone silent), for
 * the `teamgames journal --timeout` suites; each suite closes them after each test.
 */
import { createServer, type Server, type Socket } from 'node:net';

const servers: Array<{ server: Server; sockets: Set<Socket> }> = [];

/**
 * A loopback server that accepts connections and never answers; with `pgLogin`, it first
 * completes a PostgreSQL login (AuthenticationOk, ReadyForQuery), then goes silent.
 */
export async function silentServer(pgLogin = false): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    let first = true;
    socket.on('data', () => {
      if (!pgLogin || !first) return;
      first = false;
      // 'R' AuthenticationOk, then 'Z' ReadyForQuery (idle): the login is complete.
      socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]));
    });
  });
  servers.push({ server, sockets });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** Closes every silent server started so far, and their connections. */
export async function closeSilentServers(): Promise<void> {
  for (const { server, sockets } of servers.splice(0)) {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}
