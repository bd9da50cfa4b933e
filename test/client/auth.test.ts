/**
 * The key in every form the SDK could meet it (src/auth.ts), each redacted whole from what
 * an error quotes (issue #46): raw, URL-encoded, Base64 with and without its padding, the
 * Base64 URL-encoded, URL-safe Base64 with and without padding. The longest form goes first,
 * so no piece of a longer one (its padding) is left beside the mark.
 */
import { describe, expect, it } from 'vitest';
import { HttpError, StorefrontClient } from '../../src/index.js';
import { Credentials } from '../../src/auth.js';
import { expectInstance, failureOf } from '../support/errors.js';

// Its Base64 has a '+', a '/' and one '=': every form differs.
const KEY = 'ka?aa>ay';
const FORMS: Array<[string, string]> = [
  ['raw', KEY],
  ['URL-encoded', 'ka%3Faa%3Eay'],
  ['Base64', 'a2E/YWE+YXk='],
  ['Base64 unpadded', 'a2E/YWE+YXk'],
  ['Base64 URL-encoded', 'a2E%2FYWE%2BYXk%3D'],
  ['URL-safe Base64', 'a2E_YWE-YXk'],
  ['URL-safe Base64 padded', 'a2E_YWE-YXk='],
];

describe('the key in an error body', () => {
  it.each(FORMS)('%s: replaced whole', async (_, form) => {
    const client = new StorefrontClient({ apiKey: KEY, retry: 0, catalogCacheTtlMs: 0, fetch: async () => new Response(`[${form}] [${form}]`, { status: 500 }) });
    const error = expectInstance(await failureOf(client.getCatalog()), HttpError);
    expect(error.bodyExcerpt).toBe('[<redacted>] [<redacted>]');
  });
});

describe('Credentials', () => {
  it('serializes and inspects as [Credentials]', () => {
    const credentials = new Credentials(KEY);
    expect(JSON.stringify({ credentials })).toBe('{"credentials":"[Credentials]"}');
    expect(credentials.headers('base64-authorization')).toEqual({ authorization: 'a2E/YWE+YXk=' });
    expect(credentials.headers('api-key-header')).toEqual({ 'x-api-key': KEY });
  });
});
