// Hostile inputs against the mock sandbox: oversized bodies, slow clients, and a flood of
// distinct player names. Loopback only; time moves on the mock's clock, never by sleeping.
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClock } from '../../src/mock/service/clock.js';
import { createMockService, parseMockSeed, type MockSeed, type MockServerHandle } from '../../src/mock/index.js';
import {
  createMockHttpServer,
  DEFAULT_MAX_BODY_BYTES,
  MOCK_SERVER_TIMEOUTS,
} from '../../src/mock/adapters/server.js';
import { rateWindowsHeld, snapshot } from '../../src/mock/operations/admin.js';
import * as claims from '../../src/mock/operations/claims.js';
import { CLAIM_WINDOW_MS } from '../../src/mock/service/rules.js';
import { createState, resetState } from '../../src/mock/service/state.js';
import type { WireRequest } from '../../src/mock/service/wire.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const KEY = 'limits-key';
const OTHER_KEY = 'limits-key-2';
const b64 = (key: string) => Buffer.from(key, 'utf8').toString('base64');
const CLAIM_PATH = '/api/v4/store/transaction/update';

const seed: MockSeed = {
  servers: [
    { apiKey: KEY, products: [{ id: 1, productId: 'whip', name: 'Whip', price: 1 }] },
    { apiKey: OTHER_KEY, products: [] },
  ],
};

// ------------------------------------------------------------------ raw HTTP over a socket

interface RawExchange {
  /** Everything the server sent, as text. */
  response: string;
  /** Body bytes the client had handed to the socket when the server's answer began. */
  sentBeforeAnswer: number;
  /** Body bytes handed to the socket in all (writes stop once the socket fails). */
  sentInAll: number;
}

/**
 * Sends `head` then body chunks of `chunk` bytes, up to `total`, one after another as the
 * socket drains, and stops at the first byte of the answer, an error, or `total`.
 * Resolves when the server has closed the connection.
 */
function rawUpload(url: string, head: string, chunk: Buffer | ((index: number) => Buffer), total: number): Promise<RawExchange> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    let response = '';
    let sent = 0;
    let sentBeforeAnswer: number | undefined;
    let index = 0;
    const pump = () => {
      while (sentBeforeAnswer === undefined && !socket.destroyed && sent < total) {
        const piece = typeof chunk === 'function' ? chunk(index++) : chunk;
        sent += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
    socket.on('data', (data: Buffer) => {
      sentBeforeAnswer ??= sent;
      response += data.toString('latin1');
    });
    // The server closes the connection after a 413; a reset of our unread upload is expected.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (response === '') {
        reject(new Error(`the server closed the connection without answering (sent ${sent} bytes)`));
        return;
      }
      resolve({ response, sentBeforeAnswer: sentBeforeAnswer ?? sent, sentInAll: sent });
    });
  });
}

function parseRaw(text: string): { status: number; headers: string; body: string } {
  const split = text.indexOf('\r\n\r\n');
  const headers = text.slice(0, split);
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers: headers.toLowerCase(), body: text.slice(split + 4) };
}

const claimHead = (url: string, lengthHeader: string) =>
  `POST ${CLAIM_PATH} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nAuthorization: ${b64(KEY)}\r\n` +
  `Content-Type: application/json\r\n${lengthHeader}\r\n\r\n`;

/** How many bytes the server read from each connection, taken when it closes. */
function countBytesRead(server: ReturnType<typeof createMockHttpServer>): number[] {
  const read: number[] = [];
  server.on('connection', (socket: Socket) => socket.on('close', () => read.push(socket.bytesRead)));
  return read;
}

async function start(server: ReturnType<typeof createMockHttpServer>): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const claimOk = async (url: string, playerName: string) => {
  const res = await fetch(url + CLAIM_PATH, {
    method: 'POST',
    headers: { authorization: b64(KEY), 'content-type': 'application/json' },
    body: JSON.stringify({ playerName }),
  });
  return { status: res.status, body: (await res.json()) as { code: string } };
};

