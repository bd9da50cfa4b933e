/**
 * The reasons for the mutants no test can kill (test/mutation-survivors.json, read by
 * `npm run mutate:rooms`): each names a file of the mutation scope and a line that is still in
 * it, word for word, with a reason. A reason whose line was edited away would match nothing
 * in the next run; this finds it at once, without StrykerJS's hours.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { rooms } = (await import(pathToFileURL(join(ROOT, 'stryker.config.mjs')).href)) as { rooms: Record<string, string[]> };
const ledger = JSON.parse(readFileSync(join(ROOT, 'test/mutation-survivors.json'), 'utf8')) as Array<Record<string, unknown>>;
/** The mutators StrykerJS 9 applies to TypeScript. */
const MUTATORS = new Set(['ArithmeticOperator', 'ArrayDeclaration', 'ArrowFunction', 'AssignmentOperator', 'BlockStatement', 'BooleanLiteral', 'ConditionalExpression', 'EqualityOperator', 'LogicalOperator', 'MethodExpression', 'ObjectLiteral', 'OptionalChaining', 'Regex', 'StringLiteral', 'UnaryOperator', 'UpdateOperator']);

/** Whether `file` is in the scope: named by a room, or under a room's `dir/**` pattern (the scope's only wildcards). */
function inScope(file: string): boolean {
  const patterns = Object.values(rooms).flat();
  const excluded = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  if (excluded.includes(file)) return false;
  return patterns.some((p) => p === file || (p.endsWith('/**/*.ts') && file.startsWith(p.slice(0, -'**/*.ts'.length))) || (p.endsWith('/*.ts') && dirname(file) === p.slice(0, -'/*.ts'.length)));
}

describe('test/mutation-survivors.json', () => {
  it('is a list of { file, mutator, replacement, code, why } (and maybe lines, original), each a non-empty text but the replacement', () => {
    expect(ledger.length).toBeGreaterThan(0);
    for (const entry of ledger) {
      expect(Object.keys(entry).filter((key) => key !== 'lines' && key !== 'original').sort()).toEqual(['code', 'file', 'mutator', 'replacement', 'why']);
      const { lines, original, code } = entry as { lines?: unknown; original?: unknown; code: string };
      // Absent, or more than one line (one is the default).
      expect(lines === undefined || (typeof lines === 'number' && Number.isInteger(lines) && lines > 1), `${JSON.stringify(entry)}: lines`).toBe(true);
      // Absent, or the text the mutant replaced: a piece of its line (which of the line's mutants it is).
      expect(original === undefined || (typeof original === 'string' && /\S/.test(original) && code.includes(original)), `${JSON.stringify(entry)}: original`).toBe(true);
      for (const key of ['file', 'mutator', 'code', 'why']) expect(entry[key], `${JSON.stringify(entry)}: ${key}`).toMatch(/\S/);
      expect(typeof entry['replacement']).toBe('string');
      expect(MUTATORS, String(entry['mutator'])).toContain(entry['mutator']);
    }
  });

  // A reason matches a survivor by its line's text: a text the file has twice explains both
  // lines, so the entry says so (`lines`), and a second copy of a line never inherits a reason unseen.
  it('names files of the mutation scope, and lines still in them word for word, as many as it says (one unless `lines`)', () => {
    for (const { file, code, lines: count = 1 } of ledger as Array<{ file: string; code: string; lines?: number }>) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      expect(inScope(file), file).toBe(true);
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n').map((line) => line.trim());
      expect(lines.filter((line) => line === code).length, `${file}: ${code}`).toBe(count);
    }
  });

  it('holds each reason once', () => {
    const keys = ledger.map(({ file, mutator, replacement, code, original }) => JSON.stringify([file, mutator, replacement, code, original]));
    expect(new Set(keys).size).toBe(keys.length);
  });
});
