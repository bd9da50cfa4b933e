/**
 * The staff page's listener (node:http, loopback by default, a port of its own: see
 * {@link startStaffPage}). Every answer carries a strict Content-Security-Policy (no
 * script at all, styles from /style.css only) and is never cached; the routes are in
 * routes.ts.
 *
 * @module
 * @internal
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { PageError, StaffRoutes, type Answer, type StaffPageOptions } from './routes.js';
import { closeGracefully, listenOn } from '../http/index.js';
import { html } from './html.js';
import { messagePage } from './views.js';

export type { StaffPageOptions } from './routes.js';

/** The running page. */
export interface StaffPage {
  /** `http://host:port`. */
  url: string;
  /** Closes the listener and its connections (busy ones within `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

/** The headers of every answer: nothing runs, nothing is framed, nothing is cached or leaked by referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
};

function send(req: IncomingMessage, res: ServerResponse, answer: Answer, redact: (text: string) => string): void {
  // The redaction's mark is text on a page, not a tag.
  const body = redact(typeof answer.body === 'string' ? answer.body : answer.body.text).split('<redacted>').join('&lt;redacted&gt;');
  res.writeHead(answer.status, { ...SECURITY_HEADERS, 'content-type': answer.type ?? 'text/html; charset=utf-8', ...(req.complete ? {} : { connection: 'close' }), ...answer.headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Starts the staff page on `host:port`: its own listener, apart from the game's HTTP API,
 * so that the API stays token-only JSON for the game and the page (cookies, HTML) can be
 * put behind a TLS reverse proxy or an SSH tunnel without exposing the API.
 * @throws the listen error (a port in use, an address not here).
 */
export async function startStaffPage(options: StaffPageOptions): Promise<StaffPage> {
  const routes = new StaffRoutes(options);
  const redact = options.redact ?? ((text: string) => text);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://staff-page');
    routes.route(req, url).then(
      (answer) => send(req, res, answer, redact),
      (error: unknown) => {
        const page = error instanceof PageError ? error : new PageError(500, 'Something failed', html`<p>The bridge logged it.</p>`);
        if (!(error instanceof PageError)) options.log.error('staff page: a request failed', { path: url.pathname, error });
        send(req, res, { status: page.status, body: messagePage(page.title, page.detail, routes.sessionOf(req)) }, redact);
      },
    );
  });
  return { url: await listenOn(server, options.host, options.port), close: (graceMs = 2_000) => closeGracefully(server, graceMs) };
}
