import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getResponse, type RequestHandler } from 'msw';

/** Where `listen()` binds. */
export interface MockListenOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1` (loopback only). */
  host?: string;
}

/** A running mock HTTP server. */
export interface MockServerHandle {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** Stops the server, closing keep-alive connections too. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Serves msw handlers over real HTTP with `node:http`, through msw's `getResponse`, so a
 * plugin in any language reaches the same mock as the in-process tests. A request no
 * handler answers gets JSON 404 `{"error": "Not found", "route": "POST /x"}`.
 *
 * @example
 * ```ts
 * const { url, close } = await serveHandlers(mock.handlers, { port: 0 });
 * ```
 */
export async function serveHandlers(
  handlers: readonly RequestHandler[],
  options: MockListenOptions = {},
): Promise<MockServerHandle> {
  const host = options.host ?? '127.0.0.1';
  // msw's getResponse takes a mutable array: one copy per server, not one per request.
  const list = [...handlers];
  const server = createServer((req, res) => {
    void answer(list, req, res, url);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        // close() alone waits for idle keep-alive sockets, which can hang a test run.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function answer(
  handlers: RequestHandler[],
  req: IncomingMessage,
  res: ServerResponse,
  baseUrl: string,
): Promise<void> {
  try {
    const request = await toFetchRequest(req, baseUrl);
    const response = await getResponse(handlers, request);
    if (response === undefined) {
      const route = `${request.method} ${new URL(request.url).pathname}`;
      send(res, 404, { 'content-type': 'application/json' }, JSON.stringify({ error: 'Not found', route }));
      return;
    }
    if (response.type === 'error') {
      // HttpResponse.error(): the fault injector's dropped connection. Destroying the
      // socket is what a crash or a reset looks like to the client.
      req.socket.destroy();
      return;
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    send(res, response.status, headers, Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    send(res, 500, { 'content-type': 'application/json' }, JSON.stringify({ error: 'Mock server error', message }));
  }
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, headers);
  res.end(body);
}

async function toFetchRequest(req: IncomingMessage, baseUrl: string): Promise<Request> {
  // The Host header keeps links (the checkout redirect) on the name the client used.
  let origin = baseUrl;
  if (req.headers.host !== undefined) {
    try {
      origin = new URL(`http://${req.headers.host}`).origin;
    } catch {
      // A malformed Host header falls back to the bound address.
    }
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      headers.append(name, item);
    }
  }
  const method = req.method ?? 'GET';
  // fetch refuses a GET or HEAD Request that carries a body, even an empty one.
  const body = method === 'GET' || method === 'HEAD' ? undefined : await readAll(req);
  return new Request(new URL(req.url ?? '/', origin), { method, headers, ...(body === undefined ? {} : { body }) });
}

async function readAll(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
