import { expect } from 'vitest';

/** What `promise` rejected with; fails the test when it resolved. */
export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** Narrows `value` to `type` after asserting it, so the test can read its fields. */
export function expectInstance<T>(value: unknown, type: abstract new (...args: never[]) => T): T {
  expect(value).toBeInstanceOf(type);
  return value as T;
}
