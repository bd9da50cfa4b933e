/**
 * A full garbage collection on demand, for the scripts that measure memory (the heap
 * script, the simulation), without asking for `--expose-gc` on the command line (tsx, npx
 * node@22 … would each need it spelled differently).
 *
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Turns on `--expose-gc` and returns the `gc` function it exposes. */
export function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
