/**
 * Credential header schemes. The service authenticates each endpoint differently; the
 * caller always holds the raw key and the SDK derives what each endpoint wants.
 *
 * @module
 */

/**
 * How an endpoint expects the key:
 * - `base64-authorization`: `Authorization: <base64 of the UTF-8 key>` (v2 catalog and
 *   checkout, v4 claim); no `Bearer ` prefix, standard alphabet, padded.
 * - `api-key-header`: the raw key in `X-API-Key` (v3 claims and the vote claim).
 */
export type AuthScheme = 'base64-authorization' | 'api-key-header';

/**
 * Base64 (standard alphabet, padded, no line breaks) of the UTF-8 bytes of `rawKey`,
 * the value the v2 and v4 endpoints expect in `Authorization`.
 *
 * @example
 * ```ts
 * encodeApiKey('<API_KEY>'); // what `printf '%s' '<API_KEY>' | base64 -w0` prints
 * ```
 * @see [Authentication](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/authentication.md)
 */
export function encodeApiKey(rawKey: string): string {
  return Buffer.from(rawKey).toString('base64'); // a string's bytes are UTF-8 by default
}

/** The header names that carry credentials; masked in every event. @internal */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization']);

/**
 * Precomputed credential headers of one key, one set per scheme, built once per client.
 * @internal
 */
export class Credentials {
  readonly #byScheme: Record<AuthScheme, Readonly<Record<string, string>>>;
  readonly #secrets: readonly string[];

  constructor(rawKey: string) {
    const base64 = encodeApiKey(rawKey);
    this.#byScheme = {
      'base64-authorization': { authorization: base64 },
      // The official client spells it X-API-Key; header names are case-insensitive.
      'api-key-header': { 'x-api-key': rawKey },
    };
    this.#secrets = keyForms(rawKey);
  }

  /** The headers an endpoint of `scheme` needs. */
  headers(scheme: AuthScheme): Readonly<Record<string, string>> {
    return this.#byScheme[scheme];
  }

  /** `text` with every occurrence of the key, in any of the forms the SDK could meet, replaced. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) {
      if (secret.length > 0 && out.includes(secret)) out = out.split(secret).join('<redacted>');
    }
    return out;
  }

  /** Never reveal the key through inspection or serialization. */
  toJSON(): string {
    return '[Credentials]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[Credentials]';
  }
}

/**
 * The forms a key can take in text the SDK might repeat: raw, URL-encoded, and its Base64
 * padded and unpadded, standard and URL-safe (and URL-encoded). Longest first, so that
 * redacting one form never leaves a piece of a longer one.
 */
function keyForms(rawKey: string): string[] {
  const base64 = encodeApiKey(rawKey);
  const unpadded = base64.replace(/=+$/, '');
  const urlSafe = unpadded.replace(/\+/g, '-').replace(/\//g, '_');
  const forms = [rawKey, encodeURIComponent(rawKey), base64, unpadded, encodeURIComponent(base64), urlSafe, `${urlSafe}${'='.repeat(base64.length - unpadded.length)}`];
  return [...new Set(forms)].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * A copy of `headers` safe to log: credential values replaced by `<redacted>`.
 * @internal
 */
export function maskHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = CREDENTIAL_HEADERS.has(name.toLowerCase()) ? '<redacted>' : value;
  });
  return out;
}
