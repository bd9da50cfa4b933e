/**
 * The staff page's decisions at their edges, as staff meet them: the exact page each refusal
 * shows (title and text), the Retry-After of a slowed login, what the log records, which
 * forms are read (the content type; 16 KiB exactly in page-afresh.test.ts), which cookie is found, which methods
 * reach which route, the note a resolve needs, and the clock a resolution records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError, MemoryJournal } from 'teamgames-sdk';
import type { JournalEntry } from '../../../src/journals/contract.js';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { BridgeLogger } from '../../../src/bridge/log.js';
import { hashPassword, type StaffAccount } from '../../../src/bridge/staff-page/accounts.js';
import { StaffRoutes, type StaffPageOptions } from '../../../src/bridge/staff-page/routes.js';
import { NOW, PASSWORDS, closePages, startPage, testAccounts, windowEntry, type LogLine, type Page } from './harness.js';

afterEach(closePages);

/** What the page shows for a refusal: its title, then its text. */
const refusal = (title: string, detail: string) => `<h1>${title}</h1>${detail}<p><a href="/">Back to the players</a></p>`;

async function raw(page: Page, path: string, init: RequestInit = {}) {
  const response = await fetch(`${page.url}${path}`, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function resolvedOf(journal: { pending(player?: string): Promise<JournalEntry[]> }, id: string) {
  return (await journal.pending()).find((e) => e.deliveryId === id);
}

describe('logging in, exactly', () => {
  it('a slowed login reads how long to wait, with Retry-After in seconds, and is logged without the password', async () => {
    const page = await startPage();
    const wrong = await page.browser().login('alice', 'nope');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('<p class="error" role="alert">Wrong name or password.</p>');
    page.advance(500);
    const slowed = await page.browser().login('alice', PASSWORDS.alice);
    expect(slowed.status).toBe(429);
    expect(slowed.text).toContain('<p class="error" role="alert">Too many wrong passwords: wait 1 s and try again.</p>');
    expect(slowed.text).toContain('value="alice"');
    expect(slowed.headers.get('retry-after')).toBe('1');
    expect(page.logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: 'staff page: wrong name or password', fields: { account: 'alice', address: '127.0.0.1', nextTryInMs: 1_000 } },
      { level: 'warn', message: 'staff page: log in refused while slowed down after wrong passwords', fields: { account: 'alice', address: '127.0.0.1' } },
    ]);
    page.advance(500);
    expect((await page.browser().login('alice', 'nope')).status).toBe(401);
    page.advance(1);
    const longer = await page.browser().login('alice', PASSWORDS.alice);
    expect(longer.text).toContain('wait 2 s and try again.');
    expect(longer.headers.get('retry-after')).toBe('2');
  });

  it('takes the name trimmed, cut at 64 characters, and logs the login with its role and address; the redirect has no body', async () => {
    const page = await startPage();
    const b = page.browser();
    const reply = await b.login('  alice  ', PASSWORDS.alice);
    expect(reply.status).toBe(303);
    expect(reply.text).toBe('');
    expect(page.logs).toContainEqual({ level: 'info', message: 'staff page: logged in', fields: { account: 'alice', role: 'resolve', address: '127.0.0.1' } });
    const long = await page.browser().login('a'.repeat(100), 'whatever');
    expect(long.status).toBe(401);
    expect(long.text).toContain(`value="${'a'.repeat(64)}"`);
    expect(long.text).not.toContain('a'.repeat(65));
    expect(page.logs.at(-1)?.fields?.account).toBe('a'.repeat(64));
  });

  it('slows wrong passwords down on the default clock too (no clock given)', async () => {
    // The harness gives a test clock; undefined here leaves the page's default (performance.now).
    const page = await startPage([], { monotonic: undefined } as unknown as Parameters<typeof startPage>[1]);
    expect((await page.browser().login('alice', 'nope')).status).toBe(401);
    expect((await page.browser().login('alice', PASSWORDS.alice)).status).toBe(429);
  });

  it('reads a form whatever the case and blanks of its content type; refuses anything else with the page saying so', async () => {
    const page = await startPage();
    const body = new URLSearchParams({ name: 'alice', password: PASSWORDS.alice }).toString();
    expect((await raw(page, '/login', { method: 'POST', headers: { 'content-type': 'Application/X-WWW-Form-URLEncoded ; charset=UTF-8' }, body })).status).toBe(303);
    const json = await raw(page, '/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    expect(json.text).toContain(refusal('Not a form', "<p>Send the page's form.</p>"));
    // A body of bytes: fetch sends no content type at all.
    const untyped = await raw(page, '/login', { method: 'POST', body: new TextEncoder().encode(body) });
    expect(untyped.status).toBe(415);
    expect(untyped.text).toContain(refusal('Not a form', "<p>Send the page's form.</p>"));
  });

  it('takes a login form without a name as a blank name (a wrong login, the name field left empty)', async () => {
    const page = await startPage();
    const reply = await raw(page, '/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=x' });
    expect(reply.status).toBe(401);
    expect(reply.text).toContain('<input name="name" autocomplete="username" required maxlength="64" value="">');
  });

  it('takes a login form without a password as a wrong password, whatever the account\'s password', async () => {
    // A default other than the empty password (which no account can have) could be one:
    // the texts a missing field turns into by mistake, and the one StrykerJS puts there.
    const defaults = ['null', 'undefined', 'Stryker was here!'];
    const accounts = new Map<string, StaffAccount>(await Promise.all(defaults.map(async (password, i): Promise<[string, StaffAccount]> => [`u${i}`, { name: `u${i}`, role: 'read', hash: await hashPassword(password) }])));
    const page = await startPage([], { accounts });
    for (const [i] of defaults.entries()) {
      page.advance(60 * 60_000);
      const reply = await raw(page, '/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `name=u${i}` });
      expect(reply.status).toBe(401);
    }
    page.advance(60 * 60_000);
    expect((await page.browser().login('u2', 'Stryker was here!')).status).toBe(303);
  });

  it('slows down and logs a login whose connection is gone before it is read (no address) as from "unknown"', async () => {
    const logs: LogLine[] = [];
    const log = { warn: (message: string, fields?: Record<string, unknown>) => void logs.push({ level: 'warn', message, fields }) } as unknown as BridgeLogger;
    const routes = new StaffRoutes({ accounts: await testAccounts(), log, sessionMs: 3_600_000, secureCookie: false, monotonic: () => 0 } as unknown as StaffPageOptions);
    // What Node holds for a request whose socket closed: a socket without its handle.
    const request = (body: string) => {
      const req = new IncomingMessage(new Socket());
      req.method = 'POST';
      req.headers = { 'content-type': 'application/x-www-form-urlencoded' };
      req.push(body);
      req.push(null);
      return req;
    };
    expect(request('').socket.remoteAddress).toBeUndefined();
    const url = new URL('http://staff-page/login');
    expect((await routes.route(request('name=alice&password=nope'), url)).status).toBe(401);
    expect((await routes.route(request(`name=bob&password=${PASSWORDS.bob}`), url)).status).toBe(429);
    expect(logs).toEqual([
      { level: 'warn', message: 'staff page: wrong name or password', fields: { account: 'alice', address: 'unknown', nextTryInMs: 1_000 } },
      { level: 'warn', message: 'staff page: log in refused while slowed down after wrong passwords', fields: { account: 'bob', address: 'unknown' } },
    ]);
  });

  it('finds its cookie among others, with blanks around it', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const cookie = b.cookie as string;
    expect((await raw(page, '/', { headers: { cookie: `theme=dark; ${cookie} ; lang=en` } })).status).toBe(200);
    expect((await raw(page, '/', { headers: { cookie: `${cookie}; tg_staffX` } })).status).toBe(200);
    expect((await raw(page, '/', { headers: { cookie: 'theme=dark' } })).status).toBe(303);
  });
});