describe('the HTTP mock refuses oversized bodies with 413', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('refuses a Content-Length above 1 MiB before reading any of the body, then serves the next connection', async () => {
    const mock = createMockService({ seed, now: T0 });
    const server = createMockHttpServer((request) => mock.fetch(request));
    const read = countBytesRead(server);
    const handle = await start(server);
    open.push(handle);

    // 1.5 GB announced, nothing sent: the answer cannot depend on reading the body.
    const head = claimHead(handle.url, 'Content-Length: 1500000000');
    const exchange = await rawUpload(handle.url, head, Buffer.alloc(0), 0);
    const answer = parseRaw(exchange.response);
    expect(answer.status).toBe(413);
    expect(answer.headers).toContain('connection: close');
    expect(JSON.parse(answer.body)).toEqual({ error: 'Payload Too Large', limitBytes: DEFAULT_MAX_BODY_BYTES });
    await vi.waitFor(() => expect(read).toEqual([Buffer.byteLength(head)]));

    // The same through fetch with a real 2 MiB body: the client gets the 413, not a reset.
    const big = await fetch(handle.url + CLAIM_PATH, {
      method: 'POST',
      headers: { authorization: b64(KEY), 'content-type': 'application/json' },
      body: Buffer.alloc(2 * DEFAULT_MAX_BODY_BYTES, 0x20),
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: 'Payload Too Large', limitBytes: DEFAULT_MAX_BODY_BYTES });

    // Nothing changed, and normal requests still work: a body of exactly the limit is read.
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
    const body = JSON.stringify({ playerName: 'Player1' });
    const exact = await fetch(handle.url + CLAIM_PATH, {
      method: 'POST',
      headers: { authorization: b64(KEY), 'content-type': 'application/json' },
      body: body + ' '.repeat(DEFAULT_MAX_BODY_BYTES - body.length),
    });
    expect(exact.status).toBe(200);
    expect(((await exact.json()) as { code: string }).code).toBe('SUCCESS');
    expect(mock.state().servers[0]?.lastAcceptedClaims).toEqual([{ playerName: 'Player1', at: new Date(T0).toISOString() }]);
  });

  it('refuses a chunked body as soon as it grows past the limit and stops reading it', async () => {
    const mock = createMockService({ seed, now: T0 });
    const limit = 64 * 1024;
    const server = createMockHttpServer((request) => mock.fetch(request), { maxBodyBytes: limit });
    const read = countBytesRead(server);
    const handle = await start(server);
    open.push(handle);

    // A chunked upload of up to 256 MiB in 16 KiB chunks (a valid JSON prefix, then spaces).
    const piece = 16 * 1024;
    const frame = (data: Buffer) => Buffer.concat([Buffer.from(`${piece.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const prefix = '{"playerName":"Player1"';
    const first = frame(Buffer.from(prefix.padEnd(piece, ' ')));
    const filler = frame(Buffer.alloc(piece, 0x20));
    const total = 256 * 1024 * 1024;
    const exchange = await rawUpload(
      handle.url,
      claimHead(handle.url, 'Transfer-Encoding: chunked'),
      (index) => (index === 0 ? first : filler),
      total,
    );

    const answer = parseRaw(exchange.response);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Payload Too Large', limitBytes: limit });
    // The server read the limit and at most a few socket reads more (Node reads up to
    // 64 KiB at a time), then closed: the client could not push the rest of its upload.
    await vi.waitFor(() => expect(read).toHaveLength(1));
    expect(read[0]).toBeGreaterThan(limit);
    expect(read[0]).toBeLessThan(limit + 8 * 64 * 1024);
    expect(exchange.sentInAll).toBeLessThan(total / 4);
    // The refused claim opened no rate window: the next claim is accepted.
    expect(mock.state().servers[0]?.lastAcceptedClaims).toEqual([]);
    expect((await claimOk(handle.url, 'Player1')).body.code).toBe('NO_ITEMS');
  });

  it('answers 413 without 100 Continue to an Expect: 100-continue upload that is too large', async () => {
    const mock = createMockService({ seed, now: T0 });
    const server = createMockHttpServer((request) => mock.fetch(request), { maxBodyBytes: 1024 });
    const handle = await start(server);
    open.push(handle);
    const head = claimHead(handle.url, 'Content-Length: 4096\r\nExpect: 100-continue');
    const answer = parseRaw((await rawUpload(handle.url, head, Buffer.alloc(0), 0)).response);
    expect(answer.status).toBe(413);
    expect(answer.headers).not.toContain('100 continue');

    // Within the limit, the client gets 100 Continue and then the answer.
    const small = JSON.stringify({ playerName: 'Player1' });
    const ok = await rawUpload(
      handle.url,
      claimHead(handle.url, `Content-Length: ${small.length}\r\nExpect: 100-continue\r\nConnection: close`),
      Buffer.from(small),
      small.length,
    );
    expect(ok.response).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(ok.response).toContain('"code":"NO_ITEMS"');
  });

  it('mock.listen() applies the limit too, and refuses a limit that is not a positive integer', async () => {
    const mock = createMockService({ seed, now: T0 });
    const handle: MockServerHandle = await mock.listen({ port: 0, maxBodyBytes: 100 });
    open.push(handle);
    const res = await fetch(handle.url + CLAIM_PATH, {
      method: 'POST',
      headers: { authorization: b64(KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ playerName: 'x'.repeat(200) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Payload Too Large', limitBytes: 100 });
    expect((await claimOk(handle.url, 'Player1')).status).toBe(200);

    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(mock.listen({ port: 0, maxBodyBytes: bad })).rejects.toThrow(RangeError);
    }
  });
});

describe('the HTTP mock bounds slow clients with server timeouts', () => {
  it('sets header, request, keep-alive and idle-socket timeouts', () => {
    const server = createMockHttpServer(async () => undefined);
    expect(server.headersTimeout).toBe(MOCK_SERVER_TIMEOUTS.headersTimeout);
    expect(server.requestTimeout).toBe(MOCK_SERVER_TIMEOUTS.requestTimeout);
    expect(server.keepAliveTimeout).toBe(MOCK_SERVER_TIMEOUTS.keepAliveTimeout);
    expect(server.timeout).toBe(MOCK_SERVER_TIMEOUTS.socketIdleTimeout);
    // Sane values: finite, headers first, and the idle timeout above the longest delay fault (10 min).
    expect(MOCK_SERVER_TIMEOUTS.headersTimeout).toBeLessThanOrEqual(MOCK_SERVER_TIMEOUTS.requestTimeout);
    expect(MOCK_SERVER_TIMEOUTS.requestTimeout).toBeLessThanOrEqual(60_000);
    expect(MOCK_SERVER_TIMEOUTS.keepAliveTimeout).toBeGreaterThan(0);
    expect(MOCK_SERVER_TIMEOUTS.socketIdleTimeout).toBeGreaterThan(600_000);
    // Node checks the header and request timeouts this often (its default, 30 s, would let
    // a slow client keep a socket up to 40 s past a 10 s header timeout).
    expect(MOCK_SERVER_TIMEOUTS.connectionsCheckingInterval).toBeLessThanOrEqual(1_000);
  });
});

// ------------------------------------------------------------------ rate windows

/** The mock's state and operations on their own: the cheapest path to 100,000 claims (no msw, no Request objects). */
function bareStore(start = T0) {
  const clock = createClock(start);
  const state = createState(parseMockSeed(seed), clock);
  const store = {
    rateWindowsHeld: (key: string) => rateWindowsHeld(state, key),
    state: () => snapshot(state),
    reset: () => resetState(state),
  };
  const header = (value: string) => (name: string) => (name.toLowerCase() === 'authorization' ? value : name.toLowerCase() === 'content-type' ? 'application/json' : null);
  const auth: Record<string, WireRequest['header']> = { [KEY]: header(b64(KEY)), [OTHER_KEY]: header(b64(OTHER_KEY)) };
  const claim = (playerName: string, key = KEY): string => {
    const request: WireRequest = { header: auth[key] ?? header(''), body: JSON.stringify({ playerName }), origin: 'http://mock' };
    return (claims.claim(state, request).body as { code: string }).code;
  };
  return { clock, store, claim };
}

describe('rate windows are forgotten once they can refuse nothing', () => {
  it('100,000 distinct players with the clock moving: the windows held stay bounded, state lists only open ones', () => {
    const { clock, store, claim } = bareStore();
    const players = 100_000;
    const perSecond = 1_000; // 100 s of mock time, 10,000 claims in any 10 s
    let most = 0;
    const codes = new Set<string>();
    for (let i = 0; i < players; i++) {
      if (i > 0 && i % (perSecond / 10) === 0) clock.advance(100);
      codes.add(claim(`Player ${i}`));
      most = Math.max(most, store.rateWindowsHeld(KEY));
    }
    expect([...codes]).toEqual(['NO_ITEMS']);
    // At most the claims of the last 10 s of mock time (+ the 100 ms step), never all 100,000.
    const bound = (CLAIM_WINDOW_MS / 1_000 + 1) * perSecond;
    expect(most).toBeLessThanOrEqual(bound);
    expect(store.rateWindowsHeld(KEY)).toBeLessThanOrEqual(bound);

    const open = store.state().servers[0]?.lastAcceptedClaims ?? [];
    expect(open.length).toBeLessThanOrEqual(bound);
    expect(open.every(({ at }) => clock.now() - Date.parse(at) < CLAIM_WINDOW_MS)).toBe(true);
    // The windows still open still refuse; the ones forgotten accept again.
    expect(claim(`Player ${players - 1}`)).toBe('RATE_LIMIT');
    expect(claim('Player 0')).toBe('NO_ITEMS');

    // Past the last window's end, state lists none, and the next claim forgets them all.
    clock.advance(CLAIM_WINDOW_MS);
    expect(store.state().servers[0]?.lastAcceptedClaims).toEqual([]);
    expect(claim('Someone new')).toBe('NO_ITEMS');
    expect(store.rateWindowsHeld(KEY)).toBe(1);
    // Each game server keeps its own windows.
    expect(store.rateWindowsHeld(OTHER_KEY)).toBe(0);
  });

  it('keeps the SPEC rule exact: refused at 9,999 ms, accepted at 10,000 ms, a refusal does not extend it', () => {
    const { clock, store, claim } = bareStore();
    expect(claim('Player1')).toBe('NO_ITEMS');
    clock.advance(9_999);
    expect(claim('Player1')).toBe('RATE_LIMIT');
    expect(store.rateWindowsHeld(KEY)).toBe(1);
    clock.advance(1);
    expect(store.state().servers[0]?.lastAcceptedClaims).toEqual([]);
    expect(claim('Player1')).toBe('NO_ITEMS');
    expect(store.state().servers[0]?.lastAcceptedClaims).toEqual([
      { playerName: 'Player1', at: new Date(T0 + 10_000).toISOString() },
    ]);
    expect(store.rateWindowsHeld(KEY)).toBe(1);
  });

  it('never forgets a window that can still refuse: the clock set back keeps it, and it does not hold back the others', () => {
    const { clock, store, claim } = bareStore();
    // A window opened one minute ahead, then the clock set back: it refuses until T0 + 70 s.
    clock.set(T0 + 60_000);
    expect(claim('Time traveller')).toBe('NO_ITEMS');
    clock.set(T0);
    expect(claim('Time traveller')).toBe('RATE_LIMIT');
    expect(store.state().servers[0]?.lastAcceptedClaims.map((w) => w.playerName)).toEqual(['Time traveller']);

    // 20,000 other players over the next 60 s: their windows come and go around it.
    let most = 0;
    const codes = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      if (i > 0 && i % 100 === 0) clock.advance(300);
      codes.add(claim(`Player ${i}`));
      most = Math.max(most, store.rateWindowsHeld(KEY));
    }
    expect([...codes]).toEqual(['NO_ITEMS']);
    expect(most).toBeLessThanOrEqual(1 + (Math.ceil(CLAIM_WINDOW_MS / 300) + 1) * 100);
    expect(clock.now()).toBe(T0 + 59_700);
    expect(claim('Time traveller')).toBe('RATE_LIMIT');
    clock.set(T0 + 69_999);
    expect(claim('Time traveller')).toBe('RATE_LIMIT');
    clock.set(T0 + 70_000);
    expect(claim('Time traveller')).toBe('NO_ITEMS');
  });

  it('a window restarted after its end is kept for its new 10 s, and reset() forgets them all', () => {
    const { clock, store, claim } = bareStore();
    expect(claim('Player1')).toBe('NO_ITEMS');
    clock.advance(15_000);
    expect(claim('Player1')).toBe('NO_ITEMS'); // restarts at T0 + 15 s
    clock.advance(9_000);
    expect(claim('Player2')).toBe('NO_ITEMS'); // sweeps at T0 + 24 s: the restarted window stays
    expect(claim('Player1')).toBe('RATE_LIMIT');
    expect(store.rateWindowsHeld(KEY)).toBe(2);
    store.reset();
    expect(store.rateWindowsHeld(KEY)).toBe(0);
    expect(store.state().servers[0]?.lastAcceptedClaims).toEqual([]);
  });

  it('holds fewer windows than players after 100,000 distinct players, 100 claims every 100 ms', () => {
    const { clock, store, claim } = bareStore();
    for (let i = 0; i < 100_000; i++) {
      if (i > 0 && i % 100 === 0) clock.advance(100);
      claim(`Player ${i}`);
    }
    expect(store.rateWindowsHeld(KEY)).toBeLessThan(100_000);
  });
});
