/**
 * The one transport's decisions (src/internal/transport.ts), each pinned so that changing
 * it fails a test (issue #46): which connection failures prove nothing was sent (a claim
 * is then a NetworkError and gives its guard slot back), which statuses a read retries,
 * how long it waits (Retry-After honoured on 429 and 503, capped at 30 s; backoff capped
 * at 10 s), and what every request carries. Through the client with a `fetch` of the
 * test's own; backoff on vitest's fake timers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClaimOutcomeUnknownError, HttpError, NetworkError, ResponseTooLargeError, StorefrontClient, type StorefrontClientOptions } from '../../src/index.js';
import { readFailure } from '../../src/internal/transport.js';
import { WireProblem, WireRefusal } from '../../src/wire/parse.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY, KEY_BASE64 } from '../support/fixtures.js';
import { catalogBody, v4 } from '../support/msw.js';

afterEach(() => {
  vi.useRealTimers();
});

interface Sent {
  url: string;
  init: RequestInit;
  /** Milliseconds of (fake) time since the first request. */
  at: number;
}

/** A client whose requests are answered by `answer` (by attempt number) and recorded. */
function recording(answer: (attempt: number) => Response | Promise<Response>, options: Partial<StorefrontClientOptions> = {}) {
  const sent: Sent[] = [];
  let start: number | undefined;
  const fetch = async (url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    start ??= Date.now();
    sent.push({ url: String(url), init: init ?? {}, at: Date.now() - start });
    return answer(sent.length);
  };
  const client = new StorefrontClient({ apiKey: KEY, rateLimit: false, catalogCacheTtlMs: 0, fetch, ...options });
  return { client, sent };
}

/** Runs `call` on fake timers to its end, advancing `stepMs` at a time. */
async function onFakeTime<T>(call: () => Promise<T>, stepMs = 100): Promise<PromiseSettledResult<T>> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  let result: PromiseSettledResult<T> | undefined;
  call().then(
    (value) => (result = { status: 'fulfilled', value }),
    (reason: unknown) => (result = { status: 'rejected', reason }),
  );
  for (let elapsed = 0; result === undefined && elapsed < 600_000; elapsed += stepMs) await vi.advanceTimersByTimeAsync(stepMs);
  if (result === undefined) throw new Error('the call did not settle within 10 minutes of fake time');
  return result;
}

const refusedWith = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: { code } });

describe('a connection failure that proves nothing was sent', () => {
  const notSent = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL'];

  it.each(notSent)('%s: a claim is a NetworkError, and its guard slot is given back', async (code) => {
    let calls = 0;
    const fetch = async () => {
      calls += 1;
      if (calls === 1) throw refusedWith(code);
      return Response.json(v4('NO_ITEMS'));
    };
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, fetch });
    const error = expectInstance(await failureOf(client.claim('Ann')), NetworkError);
    expect(error.reason).toBe(code);
    // Nothing reached the service, so no window opened: the next claim goes out at once.
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
    expect(calls).toBe(2);
  });

  it('any other code (ECONNRESET) leaves a claim unknown and its window shut', async () => {
    let calls = 0;
    const fetch = async () => {
      calls += 1;
      throw refusedWith('ECONNRESET');
    };
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, fetch });
    expectInstance(await failureOf(client.claim('Ann')), ClaimOutcomeUnknownError);
    expect(await client.claim('Ann')).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
    expect(calls).toBe(1);
  });
});

describe('which statuses a read retries', () => {
  it.each([429, 500, 502, 503, 504])('%i: retried', async (status) => {
    const { client, sent } = recording((attempt) => (attempt === 1 ? new Response('busy', { status }) : Response.json(catalogBody)), { retry: 1 });
    expect(await onFakeTime(() => client.getCatalog())).toEqual({ status: 'fulfilled', value: catalogBody });
    expect(sent).toHaveLength(2);
  });

  it.each([400, 403, 404, 408, 501])('%i: not retried', async (status) => {
    const { client, sent } = recording(() => new Response('no', { status }), { retry: 3 });
    const result = await onFakeTime(() => client.getCatalog());
    expect(result.status === 'rejected' && result.reason).toBeInstanceOf(HttpError);
    expect(sent).toHaveLength(1);
  });

  it('an answer over maxResponseBytes is not retried, with or without a signal', async () => {
    for (const signal of [undefined, new AbortController().signal]) {
      const { client, sent } = recording(() => new Response('x'.repeat(2_000)), { retry: 3, maxResponseBytes: 1_024 });
      const result = await onFakeTime(() => client.getCatalog(signal === undefined ? undefined : { signal }));
      expect(result.status === 'rejected' && result.reason).toBeInstanceOf(ResponseTooLargeError);
      expect(sent).toHaveLength(1);
    }
  });
});

