/**
 * The one failure mapping (src/internal/to-error.ts), at its edges (issue #46): what an
 * error's excerpt keeps of a body, the words of each "outcome unknown", what a network
 * error's `reason` and `cause` keep of whatever the fetch threw (never the original
 * object, never the key), and the error a delivery raises for a preview it cannot use.
 * Through the client, with a `fetch` of the test's own.
 */
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ClaimOutcomeUnknownError,
  HttpError,
  MemoryJournal,
  NetworkError,
  ResponseValidationError,
  StorefrontClient,
  type StorefrontClientOptions,
} from '../../src/index.js';
import { expectInstance, failureOf } from '../support/errors.js';
import { KEY } from '../support/fixtures.js';
import { v4, v4Claim } from '../support/msw.js';

/** A client whose every request is answered by `answer`. */
function client(answer: () => Response | Promise<Response>, options: Partial<StorefrontClientOptions> = {}): StorefrontClient {
  return new StorefrontClient({ apiKey: KEY, retry: 0, rateLimit: false, catalogCacheTtlMs: 0, fetch: async () => answer(), ...options });
}

/** The error of a catalog call whose fetch rejects with `thrown`. */
async function catalogFailure(thrown: unknown): Promise<NetworkError> {
  return expectInstance(await failureOf(client(() => Promise.reject(thrown)).getCatalog()), NetworkError);
}

/** The error of a claim whose fetch answers `status` with `body`. */
async function claimFailure(body: string, status = 200): Promise<unknown> {
  return failureOf(client(() => new Response(body, { status })).claim('Ann'));
}

describe('the body excerpt of an error', () => {
  it('folds each run of whitespace to one space and trims the ends', async () => {
    const error = await failureOf(client(() => new Response('  Bad \n\n\t gateway  ', { status: 502 })).getCatalog());
    expect(expectInstance(error, HttpError).bodyExcerpt).toBe('Bad gateway');
  });

  it('keeps a body of 200 characters whole and cuts a longer one at 200, marked with …', async () => {
    const whole = await failureOf(client(() => new Response('x'.repeat(200), { status: 502 })).getCatalog());
    expect(expectInstance(whole, HttpError).bodyExcerpt).toBe('x'.repeat(200));
    const cut = await failureOf(client(() => new Response('y'.repeat(201), { status: 502 })).getCatalog());
    expect(expectInstance(cut, HttpError).bodyExcerpt).toBe(`${'y'.repeat(200)}…`);
  });
});

describe('the words of each failure', () => {
  it('a 401 names HTTP 401', async () => {
    const error = expectInstance(await claimFailure('Unauthorized', 401), AuthenticationError);
    expect(error.message).toBe('claim: the API key was refused (HTTP 401). Pass the raw key from the TeamGames dashboard, not its Base64 form.');
  });

  it('a 5xx on a claim is an outcome unknown, with no schema issues', async () => {
    const error = expectInstance(await claimFailure('oops', 503), ClaimOutcomeUnknownError);
    expect(error.reason).toBe('http');
    expect(error.issues).toEqual([]);
    expect(error.message.startsWith('claim: api.teamgames.io/api/v4/store/transaction/update answered HTTP 503; the request was sent')).toBe(true);
  });

  it('a claim answer that cannot be read says why, with its issues', async () => {
    const notJson = expectInstance(await claimFailure('<html>'), ClaimOutcomeUnknownError);
    expect(notJson.reason).toBe('invalid-response');
    expect(notJson.message.startsWith('claim: the answer could not be read (the body is not JSON); the request was sent')).toBe(true);
    const odd = expectInstance(await claimFailure(JSON.stringify({ status: 'SUCCESS' })), ClaimOutcomeUnknownError);
    expect(odd.message.startsWith('claim: the answer could not be read (the claim answer does not match the schema); ')).toBe(true);
    expect(odd.issues.map((issue) => issue.path)).toEqual([['code']]);
  });

  it('a connection that fails after sending a claim names its reason', async () => {
    const error = expectInstance(
      await failureOf(client(() => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }))).claim('Ann')),
      ClaimOutcomeUnknownError,
    );
    expect(error.reason).toBe('network');
    expect(error.message.startsWith('claim: the connection failed after sending (ECONNRESET); ')).toBe(true);
  });

  it('a claim aborted after sending says so', async () => {
    const controller = new AbortController();
    const error = expectInstance(
      await failureOf(
        client(() => {
          controller.abort(new Error('stop'));
          return Promise.reject(new Error('aborted'));
        }).claim('Ann', { signal: controller.signal }),
      ),
      ClaimOutcomeUnknownError,
    );
    expect(error.reason).toBe('aborted');
    expect(error.message.startsWith('claim: aborted after sending; ')).toBe(true);
  });
});

