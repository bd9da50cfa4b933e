/**
 * Reading a thrown value, whatever it is: the one place the delivery code looks into what a
 * give, a grant or a journal threw (a null-prototype object, a throwing getter, a Proxy
 * that throws on every trap, `undefined`, a string). Never throws.
 *
 * @module
 * @internal
 */

/** One property of a thrown value, or `undefined` when it has none or reading it throws (`undefined`, `null`, a getter, a Proxy's trap). */
export function readThrown(value: unknown, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    // Nothing to read: no object at all, or a getter or a trap that throws.
  }
  return undefined;
}

/** The text of a thrown value: its `message` when that is a string, else what `String()` makes of it, else its type. */
export function thrownText(value: unknown): string {
  const message = readThrown(value, 'message');
  if (typeof message === 'string') return message;
  try {
    return String(value);
  } catch {
    // Only an object can refuse String(): one without a prototype, or a Proxy.
    return `a thrown ${typeof value} that cannot be shown as text`;
  }
}
