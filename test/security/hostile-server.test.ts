/**
 * A hostile server on 127.0.0.1 (a proxy, a misconfigured CDN, an attacker on the path)
 * answering what it likes: decompression bombs and huge bodies must stop at the size
 * bound with memory bounded, deep or odd JSON must end in a typed error or a value, and no
 * form of the key may reach any text the SDK produces.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import { createBrotliCompress, createGzip, constants as zlib } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClaimOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  ResponseTooLargeError,
  StorefrontClient,
  encodeApiKey,
  isStorefrontError,
  type StorefrontClientOptions,
  type StorefrontEvent,
} from '../../src/index.js';

const KEY = 'tg_live_4f9c2a7b1e8d3c6a5f0e9d8c';
const BASE64 = encodeApiKey(KEY);
/** Every form of the key a careless page or library might print. */
const KEY_FORMS = [KEY, BASE64, BASE64.replace(/=+$/, ''), BASE64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'), encodeURIComponent(KEY), encodeURIComponent(BASE64)];
const MiB = 1024 * 1024;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server whose every answer is `handler`'s; counts the requests it got. */
async function hostile(handler: Handler): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

/** `total` bytes of `byte`, produced as they are read (never held whole). */
function endless(total: number, byte = 0x20): Readable {
  const chunk = Buffer.alloc(MiB, byte);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

/** An answer of `total` bytes once decoded, compressed on the fly: a few kB on the wire per MB. */
const bomb =
  (encoding: 'gzip' | 'br', total: number): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
    const compress = encoding === 'gzip' ? createGzip({ level: 1 }) : createBrotliCompress({ params: { [zlib.BROTLI_PARAM_QUALITY]: 1 } });
    const source = endless(total);
    source.pipe(compress).pipe(res);
    res.on('close', () => source.destroy());
  };

const sdk = (url: string, options: Partial<StorefrontClientOptions> = {}) =>
  new StorefrontClient({ apiKey: KEY, baseUrl: url, catalogCacheTtlMs: 0, rateLimit: false, ...options });

/** How a call ended, what it cost in memory and time. */
async function measured(call: () => Promise<unknown>): Promise<{ error: unknown; rssGrowthMB: number; ms: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  return { error, rssGrowthMB: (peak - before) / MiB, ms: performance.now() - started };
}

/** Every way a user or a logger turns an error (or an event) into text. */
function renderings(value: unknown): string[] {
  const out = [String(value), JSON.stringify(value) ?? '', inspect(value, { depth: 10, showHidden: true })];
  for (let e: unknown = value, depth = 0; e instanceof Error && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    out.push(e.message, e.stack ?? '', String((e as { bodyExcerpt?: unknown }).bodyExcerpt ?? ''));
  }
  return out;
}

/** No form of the key, whole or a piece of 12 characters or more (what a cut-then-redact would leave). */
function expectNoKey(value: unknown): void {
  for (const text of renderings(value)) {
    for (const form of KEY_FORMS) {
      for (let i = 0; i + 12 <= form.length; i++) expect(text).not.toContain(form.slice(i, i + 12));
    }
  }
}

describe('size bombs and huge bodies stop at maxResponseBytes (16 MiB by default)', () => {
  it.each(['gzip', 'br'] as const)('a %s body inflating to 1 GB: ResponseTooLargeError, one attempt, memory bounded', async (encoding) => {
    const server = await hostile(bomb(encoding, 1024 * MiB));
    const { error, rssGrowthMB, ms } = await measured(() => sdk(server.url).getCatalog());
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', limitBytes: 16 * MiB, operation: 'getCatalog' });
    expect(server.requests()).toBe(1); // never retried
    expect(rssGrowthMB).toBeLessThan(100);
    expect(ms).toBeLessThan(10_000); // was ~30 s: three attempts at inflating 1 GB
  });

  it('a 600 MB plain body, sent chunked: stopped at the bound, not ERR_STRING_TOO_LONG', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const source = endless(600 * MiB);
      source.pipe(res);
      res.on('close', () => source.destroy());
    });
    const { error, rssGrowthMB } = await measured(() => sdk(server.url).getCatalog());
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(rssGrowthMB).toBeLessThan(100);
  });

  it('a declared Content-Length over the bound is refused before the body is read', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * MiB) });
      res.write('{"message":"'); // the rest never comes: the client must not wait for it
    });
    const { error, ms } = await measured(() => sdk(server.url, { timeoutMs: 60_000 }).getCatalog());
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect(ms).toBeLessThan(5_000);
  });

  it('a claim answer over the bound leaves the outcome unknown (the claim was sent)', async () => {
    const server = await hostile(bomb('gzip', 64 * MiB));
    const { error } = await measured(() => sdk(server.url).claim('Player123'));
    expect(error).toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(error).toMatchObject({ reason: 'invalid-response', playerName: 'Player123' });
    expect((error as Error).message).toMatch(/larger than 16777216 bytes/);
  });

  it('maxResponseBytes moves the bound both ways', async () => {
    const body = JSON.stringify({ message: 'SUCCESS', products: [], pad: 'x'.repeat(200_000) });
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await expect(sdk(server.url, { maxResponseBytes: 100_000 }).getCatalog()).rejects.toBeInstanceOf(ResponseTooLargeError);
    await expect(sdk(server.url, { maxResponseBytes: 1_000_000 }).getCatalog()).resolves.toMatchObject({ message: 'SUCCESS' });
    expect(() => sdk(server.url, { maxResponseBytes: 10 })).toThrow(/options.maxResponseBytes: must be an integer from 1,024 to 268,435,456/);
  });

  it("caps the service's texts for players (a 1 MB message) to a chat line", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ERROR', code: 'NO_ITEMS', message: 'No items. '.repeat(100_000) }));
    });
    const result = await sdk(server.url).claim('Player123');
    expect(result.code).toBe('NO_ITEMS');
    expect(result.message).toHaveLength(256);
    expect(result.message.endsWith('…')).toBe(true);
  });
});

