/**
 * After tsup: lets the mock's type declarations compile without msw installed.
 *
 * `mock.handlers` is typed with msw's `HttpHandler`, so `dist/mock/index.d.cts` (which the
 * `.d.ts` re-exports) imports msw. msw is an optional peer: a TypeScript project without
 * it, under the default `skipLibCheck: false`, would fail on that import (TS2307) although it never reads
 * `mock.handlers`. A `@ts-ignore` above the import makes the missing module `any` there
 * (`mock.handlers` is then `any[]`) and changes nothing where msw is installed. tsup's
 * declaration bundler drops comments on imports, so the line is added here, after it.
 * A build whose declarations no longer import msw as expected fails, rather than
 * shipping declarations that break such projects again.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const IMPORT = "import { HttpHandler } from 'msw';";
const IGNORE = '// @ts-ignore -- msw is an optional peer dependency: without it, mock.handlers is typed any[]';

for (const file of ['dist/mock/index.d.cts']) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const at = lines.indexOf(IMPORT);
  if (at === -1 || lines.filter((line) => /from ['"]msw/.test(line)).length !== 1) {
    throw new Error(`${file}: expected exactly one msw import, "${IMPORT}"; update scripts/optional-peer-types.ts`);
  }
  if (lines[at - 1] !== IGNORE) lines.splice(at, 0, IGNORE);
  writeFileSync(file, lines.join('\n'));
}
console.log('optional-peer-types: the mock declarations compile without msw');
