/**
 * HTML with auto-escaping, as a tagged template: every value put into `html` is text
 * unless it is itself `html` (or an array of such), so a player's name, a product name from
 * the store or another staff member's note can never become markup. Text is escaped for
 * HTML (`& < > " '`) after the characters a terminal or a browser would act on or hide
 * (controls, bidi overrides, zero-width characters) are made visible the way the CLI shows
 * them (`\u202e`), so a note reads on the page as it does in `teamgames journal`.
 *
 * Written here rather than taken from a templating package: the bridge's page is a few
 * templates, and a package would be one more optional peer for every bridge user while
 * still needing the visible-control step, which no HTML escaper does.
 *
 * @module
 * @internal
 */
import { printable } from '../../common/printable.js';

/** Markup already escaped (what `html` returns). */
export class Html {
  /** @internal */
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` as HTML text: unprintable characters shown as `\uXXXX`, then `& < > " '` escaped. */
export function escapeText(text: string): string {
  return printable(text).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/**
 * `text` exact, only `& < > " '` escaped: for a form's hidden value that must come back as
 * it was (a player's name with a zero-width space is another player than the one with
 * `\u200b` written out); never for what is shown.
 */
export function exact(text: string): Html {
  return new Html(text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string));
}

/** A value of a template: `Html` as is, arrays joined, `undefined`/`null`/`false` as nothing, the rest as escaped text. */
function part(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeText(String(value));
}

/** The tagged template: `html\`<td>${name}</td>\`` escapes `name`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + (strings[i + 1] as string);
  return new Html(out);
}
