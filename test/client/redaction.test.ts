/**
 * The key is a secret in every form (SPEC §4, STYLE §5): neither the raw key nor its
 * Base64 appears in any error, in the client's string forms, or in an emitted event,
 * even when the server echoes them back.
 */
import { HttpResponse } from 'msw';
import { inspect, format } from 'node:util';
import { describe, expect, it } from 'vitest';
import { StorefrontClient, isStorefrontError, type StorefrontClientOptions, type StorefrontEvent } from '../../src/index.js';
import { failureOf } from '../support/errors.js';
import { hang, resetConnection, useLoopbackServers } from '../support/http-server.js';
import { catalogBody, useMsw, v4, v4Claim } from '../support/msw.js';

const SECRET = 'SECRET-KEY-abc123';
const SECRET_BASE64 = 'U0VDUkVULUtFWS1hYmMxMjM=';

const { json, text, respond, sequence } = useMsw({ loopbackPassthrough: true });
const servers = useLoopbackServers();

const sdk = (options: Partial<StorefrontClientOptions> = {}) => new StorefrontClient({ apiKey: SECRET, catalogCacheTtlMs: 0, rateLimit: false, retry: 0, ...options });

/** A body that echoes both forms of the key, as a careless proxy or debug page might. */
const ECHO = `<html><pre>Authorization: ${SECRET_BASE64}\nX-API-Key: ${SECRET}</pre></html>`;

/** Every way a user (or their logger) might turn a value into text. */
function renderings(value: unknown): Record<string, string> {
  return {
    String: String(value),
    'JSON.stringify': JSON.stringify(value) ?? '',
    inspect: inspect(value, { depth: 10, showHidden: true }),
    'format %o': format('%o', value),
    ...(value instanceof Error ? { message: value.message, stack: value.stack ?? '' } : {}),
    ...(typeof value === 'object' && value !== null && 'bodyExcerpt' in value ? { bodyExcerpt: String((value as { bodyExcerpt: unknown }).bodyExcerpt) } : {}),
  };
}

function expectNoSecret(value: unknown) {
  for (const [how, rendered] of Object.entries(renderings(value))) {
    expect(rendered, how).not.toContain(SECRET);
    expect(rendered, how).not.toContain(SECRET_BASE64);
  }
}

