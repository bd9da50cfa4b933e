/**
 * Freezes a plain JSON-like value in place, all the way down, and returns it. Iterative,
 * so a hostile answer nested 100,000 deep cannot overflow the stack.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    // Primitives, null and undefined count as frozen; so does what was frozen before (a
    // part already walked, which ends a cycle).
    if (Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const child of Object.values(next as object)) stack.push(child);
  }
  return value;
}
