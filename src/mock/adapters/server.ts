import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DROPPED, notFound, type MockRouter } from './router.js';

/** The largest request body the HTTP mock reads unless `maxBodyBytes` says otherwise: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

/**
 * The HTTP mock's server timeouts, in milliseconds, so a client that sends slowly (or not
 * at all) cannot hold a socket for ever. Above each, Node closes the connection.
 */
export const MOCK_SERVER_TIMEOUTS = {
  /** Every request header must have arrived within 10 s of the request's first byte. */
  headersTimeout: 10_000,
  /** The whole request, body included, within 30 s. */
  requestTimeout: 30_000,
  /** An idle keep-alive connection is closed after 5 s without a new request. */
  keepAliveTimeout: 5_000,
  /**
   * A socket with no traffic in either direction for 11 minutes is destroyed (`server.timeout`):
   * above the longest `delay` fault (10 minutes), so a delayed answer is never cut.
   */
  socketIdleTimeout: 660_000,
  /** How often Node checks the header and request timeouts. */
  connectionsCheckingInterval: 1_000,
} as const;

/** Where `listen()` binds, and how much it reads. */
export interface MockListenOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1` (loopback only). */
  host?: string;
  /**
   * The largest request body read, in bytes; default 1 MiB (1,048,576). A request whose
   * `Content-Length` is larger is refused before any of its body is read; a body that
   * grows past it (chunked) is refused as soon as it does. Either way the answer is
   * HTTP 413 `{"error": "Payload Too Large", "limitBytes": 1048576}` and the connection
   * is closed, so the rest of the upload is never read.
   *
   * @throws RangeError (from `listen`) when not a positive safe integer.
   */
  maxBodyBytes?: number;
}

/** A running mock HTTP server. */
export interface MockServerHandle {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:54321`. */
  url: string;
  /** Stops the server, closing keep-alive connections too. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Serves the mock's router over real HTTP with `node:http` (no msw), so a plugin in any
 * language reaches the same mock as the in-process tests. A request no route answers gets
 * JSON 404 `{"error": "Not found", "route": "POST /x"}`.
 *
 * Limits, because the sandbox may run for days in front of any client:
 * - request bodies up to `maxBodyBytes` (default 1 MiB), else HTTP 413 and the connection
 *   closed, the body never buffered past the limit;
 * - all request headers within 10 s (`headersTimeout`), the whole request within 30 s
 *   (`requestTimeout`), an idle keep-alive connection closed after 5 s
 *   (`keepAliveTimeout`), and a socket silent for 11 minutes destroyed (`server.timeout`,
 *   above the longest `delay` fault); see {@link MOCK_SERVER_TIMEOUTS}.
 *
 * @example
 * ```ts
 * const { url, close } = await serveRouter(router, { port: 0 });
 * ```
 * @throws RangeError when `maxBodyBytes` is not a positive safe integer.
 */
export async function serveRouter(router: MockRouter, options: MockListenOptions = {}): Promise<MockServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const server = createMockHttpServer(router, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = baseUrlOf(host, port);

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

/**
 * The mock's `node:http` server, not listening yet, with the body limit and the timeouts
 * of {@link serveRouter}. Internal: `mock.listen()` is the public way in.
 *
 * @throws RangeError when `maxBodyBytes` is not a positive safe integer.
 */
export function createMockHttpServer(
  router: MockRouter,
  options: Pick<MockListenOptions, 'host' | 'maxBodyBytes'> = {},
): Server {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`listen: maxBodyBytes must be a positive integer, got ${String(options.maxBodyBytes)}`);
  }
  const host = options.host ?? '127.0.0.1';
  const { socketIdleTimeout, ...timeouts } = MOCK_SERVER_TIMEOUTS;
  const server = createServer(timeouts, (req, res) => {
    // A request without a usable Host header links back to the bound address.
    const fallback = () => baseUrlOf(host, (server.address() as AddressInfo).port);
    void answer(router, req, res, fallback, limit);
  });
  server.timeout = socketIdleTimeout;
  // `Expect: 100-continue` (curl, Java's HttpClient …): refuse an announced oversized body
  // before the client sends it; otherwise let it come.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (declaredLength(req) > limit) {
      refuseTooLarge(req, res, limit);
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });
  return server;
}

function baseUrlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The body was larger than the limit; the answer is 413. */
class PayloadTooLargeError extends Error {}

/** The client went away before its body had arrived; there is nobody to answer. */
class ClientGoneError extends Error {}

async function answer(
  router: MockRouter,
  req: IncomingMessage,
  res: ServerResponse,
  fallbackOrigin: () => string,
  limit: number,
): Promise<void> {
  try {
    if (declaredLength(req) > limit) {
      refuseTooLarge(req, res, limit);
      return;
    }
    const request = await toFetchRequest(req, fallbackOrigin, limit);
    const answered = await router(request);
    if (answered === DROPPED) {
      // The fault injector's dropped connection: destroying the socket is what a crash or
      // a reset looks like to the client.
      req.socket.destroy();
      return;
    }
    const response = answered ?? notFound(request);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    send(res, response.status, headers, Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    if (error instanceof PayloadTooLargeError) {
      refuseTooLarge(req, res, limit);
      return;
    }
    if (error instanceof ClientGoneError) {
      req.socket.destroy();
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    send(res, 500, { 'content-type': 'application/json' }, JSON.stringify({ error: 'Mock server error', message }));
  }
}

/** The `Content-Length` the client announced (Node has checked it is a number), or 0. */
function declaredLength(req: IncomingMessage): number {
  const value = req.headers['content-length'];
  return value === undefined ? 0 : Number(value);
}

/**
 * Answers 413 and closes the connection once the answer is out: the rest of the body is
 * never read (Node would otherwise read and discard it to reuse the connection).
 */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  req.pause();
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  const body = JSON.stringify({ error: 'Payload Too Large', limitBytes: limit });
  res.writeHead(413, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  });
  res.end(body, () => req.socket.destroy());
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, headers);
  res.end(body);
}

async function toFetchRequest(req: IncomingMessage, fallbackOrigin: () => string, limit: number): Promise<Request> {
  // The Host header keeps links (the checkout redirect) on the name the client used.
  let origin: string | undefined;
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
  // Read (within the limit) even a body no handler will look at, so a GET cannot stream
  // without end either.
  const bytes = await readBody(req, limit);
  // fetch refuses a GET or HEAD Request that carries a body, even an empty one.
  const body = method === 'GET' || method === 'HEAD' ? undefined : bytes;
  return new Request(new URL(req.url ?? '/', origin ?? fallbackOrigin()), {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

/**
 * Reads the body, counting bytes as they arrive; past `limit` it stops reading (the
 * socket is paused, the chunk that crossed the limit is not kept) and rejects with
 * {@link PayloadTooLargeError}. At most `limit` bytes are ever buffered.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    function onData(chunk: Buffer): void {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.pause();
        reject(new PayloadTooLargeError(`the request body is larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    }
    function onEnd(): void {
      stop();
      resolve(new Uint8Array(Buffer.concat(chunks, size)));
    }
    function onGone(): void {
      stop();
      reject(new ClientGoneError('the client closed the connection before its body had arrived'));
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
