/**
 * The local claim guard's arithmetic (src/internal/claim-guard.ts), each rule pinned so that
 * changing it fails a test (issue #46): the time left is rounded up to the millisecond, a
 * window is shut for as long as its claim is in flight, and a clock set back never makes a
 * player wait more than one window. Through the client, on an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { StorefrontClient } from '../../src/index.js';
import { KEY } from '../support/fixtures.js';
import { v4 } from '../support/msw.js';

/** A client on a clock of the test's own; every claim is answered NO_ITEMS and counted. */
function setup(start = 1_000) {
  const clock = { t: start };
  let sent = 0;
  const fetch = async () => {
    sent += 1;
    return Response.json(v4('NO_ITEMS'));
  };
  const client = new StorefrontClient({ apiKey: KEY, retry: 0, now: () => clock.t, fetch });
  return { clock, client, sent: () => sent };
}

describe('the time left in a window', () => {
  it('is rounded up to the millisecond on a clock that reads fractions', async () => {
    const { clock, client } = setup(1_000.25);
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
    clock.t += 4_000.5;
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 6_000 });
    clock.t += 5_999.25;
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 1 });
    clock.t += 0.25;
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
  });

  it('is the whole window while the claim is in flight, however long it takes', async () => {
    const clock = { t: 0 };
    let answer: (response: Response) => void = () => undefined;
    let sent = 0;
    const fetch = () => {
      sent += 1;
      return new Promise<Response>((resolve) => (answer = resolve));
    };
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, now: () => clock.t, fetch });
    const first = client.claim('Ann');
    await new Promise((resolve) => setImmediate(resolve));
    clock.t += 60_000;
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', source: 'local', retryAfterMs: 10_000 });
    answer(Response.json(v4('NO_ITEMS')));
    expect((await first).code).toBe('NO_ITEMS');
    // Timed from the answer: the clock did not move since, so the window is whole.
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 10_000 });
    expect(sent).toBe(1);
  });
});

describe('a clock set back', () => {
  it('never makes a player wait more than one window, and the window then ends one window later', async () => {
    const { clock, client, sent } = setup(100_000);
    await client.claim('Ann');
    clock.t -= 50_000;
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 10_000 });
    clock.t += 9_999;
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 1 });
    clock.t += 1;
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
    expect(sent()).toBe(2);
  });
});

describe('many players', () => {
  it('past 1,024 players in one window (where expired windows are swept), each is still refused until their own window ends', async () => {
    const { clock, client, sent } = setup();
    const players = Array.from({ length: 1_030 }, (_, i) => `P${i}`);
    for (const player of players) await client.claim(player);
    clock.t += 5_000;
    for (const player of players.slice(0, 50)) expect(await client.claim(player)).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 5_000 });
    clock.t += 5_000;
    for (const player of players.slice(0, 50)) expect((await client.claim(player)).code).toBe('NO_ITEMS');
    expect(sent()).toBe(1_080);
  });

  it('past 1,024 slots given back (a refused key), the next claims are sent as usual', async () => {
    const clock = { t: 1_000 };
    let sent = 0;
    const fetch = async () => {
      sent += 1;
      return sent <= 1_030 ? new Response('Unauthorized', { status: 401 }) : Response.json(v4('NO_ITEMS'));
    };
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, now: () => clock.t, fetch });
    for (let i = 0; i < 1_030; i += 1) await client.claim(`P${i}`).catch(() => undefined);
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
    expect((await client.claim('P0')).code).toBe('NO_ITEMS');
    expect(sent).toBe(1_032);
  });
});

