/**
 * Argument checks run before any request. Each failure names the argument and the rule.
 */
import { InvalidInputError, type Operation } from '../errors.js';

/** Ceiling of `quantity` in a cart line. */
export const MAX_QUANTITY = 1_000_000;

// setTimeout's ceiling; ky refuses larger timeouts with a RangeError.
const MAX_TIMEOUT_MS = 2_147_483_647;

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname) || hostname.endsWith('.localhost');
}

/**
 * A non-blank string fetch can send as a header value (a ByteString without control
 * characters): fetch refuses anything above U+00FF (a pasted en dash) mid-request.
 */
export function checkHeaderValue(value: unknown, argument: string): string {
  const text = checkNonBlank(value, argument);
  // A key read from a file often carries its trailing newline; the service then refuses it.
  if (text.trim() !== text) fail(argument, 'must not have leading or trailing whitespace (check how the value is read)');
  if (/[^\x20-\x7e\x80-\xff]/.test(text)) fail(argument, 'must fit in an HTTP header: one line, no control characters, nothing above U+00FF');
  return text;
}

export function fail(argument: string, rule: string, operation?: Operation): never {
  throw new InvalidInputError(argument, rule, operation);
}

export function checkNonBlank(value: unknown, argument: string, operation?: Operation): string {
  if (typeof value !== 'string') fail(argument, `must be a string, got ${describe(value)}`, operation);
  if (value.trim() === '') fail(argument, 'must not be blank', operation);
  return value;
}

export function checkPositiveInteger(value: unknown, argument: string, operation?: Operation): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    fail(argument, `must be a positive integer, got ${describe(value)}`, operation);
  }
  return value;
}

export function checkIntegerInRange(value: unknown, min: number, max: number, argument: string, operation?: Operation): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(argument, `must be an integer from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}, got ${describe(value)}`, operation);
  }
  return value;
}

/** An object the call cannot do without: absent or `null` fails, naming what it must hold. */
export function checkRequiredObject<T extends object>(
  value: T | undefined | null,
  allowed: readonly string[],
  holds: string,
  argument: string,
  operation?: Operation,
): Partial<T> {
  if (value === undefined || value === null) fail(argument, `must be an object with ${holds}`, operation);
  return checkOptionsObject(value, allowed, argument, operation);
}

/** An options object that may be absent; rejects names outside `allowed`. */
export function checkOptionsObject<T extends object>(
  value: T | undefined,
  allowed: readonly string[],
  argument: string,
  operation?: Operation,
): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(argument, `must be an object, got ${describe(value)}`, operation);
  }
  for (const name of Object.keys(value)) {
    if (!allowed.includes(name)) {
      const near = allowed.find((known) => known.toLowerCase() === name.toLowerCase());
      fail(`${argument}.${name}`, `unknown option${near ? ` (did you mean ${near}?)` : ''}; known: ${allowed.join(', ')}`, operation);
    }
  }
  return value;
}

export function checkSignal(value: unknown, operation: Operation): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) fail('options.signal', `must be an AbortSignal, got ${describe(value)}`, operation);
  return value;
}

export function checkBoolean(value: unknown, argument: string, operation?: Operation): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') fail(argument, `must be a boolean, got ${describe(value)}`, operation);
  return value;
}

/** The base URL, normalized without a trailing slash. */
export function checkBaseUrl(value: unknown): string {
  const text = checkNonBlank(value, 'options.baseUrl');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail('options.baseUrl', `must be an absolute http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail('options.baseUrl', `must use https: (or http: for a loopback host), got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    fail('options.baseUrl', `plain http: is only allowed for loopback hosts (localhost, 127.0.0.1, [::1]); use https: for ${url.hostname}`);
  }
  if (url.username !== '' || url.password !== '') fail('options.baseUrl', 'must not contain credentials');
  if (url.search !== '' || url.hash !== '') fail('options.baseUrl', 'must not have a query or a fragment');
  return url.href.replace(/\/+$/, '');
}

export function checkTimeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    fail('options.timeoutMs', `must be a positive integer number of milliseconds up to ${MAX_TIMEOUT_MS}, got ${describe(value)}`);
  }
  return value;
}

export function checkFunction<T>(value: unknown, argument: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') fail(argument, `must be a function, got ${describe(value)}`);
  return value as T;
}

/** A short description of a bad value for error messages. Never echoes long strings. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
    case 'number':
      return String(value);
    case 'undefined':
      return 'undefined';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