describe('forms from another site, methods and paths', () => {
  it('refuses only a POST from another site: a link followed from elsewhere opens, a typed address (none) logs in', async () => {
    const page = await startPage();
    expect((await raw(page, '/login', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
    const b = page.browser();
    expect((await b.post('/login', { name: 'rita', password: PASSWORDS.rita }, { 'sec-fetch-site': 'none' })).status).toBe(303);
    expect((await raw(page, '/', { headers: { cookie: b.cookie as string, 'sec-fetch-site': 'cross-site' } })).status).toBe(200);
    const forged = await b.post('/logout', { csrf: b.csrf ?? '' }, { 'sec-fetch-site': 'same-site' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain(refusal('Refused: sent from another site', '<p>Use the staff page itself. Nothing was done.</p>'));
    expect(page.logs).toContainEqual({ level: 'warn', message: 'staff page: a form posted from another site was refused', fields: { path: '/logout', site: 'same-site', address: '127.0.0.1' } });
  });

  it('answers each path only to its method: 405 and 404 pages, HEAD of the login form, GET of the form routes', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('alice', PASSWORDS.alice);
    const cookie = b.cookie as string;
    const style = await raw(page, '/style.css', { method: 'POST', headers: { cookie } });
    expect(style.status).toBe(405);
    expect(style.text).toContain(refusal('Not allowed', '<p>This page only reads.</p>'));
    for (const path of ['/resolve', '/logout']) {
      const got = await raw(page, path, { headers: { cookie } });
      expect(got.status).toBe(404);
      expect(got.text).toContain(refusal('Not found', `<p>No page ${path}.</p>`));
    }
    const anonymous = await raw(page, '/');
    expect([anonymous.status, anonymous.headers.get('location'), anonymous.text]).toEqual([303, '/login', '']);
    const head = await raw(page, '/login', { method: 'HEAD' });
    expect(head.status).toBe(303);
    expect(head.headers.get('location')).toBe('/login');
  });

  it('logs out with a cookie that expires now, and an empty body', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    await b.get('/');
    const out = await b.post('/logout', { csrf: b.csrf as string });
    expect(out.status).toBe(303);
    expect(out.text).toBe('');
    expect(out.headers.get('location')).toBe('/login');
    expect(out.headers.get('set-cookie')).toBe('tg_staff=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
  });
});

describe('resolving, exactly', () => {
  async function aliceOn(entries: JournalEntry[], overrides = {}) {
    const page = await startPage(entries, overrides);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    await alice.get('/player?name=Ann');
    return { page, alice };
  }

  it('needs a session, its token, the resolve role and a note, each refusal saying so', async () => {
    const { page, alice } = await aliceOn([windowEntry('w1', 'Ann')]);
    const form = { window: 'window:w1', player: 'Ann' };
    const anonymous = await page.browser().post('/resolve', { ...form, note: 'x', csrf: alice.csrf as string });
    expect(anonymous.text).toContain(refusal('Not logged in', '<p>Your session ended. <a href="/login">Log in</a> again; nothing was written.</p>'));
    const forged = await alice.post('/resolve', { ...form, note: 'x' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain(refusal('Refused', "<p>The form's token is missing or wrong: reload the page and send it again. Nothing was written.</p>"));
    expect(page.logs).toContainEqual({ level: 'warn', message: 'staff page: a form without its token was refused (forged from another site, or an old page)', fields: { account: 'alice', address: '127.0.0.1' } });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    await rita.get('/');
    const readOnly = await rita.post('/resolve', { ...form, note: 'x', csrf: rita.csrf as string });
    expect(readOnly.text).toContain(refusal('Read-only account', '<p>rita may look but not resolve windows. Nothing was written.</p>'));
    for (const note of ['', ' \n\t ']) {
      const bare = await alice.post('/resolve', { ...form, note, csrf: alice.csrf as string });
      expect(bare.status).toBe(400);
      expect(bare.text).toContain(refusal('A note is required', '<p>Say what you found and did; nothing was written.</p>'));
    }
    const noNote = await alice.post('/resolve', { ...form, csrf: alice.csrf as string });
    expect(noNote.status).toBe(400);
    expect(noNote.text).toContain('<h1>A note is required</h1>');
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ state: 'unverified' });
  });

  it('records the resolution at the page’s clock, logs it, and shows the notice on the player’s page it sends to', async () => {
    const { page, alice } = await aliceOn([windowEntry('w1', 'Ann')]);
    const done = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Ann', note: 'granted' });
    expect(done.status).toBe(303);
    expect(done.text).toBe('');
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ resolution: { by: 'alice', at: NOW, note: 'granted' } });
    expect(page.logs).toContainEqual({ level: 'info', message: 'staff page: window resolved', fields: { account: 'alice', window: 'window:w1', player: 'Ann' } });
    const notice = '<p class="notice" role="status">Window <span class="id">window:w1</span> resolved.</p>';
    expect((await alice.get(done.headers.get('location') as string)).text).toContain(notice);
    expect((await alice.get('/player?name=Ann')).text).not.toContain('role="status"');

    const late = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Ann', note: 'again' });
    expect(late.status).toBe(409);
    expect(page.logs).toContainEqual({ level: 'info', message: 'staff page: a window was already resolved', fields: { account: 'alice', window: 'window:w1', by: 'alice' } });
  });

  it('says which input is wrong, without its "input." prefix', async () => {
    const { alice } = await aliceOn([windowEntry('w1', 'Ann')]);
    const other = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Bo', note: 'x' });
    expect(other.status).toBe(400);
    expect(other.text).toMatch(/<h1>Not resolved<\/h1><p>windowId must name a window of [^<]*\. Nothing was written\.<\/p>/);
  });

  it("shows the argument a journal of one's own refuses whole: only a leading \"input.\" is cut", async () => {
    const journal = new MemoryJournal();
    journal.resolveWindow = async () => {
      throw new InvalidInputError('shard.input.windowId', 'must be on this shard');
    };
    const { alice } = await aliceOn([windowEntry('w1', 'Ann')], { journal });
    const refused = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Ann', note: 'x' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<h1>Not resolved</h1><p>shard.input.windowId must be on this shard. Nothing was written.</p>');
  });

  it('reads a missing window or player as blank, and says so', async () => {
    const { page, alice } = await aliceOn([windowEntry('w1', 'Ann')]);
    const noWindow = await alice.post('/resolve', { csrf: alice.csrf as string, player: 'Ann', note: 'x' });
    expect(noWindow.status).toBe(400);
    expect(noWindow.text).toContain('<h1>Not resolved</h1><p>windowId must not be blank. Nothing was written.</p>');
    const noPlayer = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', note: 'x' });
    expect(noPlayer.status).toBe(400);
    expect(noPlayer.text).toContain('<h1>Not resolved</h1><p>playerName must not be blank. Nothing was written.</p>');
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ state: 'unverified' });
  });

  it('shows a failed write as it is, and a slow one as slow, with the time waited', async () => {
    const failing = new MemoryJournal();
    failing.resolveWindow = async () => {
      throw new Error('disk full');
    };
    const { alice } = await aliceOn([windowEntry('w', 'Ann')], { journal: failing });
    const failed = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w', player: 'Ann', note: 'checked' });
    expect(failed.status).toBe(503);
    expect(failed.text).toContain(refusal('Not resolved', '<p>resolveWindow: the journal could not record the resolution (disk full)</p>'));

    const slow = new MemoryJournal();
    slow.resolveWindow = () => new Promise(() => undefined);
    const second = await aliceOn([windowEntry('w', 'Ann')], { journal: slow, journalTimeoutMs: 50 });
    const reply = await second.alice.post('/resolve', { csrf: second.alice.csrf as string, window: 'window:w', player: 'Ann', note: 'checked' });
    expect(reply.status).toBe(503);
    expect(reply.text).toContain(
      refusal('The journal is slow', "<p>The resolution did not finish within 0 s; it may or may not have been written. Reload the player's page before trying again.</p>"),
    );
  });
});

