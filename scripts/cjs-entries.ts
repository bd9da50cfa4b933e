/**
 * After tsup: the CommonJS entries (`require('teamgames-sdk')`, `/mock`, `/postgres`,
 * `/mysql`) as one line each, `module.exports = require('./index.js')`: they load the ESM
 * build rather than ship a second copy of every module (and of its source map). Node
 * loads ES modules with `require` from 20.19 (the package's `engines`; the CJS build
 * already required ky, which is ESM only); bundlers follow the `import` condition. tsup
 * writes the `.d.cts` declarations (its CJS config emits declarations only).
 */
import { writeFileSync } from 'node:fs';

const ENTRIES = ['dist/index.cjs', 'dist/mock/index.cjs', 'dist/postgres/index.cjs', 'dist/mysql/index.cjs'];

for (const file of ENTRIES) {
  writeFileSync(file, `'use strict';\n// The ESM build, loaded by require (Node 20.19 and later): each module is shipped once.\nmodule.exports = require('./index.js');\n`);
}
console.log(`cjs-entries: ${ENTRIES.length} CommonJS entries load the ESM build`);
