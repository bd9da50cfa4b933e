/** Zod issues as the lines a user reads: `seed.servers[0].products[2].price: expected a number >= 0`. */
import type { z } from 'zod';

/**
 * Formats a zod issue path the way a user writes it: `seed.servers[0].products[2].price`.
 * @internal
 */
export function formatPath(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    root,
  );
}

/**
 * Turns zod issues into `path: problem` lines; unknown keys are named.
 * @internal
 */
export function describeIssues(root: string, issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const where = formatPath(root, issue.path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      return `${where}: unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${keys}`;
    }
    return `${where}: ${issue.message}`;
  });
}
