/**
 * The staff page's routes: the login (with the brake on wrong passwords), the pages, the
 * stylesheet, and the one route that writes, `POST /resolve`, which resolves one window
 * through `resolveWindow` (the compare-and-set and audit trail of the CLI) as the
 * logged-in staff member, for an account that may resolve, with the session's CSRF token.
 * Journal reads are bounded in time, and one read of a kind runs at a time.
 *
 * @module
 * @internal
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { printable } from '../../common/printable.js';
import { InvalidInputError, WindowAlreadyResolvedError, inspectJournal, resolveWindow, type DeliveryLoop } from '../../index.js';
import type { JournalInspection } from '../../delivery/staff/index.js';
import type { DeliveryJournal } from '../../journals/contract.js';
import type { BridgeLogger } from '../log.js';
import { UNKNOWN_ACCOUNT_HASH, verifyPassword, type StaffAccount } from './accounts.js';
import type { StaffDesk } from './desk.js';
import { html, type Html } from './html.js';
import { LoginBrake, Sessions, sameSecret, type StaffSession } from './sessions.js';
import { STYLESHEET, healthPage, homePage, loginPage, playerPage } from './views.js';

/** Options of {@link startStaffPage}. */
export interface StaffPageOptions {
  accounts: ReadonlyMap<string, StaffAccount>;
  journal: DeliveryJournal;
  loop: DeliveryLoop;
  /** The players online now (the bridge's roster). */
  online: () => Iterable<string>;
  desk: StaffDesk;
  log: BridgeLogger;
  host: string;
  port: number;
  /** How long a session lasts after its login, ms. */
  sessionMs: number;
  /** Cookies marked `Secure` (and named `__Host-…`): set when the page is reached through TLS. */
  secureCookie: boolean;
  /**
   * The bridge's redaction of its secrets (the API key, the token, the database URL, the
   * RCON password in every form), applied to every page: a driver's or the store's message
   * shown on the page never holds one. Default: nothing removed.
   */
  redact?: (text: string) => string;
  /** What the bridge gives to, for the health page ("webhook …", "rcon …"). */
  sink: string;
  /** How long a journal read or the resolution may take before the page says so, ms. Default 5000. */
  journalTimeoutMs?: number;
  /** The monotonic clock of sessions and the brake, ms. Default `performance.now`. */
  monotonic?: () => number;
  /** The wall clock of what is shown. Default `Date.now`. */
  now?: () => number;
}

/** What a route answers. */
export type Answer = { status: number; body: Html | string; type?: string; headers?: Record<string, string> };

const FORM_LIMIT = 16 * 1024;
const MAX_QUERY = 64;

export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: Html,
  ) {
    super(title);
  }
}

function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) out.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return out;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new PageError(415, 'Not a form', html`<p>Send the page's form.</p>`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT) throw new PageError(413, 'Too large', html`<p>The form must be at most ${FORM_LIMIT} bytes.</p>`);
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** `promise`, or a 503 once `ms` passed (the work itself goes on; its result is dropped). */
function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PageError(503, 'The journal is slow', html`<p>${what} took longer than ${Math.round(ms / 1000)} s. The bridge keeps delivering; try again in a moment.</p>`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}


/** The page's routes over one bridge; {@link StaffRoutes.route} answers a request. */
export class StaffRoutes {
  readonly #o: StaffPageOptions;
  readonly #now: () => number;
  readonly #timeoutMs: number;
  readonly #sessions: Sessions;
  readonly #brake: LoginBrake;
  readonly #cookieName: string;
  readonly #cookieFlags: string;
  // One read of a kind at a time: a slow journal is not asked again by every reload. Keyed
  // by the player's name, undefined for the whole journal.
  readonly #inFlight = new Map<string | undefined, Promise<JournalInspection>>();

  constructor(options: StaffPageOptions) {
    this.#o = options;
    const monotonic = options.monotonic ?? (() => performance.now());
    this.#now = options.now ?? Date.now;
    this.#timeoutMs = options.journalTimeoutMs ?? 5_000;
    this.#sessions = new Sessions(options.sessionMs, monotonic);
    this.#brake = new LoginBrake(monotonic);
    this.#cookieName = options.secureCookie ? '__Host-tg_staff' : 'tg_staff';
    this.#cookieFlags = `Path=/; HttpOnly; SameSite=Strict${options.secureCookie ? '; Secure' : ''}`;
  }

  /** The live session of the request's cookie. */
  sessionOf(req: IncomingMessage): StaffSession | undefined {
    return this.#sessions.find(cookies(req).get(this.#cookieName));
  }