describe('errors', () => {
  const paths: Array<[string, () => Promise<unknown>]> = [
    ['401 on the catalog', async () => (text(ECHO, { status: 401 }), failureOf(sdk().getCatalog()))],
    ['401 on a v3 claim', async () => (text(ECHO, { status: 401 }), failureOf(sdk().claimLegacy('Player123')))],
    ['404 on a checkout', async () => (text(ECHO, { status: 404 }), failureOf(sdk().checkout({ username: 'P', items: [{ id: 1, quantity: 1 }] })))],
    ['500 on the catalog', async () => (text(ECHO, { status: 500 }), failureOf(sdk().getCatalog()))],
    ['500 on a claim', async () => (text(ECHO, { status: 500 }), failureOf(sdk().claim('Player123')))],
    ['500 on a vote', async () => (text(ECHO, { status: 500 }), failureOf(sdk().claimVoteReward({ player: 'P', reward: '1', amount: 'all' })))],
    ['HTML on 200 for the catalog', async () => (text(ECHO), failureOf(sdk().getCatalog()))],
    ['HTML on 200 for a claim', async () => (text(ECHO), failureOf(sdk().claim('Player123')))],
    ['HTML on 200 for a store claim', async () => (text(ECHO), failureOf(sdk().claimStoreTransactions('Player123')))],
    [
      'a schema mismatch (the key echoed in the body)',
      async () => (json({ message: 'SUCCESS', debug: { authorization: SECRET_BASE64, apiKey: SECRET }, products: [{ id: SECRET, price: SECRET_BASE64 }] }), failureOf(sdk().getCatalog())),
    ],
    [
      'a claim schema mismatch (the key echoed in the body)',
      async () => (json(v4('SUCCESS', [{ ...v4Claim, product_name: 7, player_name: SECRET }], { echo: SECRET_BASE64 })), failureOf(sdk().claim('Player123'))),
    ],
    [
      'GAME_SERVER_NOT_FOUND echoing the key',
      async () => (json({ products: [], message: 'GAME_SERVER_NOT_FOUND', extendedMessage: `No game server for ${SECRET_BASE64} (${SECRET})` }), failureOf(sdk().getCatalog())),
    ],
    [
      'SERVER_NOT_FOUND echoing the key',
      async () => (json({ status: 'ERROR', code: 'SERVER_NOT_FOUND', message: `Unknown key ${SECRET_BASE64}`, data: { key: SECRET } }), failureOf(sdk().claim('Player123'))),
    ],
    [
      'the v3 "game server could not be found" text echoing the key',
      async () => (json([{ message: `The game server could not be found. This could be that the Api Key is incorrect: ${SECRET}` }]), failureOf(sdk().claimLegacy('Player123'))),
    ],
    [
      'the vote auth text echoing the key',
      async () => (json([{ message: `The game server could not be found (${SECRET}, ${SECRET_BASE64})` }]), failureOf(sdk().claimVoteReward({ player: 'P', reward: '1', amount: 1 }))),
    ],
    ['a network error (msw)', async () => (respond(() => HttpResponse.error()), failureOf(sdk().claim('Player123')))],
    ['a timeout on the catalog', async () => failureOf(sdk({ baseUrl: (await servers.start(hang)).url, timeoutMs: 50 }).getCatalog())],
    ['a timeout on a claim', async () => failureOf(sdk({ baseUrl: (await servers.start(hang)).url, timeoutMs: 50 }).claim('Player123'))],
    ['a reset on a checkout', async () => failureOf(sdk({ baseUrl: (await servers.start(resetConnection)).url }).checkout({ username: 'P', items: [{ id: 1, quantity: 1 }] }))],
    ['a reset on a vote', async () => failureOf(sdk({ baseUrl: (await servers.start(resetConnection)).url }).claimVoteReward({ player: 'P', reward: '1', amount: 1 }))],
    ['a refused connection on a claim', async () => failureOf(sdk({ baseUrl: await servers.closedPort() }).claim('Player123'))],
    ['a refused connection on the catalog', async () => failureOf(sdk({ baseUrl: await servers.closedPort() }).getCatalog())],
  ];

  it.each(paths)('%s: neither the key nor its Base64 in any rendering of the error', async (_, run) => {
    const error = await run();
    expect(isStorefrontError(error)).toBe(true);
    expectNoSecret(error);
  });

  it('an echoed key is replaced in the body excerpt, the rest of the body kept', async () => {
    text(ECHO, { status: 500 });
    const error = await failureOf(sdk().getCatalog());
    expect((error as { bodyExcerpt?: string }).bodyExcerpt).toBe('<html><pre>Authorization: <redacted> X-API-Key: <redacted></pre></html>');
  });

  it.each<[string, unknown]>([
    ['a key with a trailing newline', { apiKey: `${SECRET}\n` }],
    ['a misspelt apiKey option', { apikey: SECRET }],
    ['a non-loopback http: baseUrl', { apiKey: SECRET, baseUrl: 'http://example.com' }],
  ])('constructor errors: %s', (_, options) => {
    let error: unknown;
    try {
      new StorefrontClient(options as StorefrontClientOptions);
    } catch (e) {
      error = e;
    }
    expect(isStorefrontError(error, 'INVALID_INPUT')).toBe(true);
    expectNoSecret(error);
  });
});

