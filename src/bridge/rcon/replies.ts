/**
 * What a game's RCON reply says about the command it answers: done, did not happen (the
 * player is not there: it can pass; the command, the item or the arguments are wrong: it
 * will not pass by itself), or unknown. Per game a preset of reply patterns (the texts
 * the games write, from their language files), extended by the config for the game and
 * per product. A reply that fits no pattern is unknown (a window for staff), unless the
 * config says the game's replies are not informative.
 *
 * @module
 * @internal
 */

/** What one reply says. @internal */
export type ReplyMeaning = 'done' | 'absent' | 'refused' | 'unknown';

/** Reply patterns (regular expressions, matched case-insensitively against the reply, trimmed, without Minecraft's `§` codes), per meaning. */
export interface ReplyPatterns {
  /** The command ran: `^Gave \d+ \[`. */
  done?: readonly string[];
  /** It did not run because the player is not there: kept pending, given on their next join. */
  absent?: readonly string[];
  /** It did not run and will not by itself (unknown command or item, wrong arguments): marked for staff at once. */
  refused?: readonly string[];
  /** Whether it ran cannot be told (an internal error of the game): a window for staff. */
  unknown?: readonly string[];
  /** `false`: a reply that fits no pattern counts as done (the game's replies say nothing); default `true` (a window). */
  informative?: boolean;
}

/** The games with presets. @internal */
export const GAMES = ['minecraft', 'source', 'ark', 'custom'] as const;
/** One of {@link GAMES}. @internal */
export type Game = (typeof GAMES)[number];

/** What the bridge knows of a game: its reply patterns and the command that lists who is online (none: no online check). */
interface Preset {
  replies: ReplyPatterns;
  listCommand?: string;
}

// The texts below are the games' own (en_us); the ones marked "guess" were not checked
// against a running server of that version.
const PRESETS: Record<Game, Preset> = {
  // Vanilla 1.13+ (Brigadier), and Paper/Spigot, which run the vanilla commands and add
  // Bukkit's "Unknown command" text; older (1.12) texts where they differ.
  minecraft: {
    listCommand: 'list',
    replies: {
      done: [
        '^Gave \\d+ \\[.+\\] to ', // commands.give.success.single / .multiple
        '^Given \\[.+\\] \\* \\d+ to ', // 1.12 commands.give.success (guess)
        '^Applied effect ', // commands.effect.give.success.*
        '^Gave \\d+ experience (points|levels) to ', // commands.experience.add.*
        '^Summoned new ', // commands.summon.success
        '^Set the time to ', // commands.time.set
        '^Teleported ', // commands.teleport.success.*
        '^$', // say, tellraw, title and others answer nothing
      ],
      absent: [
        '^No player was found', // argument.entity.notfound.player
        '^No entity was found', // argument.entity.notfound.entity
        '^That player does not exist', // argument.player.unknown
        '^That player cannot be found', // 1.12 commands.generic.player.notFound (guess)
        '^(Error: )?Player not found', // EssentialsX and other plugins (guess)
        '^Can\'t find player ', // Bukkit 1.12 and earlier (guess)
      ],
      refused: [
        '^Unknown or incomplete command', // command.unknown.command (", see below for error"; ". See below for error" in later versions)
        '^Incorrect argument for command', // command.unknown.argument
        '^Unknown command', // Spigot/Paper: Unknown command. Type "/help" for help.
        '^Unknown item ', // argument.item.id.invalid
        '^Unknown effect', // effect.effectNotFound (guess)
        '^Expected ', // parsing.*.expected, command.expected.separator
        '^Invalid (integer|long|float|double|boolean|item|entity|name)', // parsing.int.invalid …
        '^(Integer|Long|Float|Double) must not be (less|more) than ', // argument.integer.low / .big
        '^Can\'t give more than ', // commands.give.failed.toomanyitems
        '^A player is required to run this command here', // permissions.requires.player
        '^Only one (player|entity) is allowed', // argument.player.toomany, argument.entity.toomany
        '^There is no such item with name ', // 1.12 commands.give.item.notFound (guess)
        '^Usage: ', // 1.12 commands.generic.usage and Bukkit usage lines (guess)
      ],
      unknown: [
        '^An unexpected error occurred trying to execute that command', // command.failed
      ],
    },
  },
  // Source engine games (Counter-Strike, Team Fortress 2, Garry's Mod) with SourceMod.
  source: {
    listCommand: 'status',
    replies: {
      done: [],
      absent: [
        'No matching client', // SourceMod: [SM] No matching client was found.
        'No matching clients', // SourceMod (guess)
        'is not in game', // SourceMod: Target is not in game. (guess)
      ],
      refused: [
        '^Unknown command', // the engine's console: Unknown command "foo"
        'More than one client matched', // SourceMod: [SM] More than one client matched the given pattern.
        '^\\[SM\\] Usage: ', // SourceMod usage lines (guess)
      ],
      unknown: [],
      // Most Source commands answer nothing, or free text written by each plugin: a
      // reply that says no known failure counts as done (the guide says what that costs).
      informative: false,
    },
  },
  // ARK: Survival Evolved / Ascended: every command that prints nothing (GiveItemToPlayer
  // included, whether the player exists or not) answers "Server received, But no response!!".
  ark: {
    listCommand: 'ListPlayers',
    replies: {
      done: ['^Server received, But no response!!'],
      absent: [],
      refused: [],
      unknown: [],
      informative: false,
    },
  },
  // Nothing known: only the config's patterns; a reply they do not cover is a window.
  custom: { replies: {} },
};

/** The command that lists who is online in `game`, or `undefined` (no online check). @internal */
export function listCommandOf(game: Game): string | undefined {
  return PRESETS[game].listCommand;
}

/** What a problem with a pattern is (it does not compile), or `undefined`. @internal */
export function patternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'iu');
    return undefined;
  } catch (error) {
    return `is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Compiled patterns, the most specific first (a product's, then the game's config, then the preset). */
export interface ReplyRules {
  readonly sets: ReadonlyArray<{ meaning: Exclude<ReplyMeaning, 'done'> | 'done'; pattern: RegExp }>;
  readonly informative: boolean;
}

const ORDER = ['absent', 'refused', 'unknown', 'done'] as const;

/**
 * The rules for a game and its config: for each meaning, the config's patterns tried
 * before the preset's; "did not happen" and "unknown" before "done", so a reply that fits
 * both is never taken for done.
 * @internal
 */
export function replyRules(game: Game, ...overrides: ReadonlyArray<ReplyPatterns | undefined>): ReplyRules {
  const layers = [...overrides.filter((o): o is ReplyPatterns => o !== undefined), PRESETS[game].replies];
  const sets: Array<{ meaning: (typeof ORDER)[number]; pattern: RegExp }> = [];
  for (const meaning of ORDER) {
    for (const layer of layers) for (const source of layer[meaning] ?? []) sets.push({ meaning, pattern: new RegExp(source, 'iu') });
  }
  const informative = layers.find((l) => l.informative !== undefined)?.informative ?? true;
  return { sets, informative };
}

// Minecraft's formatting codes (§ and one character), which Paper and plugins put in replies.
const FORMATTING = /§./gsu;

/** What `reply` says by `rules`. @internal */
export function meaningOf(reply: string, rules: ReplyRules): ReplyMeaning {
  const text = reply.replace(FORMATTING, '').trim();
  for (const { meaning, pattern } of rules.sets) if (pattern.test(text)) return meaning;
  return rules.informative ? 'unknown' : 'done';
}