describe('deep and odd JSON ends in a value or a StorefrontError, never a plain RangeError', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const answers: Array<[string, string]> = [
    ['a catalog with a 100,000-deep extra field', `{"message":"SUCCESS","products":[{"id":1,"productId":"1","name":"x","price":1,"extra":${deep(100_000)}}]}`],
    ['a claim with a 100,000-deep extra field', `{"status":"SUCCESS","code":"SUCCESS","message":"ok","data":{"claims":[{"player_name":"P","product_id":1,"product_name":"x","product_price":1,"quantity_to_grant":1,"quantity_purchased":1,"extra":${deep(100_000)}}]}}`],
    ['a 100,000-deep body', deep(100_000)],
    ['a body of 100,000 nested objects', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`],
  ];
  const calls: Array<[string, (c: StorefrontClient) => Promise<unknown>]> = [
    ['getCatalog', (c) => c.getCatalog()],
    ['claim', (c) => c.claim('Player123')],
    ['claimLegacy', (c) => c.claimLegacy('Player123')],
    ['checkout', (c) => c.checkout({ username: 'Player123', items: [{ id: 1, quantity: 1 }] })],
    ['claimVoteReward', (c) => c.claimVoteReward({ player: 'Player123', reward: '1', amount: 1 })],
  ];
  it.each(answers)('%s', async (_name, body) => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    for (const [name, call] of calls) {
      const outcome = await call(sdk(server.url, { retry: 0 })).then(
        () => 'resolved',
        (error: unknown) => (isStorefrontError(error) ? 'StorefrontError' : `plain ${String((error as Error)?.name)}`),
      );
      expect(['resolved', 'StorefrontError'], name).toContain(outcome);
    }
  });
});

describe('no form of the key in any text the SDK produces', () => {
  it('the key passed instead of the options object', () => {
    let error: unknown;
    try {
      new StorefrontClient(KEY as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toBe(`StorefrontClient: invalid options: must be an object, got a string of ${KEY.length} characters`);
    expectNoKey(error);
  });

  it.each<[string, Partial<StorefrontClientOptions>]>([
    ['timeoutMs', { timeoutMs: KEY as never }],
    ['baseUrl', { baseUrl: KEY }],
    ['retry', { retry: KEY as never }],
    ['rateLimit', { rateLimit: KEY as never }],
    ['now', { now: KEY as never }],
    ['userAgent', { userAgent: `${KEY}\n` }],
    ['a baseUrl with credentials that does not parse', { baseUrl: `https://bot:${KEY}@[shop` }],
  ])('the key put into %s', (_name, options) => {
    let error: unknown;
    try {
      new StorefrontClient({ apiKey: 'another-key', ...options });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expectNoKey(error);
  });

  it('an error page that echoes the key in every form, across the excerpt cut', async () => {
    // The raw key straddles the 200-character cut of the excerpt: cutting before redacting leaks its head.
    const page = `${'x'.repeat(190)}${KEY} ${KEY_FORMS.join(' ')} <html>${KEY_FORMS.join('<br>')}</html>`;
    const server = await hostile((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(page);
    });
    const events: StorefrontEvent[] = [];
    for (const call of [(c: StorefrontClient) => c.getCatalog(), (c: StorefrontClient) => c.claim('Player123')]) {
      const error = await call(sdk(server.url, { retry: 1, onEvent: (e) => events.push(e) })).catch((e: unknown) => e);
      expect(isStorefrontError(error)).toBe(true);
      expect((error as { bodyExcerpt: string }).bodyExcerpt).toMatch(/^x{190}<redacted>/);
      expectNoKey(error);
    }
    expectNoKey(events);
  });

  it('a custom fetch whose error text quotes the request headers', async () => {
    const events: StorefrontEvent[] = [];
    const leaky: typeof globalThis.fetch = async (_input, init) => {
      const headers = init?.headers as Record<string, string>;
      const quoted = `${headers['authorization'] ?? ''}${headers['x-api-key'] ?? ''} ${JSON.stringify(headers)}`;
      throw new TypeError(`fetch failed: ${quoted}`, { cause: new Error(`request with ${quoted}`) });
    };
    const client = new StorefrontClient({ apiKey: KEY, baseUrl: 'http://127.0.0.1:9', fetch: leaky, retry: 1, rateLimit: false, onEvent: (e) => events.push(e) });
    const errors: unknown[] = [];
    for (const call of [() => client.getCatalog(), () => client.claimLegacy('Player123'), () => client.claim('Player123')]) {
      const error = await call().catch((e: unknown) => e);
      expect(isStorefrontError(error)).toBe(true);
      expectNoKey(error);
      errors.push(error);
    }
    // The read's failure is a NetworkError quoting the (redacted) reason; the claims' are outcomes unknown.
    const network = errors.filter((e): e is NetworkError => e instanceof NetworkError);
    expect(network.length).toBeGreaterThan(0);
    for (const error of network) expect(error.reason).toContain('<redacted>');
    expectNoKey(events);
  });
});

