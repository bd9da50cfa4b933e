/**
 * A tiny HTTP proxy on 127.0.0.1 for tests: `CONNECT host:port` tunnels (what undici's
 * `ProxyAgent` and Node's `NODE_USE_ENV_PROXY` use for https, and by default for http too)
 * and plain forwarding of absolute-URI requests (`GET http://host/path`). It logs what a
 * proxy sees and could write to its access log: the request line and the headers.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

export interface ProxyLogEntry {
  method: string;
  /** `host:port` for CONNECT, the absolute URL for a forwarded request. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface TestProxy {
  url: string;
  /** What the proxy saw: request lines and headers, in order. */
  log: ProxyLogEntry[];
  close(): Promise<void>;
}

export async function startProxy(): Promise<TestProxy> {
  const log: ProxyLogEntry[] = [];
  const tunnels = new Set<{ destroy(): void }>();
  const server = createServer((req, res) => {
    // Forwarding: the request line carries the absolute URL.
    log.push({ method: req.method ?? '', target: req.url ?? '', headers: req.headers });
    const upstream = request(req.url ?? '', { method: req.method, headers: req.headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, client, head) => {
    log.push({ method: 'CONNECT', target: req.url ?? '', headers: req.headers });
    const [host = '', port = ''] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client).add(upstream);
    const end = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', end);
    client.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of tunnels) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
