/**
 * The checks of journal entries (entry-checks.ts), loaded on first use: a program that
 * never writes or reads a journal (a web shop) does not carry them. What the client's
 * entry imports statically (the memory journal, the staff tools) reaches them only through
 * this loader; the file journal's store and the engine's records, loaded on first use
 * themselves, import them directly.
 *
 * @module
 * @internal
 */
import { lazy } from '../internal/lazy.js';

/** The import itself, declared (not an arrow made as the module loads) so mutation testing can switch it. */
function loadEntryChecks() {
  return import('./entry-checks.js');
}

/** Loads entry-checks.ts once; every later call shares it. @internal */
export const entryChecks = /* @__PURE__ */ lazy(loadEntryChecks);
