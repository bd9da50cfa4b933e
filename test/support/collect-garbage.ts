/**
 * A setup file of the unit project: after each test file, a full garbage collection, so a
 * FileHandle a test left open is reported now (Node's DEP0137, "Closing a FileHandle object
 * on garbage collection"), in the run's output where CI looks for it, not at random.
 * Needs `--expose-gc` (vitest.config.ts passes it to the workers); without it, nothing.
 */
import { afterAll } from 'vitest';

afterAll(async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return;
  gc();
  // The handle's close and its warning run on a later turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 10));
});
