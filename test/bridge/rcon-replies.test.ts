/**
 * RCON replies decide (#44): each command's reply is read by the game's patterns. Against
 * the test RCON server answering as Minecraft does: a player not online gets nothing and
 * keeps the item; "No player was found" keeps it pending; an unknown command or item marks
 * it for staff at once; a reply that fits no pattern is a window, never given (unless the
 * game's replies are not informative); a restart mid-command is a window; a reply split
 * across packets is read whole; command 2 of 3 failing makes the item a window.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal, type DeliveryJournal, type JournalLine, type JournalWindow } from '../../src/index.js';
import { RconStaffError, RconWindowError, commandWindowId } from '../../src/bridge/rcon/sink.js';
import { parseOnline } from '../../src/bridge/rcon/players.js';
import { NOW, itemOf, rconSuite, recordingLog, whip } from '../support/rcon-sink.js';

const rcon = rconSuite();

const windowOf = async (journal: DeliveryJournal, deliveryId: string) => (await journal.pending()).find((e): e is JournalWindow => e.deliveryId === commandWindowId(deliveryId));
const lineOf = async (journal: DeliveryJournal, deliveryId: string) => (await journal.pending()).find((e): e is JournalLine => e.deliveryId === deliveryId);

/** A journal holding one claimed Whip line of `player`. */
async function journalWith(deliveryId: string, player = 'Steve'): Promise<{ journal: MemoryJournal; line: JournalLine }> {
  const journal = new MemoryJournal();
  const line = whip(deliveryId, player);
  await journal.append([line]);
  return { journal, line };
}

// What each reply says, by the presets and the config's patterns: rcon-replies-presets.test.ts (loaded afresh).
describe('the list replies', () => {
  it('who is online: Minecraft\'s list, ARK\'s ListPlayers, a Source status; names exactly as written', () => {
    expect(parseOnline('There are 2 of a max of 20 players online: Steve, Alex', 'minecraft')).toEqual(['Steve', 'Alex']);
    expect(parseOnline('0. Steve, 76561198000000001\n1. Alex_2, 76561198000000002\n', 'ark')).toEqual(['Steve', 'Alex_2']);
    expect(parseOnline('No Players Connected', 'ark')).toEqual([]);
    expect(parseOnline('Unknown command', 'ark')).toBeUndefined();
    const status = ['hostname: My Server', 'version : 1.38', 'players : 2 humans, 0 bots (24 max)', '# userid name uniqueid connected ping loss state rate adr', '#      2 "Steve"   STEAM_1:0:1 05:00 50 0 active 80000 1.2.3.4:27005', '#  3 1 "Alex" [U:1:2] 01:00 40 0 active 80000 1.2.3.5:27005', '#end'].join('\n');
    expect(parseOnline(status, 'source')).toEqual(['Steve', 'Alex']);
    expect(parseOnline('Unknown command "status"', 'source')).toBeUndefined();
  });
});

