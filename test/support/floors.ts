/**
 * The floors of `src/`, in one table: a unit (a folder, a room of `src/delivery/`, or a file
 * at the top of `src/`) may import its own floor and the floors below, never one above.
 * Used by test/architecture/ (the rule) and `npm run graph` (the figures).
 *
 * Why this order: what has no dependency sits lowest (`common/`, then the errors, the
 * credential scheme and the version); the wire format is read with nothing but those;
 * the private machinery (with the events a call reports) builds on the wire; the journals
 * store what the wire said; delivery runs over the journals (its core, with the events
 * delivery reports, then the engine, the votes and staff's view, then the loop that drives
 * them); the client's option types, their checks, the client and the public entry wire all
 * of it together; what both command-line programs share (`host/`:
 * secrets, redaction, the database journals) stands under them; the bridge under
 * `teamgames` (the CLI loads the bridge's command, the bridge imports nothing of the CLI);
 * the CLI and the mock (a program of its own, which imports only `auth.ts` and `common/`)
 * stand on top.
 */
import { sep } from 'node:path';

/** The floors, lowest first; each row lists the units on it (a folder stands for everything below it unless a deeper row names it). */
export const FLOORS: readonly (readonly string[])[] = [
  ['src/common'],
  ['src/errors.ts', 'src/errors', 'src/auth.ts', 'src/version.ts'],
  ['src/endpoints.ts', 'src/wire'],
  ['src/internal'],
  ['src/journals'],
  ['src/delivery', 'src/delivery/core', 'src/delivery/records', 'src/delivery/inspect'],
  ['src/delivery/engine', 'src/delivery/votes', 'src/delivery/staff'],
  ['src/delivery/loop'],
  ['src/types.ts', 'src/client-options.ts', 'src/client.ts', 'src/client-parts.ts', 'src/index.ts'],
  ['src/host'],
  ['src/bridge'],
  ['src/cli', 'src/mock'],
];

/** The rooms: folders whose sub-folders are each a unit of their own (a room, entered through its `index.ts`). */
export const ROOMED: readonly string[] = ['src/delivery'];

/**
 * The unit of a repository-relative source path: a file at the top of `src/` is its own
 * unit; a file in a room of a {@link ROOMED} folder belongs to that room; any other file
 * to its top folder under `src/` (`src/journals/file/lock.ts` → `src/journals`).
 */
export function unitOf(file: string): string {
  const parts = file.split(sep).join('/').split('/');
  if (parts.length === 2) return file;
  const top = parts.slice(0, 2).join('/');
  if (ROOMED.includes(top) && parts.length > 3) return parts.slice(0, 3).join('/');
  return top;
}

/** The floor of a unit (its index in {@link FLOORS}), or `undefined` when no row names it. */
export function floorOf(unit: string): number | undefined {
  const row = FLOORS.findIndex((units) => units.includes(unit));
  return row === -1 ? undefined : row;
}

/** An import between two repository-relative source files. */
export interface Arrow {
  readonly from: string;
  readonly to: string;
}

/** The arrows whose importer stands on a lower floor than what it imports (or on no floor: unplaced). */
export function upArrows(arrows: readonly Arrow[]): string[] {
  return arrows.flatMap(({ from, to }) => {
    const [a, b] = [floorOf(unitOf(from)), floorOf(unitOf(to))];
    if (a === undefined || b === undefined) return [`${from} -> ${to} (unplaced: ${a === undefined ? unitOf(from) : unitOf(to)})`];
    return a < b ? [`${from} (${a}) -> ${to} (${b})`] : [];
  });
}

/** The arrows that enter a room of a {@link ROOMED} folder from outside it other than through its `index.ts`. */
export function roomBreaches(arrows: readonly Arrow[]): string[] {
  return arrows.flatMap(({ from, to }) => {
    const room = unitOf(to);
    const roomed = ROOMED.some((folder) => room.startsWith(`${folder}/`) && !room.endsWith('.ts'));
    return roomed && unitOf(from) !== room && to !== `${room}/index.ts` ? [`${from} -> ${to}`] : [];
  });
}
