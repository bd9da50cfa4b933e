/**
 * What a game's reply says (src/bridge/rcon/replies.ts), the presets' every pattern read
 * from the texts the games write (issue #44), loaded afresh for each test: the presets are
 * a module-level table, and a module loaded once before any test would hide a change to
 * them (StrykerJS's mutants of module-level code, issue #46). In a file of its own, as the
 * other suites use the module loaded once.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Replies from '../../src/bridge/rcon/replies.js';

let replies: typeof Replies;

beforeEach(async () => {
  vi.resetModules();
  replies = await import('../../src/bridge/rcon/replies.js');
});

/** What `reply` says for `game` and its config's patterns. */
const meaning = (game: Replies.Game, reply: string, ...overrides: Replies.ReplyPatterns[]) => replies.meaningOf(reply, replies.replyRules(game, ...overrides));

/**
 * A reply no preset's pattern fits. StrykerJS fills an emptied list with this very text, so
 * a preset's empty list that came to hold it would be caught too.
 */
const NOTHING_KNOWN = 'Stryker was here';

describe('the Minecraft preset', () => {
  it.each([
    // done
    ['Gave 64 [Diamond] to Jeb_', 'done'],
    ['Gave 1 [Whip] to 2 players', 'done'],
    ['Given [Whip] * 1 to Steve', 'done'],
    ['Applied effect Speed to Steve', 'done'],
    ['Gave 100 experience points to Steve', 'done'],
    ['Gave 5 experience levels to Steve', 'done'],
    ['Summoned new Zombie', 'done'],
    ['Set the time to 1000', 'done'],
    ['Teleported Steve to 0.5, 64.0, 0.5', 'done'],
    ['', 'done'],
    // absent
    ['No player was found', 'absent'],
    ['No entity was found', 'absent'],
    ['That player does not exist', 'absent'],
    ['That player cannot be found', 'absent'],
    ['Player not found.', 'absent'],
    ['Error: Player not found.', 'absent'],
    ["Can't find player Steve", 'absent'],
    // refused
    ['Unknown or incomplete command, see below for error\ngvie Steve whip 1<--[HERE]', 'refused'],
    ['Unknown or incomplete command. See below for error', 'refused'],
    ['Incorrect argument for command\ngive Steve whip 1 x<--[HERE]', 'refused'],
    ['Unknown command. Type "/help" for help.', 'refused'],
    ["Unknown item 'minecraft:whipp'", 'refused'],
    ['Unknown effect: minecraft:speedy', 'refused'],
    ['Expected whitespace to end one argument, but found trailing data', 'refused'],
    ["Invalid integer 'x'", 'refused'],
    ['Invalid item name', 'refused'],
    ['Integer must not be less than 1, found 0', 'refused'],
    ['Double must not be more than 10.0, found 11.0', 'refused'],
    ["Can't give more than 6400 of [Whip]", 'refused'],
    ['A player is required to run this command here', 'refused'],
    ['Only one player is allowed, but the provided selector allows more than one', 'refused'],
    ['Only one entity is allowed, but the provided selector allows more than one', 'refused'],
    ['There is no such item with name whipp', 'refused'],
    ['Usage: /give <player> <item> [amount]', 'refused'],
    // unknown
    ['An unexpected error occurred trying to execute that command', 'unknown'],
    ['ok', 'unknown'],
    ['Gave nothing to anyone', 'unknown'],
    [NOTHING_KNOWN, 'unknown'],
    // Hostile: a product named like a failure is still a give; a failure behind an escape sequence fits no pattern (a window, never "done").
    ['Gave 1 [No player was found] to Steve', 'done'],
    ['\u001b[31mNo player was found', 'unknown'],
    ['x'.repeat(4096), 'unknown'],
  ] as const)('%j is %s', (reply, expected) => {
    expect(meaning('minecraft', reply)).toBe(expected);
  });

  it("is read case-insensitively, without Minecraft's § codes, trimmed", () => {
    expect(meaning('minecraft', 'no player was found')).toBe('absent');
    expect(meaning('minecraft', 'GAVE 1 [Whip] TO Steve')).toBe('done');
    expect(meaning('minecraft', '§cNo player was found')).toBe('absent');
    expect(meaning('minecraft', '§c§lNo player §rwas found')).toBe('absent');
    expect(meaning('minecraft', '  No player was found\n')).toBe('absent');
    expect(meaning('minecraft', ' \n')).toBe('done');
  });

  it('told not informative, its unknown reply is still unknown (a window), and its failures still failures', () => {
    expect(meaning('minecraft', 'An unexpected error occurred trying to execute that command', { informative: false })).toBe('unknown');
    expect(meaning('minecraft', 'No player was found', { informative: false })).toBe('absent');
    expect(meaning('minecraft', 'ok', { informative: false })).toBe('done');
  });
});