describe('inputs the service would refuse never go out', () => {
  it.each<[string, string]>([
    ['a control character', 'Player\u0007'],
    ['a newline', 'Player\n123'],
    ['U+202E (right-to-left override)', 'Player\u202e321'],
    ['U+2066 (an isolate)', '\u2066Player'],
    ['65 characters', 'a'.repeat(65)],
    ['1 MB', 'a'.repeat(MiB)],
  ])('a player name with %s', async (_name, player) => {
    const server = await hostile((_req, res) => res.end('{}'));
    const client = sdk(server.url);
    const calls = [
      () => client.claim(player),
      () => client.previewClaim(player),
      () => client.claimLegacy(player),
      () => client.claimStoreTransactions(player),
      () => client.checkout({ username: player, items: [{ id: 1, quantity: 1 }] }),
      () => client.claimVoteReward({ player, reward: '1', amount: 1 }),
      () => client.deliver(player, () => {}),
    ];
    for (const call of calls) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message.length).toBeLessThan(200);
    }
    expect(server.requests()).toBe(0);
  });

  it('accepts what the service accepts: 64 characters, spaces, underscores, a 17-digit Steam id, non-Latin letters', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ERROR","code":"NO_ITEMS","message":"none"}');
    });
    for (const player of ['a'.repeat(64), 'Player 123', 'the_player', '76561198000000000', 'Игрок']) {
      expect((await sdk(server.url).claim(player)).code).toBe('NO_ITEMS');
    }
  });

  it('a 1 MB apiKey is refused, described by its length', () => {
    expect(() => new StorefrontClient({ apiKey: 'k'.repeat(MiB) })).toThrow(`StorefrontClient: invalid options.apiKey: must be at most 512 characters, got a string of ${MiB} characters`);
  });
});
