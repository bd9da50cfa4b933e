/**
 * The staff page's server decisions, in process over loopback HTTP: who may look (a
 * session from a login), who may resolve (an account with the resolve role, the form's
 * CSRF token, a note), what a second resolve learns, sessions that end, the brake on wrong
 * passwords, escaping, and what HOSTILE.md asks of a page (10,000 windows, a journal that
 * cannot be read, a slow one, a stolen cookie after its session ended).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileJournal, MemoryJournal } from 'teamgames-sdk';
import type { JournalEntry } from '../../../src/journals/contract.js';
import { SECURITY_HEADERS } from '../../../src/bridge/staff-page/server.js';
import { PASSWORDS, closePages, lineEntry, startPage, windowEntry } from './harness.js';

afterEach(closePages);
const HOUR = 3_600_000;

async function resolvedOf(journal: { pending(player?: string): Promise<JournalEntry[]> }, id: string) {
  return (await journal.pending()).find((e) => e.deliveryId === id);
}

describe('the staff page: logging in', () => {
  it('sends every page to the login form until a staff member logs in, with the security headers on every answer', async () => {
    const page = await startPage();
    const b = page.browser();
    for (const path of ['/', '/player?name=Steve', '/health']) {
      const reply = await b.get(path);
      expect(reply.status).toBe(303);
      expect(reply.headers.get('location')).toBe('/login');
    }
    const login = await b.get('/login');
    expect(login.status).toBe(200);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(login.headers.get(name)).toBe(value);
    expect(SECURITY_HEADERS['content-security-policy']).toMatch(/default-src 'none'/);
    expect(login.text).not.toMatch(/<script|\sstyle=|\son\w+=/i);
    expect((await b.get('/style.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('logs in with the right password: an HttpOnly, SameSite=Strict cookie (Secure and __Host- behind TLS)', async () => {
    const page = await startPage();
    const b = page.browser();
    const reply = await b.login('alice', PASSWORDS.alice);
    expect(reply.status).toBe(303);
    expect(reply.headers.get('location')).toBe('/');
    expect(reply.headers.get('set-cookie')).toMatch(/^tg_staff=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600$/);
    expect((await b.get('/')).status).toBe(200);

    const tls = await startPage([], { secureCookie: true });
    const reply2 = await tls.browser().login('alice', PASSWORDS.alice);
    expect(reply2.headers.get('set-cookie')).toMatch(/^__Host-tg_staff=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure; Max-Age=3600$/);
  });

  it('refuses a wrong password or an unknown name alike, and logs the try without the password', async () => {
    const page = await startPage();
    const wrong = await page.browser().login('alice', 'guess-one');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong name or password.');
    // The address waits 1 s after a wrong password (see the next test).
    page.advance(1_000);
    const unknown = await page.browser().login('mallory', 'guess-two');
    expect(unknown.status).toBe(401);
    expect(unknown.text).toContain('Wrong name or password.');
    const lines = page.logs.filter((l) => l.message === 'staff page: wrong name or password');
    expect(lines.map((l) => l.fields?.account)).toEqual(['alice', 'mallory']);
    expect(JSON.stringify(page.logs)).not.toMatch(/guess-one|guess-two/);
  });

  it('refuses a login posted by a page of another site without trying it (no slowdown for the account)', async () => {
    const page = await startPage();
    const forged = await page.browser().post('/login', { name: 'alice', password: 'guess' }, { 'sec-fetch-site': 'cross-site' });
    expect(forged.status).toBe(403);
    expect(page.logs.some((l) => l.message === 'staff page: wrong name or password')).toBe(false);
    expect((await page.browser().post('/login', { name: 'alice', password: PASSWORDS.alice }, { 'sec-fetch-site': 'same-origin' })).status).toBe(303);
  });

  it('slows wrong passwords down per account and per address: 1 s, then 2 s, answered 429 without checking', async () => {
    const page = await startPage();
    expect((await page.browser().login('alice', 'nope')).status).toBe(401);
    // Even the right password waits: the try is not checked.
    const slowed = await page.browser().login('alice', PASSWORDS.alice);
    expect(slowed.status).toBe(429);
    expect(slowed.headers.get('retry-after')).toBe('1');
    // Another account from the same address waits too.
    expect((await page.browser().login('bob', PASSWORDS.bob)).status).toBe(429);
    page.advance(1_000);
    expect((await page.browser().login('alice', 'nope again')).status).toBe(401);
    page.advance(1_999);
    expect((await page.browser().login('alice', PASSWORDS.alice)).status).toBe(429);
    page.advance(1);
    expect((await page.browser().login('alice', PASSWORDS.alice)).status).toBe(303);
    expect(page.logs.some((l) => l.message.includes('slowed down') && JSON.stringify(l).includes(PASSWORDS.alice))).toBe(false);
  });
});

describe('the staff page: sessions', () => {
  it('ends a session after its time: the cookie, copied or not, is refused from then on', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('alice', PASSWORDS.alice);
    const stolen = page.browser();
    stolen.cookie = b.cookie;
    expect((await stolen.get('/')).status).toBe(200);
    page.advance(HOUR - 1);
    expect((await b.get('/')).status).toBe(200);
    page.advance(1);
    expect((await stolen.get('/')).status).toBe(303);
    expect((await b.get('/')).status).toBe(303);
    // Back in time (the monotonic clock never is; a test clock can be): still gone.
    page.advance(-HOUR);
    expect((await stolen.get('/')).status).toBe(303);
  });

  it('logs out with the form (its token needed): the cookie no longer works', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const home = await b.get('/');
    const cookie = b.cookie;
    expect((await b.post('/logout', {})).status).toBe(403);
    expect((await b.get('/')).status).toBe(200);
    expect(home.text).toContain('Log out');
    expect((await b.post('/logout', { csrf: b.csrf as string })).status).toBe(303);
    const again = page.browser();
    again.cookie = cookie;
    expect((await again.get('/')).status).toBe(303);
  });
});

describe('the staff page: finding a player and what is at stake', () => {
  it('finds players by part of the name in any case, names differing only by case listed apart', async () => {
    const page = await startPage([windowEntry('a', 'SteveMiner'), windowEntry('b', 'stevem'), lineEntry('c', 'Alex', 'Sword', 1)], { online: () => ['STEVE_online'] });
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const found = await b.get('/?q=sTeVe');
    expect(found.status).toBe(200);
    const names = [...found.text.matchAll(/<li><a href="\/player\?name=([^"]+)">/g)].map((m) => decodeURIComponent(m[1] as string));
    expect(names).toEqual(['STEVE_online', 'stevem', 'SteveMiner']);
    expect((await b.get('/?q=nobody')).text).toContain('No player in the journal or online has a name containing “nobody”');
  });

  it('lists the online players the loop reports blocked, until they are unblocked', async () => {
    const online = new Set(['Ann', 'Bo']);
    const page = await startPage([], { online: () => online });
    page.desk.event({ type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: 'Ann', code: 'PRODUCT_NOT_FOUND', runs: 3 });
    page.desk.event({ type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: 'Bo', code: 'RATE_LIMIT', runs: 4 });
    page.desk.event({ type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: 'Gone', code: 'ERROR', runs: 3 });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const before = await rita.get('/');
    expect(before.text).toContain('<h2>Blocked players <span class="count">2</span></h2>');
    expect(before.text).toMatch(/name=Ann">Ann<\/a><\/td><td>PRODUCT_NOT_FOUND \(3 runs\)/);
    page.desk.event({ type: 'playerUnblocked', operation: 'startDeliveryLoop', playerName: 'Ann' });
    const after = await rita.get('/');
    expect(after.text).toContain('<h2>Blocked players <span class="count">1</span></h2>');
    expect(after.text).not.toContain('PRODUCT_NOT_FOUND');
    expect(after.text).toContain('RATE_LIMIT (4 runs)');
  });

  it("shows a player's open window with its span, cause, points and command, and their stuck items", async () => {
    const page = await startPage([
      windowEntry('v', 'Ann', { cause: 'lostVote', reward: '12', points: 30 }),
      windowEntry('r', 'Ann', { cause: 'unknownCommand', command: 'give Ann diamond 64\nsay thanks' }),
      lineEntry('s', 'Ann', 'Dragon claws', 2, { lastError: { message: 'the game said no', at: 0, attempts: 5, stuck: true } }),
    ]);
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const { text, status } = await b.get('/player?name=Ann');
    expect(status).toBe(200);
    expect(text).toContain('window:v');
    expect(text).toMatch(/<dt>Cause<\/dt><dd>lostVote<\/dd><dt>Vote reward<\/dt><dd>12<\/dd><dt>Points<\/dt><dd>30<\/dd>/);
    expect(text).toContain('<pre>give Ann diamond 64\nsay thanks</pre>');
    expect(text).toContain('(1 h)');
    expect(text).toMatch(/Dragon claws × 2[\s\S]*stuck[\s\S]*the game said no/);
    // Read-only: no resolve form.
    expect(text).not.toContain('action="/resolve"');
    expect(text).toContain('Your account is read-only');
  });
});

describe('the staff page: resolving', () => {
  it('resolves one window as the staff member, with the note; a second resolve learns who, when and the note', async () => {
    const page = await startPage([windowEntry('w1', 'Ann'), windowEntry('w2', 'Ann')]);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    const bob = page.browser();
    await bob.login('bob', PASSWORDS.bob);
    await alice.get('/player?name=Ann');
    await bob.get('/player?name=Ann');

    const done = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Ann', note: 'granted by hand, invoice 1043' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/player?name=Ann&resolved=window%3Aw1');
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ state: 'resolved', resolution: { by: 'alice', at: expect.any(Number), note: 'granted by hand, invoice 1043' } });
    expect(await resolvedOf(page.journal, 'window:w2')).toMatchObject({ state: 'unverified' });
    expect((await alice.get('/player?name=Ann&resolved=window%3Aw1')).text).toMatch(/Resolved by <strong class="by">alice<\/strong>/);

    const late = await bob.post('/resolve', { csrf: bob.csrf as string, window: 'window:w1', player: 'Ann', note: 'I did it too' });
    expect(late.status).toBe(409);
    expect(late.text).toMatch(/Already resolved by <strong class="by">alice<\/strong> at [^(]+\(note: granted by hand, invoice 1043\)/);
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ resolution: { by: 'alice' } });
  });

  it('refuses a resolve without the session’s CSRF token, from a read-only account, without a note, or without a session', async () => {
    const page = await startPage([windowEntry('w1', 'Ann')]);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    await alice.get('/player?name=Ann');
    const form = { window: 'window:w1', player: 'Ann', note: 'forged' };
    expect((await alice.post('/resolve', form)).status).toBe(403);
    expect((await alice.post('/resolve', { ...form, csrf: 'x'.repeat(43) })).status).toBe(403);
    // Another session's token is not this one's.
    const bob = page.browser();
    await bob.login('bob', PASSWORDS.bob);
    await bob.get('/player?name=Ann');
    expect((await alice.post('/resolve', { ...form, csrf: bob.csrf as string })).status).toBe(403);
    expect(page.logs.filter((l) => l.message.startsWith('staff page: a form without its token'))).toHaveLength(3);

    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    await rita.get('/');
    const readOnly = await rita.post('/resolve', { ...form, csrf: rita.csrf as string });
    expect(readOnly.status).toBe(403);
    expect(readOnly.text).toContain('rita may look but not resolve windows');

    expect((await alice.post('/resolve', { ...form, note: '   ', csrf: alice.csrf as string })).status).toBe(400);
    expect((await page.browser().post('/resolve', { ...form, csrf: alice.csrf as string })).status).toBe(403);
    // Posted by a page of another site (as the browser says): refused, even with the token.
    const crossSite = await alice.post('/resolve', { ...form, csrf: alice.csrf as string }, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.text).toContain('Refused: sent from another site');
    expect((await alice.post('/resolve', { ...form, csrf: alice.csrf as string }, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // A JSON body (what a script from another site could send) is not a form.
    expect((await alice.post('/resolve', form, { 'content-type': 'application/json' })).status).toBe(415);
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ state: 'unverified' });
  });

  it("refuses a window of another player and a note with a bidi override, nothing written", async () => {
    const page = await startPage([windowEntry('w1', 'Ann')]);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    await alice.get('/');
    const other = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Bo', note: 'x' });
    expect(other.status).toBe(400);
    expect(other.text).toContain('windowId must name a window of');
    expect((await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w1', player: 'Ann', note: 'ok \u202e' })).status).toBe(400);
    expect(await resolvedOf(page.journal, 'window:w1')).toMatchObject({ state: 'unverified' });
  });
});

describe('the staff page: hostile texts', () => {
  it('shows a player name, product name, command and note as text: HTML escaped, controls and bidi made visible', async () => {
    const evil = '<img src=x onerror=alert(1)>\u200b"\'&';
    const page = await startPage([
      windowEntry('h', evil, { cause: 'unknownCommand', command: 'give \u001b[2J</pre><script>x</script>' }),
      lineEntry('p', evil, 'Cape\u202e<b>gpj.exe</b>', 1),
    ]);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    const before = await alice.get(`/player?name=${encodeURIComponent(evil)}`);
    // The form carries the exact name back (shown with \u200b written out, sent as it is).
    expect(before.text).toContain('<input type="hidden" name="player" value="&lt;img src=x onerror=alert(1)&gt;\u200b&quot;&#39;&amp;">');
    await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:h', player: evil, note: '</blockquote><script>alert(2)</script>\nline two' });
    const { text } = await alice.get(`/player?name=${encodeURIComponent(evil)}`);
    expect(text).not.toMatch(/<img|<script|<b>|\u202e|\u200b|\u001b/);
    expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;\\u200b&quot;&#39;&amp;');
    expect(text).toContain('Cape\\u202e&lt;b&gt;gpj.exe&lt;/b&gt;');
    expect(text).toContain('give \\u001b[2J&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;');
    expect(text).toContain('&lt;/blockquote&gt;&lt;script&gt;alert(2)&lt;/script&gt;\\u000aline two');
    const home = await alice.get(`/?q=${encodeURIComponent('<img')}`);
    expect(home.text).not.toMatch(/<img|\u200b/);
    expect(home.text).toContain(`href="/player?name=${encodeURIComponent(evil).replace(/'/g, '&#39;')}"`);
  });
});

describe('the staff page: HOSTILE.md', () => {
  it('answers for a player with 10,000 windows: 100 shown, the rest counted, resolving one by id works', async () => {
    const entries = Array.from({ length: 10_000 }, (_, i) => windowEntry(`n${i}`, 'Hoarder'));
    const page = await startPage(entries);
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    const { status, text } = await alice.get('/player?name=Hoarder');
    expect(status).toBe(200);
    expect(text.match(/<article class="card window unverified"/g)).toHaveLength(100);
    expect(text).toContain('and 9900 more not shown (newer)');
    expect(text.length).toBeLessThan(400_000);
    const home = await alice.get('/');
    expect(home.text).toContain('<span class="count">10000</span>');
    expect(home.text).toContain('and 9900 more not shown');
    expect((await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:n9999', player: 'Hoarder', note: 'checked' })).status).toBe(303);
  });

  it('says so when the journal cannot be read, on every page, and keeps serving', async () => {
    const journal = new MemoryJournal();
    journal.pending = async () => {
      throw new Error('EACCES: permission denied, open /var/lib/teamgames/journal.jsonl');
    };
    const page = await startPage([], { journal });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const home = await rita.get('/');
    expect(home.status).toBe(503);
    expect(home.text).toContain('The journal cannot be read');
    expect(home.text).toContain('EACCES: permission denied');
    const health = await rita.get('/health');
    expect(health.status).toBe(200);
    expect(health.text).toMatch(/<th>Journal<\/th><td><span class="bad">failing<\/span>/);
    expect((await rita.get('/style.css')).status).toBe(200);
  });

  it("never shows a secret a driver's message holds: the bridge's redaction applies to every page", async () => {
    const journal = new MemoryJournal();
    journal.pending = async () => {
      throw new Error('password authentication failed for postgres://bridge:S3cret-pw@db/teamgames');
    };
    const page = await startPage([], { journal, redact: (text) => text.split('S3cret-pw').join('<redacted>') });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const home = await rita.get('/');
    expect(home.text).not.toContain('S3cret-pw');
    expect(home.text).toContain('postgres://bridge:&lt;redacted&gt;@db/teamgames');
  });

  it('answers 503 in bounded time when the journal does not answer, and asks it once however often staff reload', async () => {
    const journal = new MemoryJournal();
    let reads = 0;
    let release: (() => void) | undefined;
    const original = journal.pending.bind(journal);
    journal.pending = (player) => {
      reads += 1;
      return new Promise((resolve) => (release = () => resolve(original(player))));
    };
    const page = await startPage([], { journal, journalTimeoutMs: 50 });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const replies = await Promise.all([rita.get('/'), rita.get('/'), rita.get('/')]);
    expect(replies.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(replies[0]?.text).toContain('Reading the journal took longer than 0 s');
    expect(reads).toBe(1);
    release?.();
  });
});

describe('the staff page: what else it refuses', () => {
  it('only reads on GET: other methods 405, unknown pages 404, a form over 16 KiB 413, a bad player name 400', async () => {
    const page = await startPage();
    const b = page.browser();
    await b.login('alice', PASSWORDS.alice);
    await b.get('/');
    const put = await fetch(`${page.url}/player?name=Ann`, { method: 'PUT', headers: { cookie: b.cookie as string } });
    expect(put.status).toBe(405);
    expect((await b.get('/nope')).status).toBe(404);
    expect((await b.post('/resolve', { csrf: b.csrf as string, note: 'x'.repeat(17 * 1024), window: 'window:a', player: 'Ann' })).status).toBe(413);
    const bad = await b.get(`/player?name=${encodeURIComponent('a\u202eb')}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('must not contain control or bidi-override characters');
    const head = await fetch(`${page.url}/`, { method: 'HEAD', headers: { cookie: b.cookie as string } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('shows on the health page what the store, the journal and the game last answered, and the chart', async () => {
    const page = await startPage([windowEntry('w', 'Ann')]);
    page.desk.store.okAt = 1;
    Object.assign(page.desk.game, { okAt: 1, failedAt: 2, failure: 'webhook answered 503' });
    page.desk.samples.push({ at: 0, pending: 1, openWindows: 0 }, { at: 60_000, pending: 2, openWindows: 1 });
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    const { text } = await b.get('/health');
    expect(text).toMatch(/<th>Store<\/th><td><span class="ok">up<\/span>/);
    expect(text).toMatch(/<th>Journal<\/th><td><span class="ok">up<\/span>/);
    expect(text).toMatch(/<th>Game \(webhook http:\/\/127\.0\.0\.1:9\/give\)<\/th><td><span class="bad">failing<\/span><\/td><td>last good [^<]+<br>last failure [^:]+:\d\d:\d\d UTC: webhook answered 503/);
    expect(text).toContain('<dt>Open windows</dt><dd>1</dd>');
    expect(text).toContain('<polyline');
  });
});

describe('the staff page: two staff at once, a journal slow to write', () => {
  it('of two staff resolving one window of a file journal at the same moment, one wins and the other is told who', async () => {
    const journal = new FileJournal(join(await mkdtemp(join(tmpdir(), 'staff-page-')), 'journal.jsonl'));
    const page = await startPage([windowEntry('same', 'Ann')], { journal });
    const alice = page.browser();
    const bob = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    await bob.login('bob', PASSWORDS.bob);
    await alice.get('/');
    await bob.get('/');
    const [a, b] = await Promise.all([
      alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:same', player: 'Ann', note: 'alice checked' }),
      bob.post('/resolve', { csrf: bob.csrf as string, window: 'window:same', player: 'Ann', note: 'bob checked' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([303, 409]);
    const winner = ((await resolvedOf(journal, 'window:same')) as { resolution?: { by: string } } | undefined)?.resolution?.by;
    const loser = a.status === 409 ? a : b;
    expect(loser.text).toContain(`Already resolved by <strong class="by">${winner}</strong>`);
    await journal.close();
  });

  it('answers 503 when the resolution is not written in time, saying it may or may not have been', async () => {
    const journal = new MemoryJournal();
    journal.resolveWindow = () => new Promise(() => undefined);
    const page = await startPage([windowEntry('w', 'Ann')], { journal, journalTimeoutMs: 50 });
    const alice = page.browser();
    await alice.login('alice', PASSWORDS.alice);
    await alice.get('/');
    const reply = await alice.post('/resolve', { csrf: alice.csrf as string, window: 'window:w', player: 'Ann', note: 'checked' });
    expect(reply.status).toBe(503);
    expect(reply.text).toContain('it may or may not have been written');
  });
});

describe('the staff page: huge input', () => {
  it('cuts a search to 64 characters, refuses a 10,000-character name, and a login form over 16 KiB (Node answers 431 to a longer URL)', async () => {
    const page = await startPage([windowEntry('a', 'Ann')]);
    const b = page.browser();
    await b.login('rita', PASSWORDS.rita);
    expect((await b.get(`/?q=${'A'.repeat(100_000)}`)).status).toBe(431);
    const search = await b.get(`/?q=${'A'.repeat(10_000)}`);
    expect(search.status).toBe(200);
    expect(search.text).toContain(`value="${'A'.repeat(64)}"`);
    expect(search.text).not.toContain('A'.repeat(65));
    const long = await b.get(`/player?name=${'x'.repeat(10_000)}`);
    expect(long.status).toBe(400);
    expect(long.text).toContain('must be at most 64 characters, got 10000');
    expect((await page.browser().login('rita', 'p'.repeat(20_000))).status).toBe(413);
  });
});
