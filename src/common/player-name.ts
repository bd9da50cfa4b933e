/**
 * The player-name rule, in one place: the SDK checks a name with it before any request,
 * and the mock refuses with it what the service refuses (SPEC §6, the testing guide's
 * I-13). A name the mock accepted a purchase for is therefore one the SDK claims for.
 * Imports nothing: the mock reads it without loading the SDK.
 */

/** The longest player name, in characters: Unicode code points, not UTF-16 units. */
export const MAX_PLAYER_NAME_LENGTH = 64;

// C0 and C1 controls, and the bidi embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069) that make a name display as another.
const CONTROL_OR_BIDI = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

// A surrogate half without its pair: not text. UTF-8 (a form body, the service's
// database) turns it into U+FFFD, a name other than the one the purchase was made for.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What is wrong with `name` as a player name, as a rule a person can read, or
 * `undefined` when the service accepts it: non-blank, at most 64 characters (code
 * points), no control or bidi-override characters, no lone surrogate. Spaces,
 * underscores, 17-digit Steam ids and any script are fine; letter case is kept.
 */
export function playerNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'must not be blank';
  const length = [...name].length;
  if (length > MAX_PLAYER_NAME_LENGTH) return `must be at most ${MAX_PLAYER_NAME_LENGTH} characters, got ${length}`;
  if (CONTROL_OR_BIDI.test(name)) return 'must not contain control or bidi-override characters';
  if (LONE_SURROGATE.test(name)) return 'must be valid Unicode text (it holds half of a surrogate pair)';
  return undefined;
}
