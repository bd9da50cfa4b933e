/**
 * The staff page's parts on their own: the escaper, the sessions and the brake on wrong
 * passwords (their bounds), the password hashes (what they refuse), and the desk (what it
 * records of gives and events, the chart's samples and its timer).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Accounts from '../../../src/bridge/staff-page/accounts.js';
import type * as Desk from '../../../src/bridge/staff-page/desk.js';
import type * as Html from '../../../src/bridge/staff-page/html.js';
import type * as SessionsModule from '../../../src/bridge/staff-page/sessions.js';
import type * as Views from '../../../src/bridge/staff-page/views.js';
import type { DeliveredItem, DeliveryLoopStats, GivenVoteReward, StorefrontEvent } from 'teamgames-sdk';

let hashPassword: typeof Accounts.hashPassword;
let parseAccounts: typeof Accounts.parseAccounts;
let verifyPassword: typeof Accounts.verifyPassword;
let UNKNOWN_ACCOUNT_HASH: typeof Accounts.UNKNOWN_ACCOUNT_HASH;
let StaffDesk: typeof Desk.StaffDesk;
let escapeText: typeof Html.escapeText;
let exact: typeof Html.exact;
let html: typeof Html.html;
let LoginBrake: typeof SessionsModule.LoginBrake;
let Sessions: typeof SessionsModule.Sessions;
let sameSecret: typeof SessionsModule.sameSecret;
let chart: typeof Views.chart;

// The parts loaded afresh for each test: their module-level constants (the escaper's
// entities, the brake's 5-minute cap, the session tokens, the accounts' patterns) are
// decisions too, and a module loaded once, before any test, would hide a change to them
// from every test here (StrykerJS's mutants of module-level code; issue #46).
beforeEach(async () => {
  vi.resetModules();
  ({ hashPassword, parseAccounts, verifyPassword, UNKNOWN_ACCOUNT_HASH } = await import('../../../src/bridge/staff-page/accounts.js'));
  ({ StaffDesk } = await import('../../../src/bridge/staff-page/desk.js'));
  ({ escapeText, exact, html } = await import('../../../src/bridge/staff-page/html.js'));
  ({ LoginBrake, Sessions, sameSecret } = await import('../../../src/bridge/staff-page/sessions.js'));
  ({ chart } = await import('../../../src/bridge/staff-page/views.js'));
});

afterEach(() => {
  vi.useRealTimers();
});

describe('html: every value is text', () => {
  it('escapes the five HTML characters after writing out controls, bidi and invisible characters', () => {
    expect(escapeText(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(escapeText('a\u202eb\u200bc\u001bd\ne\\f')).toBe('a\\u202eb\\u200bc\\u001bd\\u000ae\\\\f');
    expect(escapeText('plain ünïcode 😀')).toBe('plain ünïcode 😀');
  });

  it('keeps markup made by html, joins arrays, drops undefined, null and false, writes numbers and true', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${['<', html`<br>`, 2]}${undefined}${null}${false}${0}${true}</p>`.text).toBe('<p><b>&lt;i&gt;</b>&lt;<br>20true</p>');
    expect(String(html`x${'&'}`)).toBe('x&amp;');
    expect(exact('a\u200b"<').text).toBe('a\u200b&quot;&lt;');
  });
});

describe('sessions', () => {
  it('end at their time, are forgotten then, and at most 1,000 are held (the oldest goes)', () => {
    let now = 0;
    const sessions = new Sessions(100, () => now);
    const first = sessions.open('alice', 'resolve');
    expect(first.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.csrf).not.toBe(first.id);
    expect(sessions.find(first.id)).toBe(first);
    expect(sessions.find(undefined)).toBeUndefined();
    expect(sessions.find('nope')).toBeUndefined();
    now = 99;
    expect(sessions.find(first.id)).toBe(first);
    now = 100;
    expect(sessions.find(first.id)).toBeUndefined();
    expect(sessions.size).toBe(0);
    for (let i = 0; i < 1_001; i++) sessions.open(`s${i}`, 'read');
    expect(sessions.size).toBe(1_000);
    // Ended ones are swept at the next login.
    now = 1_000;
    sessions.open('bob', 'read');
    expect(sessions.size).toBe(1);
  });

  it('compares secrets whole', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('', 'abc')).toBe(false);
  });
});

describe('the brake on wrong passwords', () => {
  it('doubles the wait per account and per address up to 5 minutes; a right password clears the account only', () => {
    let now = 0;
    const brake = new LoginBrake(() => now);
    expect(brake.wait('alice', '10.0.0.1')).toBe(0);
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) waits.push(brake.failed('alice', '10.0.0.1'));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, 300_000]);
    expect(brake.wait('alice', '10.0.0.2')).toBe(300_000);
    expect(brake.wait('bob', '10.0.0.1')).toBe(300_000);
    expect(brake.wait('bob', '10.0.0.2')).toBe(0);
    now = 299_999;
    expect(brake.wait('alice', '10.0.0.2')).toBe(1);
    brake.succeeded('alice');
    expect(brake.wait('alice', '10.0.0.2')).toBe(0);
    expect(brake.wait('bob', '10.0.0.1')).toBe(1);
  });

  it('holds at most 10,000 names and addresses (the oldest strike is forgotten)', () => {
    const brake = new LoginBrake(() => 0);
    brake.failed('first', 'a0');
    for (let i = 1; i < 5_000; i++) brake.failed(`n${i}`, `a${i}`);
    expect(brake.wait('first', 'elsewhere')).toBe(1_000);
    brake.failed('last', 'a-last');
    expect(brake.wait('first', 'elsewhere')).toBe(0);
  });
});

describe('password hashes', () => {
  it('verify only the password they were made from, and refuse what no staff-hash line holds', async () => {
    const hash = await hashPassword('pässwörd with spaces');
    expect(await verifyPassword('pässwörd with spaces', hash)).toBe(true);
    expect(await verifyPassword('pässwörd with space', hash)).toBe(false);
    expect(await verifyPassword('', UNKNOWN_ACCOUNT_HASH)).toBe(false);
    expect(await verifyPassword('x', 'plain-text-password')).toBe(false);
    // Parameters that would cost gigabytes are refused without hashing.
    expect(await verifyPassword('x', hash.replace('$32768$', '$2097152$'))).toBe(false);
    expect(await verifyPassword('x', hash.replace('$8$1$', '$33$1$'))).toBe(false);
    expect(await verifyPassword('x', hash.replace('$8$1$', '$8$17$'))).toBe(false);
    expect(await verifyPassword('x'.repeat(1_025), hash)).toBe(false);
    await expect(hashPassword('')).rejects.toThrow('the password is empty');
    await expect(hashPassword('x'.repeat(1_025))).rejects.toThrow('at most 1024 characters');
    expect(parseAccounts(`alice read ${hash}\n`, 'f').get('alice')?.hash).toBe(hash);
  });
});

describe('the desk', () => {
  const stats = (pending: number): DeliveryLoopStats => ({ online: 1, hints: 0, calls: 0, previews: 0, claims: 0, granted: 0, pending, unverified: 0, errors: 0, lastError: undefined, intervalMs: 30_000, maxCallsInOneSecond: 0, paused: false, blocked: 0, backingOff: 0 });
  const item = { player_name: 'Ann', product_name: 'Sword', quantity_to_grant: 2, deliveryId: 'invoice:1' } as DeliveredItem;
  const reward = { playerName: 'Ann', reward_name: 'Box', give_amount: 5, deliveryId: 'vote:1:0' } as GivenVoteReward;

  it('records each give with its outcome, passing the error on, and what the store and the journal last answered', async () => {
    let now = 10;
    const desk = new StaffDesk(() => now);
    const gives = desk.recording({ give: async () => undefined, giveVoteReward: async () => Promise.reject(new Error('game offline')) });
    await gives.give(item);
    now = 20;
    await expect(gives.giveVoteReward(reward)).rejects.toThrow('game offline');
    expect(desk.recent).toEqual([
      { kind: 'purchase', player: 'Ann', deliveryId: 'invoice:1', what: 'Sword', units: 2, outcome: 'given', at: 10 },
      { kind: 'vote', player: 'Ann', deliveryId: 'vote:1:0', what: 'Box', units: 5, outcome: 'failed', error: 'game offline', at: 20 },
    ]);
    expect(desk.game).toEqual({ okAt: 10, failedAt: 20, failure: 'game offline' });

    desk.event({ type: 'response', status: 200 } as StorefrontEvent);
    now = 30;
    desk.event({ type: 'response', status: 503 } as StorefrontEvent);
    now = 40;
    desk.event({ type: 'retry', reason: 'timeout' } as StorefrontEvent);
    desk.event({ type: 'journalError', error: new Error('disk full') } as StorefrontEvent);
    desk.event({ type: 'response', status: 404 } as StorefrontEvent);
    expect(desk.store).toEqual({ okAt: 40, failedAt: 40, failure: 'timeout' });
    expect(desk.journal).toEqual({ failedAt: 40, failure: 'disk full' });
    now = 50;
    desk.journalOk();
    expect(desk.journal.okAt).toBe(50);
  });

  it('keeps the last 1,000 gives and a day of samples, one a minute, until stopped', async () => {
    vi.useFakeTimers();
    const desk = new StaffDesk(() => 0);
    const gives = desk.recording({ give: async () => undefined, giveVoteReward: async () => undefined });
    for (let i = 0; i < 1_001; i++) await gives.give({ ...item, deliveryId: `d${i}` });
    expect(desk.recent).toHaveLength(1_000);
    expect(desk.recent[0]?.deliveryId).toBe('d1');
    let pending = 0;
    desk.openWindows = 2;
    desk.start(() => stats(pending++));
    vi.advanceTimersByTime(25 * 60 * 60_000);
    expect(desk.samples).toHaveLength(24 * 60);
    expect(desk.samples.at(-1)).toEqual({ at: 0, pending: 25 * 60, openWindows: 2 });
    desk.stop();
    vi.advanceTimersByTime(60 * 60_000);
    expect(desk.samples.at(-1)?.pending).toBe(25 * 60);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('draws the chart from two samples on, scaled to the highest value', () => {
    expect(chart([]).text).toContain('The chart fills as the bridge runs');
    const svg = chart([
      { at: 0, pending: 0, openWindows: 2 },
      { at: 60_000, pending: 4, openWindows: 0 },
    ]).text;
    expect(svg).toContain('<polyline points="0.0,160.0 600.0,10.0" class="pending">');
    expect(svg).toContain('<polyline points="0.0,85.0 600.0,160.0" class="windows">');
    expect(svg).toContain('<text x="4" y="12" class="label">4</text>');
  });
});

describe('the desk counts open windows from the journal', () => {
  it('every 5 minutes, one count at a time, a failed count keeping the last', async () => {
    vi.useFakeTimers();
    const desk = new StaffDesk(() => 0);
    const answers: Array<(n: number) => void> = [];
    let counts = 0;
    desk.start(
      () => ({ pending: 0 }) as DeliveryLoopStats,
      () => {
        counts += 1;
        return counts === 3 ? Promise.reject(new Error('journal gone')) : new Promise<number>((ok) => answers.push(ok));
      },
    );
    expect(counts).toBe(1);
    // Still counting at the fifth minute: no second count starts.
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(counts).toBe(1);
    answers[0]?.(7);
    await vi.advanceTimersByTimeAsync(0);
    expect(desk.openWindows).toBe(7);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(counts).toBe(2);
    answers[1]?.(9);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(counts).toBe(3);
    expect(desk.openWindows).toBe(9);
    expect(desk.samples.at(-1)?.openWindows).toBe(9);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(counts).toBe(4);
    desk.stop();
  });
});