describe('what is never retried or never sent', () => {
  it('a claim or a checkout whose connection broke: one request, whatever retry says, with or without a signal', async () => {
    for (const signal of [undefined, new AbortController().signal]) {
      const { client, sent } = recording(() => Promise.reject(refusedWith('ECONNRESET')), { retry: 3 });
      const result = await onFakeTime(() => client.claim('Ann', signal === undefined ? undefined : { signal }));
      expect(result.status === 'rejected' && result.reason).toBeInstanceOf(ClaimOutcomeUnknownError);
      expect(sent).toHaveLength(1);
      await onFakeTime(() => client.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] }));
      expect(sent).toHaveLength(2);
    }
  });

  it('a call whose signal was aborted before it: rejects with the reason, nothing sent, a claim\'s window not opened', async () => {
    const { client, sent } = recording(() => Response.json(v4('NO_ITEMS')));
    const reason = new Error('stopping');
    await expect(client.claim('Ann', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(client.getCatalog({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(sent).toHaveLength(0);
    expect((await client.claim('Ann')).code).toBe('NO_ITEMS');
  });
});

describe('how long a read waits before its retry', () => {
  it.each([429, 503])('%i: Retry-After is honoured', async (status) => {
    const { client, sent } = recording((attempt) => (attempt === 1 ? new Response('busy', { status, headers: { 'retry-after': '5' } }) : Response.json(catalogBody)), { retry: 1 });
    await onFakeTime(() => client.getCatalog());
    expect(sent.map((s) => s.at)).toEqual([0, 5_000]);
  });

  it('500: Retry-After is not honoured there (ky backoff: 300 ms)', async () => {
    const { client, sent } = recording((attempt) => (attempt === 1 ? new Response('busy', { status: 500, headers: { 'retry-after': '5' } }) : Response.json(catalogBody)), { retry: 1 });
    await onFakeTime(() => client.getCatalog());
    expect(sent.map((s) => s.at)).toEqual([0, 300]);
  });

  it('a Retry-After of an hour waits 30 s', async () => {
    const { client, sent } = recording((attempt) => (attempt === 1 ? new Response('busy', { status: 503, headers: { 'retry-after': '3600' } }) : Response.json(catalogBody)), { retry: 1 });
    await onFakeTime(() => client.getCatalog(), 1_000);
    expect(sent.map((s) => s.at)).toEqual([0, 30_000]);
  });

  it('the exponential backoff stops growing at 10 s', async () => {
    const { client, sent } = recording(() => new Response('down', { status: 500 }), { retry: 7 });
    await onFakeTime(() => client.getCatalog());
    const waits = sent.slice(1).map((s, i) => s.at - (sent[i] as Sent).at);
    expect(waits).toEqual([300, 600, 1_200, 2_400, 4_800, 9_600, 10_000]);
  });
});

describe('what every request carries', () => {
  it('POST, the headers built once per endpoint, no redirect followed, the key only where its scheme puts it', async () => {
    const { client, sent } = recording((attempt) => (attempt === 1 ? Response.json(catalogBody) : Response.json(v4('NO_ITEMS'))), { userAgent: 'my-plugin/2' });
    await client.getCatalog();
    await client.claimLegacy('Ann');
    const [catalog, legacy] = sent as [Sent, Sent];
    expect(catalog.url).toBe('https://api.teamgames.io/api/v2/client/global/products');
    expect(catalog.init).toMatchObject({ method: 'POST', body: '{}', redirect: 'manual' });
    const headers = catalog.init.headers as Record<string, string>;
    expect(headers).toEqual({ accept: 'application/json', 'user-agent': expect.stringMatching(/^my-plugin\/2 teamgames-sdk\/\S+ node\/\S+$/) as unknown, 'content-type': 'application/json', authorization: KEY_BASE64 });
    expect(legacy.init.redirect).toBe('manual');
    expect(Object.keys(legacy.init.headers as object).sort()).toEqual(['accept', 'content-type', 'user-agent', 'x-api-key']);
  });

  it('a redirect is an HttpError of its own status, never followed', async () => {
    const { client, sent } = recording(() => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }), { retry: 2 });
    const error = expectInstance(await failureOf(client.claimVoteReward({ player: 'Ann', reward: 1, amount: 1 })), HttpError);
    expect(error.status).toBe(302);
    expect(sent).toHaveLength(1);
  });
});

describe('the size bound', () => {
  it('a declared length over the bound is refused before reading, unless the body is encoded', async () => {
    const declared = (encoding?: string) => () =>
      new Response(JSON.stringify(catalogBody), { headers: { 'content-length': '99999999', ...(encoding === undefined ? {} : { 'content-encoding': encoding }) } });
    const plain = recording(declared(), { retry: 0, maxResponseBytes: 1_024 });
    expectInstance(await failureOf(plain.client.getCatalog()), ResponseTooLargeError);
    // An encoded body's length says nothing of what it inflates to: read and counted instead.
    const encoded = recording(declared('identity'), { retry: 0, maxResponseBytes: 1_024 });
    expect(await encoded.client.getCatalog()).toEqual(catalogBody);
  });

  it('a body of exactly the bound is read; one byte more is refused', async () => {
    const padded = (size: number) => () => {
      const text = JSON.stringify(catalogBody);
      return new Response(text + ' '.repeat(size - Buffer.byteLength(text)));
    };
    expect(await recording(padded(1_024), { retry: 0, maxResponseBytes: 1_024 }).client.getCatalog()).toEqual(catalogBody);
    expectInstance(await failureOf(recording(padded(1_025), { retry: 0, maxResponseBytes: 1_024 }).client.getCatalog()), ResponseTooLargeError);
  });

  it('a declared length of exactly the bound is read', async () => {
    const text = JSON.stringify(catalogBody);
    const declaredExactly = () => new Response(text + ' '.repeat(1_024 - Buffer.byteLength(text)), { headers: { 'content-length': '1024' } });
    expect(await recording(declaredExactly, { retry: 0, maxResponseBytes: 1_024 }).client.getCatalog()).toEqual(catalogBody);
  });

  it('a bodiless answer declaring too much is refused too', async () => {
    const bodiless = () => new Response(null, { headers: { 'content-length': '99999999' } });
    expectInstance(await failureOf(recording(bodiless, { retry: 0, maxResponseBytes: 1_024 }).client.getCatalog()), ResponseTooLargeError);
  });
});

describe('reading the body', () => {
  it('a bodiless error answer has an empty excerpt', async () => {
    const error = expectInstance(await failureOf(recording(() => new Response(null, { status: 500 }), { retry: 0 }).client.getCatalog()), HttpError);
    expect(error.bodyExcerpt).toBe('');
  });

  it('a character split across two chunks arrives whole', async () => {
    const name = new TextEncoder().encode(JSON.stringify({ message: 'café' }));
    const cut = name.indexOf(0xc3) + 1;
    const split = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(name.slice(0, cut));
            controller.enqueue(name.slice(cut));
            controller.close();
          },
        }),
        { status: 502 },
      );
    const error = expectInstance(await failureOf(recording(split, { retry: 0 }).client.getCatalog()), HttpError);
    expect(error.bodyExcerpt).toBe('{"message":"café"}');
  });
});

