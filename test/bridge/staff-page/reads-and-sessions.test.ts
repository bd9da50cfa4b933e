/**
 * What a page reads and for how long a session and a strike are held: a player's page reads
 * that player's entries (two players' pages read at once do not share a read), the desk's
 * count of open windows comes from the whole journal only, sessions are swept at their exact
 * end, and the brake holds exactly 10,000 keys.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JournalError, MemoryJournal } from 'teamgames-sdk';
import { LoginBrake, Sessions } from '../../../src/bridge/staff-page/sessions.js';
import { PASSWORDS, closePages, startPage, windowEntry } from './harness.js';

afterEach(closePages);

describe('what a page reads', () => {
  it("shows on a player's page that player's windows only", async () => {
    const page = await startPage([windowEntry('ann1', 'Ann'), windowEntry('bo1', 'Bo')]);
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const ann = await rita.get('/player?name=Ann');
    expect(ann.status).toBe(200);
    expect(ann.text).toContain('window:ann1');
    expect(ann.text).not.toContain('window:bo1');
  });

  it("does not share one player's journal read with another's page read at the same moment", async () => {
    const journal = new MemoryJournal();
    await journal.append([windowEntry('ann1', 'Ann'), windowEntry('bo1', 'Bo')]);
    const original = journal.pending.bind(journal);
    // Reads are held in pairs: each page's read waits for the other page's read, so both
    // pages' journal reads are in flight together.
    let held: Array<() => void> = [];
    let gate = false;
    journal.pending = (player) => {
      if (!gate) return original(player);
      return new Promise((resolve) => {
        held.push(() => resolve(original(player)));
        if (held.length === 2) for (const go of held.splice(0)) go();
      });
    };
    const page = await startPage([], { journal, journalTimeoutMs: 2_000 });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    gate = true;
    const [ann, bo] = await Promise.all([rita.get('/player?name=Ann'), rita.get('/player?name=Bo')]);
    gate = false;
    held = [];
    expect([ann.status, bo.status]).toEqual([200, 200]);
    expect(ann.text).toContain('window:ann1');
    expect(ann.text).not.toContain('window:bo1');
    expect(bo.text).toContain('window:bo1');
    expect(bo.text).not.toContain('window:ann1');
  });

  it('does not give the home page\'s read of the whole journal to the page of a player named "undefined"', async () => {
    const journal = new MemoryJournal();
    await journal.append([windowEntry('u1', 'undefined'), windowEntry('ann1', 'Ann')]);
    const original = journal.pending.bind(journal);
    // The home page's read of the whole journal is held until the player's page has answered.
    let hold = false;
    const held: Array<() => void> = [];
    let asked!: () => void;
    const homeAsked = new Promise<void>((resolve) => (asked = resolve));
    journal.pending = (player) => {
      if (!hold || player !== undefined) return original(player);
      return new Promise((resolve) => {
        held.push(() => resolve(original(player)));
        asked();
      });
    };
    const page = await startPage([], { journal, journalTimeoutMs: 2_000 });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    hold = true;
    const home = rita.get('/');
    await homeAsked;
    const player = await rita.get('/player?name=undefined');
    hold = false;
    for (const go of held.splice(0)) go();
    expect(player.status).toBe(200);
    expect(player.text).toContain('window:u1');
    expect(player.text).not.toContain('window:ann1');
    const { status, text } = await home;
    expect(status).toBe(200);
    expect(text).toContain('<h2>Open windows <span class="count">2</span></h2>');
    expect(text).toContain('href="/player?name=Ann"');
    expect(page.desk.openWindows).toBe(2);
  });

  it("keeps the count of all open windows on the health page when the journal fails, not the last player's count", async () => {
    const journal = new MemoryJournal();
    await journal.append([windowEntry('a1', 'Ann'), windowEntry('a2', 'Ann'), windowEntry('b1', 'Bo')]);
    const original = journal.pending.bind(journal);
    let failing = false;
    journal.pending = (player) => (failing ? Promise.reject(new Error('journal gone')) : original(player));
    const page = await startPage([], { journal });
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    await rita.get('/');
    expect(page.desk.openWindows).toBe(3);
    await rita.get('/player?name=Bo');
    expect(page.desk.openWindows).toBe(3);
    failing = true;
    const health = await rita.get('/health');
    expect(health.text).toContain('<dt>Open windows</dt><dd>3</dd>');
  });
});

describe('the health page and the checkout hints', () => {
  it("shows how many hints are held, and the shared journal's hints that cannot be read, escaped", async () => {
    const journal = new MemoryJournal();
    journal.liveCheckoutHints = () => Promise.reject(new JournalError('PostgresJournal: could not read the checkout hints: <b>relation</b> missing'));
    const page = await startPage([], { journal });
    await expect.poll(() => page.loop.stats().sharedHintsError).toBeDefined();
    const rita = page.browser();
    await rita.login('rita', PASSWORDS.rita);
    const health = await rita.get('/health');
    expect(health.text).toContain(`<dt>Checkout hints held</dt><dd>0 <span class="bad">the journal's hints cannot be read: PostgresJournal: could not read the checkout hints: &lt;b&gt;relation&lt;/b&gt; missing</span></dd>`);
  });
});

describe('sessions and strikes at their bounds', () => {
  it('sweeps a session at the exact moment it ends', () => {
    let now = 0;
    const sessions = new Sessions(100, () => now);
    sessions.open('alice', 'resolve');
    now = 100;
    sessions.open('bob', 'read');
    expect(sessions.size).toBe(1);
  });

  it('forgets the oldest strike when the 10,001st key comes, not later', () => {
    const brake = new LoginBrake(() => 0);
    for (let i = 0; i < 5_000; i++) brake.failed(`n${i}`, `a${i}`);
    // 10,000 keys held: the next two push out the two oldest (account:n0, then address:a0).
    brake.failed('late', 'a-late');
    expect(brake.wait('n0', 'elsewhere')).toBe(0);
    expect(brake.wait('nobody', 'a0')).toBe(0);
    expect(brake.wait('n1', 'elsewhere')).toBe(1_000);
    expect(brake.wait('nobody', 'a1')).toBe(1_000);
  });
});