describe('pages', () => {
  it('searches only when asked, with the query trimmed', async () => {
    const page = await startPage([windowEntry('a', 'Ann'), windowEntry('b', 'Bo')]);
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const listed = (text: string) => [...text.matchAll(/<li><a href="\/player\?name=([^"]+)">/g)].map((m) => m[1]);
    expect(listed((await b.get('/')).text)).toEqual([]);
    expect((await b.get('/')).text).not.toContain('No player in the journal');
    expect(listed((await b.get('/?q=')).text)).toEqual([]);
    expect(listed((await b.get('/?q=%20%20')).text)).toEqual([]);
    expect(listed((await b.get('/?q=%20ann%20')).text)).toEqual(['Ann']);
  });

  it('says a player page without a name is not a player name, and a slow status read is slow', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const none = await b.get('/player');
    expect(none.status).toBe(400);
    expect(none.text).toMatch(/<h1>Not a player name<\/h1><p>[^<]+<\/p>/);
    expect(none.text).not.toContain('Stryker');

    const journal = new MemoryJournal();
    journal.pending = () => new Promise(() => undefined);
    const slow = await startPage([], { journal, journalTimeoutMs: 50 });
    const rita = slow.browser();
    await rita.login('rita', PASSWORDS.rita);
    const reply = await rita.get('/player?name=Ann');
    expect(reply.status).toBe(503);
    expect(reply.text).toContain(refusal('The journal is slow', '<p>Reading the player&#39;s status took longer than 0 s. The bridge keeps delivering; try again in a moment.</p>'));
  });
});
