/**
 * Freezes a plain JSON-like value in place, all the way down, and returns it. Iterative,
 * so a hostile answer nested 100,000 deep cannot overflow the stack.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const child of Object.values(next)) stack.push(child);
  }
  return value;
}
