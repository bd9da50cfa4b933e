/**
 * The answer every v3 endpoint sends (the legacy claims and the vote reward claim): a bare
 * array of rows, each an item or a message-only row, or one bare `{message}` object.
 *
 * @module
 */
import * as z from 'zod/mini';
import { compiled, parse, scalars, schemasOnFirstUse } from './parse.js';

/** The v3 answer's schemas, built on the first v3 answer. @internal */
export const v3RowSchemas = schemasOnFirstUse(() => {
  const { playerText } = scalars();
  return {
    /** A v3 answer: the documented array, or the bare `{message}` object some deployments send. */
    v3Answer: compiled(z.union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())])),
    /** A message-only row. */
    messageRow: compiled(z.looseObject({ message: playerText })),
  };
});

/**
 * Splits a v3 answer into item rows, the rows that carry one of `keys`, and message-only
 * rows, which are never items. @internal
 */
export function splitRows<T>(
  body: unknown,
  names: { answer: string; row: string; item: string },
  keys: readonly string[],
  read: (row: Record<string, unknown>, index: number) => T,
): { items: T[]; messages: string[] } {
  const wire = parse(v3RowSchemas().v3Answer, body, `the ${names.answer} answer is neither an array nor an object`);
  const items: T[] = [];
  const messages: string[] = [];
  (Array.isArray(wire) ? wire : [wire]).forEach((row, index) => {
    if (keys.some((key) => key in row)) items.push(read(row, index));
    else messages.push(parse(v3RowSchemas().messageRow, row, `a ${names.row} row is neither a ${names.item} nor a message`, [index]).message);
  });
  return { items, messages };
}

/** The leading words of the v3 text that refuses the key (matched case-insensitively). @internal */
export const SERVER_NOT_FOUND_PREFIX = 'the game server could not be found';

/** Whether a v3 message starts with `prefix` (lower case), ignoring case and leading space. @internal */
export function startsWithText(message: string, prefix: string): boolean {
  return message.trim().toLowerCase().startsWith(prefix);
}
