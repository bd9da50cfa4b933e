/**
 * The staff page loaded afresh for each test: its module-level bounds are decisions too, and
 * a page loaded once before any test would hide a change to them (StrykerJS's mutants of
 * module-level code, issue #46). In a file of its own: modules loaded afresh in a file that
 * also uses the page loaded before would mix two copies of the page's classes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Harness from './harness.js';

let harness: typeof Harness;

beforeEach(async () => {
  vi.resetModules();
  harness = await import('./harness.js');
});

afterEach(async () => {
  vi.restoreAllMocks();
  await harness.closePages();
});

/** What the page shows for a refusal: its title, then its text. */
const refusal = (title: string, detail: string) => `<h1>${title}</h1>${detail}<p><a href="/">Back to the players</a></p>`;

describe('the staff page, loaded afresh', () => {
  it('reads a form of exactly 16 KiB, refuses one byte more', async () => {
    const page = await harness.startPage();
    const form = (size: number) => {
      const head = `name=rita&password=${harness.PASSWORDS.rita}&pad=`;
      return head + 'x'.repeat(size - head.length);
    };
    const post = async (body: string) => {
      const response = await fetch(`${page.url}/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      return { status: response.status, text: await response.text() };
    };
    expect((await post(form(16 * 1024))).status).toBe(303);
    const over = await post(form(16 * 1024 + 1));
    expect(over.status).toBe(413);
    expect(over.text).toContain(refusal('Too large', '<p>The form must be at most 16384 bytes.</p>'));
  });

  it('leaves no timer behind once a bounded journal read has answered', async () => {
    const armed: unknown[] = [];
    const cleared = new Set<unknown>();
    const setTimer = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
      const timer = setTimer(fn, ms, ...rest);
      if (ms === 12_345) armed.push(timer);
      return timer;
    }) as typeof setTimeout);
    const clearTimer = globalThis.clearTimeout;
    vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((timer?: Parameters<typeof clearTimeout>[0]) => {
      cleared.add(timer);
      clearTimer(timer);
    }) as typeof clearTimeout);
    const page = await harness.startPage([harness.windowEntry('w1', 'Ann')], { journalTimeoutMs: 12_345 });
    const b = page.browser();
    await b.login('rita', harness.PASSWORDS.rita);
    expect((await b.get('/')).status).toBe(200);
    expect((await b.get('/player?name=Ann')).status).toBe(200);
    expect(armed.length).toBeGreaterThanOrEqual(2);
    expect(armed.filter((timer) => !cleared.has(timer))).toEqual([]);
  });
});
