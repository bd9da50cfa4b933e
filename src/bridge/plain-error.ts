/**
 * What a log line or an answer of the HTTP API shows of a value: an error as its name,
 * code and message, never a stack or a request's headers. Imports nothing, so the route
 * table (and `teamgames bridge --help`) loads without the logger's pino.
 *
 * @module
 * @internal
 */

/**
 * A value as a log field, at any depth: an error as its name, code and message (nothing
 * that could hold headers); a cycle or a depth past 8 as a mark.
 */
export function plainError(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[too deep]';
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => plainError(v, depth + 1));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plainError(v, depth + 1);
    return out;
  }
  return value;
}
