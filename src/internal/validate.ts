/**
 * Argument checks run before any request. Each failure names the argument and the rule.
 */
import { InvalidInputError, type Operation } from '../errors.js';
import { playerNameProblem } from '../common/player-name.js';

/** Ceiling of `quantity` in a cart line. */
export const MAX_QUANTITY = 1_000_000;

/** The longest API key the client takes; real keys are far shorter. */
export const MAX_API_KEY_LENGTH = 512;

// setTimeout's ceiling; ky refuses larger timeouts with a RangeError.
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Whether plain `http:` may go to `hostname` (as the URL parser spells it): a literal
 * loopback address (127.0.0.0/8, `[::1]`) or `localhost` itself. A name under
 * `.localhost` is not: the system resolver looks it up like any other name (DNS, or
 * whatever `/etc/hosts` says), so it may not be this machine.
 */
export function isLoopbackHost(hostname: string): boolean {
  // The URL parser has already turned `127.1`, `0x7f.0.0.1` and `[0:0:0:0:0:0:0:1]` into these forms.
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * A non-blank string fetch can send as a header value (a ByteString without control
 * characters): fetch refuses anything above U+00FF (a pasted en dash) mid-request.
 */
export function checkHeaderValue(value: unknown, argument: string, maxLength = Number.POSITIVE_INFINITY): string {
  // The value may be a secret: a bad one is described (type, length), never echoed.
  if (typeof value !== 'string') fail(argument, `must be a string, got ${describeSecret(value)}`);
  const text = checkNonBlank(value, argument);
  if (text.length > maxLength) fail(argument, `must be at most ${maxLength} characters, got ${describeSecret(text)}`);
  // A key read from a file often carries its trailing newline; the service then refuses it.
  if (text.trim() !== text) fail(argument, 'must not have leading or trailing whitespace (check how the value is read)');
  if (/[^\x20-\x7e\x80-\xff]/.test(text)) fail(argument, 'must fit in an HTTP header: one line, no control characters, nothing above U+00FF');
  return text;
}

export function fail(argument: string, rule: string, operation?: Operation): never {
  throw new InvalidInputError(argument, rule, operation);
}

export function checkNonBlank(value: unknown, argument: string, operation?: Operation): string {
  if (typeof value !== 'string') fail(argument, `must be a string, got ${describeFor(value, operation)}`, operation);
  if (value.trim() === '') fail(argument, 'must not be blank', operation);
  return value;
}

/**
 * A player name as the service accepts it, by the rule the mock applies too
 * ({@link playerNameProblem}). A name the service would refuse (`INVALID_PLAYER`) never
 * goes out.
 */
export function checkPlayerName(value: unknown, argument: string, operation?: Operation): string {
  const name = checkNonBlank(value, argument, operation);
  const problem = playerNameProblem(name);
  if (problem !== undefined) fail(argument, problem, operation);
  return name;
}

/** `Number.isSafeInteger` as the type guard it is: false for anything that is not a number. */
const isSafeInteger = Number.isSafeInteger as (value: unknown) => value is number;
/** `Number.isInteger` as the type guard it is: false for anything that is not a number. */
const isInteger = Number.isInteger as (value: unknown) => value is number;

export function checkPositiveInteger(value: unknown, argument: string, operation?: Operation): number {
  if (!isSafeInteger(value) || value <= 0) {
    fail(argument, `must be a positive integer, got ${describeFor(value, operation)}`, operation);
  }
  return value;
}

export function checkIntegerInRange(value: unknown, min: number, max: number, argument: string, operation?: Operation): number {
  if (!isInteger(value) || value < min || value > max) {
    fail(argument, `must be an integer from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}, got ${describeFor(value, operation)}`, operation);
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
    fail(argument, `must be an object, got ${describeFor(value, operation)}`, operation);
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
  if (!(value instanceof AbortSignal)) fail('options.signal', `must be an AbortSignal, got ${describeFor(value, operation)}`, operation);
  return value;
}

export function checkBoolean(value: unknown, argument: string, operation?: Operation): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') fail(argument, `must be a boolean, got ${describeFor(value, operation)}`, operation);
  return value;
}

/** The base URL, normalized without a trailing slash. */
export function checkBaseUrl(value: unknown, argument = 'options.baseUrl'): string {
  const text = checkNonBlank(value, argument);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not echoed: a URL that does not parse may hold credentials, or be a key put in the wrong place.
    fail(argument, `must be an absolute http(s) URL, got ${describeSecret(text)} that is not one`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(argument, `must use https: (or http: for a loopback host), got ${url.protocol}`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    const why = url.hostname.endsWith('.localhost') ? ` (${url.hostname} is a name looked up by the resolver, not a loopback address)` : '';
    fail(argument, `plain http: is only allowed for loopback hosts (localhost, 127.0.0.1, [::1])${why}; use https: for ${url.hostname}`);
  }
  if (url.username !== '' || url.password !== '') fail(argument, 'must not contain credentials');
  if (url.search !== '' || url.hash !== '') fail(argument, 'must not have a query or a fragment');
  return url.href.replace(/\/+$/, '');
}

export function checkTimeout(value: unknown, argument: string, operation?: Operation): number {
  if (!isInteger(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    fail(argument, `must be a positive integer number of milliseconds up to ${MAX_TIMEOUT_MS}, got ${describeSecret(value)}`, operation);
  }
  return value;
}

export function checkFunction<T>(value: unknown, argument: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') fail(argument, `must be a function, got ${describeSecret(value)}`);
  return value as T;
}

/**
 * A description of a value given where a secret may be (the client's options, a key, a
 * URL): its type, and a string's length, never its text.
 */
export function describeSecret(value: unknown): string {
  return typeof value === 'string' ? `a string of ${value.length} characters` : describe(value);
}

/**
 * A bad value described for an error message. The constructors' checks (no operation)
 * read options where a secret may sit, so there a string is never echoed.
 */
function describeFor(value: unknown, operation: Operation | undefined): string {
  return operation === undefined ? describeSecret(value) : describe(value);
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
    case 'object':
      return 'an object';
    default:
      // undefined, a boolean, a bigint, a symbol, a function: its type.
      return typeof value;
  }
}
