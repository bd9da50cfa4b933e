/**
 * The error classes themselves (src/errors.ts, src/errors/*.ts), built the way the SDK
 * builds them (issue #46): the brand guard says no to everything that is not an SDK error,
 * each class has its name, and each message says what happened with what the call knew
 * (where it went, how many attempts, which status) and nothing it did not.
 */
import { describe, expect, it } from 'vitest';
import {
  ClaimOutcomeUnknownError,
  HttpError,
  InvalidInputError,
  JournalError,
  LoopRunningError,
  NetworkError,
  NotReconciledError,
  RequestRejectedError,
  ResponseTooLargeError,
  ResponseValidationError,
  StorefrontError,
  TimeoutError,
  WindowAlreadyResolvedError,
  isStorefrontError,
} from '../../src/index.js';

const BRAND = Symbol.for('teamgames-sdk.StorefrontError');
const details = { operation: 'getCatalog', endpoint: '/api/v2/client/global/products' } as const;

describe('isStorefrontError', () => {
  it('is false for what is not an SDK error: null, undefined, primitives, plain objects and errors', () => {
    for (const value of [null, undefined, 'INVALID_INPUT', 42, true, {}, { code: 'INVALID_INPUT' }, new Error('x')]) {
      expect(isStorefrontError(value)).toBe(false);
    }
  });

  it('asks for the brand set to true on an object: a function carrying it, or a brand of another value, is not an SDK error', () => {
    const branded = Object.assign(() => undefined, { [BRAND]: true, code: 'INVALID_INPUT' });
    expect(isStorefrontError(branded)).toBe(false);
    expect(isStorefrontError({ [BRAND]: 'true', code: 'INVALID_INPUT' })).toBe(false);
  });

  it("is true for another copy's error (the brand is global), and with a code only for that code", () => {
    const fromAnotherCopy = { [BRAND]: true, code: 'TIMEOUT' };
    expect(isStorefrontError(fromAnotherCopy)).toBe(true);
    expect(isStorefrontError(fromAnotherCopy, 'TIMEOUT')).toBe(true);
    expect(isStorefrontError(fromAnotherCopy, 'NETWORK_ERROR')).toBe(false);
    expect(isStorefrontError(new InvalidInputError('playerName', 'must not be blank', 'claim'), 'TIMEOUT')).toBe(false);
  });
});

describe('the request errors', () => {
  it('name where the call went: the endpoint alone when neither host nor prefix is known', () => {
    expect(new HttpError({ ...details, status: 502 }).message).toBe('getCatalog: /api/v2/client/global/products answered HTTP 502');
    expect(new HttpError({ ...details, host: 'api.teamgames.io', basePath: '/tg', status: 502 }).message).toBe('getCatalog: api.teamgames.io/tg/api/v2/client/global/products answered HTTP 502');
  });

  it('count the attempts only when there was more than one', () => {
    expect(new TimeoutError({ ...details, attempts: 3 }, 250).message).toBe('getCatalog: no answer from /api/v2/client/global/products within 250 ms, after 3 attempts');
    expect(new TimeoutError({ ...details, attempts: 1 }, 250).message).toBe('getCatalog: no answer from /api/v2/client/global/products within 250 ms');
    expect(new NetworkError(details, 'ECONNREFUSED').message).toBe('getCatalog: could not reach /api/v2/client/global/products (ECONNREFUSED)');
  });

  it('RequestRejectedError names the status that came, HTTP 404 when none is known', () => {
    const checkout = { operation: 'checkout', endpoint: '/api/v4/store/checkout' } as const;
    expect(new RequestRejectedError({ ...checkout, status: 400 }).message).toBe('checkout: the service rejected the request payload (HTTP 400)');
    expect(new RequestRejectedError(checkout).message).toBe('checkout: the service rejected the request payload (HTTP 404)');
  });

  it('ResponseTooLargeError says which bound stopped the read', () => {
    const error = new ResponseTooLargeError({ ...details, host: 'api.teamgames.io' }, 1024);
    expect(error).toMatchObject({ name: 'ResponseTooLargeError', code: 'RESPONSE_TOO_LARGE', limitBytes: 1024 });
    expect(error.message).toBe('getCatalog: the answer from api.teamgames.io/api/v2/client/global/products is larger than 1024 bytes (maxResponseBytes); the read was stopped');
  });

  it('InvalidInputError is named for its class', () => {
    expect(new InvalidInputError('playerName', 'must not be blank', 'claim')).toMatchObject({ name: 'InvalidInputError', code: 'INVALID_INPUT', message: 'claim: invalid playerName: must not be blank' });
  });

  it('list no issues unless given some', () => {
    expect(new ResponseValidationError(details, 'not JSON').issues).toEqual([]);
    expect(new ClaimOutcomeUnknownError({ operation: 'claim', endpoint: '/api/v4/store/transaction/update' }, 'Player123', 'timeout', 'no answer').issues).toEqual([]);
  });
});

