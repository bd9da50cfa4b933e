/**
 * The import graph of the sources, read from their text: the relative imports and re-exports
 * of a file (value or type) and the cycles among them. Used by test/architecture/.
 */
import { dirname, resolve } from 'node:path';

/** Every relative import and re-export of a file (value or type), resolved to a source file. */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  const pattern = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const match of text.matchAll(pattern)) {
    const spec = (match[1] ?? match[2]) as string;
    out.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return out;
}

/** The strongly connected components of more than one file (or a file importing itself). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, indexOf.get(next) as number));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node);
  return found;
}

/** One relative import or re-export of a file: its target and whether only types cross it. */
export interface ImportEdge {
  readonly target: string;
  /** `import type`, `export type`, every name marked `type`, or `typeof import(…)`: erased at build. */
  readonly typeOnly: boolean;
  /** `import(…)`, loaded on first use. */
  readonly lazy: boolean;
}

/** Every relative import and re-export of a file, as {@link importsOf} finds them, each with its kind. */
export function importEdgesOf(file: string, text: string): ImportEdge[] {
  const out: ImportEdge[] = [];
  const pattern = /(?:^|\n)\s*((?:import|export)\b[^'"]*?)from\s*['"](\.{1,2}\/[^'"]+)['"]|(typeof\s+)?import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
  for (const match of text.matchAll(pattern)) {
    const spec = (match[2] ?? match[4]) as string;
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (match[4] !== undefined) {
      out.push({ target, typeOnly: match[3] !== undefined, lazy: match[3] === undefined });
      continue;
    }
    const clause = (match[1] as string).trim();
    const declaredType = /^(?:import|export)\s+type\b/.test(clause);
    // `import { type A, type B }`: no default import, every name marked `type`.
    const names = /^(?:import|export)\s*\{([^}]*)\}\s*$/.exec(clause)?.[1]?.split(',').filter((n) => n.trim() !== '');
    const everyNameTyped = names !== undefined && names.length > 0 && names.every((n) => /^\s*type\s/.test(n));
    out.push({ target, typeOnly: declaredType || everyNameTyped, lazy: false });
  }
  return out;
}
