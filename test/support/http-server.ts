import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** One request as it arrived over the socket. */
export interface SocketRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the server does once a request (headers and body) has fully arrived. */
export type Behaviour = (request: SocketRequest, res: ServerResponse, req: IncomingMessage) => void;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>`, usable as the client's `baseUrl`. */
  url: string;
  requests: SocketRequest[];
  close(): Promise<void>;
}

/** Answers with a JSON body. */
export const answerJson =
  (body: unknown, status = 200): Behaviour =>
  (_, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

/** Never answers: the client's timeout or abort has to end the call. */
export const hang: Behaviour = () => {};

/** Destroys the connection after the whole request arrived: the service may have acted. */
export const resetConnection: Behaviour = (_, __, req) => {
  req.socket.destroy();
};

/** Sends the headers and the start of the body, then destroys the connection. */
export const cutBody: Behaviour = (_, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"status":', () => res.destroy());
};

/**
 * Real `node:http` servers on 127.0.0.1 (port 0), closed after each test with every
 * connection (so a hanging request never outlives its test).
 */
export function useLoopbackServers() {
  const open: Server[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map(closeServer));
  });

  async function start(behaviour: Behaviour): Promise<LoopbackServer> {
    const requests: SocketRequest[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        requests.push(recorded);
        behaviour(recorded, res, req);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push(server);
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, requests, close: () => closeServer(server) };
  }

  /** A base URL on which nothing listens: connecting is refused, nothing is sent. */
  async function closedPort(): Promise<string> {
    const server = await start(hang);
    await server.close();
    return server.url;
  }

  return { start, closedPort };
}

function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