describe('the player checked online before the first command, on the same connection', () => {
  it('not in the list: only the list is sent, nothing marked, the item stays pending (not for staff); given once they are in the list', async () => {
    const server = await rcon.server();
    server.online = ['Alex'];
    const { journal, line } = await journalWith('invoice:1');
    const log = recordingLog();
    const sink = rcon.sink(server, journal, { checkOnline: undefined }, log);
    const error = await sink.give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(RconStaffError);
    expect(error).not.toBeInstanceOf(RconWindowError);
    expect((error as Error).message).toBe('RCON: not sent for product 42: Steve is not online (list); given when they are back');
    expect(server.commands).toEqual(['list']);
    expect(await lineOf(journal, 'invoice:1')).toEqual(line);
    server.online = ['Alex', 'Steve'];
    await sink.give(itemOf(line));
    expect(server.commands).toEqual(['list', 'list', 'give Steve whip 1']);
    expect(server.logins.ok).toBe(1);
  });

  it('not in the list: the info line names the item and the player', async () => {
    const server = await rcon.server();
    server.online = ['Alex'];
    const { journal, line } = await journalWith('invoice:7');
    const log = recordingLog();
    await expect(rcon.sink(server, journal, { checkOnline: undefined }, log).give(itemOf(line))).rejects.toThrow('Steve is not online');
    expect(log.lines).toEqual([{ level: 'info', message: 'RCON: the player is not online; nothing sent, kept for their next join', fields: { deliveryId: 'invoice:7', player: 'Steve' } }]);
  });

  it("the players' own list command is the check too (players.source 'list' with listCommand)", async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'who' ? 'Steve' : server.minecraft(command));
    const { journal, line } = await journalWith('invoice:8');
    await rcon.sink(server, journal, { checkOnline: undefined, players: { source: 'list', listCommand: 'who', intervalMs: 60_000 } }).give(itemOf(line));
    expect(server.commands).toEqual(['who', 'give Steve whip 1']);
  });

  it('the list command lost on the connection: nothing marked, the item waits, the error says the check failed', async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'list' ? { drop: true } : server.minecraft(command));
    const { journal, line } = await journalWith('invoice:9');
    const error = await rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(RconWindowError);
    expect((error as Error).message).toMatch(/^RCON: not sent for product 42: the online check \(list\) failed: RCON: /);
    expect(await lineOf(journal, 'invoice:9')).toEqual(line);
    expect(await windowOf(journal, 'invoice:9')).toBeUndefined();
  });

  it('names match exactly: "Steve2", "steve" and "XSteve" online are not Steve', async () => {
    const server = await rcon.server();
    server.online = ['Steve2', 'steve', 'XSteve'];
    const { journal, line } = await journalWith('invoice:2');
    await expect(rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line))).rejects.toThrow('Steve is not online');
    expect(server.commands).toEqual(['list']);
  });

  it('a list reply that cannot be read: nothing sent, the item waits, logged', async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'list' ? 'Unknown or incomplete command, see below for error' : server.minecraft(command));
    const { journal, line } = await journalWith('invoice:3');
    const log = recordingLog();
    await expect(rcon.sink(server, journal, { checkOnline: undefined }, log).give(itemOf(line))).rejects.toThrow('the reply to list could not be read, so whether Steve is online is not known');
    expect(server.commands).toEqual(['list']);
    expect(log.lines).toContainEqual({ level: 'warn', message: 'RCON list reply not understood; the item waits (is the game right, or set checkOnline: false)', fields: { deliveryId: 'invoice:3', command: 'list', reply: 'Unknown or incomplete command, see below for error' } });
  });

  it('a list reply that cannot be read, long: the log holds its first 200 characters', async () => {
    const server = await rcon.server();
    const reply = `Error: ${'x'.repeat(300)}`;
    server.answer = (command) => (command === 'list' ? reply : server.minecraft(command));
    const { journal, line } = await journalWith('invoice:3');
    const log = recordingLog();
    await expect(rcon.sink(server, journal, { checkOnline: undefined }, log).give(itemOf(line))).rejects.toThrow('could not be read');
    expect(log.lines[0]?.fields).toEqual({ deliveryId: 'invoice:3', command: 'list', reply: reply.slice(0, 200) });
  });

  it('checkOnline false, or a game without a list command: no list sent', async () => {
    const server = await rcon.server();
    const { journal, line } = await journalWith('invoice:4');
    await rcon.sink(server, journal, { checkOnline: false }).give(itemOf(line));
    await rcon.sink(server, journal, { checkOnline: undefined, game: 'custom', replies: { done: ['^Gave '] } }).give(itemOf(whip('invoice:5')));
    expect(server.commands).toEqual(['give Steve whip 1', 'give Steve whip 1']);
  });

  it('ARK: ListPlayers is the check', async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'ListPlayers' ? '0. Steve, 76561198000000001\n' : 'Server received, But no response!! ');
    const { journal, line } = await journalWith('invoice:6');
    await rcon.sink(server, journal, { checkOnline: undefined, game: 'ark' }).give(itemOf(line));
    expect(server.commands).toEqual(['ListPlayers', 'give Steve whip 1']);
  });
});