describe('the client', () => {
  it('never shows the key through String, JSON.stringify or util.inspect', () => {
    const client = new StorefrontClient({ apiKey: SECRET, baseUrl: 'http://127.0.0.1:4010' });
    expectNoSecret(client);
    expect(String(client)).toBe('StorefrontClient { baseUrl: http://127.0.0.1:4010 }');
    expect(JSON.parse(JSON.stringify(client))).toEqual({ baseUrl: 'http://127.0.0.1:4010' });
    expect(Object.keys(client)).toEqual([]);
  });

  it('still hides it after requests have been made', async () => {
    json(catalogBody);
    const client = sdk();
    await client.getCatalog();
    expectNoSecret(client);
  });
});

describe('onEvent', () => {
  it('request, response and retry events carry <redacted> for authorization', async () => {
    const events: StorefrontEvent[] = [];
    sequence(
      () => new HttpResponse(ECHO, { status: 503, headers: { 'retry-after': '0' } }),
      () => HttpResponse.json(catalogBody),
    );
    await sdk({ retry: 1, onEvent: (event) => events.push(event) }).getCatalog();

    expect(events.map((e) => `${e.type}#${'attempt' in e ? e.attempt : ''}`)).toEqual(['request#0', 'response#0', 'retry#1', 'request#1', 'response#1']);
    for (const event of events) {
      expect(event.operation).toBe('getCatalog');
      // branch: the two request events of the sequence above carry the headers
      if (event.type === 'request') expect(event.headers.authorization).toBe('<redacted>');
    }
    expect(events[2]).toMatchObject({ type: 'retry', reason: 'HTTP 503' });
    expectNoSecret(events);
  });

  it.each<[string, (client: StorefrontClient) => Promise<unknown>]>([
    ['claimLegacy', (client) => client.claimLegacy('Player123')],
    ['claimStoreTransactions', (client) => client.claimStoreTransactions('Player123')],
    ['claimVoteReward', (client) => client.claimVoteReward({ player: 'P', reward: '1', amount: 'all' })],
  ])('%s: x-api-key reads <redacted>', async (_, call) => {
    const events: StorefrontEvent[] = [];
    json([]);
    await call(sdk({ onEvent: (event) => events.push(event) }));

    const request = events.find((e) => e.type === 'request');
    expect(request?.type === 'request' && request.headers['x-api-key']).toBe('<redacted>');
    expect(events.map((e) => e.type)).toEqual(['request', 'response']);
    expectNoSecret(events);
  });

  it('events of failed calls carry no secret either', async () => {
    const events: StorefrontEvent[] = [];
    text(ECHO, { status: 401 });
    await failureOf(sdk({ onEvent: (event) => events.push(event) }).claim('Player123'));
    expect(events.map((e) => e.type)).toEqual(['request', 'response']);
    expectNoSecret(events);
  });

  it('a listener that throws does not change the outcome', async () => {
    json(catalogBody);
    const client = sdk({
      onEvent: () => {
        throw new Error('logger down');
      },
    });
    expect(await client.getCatalog()).toEqual(catalogBody);
  });
});

describe('regressions (bugs found by this suite, now fixed)', () => {
  // Regression (was a bug, now fixed): src/internal/transport.ts sends every request with fetch's default
  // `redirect: 'follow'`. On a redirect to another origin, fetch drops `Authorization`
  // but keeps the custom `X-API-Key` header, so claimLegacy / claimStoreTransactions /
  // claimVoteReward hand the raw key (and re-POST the claim) to whatever host the
  // Location names. Fix: pass `redirect: 'manual'` in the ky options of Transport.send
  // (undici then returns the 3xx itself, which the existing `!response.ok` path turns into
  // an HttpError with its status); the service never redirects these POSTs.
  it('a redirect to another origin never receives the raw key', async () => {
    const elsewhere = await servers.start((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[]');
    });
    const redirecting = await servers.start((_, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/collect` });
      res.end();
    });

    const error = await failureOf(sdk({ baseUrl: redirecting.url }).claimLegacy('Player123'));
    expect(isStorefrontError(error)).toBe(true);
    expect(elsewhere.requests.map((r) => r.headers['x-api-key'])).not.toContain(SECRET);
  });
});