  /** What the journal holds (for one player, or all), bounded in time; a failure is a 503 page. */
  #inspect(player: string | undefined): Promise<JournalInspection> {
    let read = this.#inFlight.get(player);
    if (read === undefined) {
      read = inspectJournal(this.#o.journal, player === undefined ? { now: this.#now() } : { playerName: player, now: this.#now() }).then((found) => {
        this.#o.desk.journalOk();
        if (player === undefined) this.#o.desk.openWindows = found.openWindows.length;
        return found;
      });
      this.#inFlight.set(player, read);
      void read.finally(() => this.#inFlight.delete(player)).catch(() => undefined);
    }
    return bounded(read, this.#timeoutMs, 'Reading the journal').catch((error: unknown) => {
      if (error instanceof PageError) throw error;
      throw new PageError(503, 'The journal cannot be read', html`<p>${error instanceof Error ? error.message : String(error)}</p><p>The bridge logs the same; check the journal's file or database.</p>`);
    });
  }

  async #login(req: IncomingMessage): Promise<Answer> {
    const form = await readForm(req);
    const name = (form.get('name') ?? '').trim().slice(0, 64);
    const password = form.get('password') ?? '';
    const address = req.socket.remoteAddress ?? 'unknown';
    const { log } = this.#o;
    const wait = this.#brake.wait(name, address);
    if (wait > 0) {
      log.warn('staff page: log in refused while slowed down after wrong passwords', { account: printable(name), address });
      return { status: 429, body: loginPage(`Too many wrong passwords: wait ${Math.ceil(wait / 1000)} s and try again.`, name), headers: { 'retry-after': String(Math.ceil(wait / 1000)) } };
    }
    const account = this.#o.accounts.get(name);
    // An unknown name costs a hash too: the answer's time does not tell which names exist.
    const right = await verifyPassword(password, account?.hash ?? UNKNOWN_ACCOUNT_HASH);
    if (account === undefined || !right) {
      const delay = this.#brake.failed(name, address);
      log.warn('staff page: wrong name or password', { account: printable(name), address, nextTryInMs: delay });
      return { status: 401, body: loginPage('Wrong name or password.', name) };
    }
    this.#brake.succeeded(name);
    const session = this.#sessions.open(account.name, account.role);
    log.info('staff page: logged in', { account: account.name, role: account.role, address });
    return { status: 303, body: '', headers: { location: '/', 'set-cookie': `${this.#cookieName}=${session.id}; ${this.#cookieFlags}; Max-Age=${Math.floor(this.#o.sessionMs / 1000)}` } };
  }

  /** The session of a form that writes: logged in, and the form's CSRF token. */
  #formSession(req: IncomingMessage, form: URLSearchParams): StaffSession {
    const session = this.sessionOf(req);
    if (session === undefined) throw new PageError(403, 'Not logged in', html`<p>Your session ended. <a href="/login">Log in</a> again; nothing was written.</p>`);
    if (!sameSecret(form.get('csrf') ?? '', session.csrf)) {
      this.#o.log.warn('staff page: a form without its token was refused (forged from another site, or an old page)', { account: session.name, address: req.socket.remoteAddress });
      throw new PageError(403, 'Refused', html`<p>The form's token is missing or wrong: reload the page and send it again. Nothing was written.</p>`);
    }
    return session;
  }

  async #resolve(req: IncomingMessage): Promise<Answer> {
    const form = await readForm(req);
    const session = this.#formSession(req, form);
    if (session.role !== 'resolve') throw new PageError(403, 'Read-only account', html`<p>${session.name} may look but not resolve windows. Nothing was written.</p>`);
    const windowId = form.get('window') ?? '';
    const player = form.get('player') ?? '';
    const note = form.get('note') ?? '';
    if (note.trim() === '') throw new PageError(400, 'A note is required', html`<p>Say what you found and did; nothing was written.</p>`);
    try {
      await bounded(resolveWindow(this.#o.journal, { windowId, playerName: player, by: session.name, note }, { now: this.#now() }), this.#timeoutMs, 'Writing the resolution');
    } catch (error) {
      if (error instanceof WindowAlreadyResolvedError) {
        const r = error.resolution;
        this.#o.log.info('staff page: a window was already resolved', { account: session.name, window: windowId, by: r.by });
        const notice = html`<p class="error" role="alert">Already resolved by <strong class="by">${r.by}</strong> at ${new Date(r.at).toISOString()} (note: ${r.note}). Nothing was written; the first resolution stands.</p>`;
        return { status: 409, body: await this.#player(session, player, notice) };
      }
      if (error instanceof InvalidInputError) throw new PageError(400, 'Not resolved', html`<p>${error.argument.replace(/^input\./, '')} ${error.rule}. Nothing was written.</p>`);
      if (error instanceof PageError) throw new PageError(503, 'The journal is slow', html`<p>The resolution did not finish within ${Math.round(this.#timeoutMs / 1000)} s; it may or may not have been written. Reload the player's page before trying again.</p>`);
      throw new PageError(503, 'Not resolved', html`<p>${error instanceof Error ? error.message : String(error)}</p>`);
    }
    this.#o.log.info('staff page: window resolved', { account: session.name, window: windowId, player });
    return { status: 303, body: '', headers: { location: `/player?name=${encodeURIComponent(player)}&resolved=${encodeURIComponent(windowId)}` } };
  }

  async #player(session: StaffSession, name: string, notice?: Html): Promise<Html> {
    let status;
    try {
      status = await bounded(this.#o.loop.status(name), this.#timeoutMs, "Reading the player's status");
    } catch (error) {
      if (error instanceof InvalidInputError) throw new PageError(400, 'Not a player name', html`<p>${error.rule}</p>`);
      throw error;
    }
    return playerPage(session, status, await this.#inspect(name), this.#o.desk, this.#now(), notice);
  }

  async #home(session: StaffSession, url: URL): Promise<Answer> {
    const query = (url.searchParams.get('q') ?? '').trim().slice(0, MAX_QUERY);
    const everything = await this.#inspect(undefined);
    let matches: string[] | undefined;
    const online = new Set<string>(this.#o.online());
    if (query !== '') {
      const needle = query.toLowerCase();
      const names = new Set<string>(online);
      for (const list of [everything.pending, everything.openWindows, everything.resolvedWindows]) for (const e of list) names.add(e.playerName);
      matches = [...names].filter((n) => n.toLowerCase().includes(needle)).sort((a, b) => a.localeCompare(b));
    }
    return { status: 200, body: homePage(session, query, matches, everything, this.#o.desk, this.#now(), online) };
  }

  /** The answer to a request. @throws PageError for what the page refuses or cannot do. */
  async route(req: IncomingMessage, url: URL): Promise<Answer> {
    // Node sets it on every request its server parses.
    const method = req.method;
    const path = url.pathname;
    if (path === '/style.css' && method === 'GET') return { status: 200, body: STYLESHEET, type: 'text/css; charset=utf-8' };
    if (path === '/login' && method === 'GET') return { status: 200, body: loginPage() };
    // A form posted by a page of another site (the browser says so: Sec-Fetch-Site) is
    // refused before it is read: no login tried (nor slowed down), nothing resolved.
    const site = req.headers['sec-fetch-site'];
    if (method === 'POST' && site !== undefined && site !== 'same-origin' && site !== 'none') {
      this.#o.log.warn('staff page: a form posted from another site was refused', { path, site: printable(String(site)), address: req.socket.remoteAddress });
      throw new PageError(403, 'Refused: sent from another site', html`<p>Use the staff page itself. Nothing was done.</p>`);
    }
    if (path === '/login' && method === 'POST') return this.#login(req);
    if (path === '/resolve' && method === 'POST') return this.#resolve(req);
    if (path === '/logout' && method === 'POST') {
      const session = this.#formSession(req, await readForm(req));
      this.#sessions.close(session.id);
      return { status: 303, body: '', headers: { location: '/login', 'set-cookie': `${this.#cookieName}=; ${this.#cookieFlags}; Max-Age=0` } };
    }
    if (method !== 'GET' && method !== 'HEAD') throw new PageError(405, 'Not allowed', html`<p>This page only reads.</p>`);
    const session = this.sessionOf(req);
    if (session === undefined) return { status: 303, body: '', headers: { location: '/login' } };
    if (path === '/') return this.#home(session, url);
    if (path === '/player') {
      const resolved = url.searchParams.get('resolved');
      const notice = resolved === null ? undefined : html`<p class="notice" role="status">Window <span class="id">${resolved}</span> resolved.</p>`;
      return { status: 200, body: await this.#player(session, url.searchParams.get('name') ?? '', notice) };
    }
    if (path === '/health') {
      let problem: string | undefined;
      await this.#inspect(undefined).catch((error: unknown) => {
        problem = error instanceof PageError ? error.title : String(error);
      });
      return { status: 200, body: healthPage(session, this.#o.loop.stats(), this.#o.desk, problem, this.#o.sink) };
    }
    throw new PageError(404, 'Not found', html`<p>No page ${path}.</p>`);
  }
}