describe('the Source preset', () => {
  it.each([
    ['[SM] No matching client was found.', 'absent'],
    ['[SM] No matching clients were found.', 'absent'],
    ['[SM] Target is not in game.', 'absent'],
    ['Unknown command "sm_givee"', 'refused'],
    ['[SM] More than one client matched the given pattern.', 'refused'],
    ['[SM] Usage: sm_give <#userid|name> <item>', 'refused'],
    // Not informative: a reply that fits no pattern counts as done.
    ['', 'done'],
    ['whatever a plugin prints', 'done'],
    [NOTHING_KNOWN, 'done'],
  ] as const)('%j is %s', (reply, expected) => {
    expect(meaning('source', reply)).toBe(expected);
  });
});

describe('the ARK preset', () => {
  it.each([
    ['Server received, But no response!! ', 'done'],
    ['server received, but no response!!', 'done'],
    // Not informative: a reply that fits no pattern counts as done.
    ['anything', 'done'],
    [NOTHING_KNOWN, 'done'],
  ] as const)('%j is %s', (reply, expected) => {
    expect(meaning('ark', reply)).toBe(expected);
  });
});

describe('the custom preset', () => {
  it('knows no reply: each is a window', () => {
    expect(meaning('custom', 'anything')).toBe('unknown');
    expect(meaning('custom', '')).toBe('unknown');
    expect(meaning('custom', NOTHING_KNOWN)).toBe('unknown');
  });
});

describe('told informative, each game', () => {
  it.each([['minecraft'], ['source'], ['ark'], ['custom']] as const)('%s: a reply no pattern fits is unknown, a known one is what it says', (game) => {
    expect(meaning(game, NOTHING_KNOWN, { informative: true })).toBe('unknown');
    expect(meaning(game, 'anything else', { informative: true })).toBe('unknown');
  });

  it("the presets' done replies stay done", () => {
    expect(meaning('ark', 'Server received, But no response!!', { informative: true })).toBe('done');
    expect(meaning('minecraft', 'Gave 1 [Whip] to Steve', { informative: true })).toBe('done');
  });
});

describe("the config's patterns", () => {
  it('come before the preset\'s; a product\'s before the game\'s; "informative" from the most specific that says it', () => {
    const game = { done: ['^Bought '], absent: ['^Offline:'] };
    const product = { refused: ['^Bought nothing'], informative: false };
    expect(meaning('minecraft', 'Bought a whip', game)).toBe('done');
    expect(meaning('minecraft', 'Offline: Steve', game)).toBe('absent');
    expect(meaning('minecraft', 'Bought nothing', product, game)).toBe('refused');
    expect(meaning('minecraft', 'something else', product, game)).toBe('done');
    expect(meaning('minecraft', 'something else', game)).toBe('unknown');
    // A "did not happen" pattern wins over a "done" one that also fits.
    expect(meaning('minecraft', 'No player was found', { done: ['.*'] })).toBe('absent');
  });

  it('that do not say whether the replies are informative leave it to the preset', () => {
    expect(meaning('source', 'something else', { done: ['^Bought '] })).toBe('done');
    expect(meaning('ark', 'something else', { absent: ['^Offline:'] }, { refused: ['^No such kit'] })).toBe('done');
    expect(meaning('minecraft', 'something else', { done: ['^Bought '] })).toBe('unknown');
  });

  it('are matched case-insensitively, as Unicode', () => {
    expect(meaning('custom', 'BOUGHT A WHIP', { done: ['^bought '] })).toBe('done');
    expect(meaning('custom', 'Delivered 🎁 to Steve', { done: ['^Delivered \\p{Emoji_Presentation} to '] })).toBe('done');
  });
});

describe('the command that lists who is online', () => {
  it.each([
    ['minecraft', 'list'],
    ['source', 'status'],
    ['ark', 'ListPlayers'],
    ['custom', undefined],
  ] as const)('%s: %s', (game, command) => {
    expect(replies.listCommandOf(game)).toBe(command);
  });
});

describe('a pattern that does not compile', () => {
  it('is named with the reason; a valid one, none', () => {
    expect(replies.patternProblem('^Gave \\d+ ')).toBeUndefined();
    expect(replies.patternProblem('^(Gave')).toMatch(/^is not a valid regular expression \(.+\)$/);
  });

  it('is judged as the replies are matched (Unicode): "\\p" alone is refused', () => {
    expect(replies.patternProblem('\\p')).toMatch(/^is not a valid regular expression \(.+\)$/);
    expect(replies.patternProblem('^\\p{L}+ joined')).toBeUndefined();
  });
});
