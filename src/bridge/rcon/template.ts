/**
 * The RCON command templates: `give {player} diamond {quantity}` filled with an item's
 * values, or refused. A value that could break out of the command (a quote, `;`, a
 * newline, a control, format or bidi character, Minecraft's `§`) is never escaped, it is
 * refused: games parse commands in ways no escaping covers, and a refused item waits for
 * staff while a wrong command cannot be taken back.
 *
 * @module
 * @internal
 */

/** The placeholders of a purchase's commands. @internal */
export const PURCHASE_PLACEHOLDERS = ['player', 'quantity', 'productId', 'productName', 'deliveryId'] as const;
/** The placeholders of a vote reward's commands. @internal */
export const VOTE_PLACEHOLDERS = ['player', 'amount', 'rewardId', 'rewardName', 'deliveryId'] as const;

// The patterns are declared functions, built where they are used (a fresh one tests as a
// shared one would; placeholder()'s `g` flag keeps no lastIndex from one use to the next): StrykerJS (`npm run mutate`, `ignoreStatic`) never
// switches on a mutant chosen while the module loads, so module constants went untested.

/**
 * A player name a command may hold: ASCII letters, digits and `_`, then also `.` and `-`,
 * 1 to 64 characters (Minecraft's own set is `[A-Za-z0-9_]{3,16}`). No space (it would
 * split the command's arguments), nothing a game's parser could read as syntax.
 */
function player(): RegExp {
  return /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
}
/** A count: a non-negative safe integer, written in decimal. */
function count(): RegExp {
  return /^(?:0|[1-9][0-9]{0,15})$/;
}
/**
 * What a text value (a product name, a reward name, an id) must not hold: quotes and the
 * backslash (they end or escape a quoted argument, or JSON text), `;` (a command
 * separator in some games), `{` `}` (JSON text and these templates), `§` (Minecraft's
 * formatting code), controls (newlines included), format characters (bidi overrides,
 * zero-width), line and paragraph separators, and lone surrogates.
 */
function unsafeText(): RegExp {
  return /["'`\\;{}§\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
}
/** The longest text value, in UTF-16 units. */
const MAX_TEXT = 100;
/** A placeholder `{name}`, or a literal brace written twice (`{{`, `}}`: JSON text in `tellraw`). */
function placeholder(): RegExp {
  return /\{\{|\}\}|\{([^{}]*)\}/g;
}
/** A template of text, placeholders and doubled braces only: no brace left alone. */
function wellFormed(): RegExp {
  return /^(?:[^{}]|\{\{|\}\}|\{[^{}]*\})*$/;
}

/** Commands ready to send, or why none may be. @internal */
export type Rendered = { commands: string[] } | { refused: string };

/**
 * What is wrong with a template (an unknown placeholder, a brace left open, a control
 * character, nothing to run), or `undefined`. Checked once, when the sink is created.
 * @internal
 */
export function templateProblem(template: unknown, placeholders: readonly string[]): string | undefined {
  if (typeof template !== 'string' || template.trim() === '') return 'must be a non-empty string';
  if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(template)) return 'must not contain control characters (a newline would send a second command)';
  for (const match of template.matchAll(placeholder())) {
    if (match[1] !== undefined && !placeholders.includes(match[1])) return `has an unknown placeholder {${match[1] as string}} (${placeholders.length === 0 ? 'it takes none' : `known: ${placeholders.map((p) => `{${p}}`).join(', ')}`})`;
  }
  if (!wellFormed().test(template)) return 'has a brace that is not part of a placeholder (write a literal brace twice: {{ or }})';
  return undefined;
}

/**
 * What is wrong with `value` as the placeholder `name`'s value, or `undefined`.
 * @internal
 */
export function valueProblem(name: string, value: string): string | undefined {
  if (name === 'player') return player().test(value) ? undefined : 'is outside the player names a command may hold (A-Z a-z 0-9 _, then also . and -, at most 64)';
  if (name === 'quantity' || name === 'amount') return count().test(value) ? undefined : 'is not a non-negative integer';
  if (value === '') return 'is empty';
  if (value.length > MAX_TEXT) return `is longer than ${MAX_TEXT} characters`;
  return unsafeText().test(value) ? 'holds a character that could break out of the command (a quote, \\, ;, {, }, §, a control or format character)' : undefined;
}

/**
 * The commands of `templates` filled with `values`, or the first refusal: every value a
 * template uses is checked, and one bad value refuses the whole item (its commands run
 * all or none).
 * @internal
 */
export function render(templates: readonly string[], values: Readonly<Record<string, string>>): Rendered {
  const commands: string[] = [];
  for (const template of templates) {
    let refused: string | undefined;
    const command = template.replace(placeholder(), (whole: string, name: string | undefined) => {
      if (name === undefined) return whole.charAt(0);
      const value = values[name] ?? '';
      const problem = valueProblem(name, value);
      if (problem !== undefined && refused === undefined) refused = `{${name}} ${problem}`;
      return value;
    });
    if (refused !== undefined) return { refused };
    commands.push(command);
  }
  return { commands };
}

/**
 * The templates for `key` (a product or reward id, tried in order), else `"*"`, else
 * `undefined` (nothing configured: the item waits for staff).
 * @internal
 */
export function templatesFor(table: Readonly<Record<string, readonly string[]>> | undefined, keys: readonly string[]): readonly string[] | undefined {
  if (table === undefined) return undefined;
  for (const key of [...keys, '*']) {
    if (Object.hasOwn(table, key)) return table[key];
  }
  return undefined;
}
