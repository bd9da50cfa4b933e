/**
 * After tsup: every module and every declaration shipped once.
 *
 * - The CommonJS entries (`require('teamgames-sdk')`, `/mock`, `/postgres`, `/mysql`) are one
 *   line each, `module.exports = require('./index.js')`: they load the ESM build rather than
 *   ship a second copy of every module (and of its source map). Node loads ES modules with
 *   `require` from 20.19 (the package's `engines`; the CJS build already required ky, which
 *   is ESM only); bundlers follow the `import` condition.
 * - tsup writes one set of declarations, the `.d.cts` (its CJS config emits declarations
 *   only). The `.d.ts` of the `import` condition (and of `typesVersions`) is one line,
 *   `export * from './index.cjs'`: an ES module may import a CommonJS one, so TypeScript
 *   reads the same declarations under node16/nodenext (from ESM and CJS), bundler and
 *   node10 resolution, and an ESM program still gets only the named exports (`attw` and
 *   the consumer projects check it). The other way round (`.d.cts` re-exporting `.d.ts`)
 *   is refused under node16 (TS1479: CommonJS cannot `require` an ES module).
 */
import { writeFileSync } from 'node:fs';

const ENTRIES = ['dist/index', 'dist/mock/index', 'dist/postgres/index', 'dist/mysql/index'];

for (const entry of ENTRIES) {
  writeFileSync(
    `${entry}.cjs`,
    `'use strict';\n// The ESM build, loaded by require (Node 20.19 and later): each module is shipped once.\nmodule.exports = require('./index.js');\n`,
  );
  writeFileSync(
    `${entry}.d.ts`,
    `// The package's declarations are shipped once, as the .d.cts beside this file.\nexport * from './index.cjs';\n`,
  );
}
console.log(`cjs-entries: ${ENTRIES.length} CommonJS entries load the ESM build; their .d.ts re-export the .d.cts`);
