/**
 * The webhook sink and the bridge's log, against real loopback servers: what the game
 * receives (the token, the item), what counts as given (a 2xx only: never a redirect, a
 * 500, a timeout or a refused connection), and log lines with no secret in any form.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DeliveredItem, GivenVoteReward } from 'teamgames-sdk';
import { createLogger, secretRedactor, type BridgeLogger } from '../../src/bridge/log.js';
import { createWebhookSink } from '../../src/bridge/webhook.js';
import { answerJson, hang, useLoopbackServers, type Behaviour } from '../support/http-server.js';

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

  it('POSTs the item with the bearer token; a 2xx is given', async () => {
    const game = await servers.start(answerJson({ ok: true }));
    const sink = createWebhookSink({ url: `${game.url}/teamgames`, timeoutMs: 2_000 }, { token: TOKEN, log: silent });
    await sink.give(ITEM);
    await sink.giveVoteReward(REWARD);
    expect(game.requests.map((r) => [r.method, r.path, r.headers.authorization, r.headers['content-type']])).toEqual([
      ['POST', '/teamgames', `Bearer ${TOKEN}`, 'application/json'],
      ['POST', '/teamgames', `Bearer ${TOKEN}`, 'application/json'],
    ]);
    expect(JSON.parse(game.requests[0]!.body)).toEqual({ kind: 'purchase', deliveryId: 'invoice:INV-1', player: 'Steve', productId: '12', productName: 'Diamonds', quantity: 64, item: ITEM });
    expect(JSON.parse(game.requests[1]!.body)).toEqual({ kind: 'vote', deliveryId: 'vote:abc:0', player: 'Steve', rewardId: '1', rewardName: 'Emerald', amount: 2, reward: REWARD });
  });

  it('a 500, a redirect (never followed: it could carry the token elsewhere), a timeout, a refused connection: not given, a short error', async () => {
    const fail = await servers.start(answerJson({ error: 'down' }, 500));
    await expect(createWebhookSink({ url: fail.url, timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM)).rejects.toThrow("the game's webhook answered HTTP 500");

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

    await expect(createWebhookSink({ url: 'http://127.0.0.1:9/x', timeoutMs: 2_000 }, { token: TOKEN, log: silent }).give(ITEM)).rejects.toThrow(/^the game's webhook could not be reached \(/);
  });

  it('close() aborts a give in flight', async () => {
    const slow = await servers.start(hang);
    const sink = createWebhookSink({ url: slow.url, timeoutMs: 60_000 }, { token: TOKEN, log: silent });
    const give = sink.give(ITEM);
    await new Promise((ok) => setTimeout(ok, 50));
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
