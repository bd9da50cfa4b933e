/**
 * Text that reaches a terminal is data, not control. Every value the CLIs print in a table
 * or a line (journal fields, lock fields, database rows, store answers, errors, notes)
 * goes through {@link printable} first, so that one record is always one row and nothing
 * a record holds can clear the screen, move the cursor or reorder what is shown; `--json`
 * goes through {@link printableJson}, which keeps the exact values.
 *
 * The rule, said the same way in `teamgames journal --help` and the guide: C0 controls
 * (newline and tab included), DEL, C1 controls, the bidi controls (U+061C, U+200E, U+200F,
 * U+202A–U+202E, U+2066–U+2069), every other invisible format character (zero-width
 * spaces and joiners, U+FEFF, tags…), the line and paragraph separators (U+2028, U+2029)
 * and half a surrogate pair are shown as `\u` and four hex digits (`\u001b` for ESC,
 * `\u000a` for a newline; `\u{e0001}` above U+FFFF), and a backslash as `\\`, so what is
 * shown can be read back exactly.
 *
 * @module
 */

// Cc: C0, DEL and C1. Cf: format characters, the bidi controls among them (U+061C, U+200E/F,
// U+202A–U+202E, U+2066–U+2069). Zl/Zp: U+2028/U+2029, line breaks to some terminals. Cs:
// a lone surrogate (a pair is matched as one code point under the u flag, never as Cs).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNPRINTABLE_OR_BACKSLASH = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\\]/gu;
// What JSON.stringify leaves raw: it escapes C0 (and lone surrogates) itself.
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

function hex(code: number): string {
  return code.toString(16).padStart(4, '0');
}

/**
 * `text` as it can be shown on a terminal: every unprintable character escaped as
 * `\u001b` (`\u{e0001}` above U+FFFF), a backslash as `\\`; any other text unchanged.
 *
 * @example
 * ```ts
 * printable('Dragon\u001b[2J claws\nforged row'); // 'Dragon\\u001b[2J claws\\u000aforged row'
 * ```
 */
export function printable(text: string): string {
  if (!UNPRINTABLE.test(text) && !text.includes('\\')) return text;
  return text.replace(UNPRINTABLE_OR_BACKSLASH, (c) => {
    if (c === '\\') return '\\\\';
    const code = c.codePointAt(0) as number;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${hex(code)}`;
  });
}

/**
 * A JSON text with the characters a terminal could act on that `JSON.stringify` leaves
 * raw (DEL, C1, format and bidi characters, U+2028/U+2029) written as `\uXXXX` escapes:
 * the same JSON value, parsed back exactly, printable. Only strings can hold them, and
 * inside a string an escape means the same character.
 */
export function printableJson(json: string): string {
  return json.replace(UNPRINTABLE_IN_JSON, (c) => {
    let out = '';
    // An astral format character (U+E0001…) as its surrogate pair, which JSON spells that way.
    for (let i = 0; i < c.length; i++) out += `\\u${hex(c.charCodeAt(i))}`;
    return out;
  });
}