describe('replies that say it did not happen', () => {
  it('"No player was found" (the player left after the check): the mark removed, the item pending for their next join, not for staff, no window', async () => {
    const server = await rcon.server();
    // The list still names Steve; the give finds nobody (he left in between).
    server.answer = (command) => (command === 'list' ? 'There are 1 of a max of 20 players online: Steve' : 'No player was found');
    const { journal, line } = await journalWith('invoice:10');
    const log = recordingLog();
    const error = await rcon.sink(server, journal, { checkOnline: undefined }, log).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(RconStaffError);
    expect((error as Error).message).toBe('RCON: product 42 not given: the game answered "No player was found" (the player is not there); given when they are back');
    expect(await lineOf(journal, 'invoice:10')).toEqual(line);
    expect(await windowOf(journal, 'invoice:10')).toBeUndefined();
    expect(log.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(['RCON: the game says the player is not there; nothing given, kept for their next join']);
  });

  it("long replies: the error holds the reply's first 200 characters", async () => {
    const server = await rcon.server();
    const absent = `No player was found ${'x'.repeat(300)}`;
    server.answer = (command) => (command === 'list' ? 'There are 1 of a max of 20 players online: Steve' : absent);
    const { journal, line } = await journalWith('invoice:12');
    await expect(rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line))).rejects.toThrow(`RCON: product 42 not given: the game answered "${absent.slice(0, 200)}" (the player is not there); given when they are back`);
    const refused = `Unknown or incomplete command ${'y'.repeat(300)}`;
    server.answer = () => refused;
    const other = await journalWith('invoice:13');
    await expect(rcon.sink(server, other.journal).give(itemOf(other.line))).rejects.toThrow(`RCON: product 42 not given: the game refused "give Steve whip 1" with "${refused.slice(0, 200)}" (fix the command template or the product, then retry it)`);
  });

  it('an unknown command (a typo in the template): for staff at once, an error log naming the product, the mark removed, no window', async () => {
    const server = await rcon.server();
    const { journal, line } = await journalWith('invoice:11');
    const log = recordingLog();
    const error = await rcon.sink(server, journal, { commands: { '42': ['gvie {player} whip {quantity}'] } }, log).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RconStaffError);
    expect(error).toMatchObject({ staff: true, message: expect.stringMatching(/^RCON: product 42 not given: the game refused "gvie Steve whip 1" with "Unknown or incomplete command, see below for error/) });
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([
      { level: 'error', message: 'RCON command refused by the game for product 42; nothing given, marked for staff (fix the command template or the product)', fields: expect.objectContaining({ what: 'product 42', command: 'gvie Steve whip 1' }) },
    ]);
    expect(await lineOf(journal, 'invoice:11')).toEqual(line);
    expect(await windowOf(journal, 'invoice:11')).toBeUndefined();
  });

  it.each([
    ['an unknown item', 'give {player} unknown_whip {quantity}', /Unknown item 'minecraft:unknown_whip'/],
    ['a count that is not a number', 'give {player} whip x{quantity}', /Invalid integer 'x1'/],
    ['a count of 0', 'give {player} whip 0', /Integer must not be less than 1, found 0/],
  ])('wrong arguments (%s): for staff at once', async (_what, template, reply) => {
    const server = await rcon.server();
    const { journal, line } = await journalWith('invoice:12');
    const error = await rcon.sink(server, journal, { commands: { '42': [template] } }).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RconStaffError);
    expect((error as Error).message).toMatch(reply);
    expect(await lineOf(journal, 'invoice:12')).toEqual(line);
  });
});

