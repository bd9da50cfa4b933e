/**
 * Tests that can fail (issue #46 point 3): a scan of the test files, run by CI.
 *
 * - **No assertion**: a test whose body calls neither `expect` (or `expectTypeOf`,
 *   `assert`) nor a function that does (functions of the test files and test/support/,
 *   followed by name).
 * - **An assertion in a branch that may not run**: `expect` under an `if`, `?:`, `&&`,
 *   `||`, `??`, `catch` or `switch` in a test's own body (an if/else or `?:` that asserts on
 *   both sides is fine), unless the line before the branch says why it is fine with a
 *   comment starting `// branch:`.
 * - **Skips CI may not take**: with `--results <vitest json>`, every test the run skipped
 *   or left to do (CI runs as root with every engine and tool installed: nothing may skip).
 *
 * Prints each finding as `file:line: what`, then `check-tests: N findings`; exits 1 on any.
 *
 * @module
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const ROOT = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { results: { type: 'string', multiple: true, default: [] } } });

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    return statSync(path).isDirectory() ? files(path) : /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const sources = files(join(ROOT, 'test')).map((path) => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true));
const DIRECT = new Set(['expect', 'expectTypeOf', 'assert', 'assertType']);
const TEST_CALLS = new Set(['it', 'test']);

/** The name a call goes by: `f(…)`, `obj.f(…)` → `f`; `it.each(…)(…)` → `it`. */
function calleeName(node: ts.Expression): string | undefined {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return ts.isIdentifier(node.expression) && (TEST_CALLS.has(node.expression.text) || DIRECT.has(node.expression.text)) ? node.expression.text : node.name.text;
  if (ts.isCallExpression(node)) return calleeName(node.expression);
  if (ts.isNonNullExpression(node) || ts.isParenthesizedExpression(node)) return calleeName(node.expression);
  return undefined;
}

/** Every name called anywhere under `node` (nested functions included). */
function calledNames(node: ts.Node, into = new Set<string>()): Set<string> {
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) || ts.isNewExpression(n)) {
      const name = calleeName(n.expression);
      if (name !== undefined) into.add(name);
    }
    if (ts.isTaggedTemplateExpression(n)) {
      const name = calleeName(n.tag);
      if (name !== undefined) into.add(name);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return into;
}

// Functions by name (declarations, methods and `const f = (…) => …`): a name asserts when its
// body calls an assertion or a name that asserts (to a fixed point). The names of test/support/
// count for every file; a test file's own, for that file only.
function functionsOf(source: ts.SourceFile): Map<string, Set<string>[]> {
  const bodies = new Map<string, Set<string>[]>();
  const visit = (n: ts.Node): void => {
    let name: string | undefined;
    let body: ts.Node | undefined;
    if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name !== undefined && n.body !== undefined) [name, body] = [n.name.getText(), n.body];
    else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer !== undefined && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) [name, body] = [n.name.text, n.initializer.body];
    else if (ts.isPropertyAssignment(n) && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) [name, body] = [n.name.getText(), n.initializer.body];
    if (name !== undefined && body !== undefined) bodies.set(name, [...(bodies.get(name) ?? []), calledNames(body)]);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return bodies;
}

/** `known` and every name of `bodies` that asserts, given `known`. */
function assertingNames(bodies: Map<string, Set<string>[]>, known: ReadonlySet<string>): Set<string> {
  const asserting = new Set(known);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, calls] of bodies) {
      if (asserting.has(name)) continue;
      if (calls.some((set) => [...set].some((called) => asserting.has(called)))) {
        asserting.add(name);
        changed = true;
      }
    }
  }
  return asserting;
}

const support = new Map<string, Set<string>[]>();
for (const source of sources.filter((s) => !/\.test\.ts$/.test(s.fileName)))
  for (const [name, calls] of functionsOf(source)) support.set(name, [...(support.get(name) ?? []), ...calls]);
const supportAsserting = assertingNames(support, DIRECT);