describe('an abort before the request goes out', () => {
  it.each<[string, (client: StorefrontClient, signal: AbortSignal) => Promise<unknown>]>([
    ['getCatalog', (c, signal) => c.getCatalog({ signal })],
    ['checkout', (c, signal) => c.checkout({ username: 'Ann', items: [{ id: 1, quantity: 1 }] }, { signal })],
    ['claimVoteReward', (c, signal) => c.claimVoteReward({ player: 'Ann', reward: 1, amount: 1 }, { signal })],
  ])('%s rejects with the reason, nothing sent', async (_, call) => {
    const { client, sent } = recording(() => Response.json(catalogBody));
    const controller = new AbortController();
    const pending = call(client, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(sent).toHaveLength(0);
  });
});

describe("a reader's failure", () => {
  it('a WireProblem: refused credentials, or the shape it names with its issues', () => {
    expect(readFailure(new WireRefusal('the game server could not be found'), 200, 't')).toStrictEqual({ kind: 'auth', status: 200, text: 't', what: 'the game server could not be found' });
    const issues = [{ path: ['a'], message: 'm' }];
    expect(readFailure(new WireProblem('bad rows', issues), 200, 't')).toStrictEqual({ kind: 'protocol', status: 200, text: 't', what: 'bad rows', issues });
  });

  it('anything else a body made a reader throw: a protocol failure naming its kind, never its text', () => {
    expect(readFailure(new RangeError(`deep ${KEY}`), 200, 't')).toStrictEqual({ kind: 'protocol', status: 200, text: 't', what: 'the answer could not be read (RangeError)', issues: [] });
    expect(readFailure('odd', 201, '')).toStrictEqual({ kind: 'protocol', status: 201, text: '', what: 'the answer could not be read (string)', issues: [] });
  });
});
