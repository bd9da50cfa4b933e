/**
 * What every reader of an answer shares: the tolerant building blocks of the schemas,
 * schemas built on first use, and the one way a body that is valid HTTP but not a valid
 * answer is reported ({@link WireProblem}), which the transport turns into a typed error.
 *
 * @module
 * @internal
 */
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import type { ValidationIssue } from '../errors.js';

/**
 * A body that is valid HTTP but not a valid answer: refused credentials reported in the
 * body, or a shape outside the protocol. The client maps it to a typed error.
 * @internal
 */
export class WireProblem extends Error {
  /** `auth`: the key was refused ({@link WireRefusal}); `invalid`: a shape outside the protocol. */
  readonly kind: 'auth' | 'invalid' = 'invalid';

  constructor(
    readonly what: string,
    readonly issues: readonly ValidationIssue[] = [],
  ) {
    super(what);
  }
}

/**
 * Refused credentials reported in a body that is valid HTTP: a {@link WireProblem} of kind
 * `auth`, which the client maps to an `AuthenticationError`.
 * @internal
 */
export class WireRefusal extends WireProblem {
  override readonly kind = 'auth';
}

/**
 * `schema` compiled by zod (`z.compile`): the same results and the same issues, several
 * times faster on the hot path (the 500-product catalog: about 540 → 160 µs). Compiling
 * generates code with `new Function`; when the program has set `z.config({ jitless: true })`
 * (a strict Content Security Policy), or the runtime refuses generated code, the schema
 * is returned as it is and parses as before.
 */
export function compiled<T extends z.core.$ZodType>(schema: T): T {
  return z.config().jitless ? schema : z.compile(schema);
}

/** Absent and `null` both become `undefined` (for envelopes, parsed once per answer). */
export const optional = <T extends z.ZodMiniType>(schema: T) => z.pipe(z.nullish(schema), z.transform((v: z.output<T> | null | undefined) => v ?? undefined));

/**
 * A value built on its first use and kept: the schemas are built when the first answer of
 * their kind is read, never at import (building zod schemas costs milliseconds in a fresh
 * process, most of what importing the SDK would otherwise cost beyond ky and zod).
 */
export function onFirstUse<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/**
 * zod's English messages, unless the program chose a locale of its own: what classic zod
 * sets when its first schema is built, and `zod/mini` leaves to the program.
 */
function englishIssues(): void {
  if (!z.config().localeError) z.config(en());
}

/**
 * Schemas built on their first use ({@link onFirstUse}), with zod's English messages set
 * first, so every issue reads as it does with classic zod.
 */
export function schemasOnFirstUse<T>(build: () => T): () => T {
  return onFirstUse(() => {
    englishIssues();
    return build();
  });
}

/** The longest text from the service the SDK hands on for a player to read. */
export const MAX_PLAYER_TEXT = 256;

/** `text` cut to {@link MAX_PLAYER_TEXT} characters (with `…`): a chat line, not a page. */
export function capText(text: string): string {
  return text.length > MAX_PLAYER_TEXT ? `${text.slice(0, MAX_PLAYER_TEXT - 1)}…` : text;
}

/** The scalars older endpoints are loose about, and the service's texts meant for players. */
export const scalars = schemasOnFirstUse(() => ({
  /** A text for players (`message`, `error`), capped to {@link MAX_PLAYER_TEXT} characters. */
  playerText: z.pipe(z.string(), z.transform(capText)),

  /** A JSON number, or a string holding one (v3 endpoints are loose about this). */
  numberLike: z.union([z.number(), z.string().check(z.regex(/^\s*-?\d+(\.\d+)?\s*$/, 'expected a number or a numeric string'))]),

  /** An integer, or a string holding one. */
  intLike: z.union([z.number().check(z.int()), z.string().check(z.regex(/^\s*-?\d+\s*$/, 'expected an integer or an integer string'))]),
}));

/** What a schema yields. */
export type Wire<T extends z.core.$ZodType> = z.output<T>;

/** Absent and `null` both read as absent. */
export const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** zod's issues as the SDK's {@link ValidationIssue}s, under `prefix`. */
export function issuesOf(error: z.core.$ZodError, prefix: readonly PropertyKey[]): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: [...prefix, ...issue.path], message: issue.message }));
}

/** Parses `body` with `schema`, or throws a {@link WireProblem} saying `what` is wrong. */
export function parse<T extends z.ZodMiniType>(schema: T, body: unknown, what: string, prefix: readonly PropertyKey[] = []): z.output<T> {
  const result = schema.safeParse(body);
  if (!result.success) throw new WireProblem(what, issuesOf(result.error, prefix));
  return result.data;
}