describe('the base class', () => {
  it('built without details holds none', () => {
    const error = new StorefrontError('INVALID_INPUT', 'x');
    expect(error).toMatchObject({ name: 'StorefrontError', operation: undefined, endpoint: undefined, status: undefined, bodyExcerpt: undefined, host: undefined, attempts: undefined });
  });
});

describe('the delivery errors', () => {
  it('JournalError names its operation and keeps its cause only when given', () => {
    const cause = new Error('EIO');
    const error = new JournalError('deliver: the journal could not be written', { operation: 'deliver', path: '/tmp/j', cause });
    expect(error).toMatchObject({ name: 'JournalError', code: 'JOURNAL_FAILED', operation: 'deliver', path: '/tmp/j', message: 'deliver: the journal could not be written' });
    expect(error.cause).toBe(cause);
    const bare = new JournalError('the journal is damaged');
    expect(bare.operation).toBeUndefined();
    expect(bare.path).toBeUndefined();
    expect('cause' in bare).toBe(false);
  });

  it('NotReconciledError and LoopRunningError say what happened and what to do', () => {
    expect(new NotReconciledError('resumeDeliveries', 'Player123', 'RATE_LIMIT')).toMatchObject({
      name: 'NotReconciledError',
      code: 'NOT_RECONCILED',
      operation: 'resumeDeliveries',
      playerName: 'Player123',
      claimCode: 'RATE_LIMIT',
      message: 'resumeDeliveries: player "Player123" was not reconciled: the preview answered RATE_LIMIT; the entries stay in the journal for the next run',
    });
    expect(new LoopRunningError()).toMatchObject({
      name: 'LoopRunningError',
      code: 'LOOP_RUNNING',
      operation: 'startDeliveryLoop',
      message: 'startDeliveryLoop: a delivery loop already runs on this journal in this process (this client, a client derived from it, or another client on the same journal); stop() it first, or share the running loop',
    });
  });

  it('WindowAlreadyResolvedError names who came first, each text cut after 200 characters, a time that is no date as a number', () => {
    const resolution = { by: 'alice', at: Date.UTC(2026, 0, 2, 3, 4, 5), note: 'given by hand' };
    const error = new WindowAlreadyResolvedError('w1', 'Player123', resolution);
    expect(error).toMatchObject({ name: 'WindowAlreadyResolvedError', code: 'WINDOW_ALREADY_RESOLVED', windowId: 'w1', playerName: 'Player123', resolution });
    expect(error.message).toBe('resolveWindow: window "w1" of player "Player123" was already resolved by "alice" at 2026-01-02T03:04:05.000Z (note: "given by hand"); nothing was written, the first resolution stands');
    const long = new WindowAlreadyResolvedError('w'.repeat(200), 'p'.repeat(201), { by: 'b', at: Number.NaN, note: '' });
    expect(long.message).toBe(`resolveWindow: window "${'w'.repeat(200)}" of player "${'p'.repeat(200)}…" was already resolved by "b" at NaN (epoch ms, not a date) (note: ""); nothing was written, the first resolution stands`);
    expect(long.playerName).toBe('p'.repeat(201));
  });
});