describe("a network error's reason", () => {
  it("is the socket error's code when undici gives one", async () => {
    expect((await catalogFailure(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET', message: 'other side closed' } }))).reason).toBe('ECONNRESET');
  });

  it("is the error's own code, else its cause's message, else its own message", async () => {
    expect((await catalogFailure(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).reason).toBe('ECONNREFUSED');
    expect((await catalogFailure(new TypeError('fetch failed', { cause: new Error('other side closed') }))).reason).toBe('other side closed');
    expect((await catalogFailure(new Error('socket hang up'))).reason).toBe('socket hang up');
  });

  it('is "unknown network failure" for a thrown value that is not an error', async () => {
    expect((await catalogFailure(null)).reason).toBe('unknown network failure');
    expect((await catalogFailure('gone')).reason).toBe('unknown network failure');
  });

  it('is cut to 80 characters, after the key is redacted', async () => {
    const error = await catalogFailure(new Error(`${KEY} ${'z'.repeat(200)}`));
    expect(error.reason).toBe(`<redacted> ${'z'.repeat(69)}`);
  });
});

describe("a network error's cause", () => {
  it("keeps the socket error's name, message and code, never the object thrown", async () => {
    const socket = { name: 'SocketError', code: 'ECONNRESET', message: 'other side closed', socket: { remote: '1.2.3.4' } };
    const thrown = new TypeError('fetch failed', { cause: socket });
    const cause = (await catalogFailure(thrown)).cause as Error & { code?: string };
    expect(cause).toBeInstanceOf(Error);
    expect(cause).not.toBe(thrown);
    expect(cause).not.toBe(socket);
    expect([cause.name, cause.message, cause.code]).toEqual(['SocketError', 'other side closed', 'ECONNRESET']);
    expect(Object.keys(cause)).toEqual(['name', 'code']);
  });

  it('is the thrown error itself, copied, when it has no cause', async () => {
    const cause = (await catalogFailure(new RangeError('no route'))).cause as Error;
    expect([cause.name, cause.message, 'code' in cause]).toEqual(['RangeError', 'no route', false]);
  });

  it('names a value that is not an object by its text, as an Error', async () => {
    const fromText = (await catalogFailure('socket gone')).cause as Error;
    expect([fromText.name, fromText.message]).toEqual(['Error', 'socket gone']);
    const fromNull = (await catalogFailure(null)).cause as Error;
    expect([fromNull.name, fromNull.message]).toEqual(['Error', 'null']);
  });

  it("uses the code when there is no message, else says 'unknown failure'; a name that is not text becomes 'Error'", async () => {
    const coded = (await catalogFailure({ code: 'EPIPE', name: 42 })).cause as Error & { code?: string };
    expect([coded.name, coded.message, coded.code]).toEqual(['Error', 'EPIPE', 'EPIPE']);
    const bare = (await catalogFailure({ message: 7 })).cause as Error;
    expect([bare.name, bare.message]).toEqual(['Error', 'unknown failure']);
  });

  it('redacts the key from the message and cuts it to 200 characters', async () => {
    const cause = (await catalogFailure(new Error(`${KEY}:${'m'.repeat(300)}`))).cause as Error;
    expect(cause.message).toBe(`<redacted>:${'m'.repeat(189)}`);
  });

  it('keeps a code only when it is an identifier (a capital, then capitals, digits, _; 41 at most)', async () => {
    const codeOf = async (code: unknown) => ((await catalogFailure({ message: 'm', code })).cause as { code?: unknown }).code;
    expect(await codeOf('E')).toBe('E');
    expect(await codeOf('UND_ERR_SOCKET')).toBe('UND_ERR_SOCKET');
    expect(await codeOf(`E${'X'.repeat(40)}`)).toBe(`E${'X'.repeat(40)}`);
    expect(await codeOf(`E${'X'.repeat(41)}`)).toBeUndefined();
    expect(await codeOf(`my-${KEY}-IS`)).toBeUndefined();
    expect(await codeOf('1ECONN')).toBeUndefined();
    expect(await codeOf('E-CONN')).toBeUndefined();
    expect(await codeOf(104)).toBeUndefined();
    // Not text, though it reads as an identifier once made text.
    expect(await codeOf(['ECONNRESET'])).toBeUndefined();
  });

  it('is absent when the fetch rejected with undefined', async () => {
    const error = await catalogFailure(undefined);
    expect(error.reason).toBe('unknown network failure');
    expect(error.cause).toBeUndefined();
    expect('cause' in error).toBe(false);
  });
});

describe('a preview the delivery engine cannot use', () => {
  it('is a ResponseValidationError about the claim endpoint, with no host or base path', async () => {
    const previewWithoutRows = () => Response.json(v4('PREVIEW', [v4Claim]));
    const report = await client(previewWithoutRows, { journal: new MemoryJournal() }).deliver('Ann', () => undefined);
    expect(report.code).toBe('ERROR');
    const error = expectInstance(report.error, ResponseValidationError);
    expect(error.message).toBe(
      'claim: unexpected response from /api/v4/store/transaction/update: the preview did not list an invoice for every line (rawTransactions), so exactly-once delivery cannot track them',
    );
    expect([error.operation, error.endpoint, error.host, error.attempts, error.status]).toEqual(['claim', '/api/v4/store/transaction/update', '', 1, 200]);
    expect(error.bodyExcerpt).toBe('');
    expect(error.issues).toEqual([]);
  });
});
