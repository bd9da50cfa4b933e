/**
 * Redaction as both command-line programs apply it to what they print or log: the API key
 * in every form the SDK's redaction knows, in a text and in every string of a value.
 *
 * @module
 * @internal
 */
import { Credentials } from '../auth.js';
import { printable } from '../common/printable.js';

/**
 * What every answer goes through before it is written: the secrets the command knows (the
 * API key in every form the SDK's redaction knows) replaced by `<redacted>`, in the human
 * text and in every string of a `--json` value, which is otherwise printed exactly (its
 * unprintable characters as JSON escapes).
 * @internal
 */
export type Redact = (text: string) => string;

/** No secret to remove. @internal */
export const NO_SECRET: Redact = (text) => text;

/** Removes the API key, in every form the SDK's redaction knows (raw, URL-encoded, Base64, base64url). @internal */
export function keyRedactor(apiKey: string): Redact {
  const credentials = new Credentials(apiKey);
  // A table shows the key's unprintable characters or backslashes escaped: that form too.
  const shown = printable(apiKey);
  if (shown === apiKey) return (text) => credentials.redact(text);
  return (text) => credentials.redact(text).split(shown).join('<redacted>');
}

/** `value` with `redact` applied to every string in it (keys included); other values as they are. @internal */
export function redactValue(value: unknown, redact: Redact): unknown {
  if (redact === NO_SECRET) return value;
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactValue(v, redact);
    return out;
  }
  return value;
}
