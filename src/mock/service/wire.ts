import { z } from 'zod';
import type { HeaderReader } from './auth.js';
import { JAVA_INT_MAX } from './rules.js';
import { describeIssues } from './issues.js';

/**
 * A request as the store sees it: headers and the body text, nothing transport-specific.
 * The router builds one per request, so the store never touches a transport.
 */
export interface WireRequest {
  /** Reads a header in any letter case. */
  header: HeaderReader;
  /** The raw body text ("" when none). */
  body: string;
  /** `scheme://host[:port]` the request was sent to, for links back to the mock. */
  origin: string;
}

/** A wire-ready answer: the HTTP status and the JSON body (or HTML for the pay page). */
export interface WireResponse {
  status: number;
  body: unknown;
  /** `"html"` for the pay page; JSON otherwise. */
  kind?: 'json' | 'html';
}

/** The body encodings an endpoint accepts. */
export type BodyEncoding = 'json' | 'form';

/** The outcome of decoding a body: a value, or why it could not be read. */
export type DecodedBody =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 415; problem: string };

/**
 * Decodes the body by its `Content-Type` (parameters such as `; charset=UTF-8` allowed),
 * accepting only the encodings listed. Form bodies become an object of strings; a
 * repeated form field is refused rather than guessed at.
 */
export function decodeBody(request: WireRequest, allowed: readonly BodyEncoding[]): DecodedBody {
  const mediaType = (request.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const encoding: BodyEncoding | undefined =
    mediaType === 'application/json' ? 'json' : mediaType === 'application/x-www-form-urlencoded' ? 'form' : undefined;
  if (encoding === undefined || !allowed.includes(encoding)) {
    const expected = allowed
      .map((e) => (e === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'))
      .join(' or ');
    return { ok: false, status: 415, problem: `Content-Type must be ${expected}, got ${mediaType || 'none'}` };
  }
  if (encoding === 'json') {
    try {
      return { ok: true, value: JSON.parse(request.body) as unknown };
    } catch {
      return { ok: false, status: 400, problem: 'the body is not valid JSON' };
    }
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(request.body)) {
    if (Object.hasOwn(fields, name)) {
      return { ok: false, status: 400, problem: `the form field "${name}" appears more than once` };
    }
    fields[name] = value;
  }
  return { ok: true, value: fields };
}

/** Validates a decoded body against a strict schema; the problem names the field. */
export function readFields<T>(
  schema: z.ZodType<T>,
  decoded: DecodedBody,
): { ok: true; value: T } | { ok: false; status: 400 | 415; problem: string } {
  if (!decoded.ok) {
    return decoded;
  }
  const result = schema.safeParse(decoded.value);
  if (result.success) {
    return { ok: true, value: result.data };
  }
  return { ok: false, status: 400, problem: describeIssues('body', result.error.issues).join('; ') };
}

/** The JSON answer for a body the mock cannot read (not an outcome the service reports; I-12). */
export function badRequest(status: 400 | 415, problem: string): WireResponse {
  return { status, body: { error: status === 415 ? 'Unsupported Media Type' : 'Bad Request', message: problem } };
}

/** A positive Java int: the ids, quantities and categories of the bodies. */
export const positiveInt = z.number().int().min(1).max(JAVA_INT_MAX);
