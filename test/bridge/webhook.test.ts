/**
 * The webhook sink and the bridge's log, against real loopback servers: what the game
 * receives (the token, the item), what counts as given (a 2xx only: never a redirect, a
 * 500, a timeout or a refused connection), and log lines with no secret in any form.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeliveredItem, GivenVoteReward } from 'teamgames-sdk';
import { createLogger, secretRedactor, type BridgeLogger } from '../../src/bridge/log.js';
import { WEBHOOK_BODY_LIMIT, createWebhookSink } from '../../src/bridge/webhook/sink.js';
import { answerJson, hang, useLoopbackServers, type Behaviour } from '../support/http-server.js';
import { recordingLog } from '../support/rcon-sink.js';

const TOKEN = 'webhook-token-0123456789abcdef0123456789';
const silent: BridgeLogger = { debug() {}, info() {}, warn() {}, error() {}, flush() {} };
const ITEM: DeliveredItem = {
  deliveryId: 'invoice:INV-1',
  player_name: 'Steve',
  product_id: 12,
  product_id_string: '12',
  product_name: 'Diamonds',
  product_price: 4,
  quantity_to_grant: 64,
  quantity_purchased: 1,
  product_amount: 64,
  amount_purchased: 1,
};
const REWARD: GivenVoteReward = { playerName: 'Steve', deliveryId: 'vote:abc:0', reward_id: 1, reward_name: 'Emerald', give_amount: 2, vote_points: 3, votes_month: 4, total_points: '10' };

describe('the webhook sink', () => {
  const servers = useLoopbackServers();

  it('POSTs the item with the bearer token; a 2xx is given, a debug line says so', async () => {
    const game = await servers.start(answerJson({ ok: true }));
    const log = recordingLog();
    const sink = createWebhookSink({ url: `${game.url}/teamgames`, timeoutMs: 2_000 }, { token: TOKEN, log });
    await sink.give(ITEM);
    await sink.giveVoteReward(REWARD);
    expect(game.requests.map((r) => [r.method, r.path, r.headers.authorization, r.headers['content-type'], r.headers['user-agent']])).toEqual([
      ['POST', '/teamgames', `Bearer ${TOKEN}`, 'application/json', 'teamgames-bridge'],
      ['POST', '/teamgames', `Bearer ${TOKEN}`, 'application/json', 'teamgames-bridge'],
    ]);
    expect(log.lines).toEqual([
      { level: 'debug', message: 'given through the webhook', fields: { kind: 'purchase', deliveryId: 'invoice:INV-1', player: 'Steve', status: 200 } },
      { level: 'debug', message: 'given through the webhook', fields: { kind: 'vote', deliveryId: 'vote:abc:0', player: 'Steve', status: 200 } },
    ]);
    expect(JSON.parse(game.requests[0]!.body)).toEqual({ kind: 'purchase', deliveryId: 'invoice:INV-1', player: 'Steve', productId: '12', productName: 'Diamonds', quantity: 64, item: ITEM });
    expect(JSON.parse(game.requests[1]!.body)).toEqual({ kind: 'vote', deliveryId: 'vote:abc:0', player: 'Steve', rewardId: '1', rewardName: 'Emerald', amount: 2, reward: REWARD });
  });

  it('a 500, a redirect (never followed: it could carry the token elsewhere), a timeout, a refused connection: not given, a short error', async () => {
    const fail = await servers.start(answerJson({ error: 'down' }, 500));
    await expect(createWebhookSink({ url: fail.url, timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM)).rejects.toThrow(/^the game's webhook answered HTTP 500$/);

    const elsewhere = await servers.start(answerJson({ ok: true }));
    const redirect: Behaviour = (_, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/steal` });
      res.end();
    };
    const moved = await servers.start(redirect);
    await expect(createWebhookSink({ url: moved.url, timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM)).rejects.toThrow(/HTTP 307 \(redirects are not followed\)/);
    expect(elsewhere.requests).toHaveLength(0);

    const slow = await servers.start(hang);
    await expect(createWebhookSink({ url: slow.url, timeoutMs: 100 }, { token: TOKEN, log: silent }).give(ITEM)).rejects.toThrow("the game's webhook did not answer within 100 ms");

    const refused = createWebhookSink({ url: `${await servers.closedPort()}/x`, timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM);
    await expect(refused).rejects.toThrow(/^the game's webhook could not be reached \(ECONNREFUSED\)$/);
    // The loop keeps it as the item's last error, shown by name to staff.
    await expect(refused).rejects.toMatchObject({ name: 'WebhookError' });
  });

  it.each([
    [300, "the game's webhook answered HTTP 300 (redirects are not followed)"],
    [399, "the game's webhook answered HTTP 399 (redirects are not followed)"],
    [400, "the game's webhook answered HTTP 400"],
    [200, undefined],
    [299, undefined],
  ])('HTTP %i: given only from 200 to 299, a 3xx said to be a redirect', async (status, error) => {
    const game = await servers.start((_, res) => res.writeHead(status).end());
    const give = createWebhookSink({ url: game.url, timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM);
    if (error === undefined) await expect(give).resolves.toBeUndefined();
    else await expect(give).rejects.toThrow(new RegExp(`^${error.replace(/[()]/g, '\\$&')}$`));
  });

  it("a fetch that follows the standard (an opaque redirect, status 0) or fails without a code: not given, said so", async () => {
    const opaque = { status: 0, type: 'opaqueredirect', arrayBuffer: async () => new ArrayBuffer(0) } as unknown as Response;
    const redirecting = createWebhookSink({ url: 'http://127.0.0.1:9/x', timeoutMs: 2_000 }, { token: TOKEN, log: silent, fetch: async () => opaque });
    await expect(redirecting.give(ITEM)).rejects.toThrow(/^the game's webhook answered HTTP redirect \(a redirect, not followed\)$/);
    const failing = createWebhookSink({ url: 'http://127.0.0.1:9/x', timeoutMs: 2_000 }, { token: TOKEN, log: silent, fetch: () => Promise.reject(new TypeError('fetch failed')) });
    await expect(failing.give(ITEM)).rejects.toThrow(/^the game's webhook could not be reached \(network error\)$/);
  });

  it('after close(), nothing is sent: a give is refused at once; the line says where, never the query', async () => {
    const game = await servers.start(answerJson({ ok: true }));
    const log = recordingLog();
    const sink = createWebhookSink({ url: `${game.url}/teamgames?secret=SECRET`, timeoutMs: 2_000 }, { token: TOKEN, log });
    await sink.close();
    await expect(sink.give(ITEM)).rejects.toThrow(/^the game's webhook could not be reached \(the bridge is stopping\)$/);
    await expect(sink.giveVoteReward(REWARD)).rejects.toThrow('the bridge is stopping');
    expect(game.requests).toHaveLength(0);
    expect(log.lines).toEqual([{ level: 'debug', message: 'webhook sink closed', fields: { url: `${game.url}/teamgames` } }]);
  });

  describe('nothing is left behind per item', () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    afterEach(() => void warnings.splice(0));

    it("given or refused, each item takes its listener off the sink; the game's answer is read away, so connections are reused", async () => {
      const sockets = new Set<unknown>();
      let status = 200;
      // An answer larger than the socket's buffers: left unread, it would hold its connection.
      const answer = Buffer.alloc(1_000_000, 'x');
      const game = await servers.start((_, res, req) => {
        sockets.add(req.socket);
        res.writeHead(status, { 'content-type': 'text/plain' }).end(answer);
      });
      const sink = createWebhookSink({ url: game.url, timeoutMs: 2_000 }, { token: TOKEN, log: silent });
      // More than the 10 listeners after which Node warns of a leak on the sink's signal.
      for (let i = 0; i < 12; i++) await sink.give({ ...ITEM, deliveryId: `invoice:${i}` });
      status = 500;
      for (let i = 0; i < 12; i++) await expect(sink.give(ITEM)).rejects.toThrow('HTTP 500');
      const refused = createWebhookSink({ url: `${await servers.closedPort()}/x`, timeoutMs: 2_000 }, { token: TOKEN, log: silent });
      for (let i = 0; i < 12; i++) await expect(refused.give(ITEM)).rejects.toThrow('ECONNREFUSED');
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      expect(game.requests).toHaveLength(24);
      // undici opens a second connection for the second request, then reuses both.
      expect(sockets.size).toBeLessThanOrEqual(2);
      process.off('warning', onWarning);
    });
  });

  it('a 2xx with a huge body: given, and the body is not read whole (at most WEBHOOK_BODY_LIMIT, then the connection is closed)', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    let closed!: () => void;
    const gone = new Promise<void>((resolve) => (closed = resolve));
    const game = await servers.start((_, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      res.on('close', closed);
      const more = (): void => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await createWebhookSink({ url: game.url, timeoutMs: 10_000 }, { token: TOKEN, log: silent }).give(ITEM);
    await gone;
    // What the sockets' buffers took besides the limit: far from the whole body.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    // The module loaded afresh (its constant is computed while the test runs).
    vi.resetModules();
    expect((await import('../../src/bridge/webhook/sink.js')).WEBHOOK_BODY_LIMIT).toBe(1024 * 1024);
  });

  it('a body of exactly WEBHOOK_BODY_LIMIT bytes is read to its end: its connection is reused', async () => {
    const sockets = new Set<unknown>();
    const answer = Buffer.alloc(WEBHOOK_BODY_LIMIT, 'x');
    const game = await servers.start((_, res, req) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(answer.length) }).end(answer);
    });
    const sink = createWebhookSink({ url: game.url, timeoutMs: 5_000 }, { token: TOKEN, log: silent });
    for (let i = 0; i < 6; i++) await sink.give({ ...ITEM, deliveryId: `invoice:${i}` });
    expect(game.requests).toHaveLength(6);
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it('close() aborts a give in flight', async () => {
    const slow = await servers.start(hang);
    const sink = createWebhookSink({ url: slow.url, timeoutMs: 60_000 }, { token: TOKEN, log: silent });
    const give = sink.give(ITEM);
    await expect.poll(() => slow.requests).toHaveLength(1);
    await sink.close();
    await expect(give).rejects.toThrow('the bridge is stopping');
  });
});

describe('the log', () => {
  it('no line holds the key, the token, the database URL or its password, in any form', () => {
    const secrets = { apiKey: 'live-key-SECRET', token: TOKEN, databaseUrl: 'postgres://game:pa%24%24-SECRET@db:5432/store', rconPassword: 'rcon-SECRET-pw' };
    let out = '';
    const destination = new Writable({
      write(chunk: Buffer, _, done) {
        out += chunk.toString('utf8');
        done();
      },
    });
    const log = createLogger('debug', secretRedactor(secrets), destination as never);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    log.info(`key ${secrets.apiKey} ${b64(secrets.apiKey)} token ${TOKEN} ${b64(TOKEN)}`, {
      url: secrets.databaseUrl,
      password: 'pa$$-SECRET',
      nested: { error: new Error(`connect postgres://game:pa%24%24-SECRET@db failed; rcon rcon-SECRET-pw`), headers: { authorization: `Bearer ${TOKEN}` } },
      [`key ${secrets.apiKey}`]: 1,
    });
    log.flush();
    expect(out).not.toMatch(/SECRET/);
    expect(out).not.toContain(b64(TOKEN));
    const line = JSON.parse(out.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', name: 'teamgames-bridge', msg: expect.stringContaining('<redacted>') });
    expect((line.nested as { error: unknown }).error).toMatchObject({ name: 'Error', message: expect.stringContaining('<redacted>') });
  });
});