describe('replies that say nothing known: a window, never given', () => {
  it('a reply no pattern fits: a window naming the command, thrown as RconWindowError (the engine reports it), never sent again', async () => {
    const server = await rcon.server();
    server.answer = () => 'ok';
    const { journal, line } = await journalWith('invoice:20');
    const log = recordingLog();
    const sink = rcon.sink(server, journal, {}, log);
    const window = commandWindowId('invoice:20');
    await expect(sink.give(itemOf(line))).rejects.toMatchObject({ name: 'RconWindowError', unverified: { from: NOW, to: NOW }, message: `RCON: the outcome of product 42 is unknown: window ${window} for staff (never sent again)` });
    expect(await windowOf(journal, 'invoice:20')).toMatchObject({ cause: 'unknownCommand', command: 'give Steve whip 1' });
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['RCON reply not understood: the outcome is unknown; a window for staff, never sent again']);
    expect(log.lines.some((l) => l.message === 'RCON command run')).toBe(false);
    // Given again: the window is found, the same words.
    await expect(sink.give(itemOf(line))).rejects.toMatchObject({ name: 'RconWindowError', message: `RCON: the outcome of product 42 is unknown: window ${window} for staff (never sent again)` });
    expect(server.commands).toEqual(['give Steve whip 1']);
  });

  it('Minecraft\'s "An unexpected error occurred": a window', async () => {
    const server = await rcon.server();
    server.answer = () => 'An unexpected error occurred trying to execute that command';
    const { journal, line } = await journalWith('invoice:21');
    await expect(rcon.sink(server, journal).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
  });

  it('a game whose replies are not informative (config): any reply but a known failure counts as done', async () => {
    const server = await rcon.server();
    server.answer = () => 'ok';
    const { journal, line } = await journalWith('invoice:22');
    await rcon.sink(server, journal, { replies: { informative: false } }).give(itemOf(line));
    expect(await windowOf(journal, 'invoice:22')).toBeUndefined();
    server.answer = () => 'No player was found';
    await expect(rcon.sink(server, journal, { replies: { informative: false } }).give(itemOf(whip('invoice:23')))).rejects.toThrow(/the player is not there/);
  });

  it('a product\'s own patterns: its plugin\'s reply is done for it, and a window for another product', async () => {
    const server = await rcon.server();
    server.answer = () => '[LuckPerms] Steve now inherits vip';
    const { journal, line } = await journalWith('invoice:24');
    const config = { commands: { '*': ['lp user {player} parent add vip'] }, productReplies: { '42': { done: ['now inherits '] } } };
    await rcon.sink(server, journal, config).give(itemOf(line));
    const other = { ...whip('invoice:25'), item: { ...line.item, product_id: 43, product_id_string: 'other' } };
    await expect(rcon.sink(server, journal, config).give(itemOf(other))).rejects.toBeInstanceOf(RconWindowError);
  });

  it('a product\'s patterns found by its product_id_string too, then "*"; the game\'s own for a product with none', async () => {
    const server = await rcon.server();
    server.answer = () => 'Shop: delivered';
    const journal = new MemoryJournal();
    const byName = { ...whip('invoice:27'), item: { ...whip('invoice:27').item, product_id: 7, product_id_string: 'vip' } };
    const other = { ...whip('invoice:28'), item: { ...whip('invoice:28').item, product_id: 8, product_id_string: 'gold' } };
    await rcon.sink(server, journal, { commands: { '*': ['give {player} whip {quantity}'] }, productReplies: { vip: { done: ['^Shop: delivered$'] } } }).give(itemOf(byName));
    await expect(rcon.sink(server, journal, { commands: { '*': ['give {player} whip {quantity}'] }, productReplies: { vip: { done: ['^Shop: delivered$'] } } }).give(itemOf(other))).rejects.toBeInstanceOf(RconWindowError);
    await rcon.sink(server, journal, { commands: { '*': ['give {player} whip {quantity}'] }, productReplies: { '*': { done: ['^Shop: '] } } }).give(itemOf(whip('invoice:29')));
  });

  it('the game restarting mid-command (the connection dropped after it was received): a window, never sent again', async () => {
    const server = await rcon.server();
    server.online = ['Steve'];
    server.answer = (command) => (command === 'list' ? server.listReply : { drop: true });
    const { journal, line } = await journalWith('invoice:26');
    await expect(rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    server.answer = (command) => server.minecraft(command);
    await expect(rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toEqual(['list', 'give Steve whip 1']);
  });
});

describe('replies split across packets', () => {
  it('a reply written in pieces of 3 bytes is read whole: given', async () => {
    const server = await rcon.server();
    server.online = ['Steve'];
    server.answer = (command) => ({ split: 3, reply: server.minecraft(command) });
    const { journal, line } = await journalWith('invoice:30');
    await rcon.sink(server, journal, { checkOnline: undefined }).give(itemOf(line));
    expect(server.commands).toEqual(['list', 'give Steve whip 1']);
    expect(await windowOf(journal, 'invoice:30')).toBeUndefined();
  });
});

describe('several commands of one item: command 2 of 3 fails', () => {
  const three = { commands: { '42': ['give {player} whip {quantity}', 'give {player} unknown_bonus 1', 'say {player} bought a whip'] } };

  it('refused after the first ran: the item is a window naming its commands (partly given), command 3 never sent, an error log saying which ran', async () => {
    const server = await rcon.server();
    const { journal, line } = await journalWith('invoice:40');
    const log = recordingLog();
    await expect(rcon.sink(server, journal, three, log).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toEqual(['give Steve whip 1', 'give Steve unknown_bonus 1']);
    expect(await windowOf(journal, 'invoice:40')).toMatchObject({ command: 'give Steve whip 1\ngive Steve unknown_bonus 1\nsay Steve bought a whip' });
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([
      { level: 'error', message: 'RCON command 2 of 3 did not run after the ones before it did; a window for staff, never sent again', fields: expect.objectContaining({ command: 'give Steve unknown_bonus 1', meaning: 'refused', ran: ['give Steve whip 1'] }) },
    ]);
  });

  it('the player gone after the first: a window too (the first ran)', async () => {
    const server = await rcon.server();
    let gives = 0;
    server.answer = (command) => (++gives === 1 ? server.minecraft(command) : 'No player was found');
    const { journal, line } = await journalWith('invoice:41');
    await expect(rcon.sink(server, journal, three).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toHaveLength(2);
  });

  it('the first refused: nothing ran, for staff, nothing else sent', async () => {
    const server = await rcon.server();
    const { journal, line } = await journalWith('invoice:42');
    const config = { commands: { '42': ['give {player} unknown_whip 1', 'give {player} whip {quantity}', 'say done'] } };
    await expect(rcon.sink(server, journal, config).give(itemOf(line))).rejects.toBeInstanceOf(RconStaffError);
    expect(server.commands).toEqual(['give Steve unknown_whip 1']);
  });
});
