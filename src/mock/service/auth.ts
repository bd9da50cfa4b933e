/**
 * How each endpoint carries the API key (I-17 in docs/testing-with-the-mock.md). The mock
 * resolves a credential to a game server by exact comparison only: a key that is "almost
 * right" (pre-encoded, wrapped, prefixed) is refused the way the service refuses it.
 */

/** Reads a header by name in any letter case (fetch `Headers` and plain lookups alike). */
export type HeaderReader = (name: string) => string | null;

/** Which credential schemes an endpoint accepts. */
export type CredentialScheme =
  /** v2 and v4: `Authorization: base64(rawKey)`, nothing else. */
  | 'base64'
  /** v3 update: `X-API-Key: rawKey`. */
  | 'api-key'
  /** v3 store claim and vote: `X-API-Key: rawKey`, or `Authorization: Bearer rawKey`. */
  | 'api-key-or-bearer';

/**
 * Finds the raw key a request presents under `scheme`, or `undefined` when it presents
 * none that the scheme allows. The caller still looks the key up.
 *
 * @param decodeBase64 maps an exact Base64 value back to its raw key (the known keys only).
 */
export function presentedKey(
  header: HeaderReader,
  scheme: CredentialScheme,
  decodeBase64: (value: string) => string | undefined,
): string | undefined {
  if (scheme === 'base64') {
    const value = header('authorization');
    // An exact table lookup, not a decode: `Bearer …`, a wrapped `base64` output or a
    // pre-encoded key never equals the Base64 of a known key.
    return value === null ? undefined : decodeBase64(value);
  }
  const apiKey = header('x-api-key');
  if (apiKey !== null) {
    return apiKey;
  }
  if (scheme === 'api-key-or-bearer') {
    const bearer = /^Bearer +(\S+)$/i.exec(header('authorization') ?? '');
    return bearer?.[1];
  }
  return undefined;
}