const findings: string[] = [];
const where = (source: ts.SourceFile, node: ts.Node) => `${relative(ROOT, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

/** The test's body: the last function argument of an `it`/`test` call. */
function testBody(call: ts.CallExpression): ts.FunctionLikeDeclaration | undefined {
  for (let i = call.arguments.length - 1; i >= 0; i--) {
    const argument = call.arguments[i] as ts.Expression;
    if (ts.isArrowFunction(argument) || ts.isFunctionExpression(argument)) return argument;
  }
  return undefined;
}

/** A test call: `it(…)`, `test(…)`, `it.each(…)(…)`, `it.skipIf(…)(…)`, `it.only(…)`… (not `it.todo`). */
function isTestCall(call: ts.CallExpression): boolean {
  if (calleeName(call.expression) === undefined || !TEST_CALLS.has(calleeName(call.expression) as string)) return false;
  const text = call.expression.getText();
  return !/\.todo\b/.test(text) && testBody(call) !== undefined;
}

/** Whether a comment on the line above `node` says why its branch is fine. */
function explained(source: ts.SourceFile, node: ts.Node): boolean {
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
  const above = source.text.split('\n')[line - 1] ?? '';
  return /^\s*\/\/ branch:/.test(above);
}

/** Whether `node` calls an assertion itself (not in a nested function). */
function assertsItself(node: ts.Node): boolean {
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found || (n !== node && (ts.isFunctionLike(n) || ts.isClassLike(n)))) return;
    if (ts.isCallExpression(n) && DIRECT.has(calleeName(n.expression) ?? '')) found = true;
    else ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/** `expect` calls in `body` that sit under a branch of the body itself (not of a nested function). */
function branchedAssertions(source: ts.SourceFile, body: ts.Node): ts.Node[] {
  const found: ts.Node[] = [];
  const visit = (n: ts.Node, branch: ts.Node | undefined): void => {
    if (n !== body && (ts.isFunctionLike(n) || ts.isClassLike(n))) return;
    if (branch !== undefined && ts.isCallExpression(n) && DIRECT.has(calleeName(n.expression) ?? '') && !explained(source, branch)) {
      found.push(branch);
      return;
    }
    // An if/else (or ?:) that asserts on both sides asserts whichever side runs.
    if (ts.isIfStatement(n)) {
      const both = n.elseStatement !== undefined && assertsItself(n.thenStatement) && assertsItself(n.elseStatement);
      visit(n.expression, branch);
      visit(n.thenStatement, both ? branch : (branch ?? n));
      if (n.elseStatement) visit(n.elseStatement, both ? branch : (branch ?? n));
      return;
    }
    if (ts.isConditionalExpression(n)) {
      const both = assertsItself(n.whenTrue) && assertsItself(n.whenFalse);
      visit(n.condition, branch);
      visit(n.whenTrue, both ? branch : (branch ?? n));
      visit(n.whenFalse, both ? branch : (branch ?? n));
      return;
    }
    if (ts.isBinaryExpression(n) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(n.operatorToken.kind)) {
      visit(n.left, branch);
      visit(n.right, branch ?? n);
      return;
    }
    if (ts.isCatchClause(n) || ts.isCaseClause(n) || ts.isDefaultClause(n)) {
      ts.forEachChild(n, (c) => visit(c, branch ?? n));
      return;
    }
    ts.forEachChild(n, (c) => visit(c, branch));
  };
  visit(body, undefined);
  return [...new Set(found)];
}

for (const source of sources.filter((s) => /\.test\.ts$/.test(s.fileName))) {
  const asserting = assertingNames(functionsOf(source), supportAsserting);
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && isTestCall(n)) {
      const body = testBody(n) as ts.FunctionLikeDeclaration;
      const title = n.arguments[0] !== undefined && ts.isStringLiteralLike(n.arguments[0]) ? n.arguments[0].text : n.arguments[0]?.getText(source) ?? '';
      const calls = calledNames(body);
      if (![...calls].some((name) => asserting.has(name))) findings.push(`${where(source, n)}: no assertion in "${title.slice(0, 100)}"`);
      for (const branch of branchedAssertions(source, body.body as ts.Node)) findings.push(`${where(source, branch)}: an assertion in a branch that may not run, in "${title.slice(0, 100)}" (say why it is fine on the line above with // branch: …, or assert both ways)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
}

interface Results {
  testResults: Array<{ name: string; assertionResults: Array<{ status: string; fullName: string }> }>;
}
for (const file of values.results ?? []) {
  const results = JSON.parse(readFileSync(file, 'utf8')) as Results;
  for (const suite of results.testResults)
    for (const test of suite.assertionResults)
      if (test.status !== 'passed' && test.status !== 'failed') findings.push(`${relative(ROOT, suite.name)}: ${test.status} in ${relative(ROOT, file)}: "${test.fullName.slice(0, 120)}" (CI may not skip a test)`);
}

for (const finding of findings) console.log(finding);
console.log(`check-tests: ${findings.length} finding${findings.length === 1 ? '' : 's'} in ${sources.length} files`);
process.exitCode = findings.length === 0 ? 0 : 1;
