/**
 * The bridge's RCON sink (src/bridge/rcon/sink.ts) against a test RCON server on loopback: at
 * most once and never silent. A command is sent only after its `sending` mark is
 * journaled; a command whose outcome is unknown becomes an `unknownCommand` window and is
 * never sent again, by this process or the next; a command certainly not sent (no
 * connection, a refused login, the journal refusing the mark) is retried later.
 */
import { describe, expect, it } from 'vitest';
import { FileJournal, MemoryJournal, type DeliveryJournal, type JournalEntry, type JournalLine, type JournalWindow } from '../../src/index.js';
import { RconStaffError, RconWindowError, commandWindowId } from '../../src/bridge/rcon/sink.js';
import { NOW, itemOf, rconSuite, recordingLog, scrolls, whip } from '../support/rcon-sink.js';
import { scratchJournals } from '../support/file-journals.js';

const rcon = rconSuite();
const files = scratchJournals('rcon');

/** A journal whose appends go through `before` first (which may throw, or act). */
function hooked(inner: DeliveryJournal, before: (entries: readonly JournalEntry[]) => Promise<void> | void): DeliveryJournal {
  return {
    append: async (entries) => {
      await before(entries);
      return inner.append(entries);
    },
    pending: (player) => inner.pending(player),
    acknowledge: (ids) => inner.acknowledge(ids),
  };
}

const windowOf = async (journal: DeliveryJournal, deliveryId: string) => (await journal.pending()).find((e): e is JournalWindow => e.deliveryId === commandWindowId(deliveryId));
const lineOf = async (journal: DeliveryJournal, deliveryId: string) => (await journal.pending()).find((e): e is JournalLine => e.deliveryId === deliveryId);

describe('a command that gets its reply', () => {
  it('is sent once, after its sending mark is journaled; no window', async () => {
    const server = await rcon.server();
    const memory = new MemoryJournal();
    const line = whip('invoice:1');
    await memory.append([line]);
    const seen: Array<{ entries: readonly JournalEntry[]; commands: number }> = [];
    const journal = hooked(memory, (entries) => void seen.push({ entries, commands: server.commands.length }));
    await rcon.sink(server, journal).give(itemOf(line));
    expect(server.commands).toEqual(['give Steve whip 1']);
    // The mark was written before the command reached the server.
    expect(seen).toEqual([{ entries: [{ ...line, sending: NOW }], commands: 0 }]);
    expect(await windowOf(memory, 'invoice:1')).toBeUndefined();
  });

  it('makes the line durable with its mark even when the journal had not kept it', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('claim:x:0');
    await rcon.sink(server, journal).give(itemOf(line));
    expect(await lineOf(journal, 'claim:x:0')).toEqual({ ...line, recordedAt: NOW, sending: NOW });
    expect(server.commands).toEqual(['give Steve whip 1']);
  });

  it('several commands of one item: one mark, all sent in order on one login', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:2');
    await journal.append([line]);
    await rcon.sink(server, journal, { commands: { '*': ['give {player} whip {quantity}', 'say {player} bought {productName} ({productId}, {deliveryId})'] } }).give(itemOf(line));
    expect(server.commands).toEqual(['give Steve whip 1', 'say Steve bought Whip (42, invoice:2)']);
    expect(server.logins).toEqual({ ok: 1, failed: 0 });
  });
});

describe('a command whose outcome is unknown', () => {
  it('connection dropped after the command was received: a window naming it, and it is never sent again', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    const journal = new MemoryJournal();
    const line = whip('invoice:3');
    await journal.append([line]);
    const log = recordingLog();
    const sink = rcon.sink(server, journal, {}, log);
    // Thrown once the window is durable: the engine acknowledges the line and reports the window.
    await expect(sink.give(itemOf(line))).rejects.toMatchObject({ name: 'RconWindowError', unverified: { from: NOW, to: NOW } });
    expect(await windowOf(journal, 'invoice:3')).toEqual({
      deliveryId: 'window:command:invoice:3',
      playerName: 'Steve',
      state: 'unverified',
      from: NOW,
      to: NOW,
      cause: 'unknownCommand',
      recordedAt: NOW,
      command: 'give Steve whip 1',
    });
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(['RCON command outcome unknown; a window for staff, never sent again']);
    server.answer = (command) => server.minecraft(command);
    // Given again before the acknowledgement reached the journal, by this sink and by a new one (a restart).
    await expect(sink.give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    await expect(rcon.sink(server, journal).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toEqual(['give Steve whip 1']);
  });

  it('no reply within timeoutMs: a window; a late reply changes nothing', async () => {
    const server = await rcon.server();
    server.answer = () => ({ delayMs: 150, reply: 'late' });
    const journal = new MemoryJournal();
    const line = whip('invoice:4');
    await journal.append([line]);
    await expect(rcon.sink(server, journal, { timeoutMs: 50 }).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect((await windowOf(journal, 'invoice:4'))?.cause).toBe('unknownCommand');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.commands).toEqual(['give Steve whip 1']);
  });

  it('a loss after the first of several commands: one window naming every command of the item', async () => {
    const server = await rcon.server();
    server.answer = (command) => (command.startsWith('say') ? { drop: true } : server.minecraft(command));
    const journal = new MemoryJournal();
    const line = whip('invoice:5');
    await journal.append([line]);
    await expect(rcon.sink(server, journal, { commands: { '42': ['give {player} whip {quantity}', 'say {player} thanks', 'give {player} bonus 1'] } }).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect((await windowOf(journal, 'invoice:5'))?.command).toBe('give Steve whip 1\nsay Steve thanks\ngive Steve bonus 1');
    expect(server.commands).toEqual(['give Steve whip 1', 'say Steve thanks']);
  });

  it('a line found with its sending mark at start: a window from the mark, nothing sent, no connection made', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = { ...whip('invoice:6'), sending: NOW - 5_000 };
    await journal.append([line]);
    await expect(rcon.sink(server, journal).give(itemOf(line))).rejects.toMatchObject({ unverified: { from: NOW - 5_000, to: NOW } });
    expect(await windowOf(journal, 'invoice:6')).toMatchObject({ from: NOW - 5_000, to: NOW, cause: 'unknownCommand', command: 'give Steve whip 1' });
    expect(server.commands).toEqual([]);
    expect(server.logins).toEqual({ ok: 0, failed: 0 });
  });

  it('a window already written (a crash before the acknowledgement): kept as it is, resolved or not, nothing sent', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = { ...whip('invoice:7'), sending: NOW - 5_000 };
    const resolved: JournalWindow = { deliveryId: 'window:command:invoice:7', playerName: 'Steve', state: 'resolved', from: 1, to: 2, cause: 'unknownCommand', recordedAt: 2, command: 'give Steve whip 1', resolution: { by: 'staff', at: 3, note: 'it ran' } };
    await journal.append([line, resolved]);
    await rcon.sink(server, journal).give(itemOf(line));
    expect(await windowOf(journal, 'invoice:7')).toEqual(resolved);
    expect(server.commands).toEqual([]);
  });

  it('a window the journal refuses: the give throws, the item is never sent again, the window is written once the journal is back', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    const memory = new MemoryJournal();
    let refuse = true;
    const journal = hooked(memory, (entries) => {
      if (refuse && entries[0]?.state === 'unverified') throw new Error('disk full');
    });
    const line = whip('invoice:8');
    await memory.append([line]);
    const sink = rcon.sink(server, journal);
    await expect(sink.give(itemOf(line))).rejects.toThrow(/outcome of product 42 is unknown and its window could not be written.*disk full/);
    // The engine rewrites the line without the mark (its copy) after a failed give: this process remembers.
    await memory.append([{ ...line, lastError: { message: 'x', at: NOW, attempts: 1 } }]);
    await expect(sink.give(itemOf(line))).rejects.toThrow(/disk full/);
    refuse = false;
    await expect(sink.give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(await windowOf(memory, 'invoice:8')).toMatchObject({ from: NOW, command: 'give Steve whip 1' });
    expect(server.commands).toEqual(['give Steve whip 1']);
  });
});

describe('a command certainly not sent: thrown, given again later', () => {
  it.each(['source', 'minecraft'] as const)('a refused login (%s style): nothing sent, no mark; sent once the login works', async (authStyle) => {
    const server = await rcon.server({ authStyle });
    server.refuseAuth = true;
    const journal = new MemoryJournal();
    const line = whip('invoice:9');
    await journal.append([line]);
    const sink = rcon.sink(server, journal);
    await expect(sink.give(itemOf(line))).rejects.toThrow(/could not connect to 127\.0\.0\.1:\d+ and log in \(nothing sent\): Authentication failed/);
    expect(server.commands).toEqual([]);
    expect(await lineOf(journal, 'invoice:9')).toEqual(line);
    server.refuseAuth = false;
    await sink.give(itemOf(line));
    expect(server.commands).toEqual(['give Steve whip 1']);
  });

  it('a connection refused (no server): nothing written, thrown', async () => {
    const server = await rcon.server();
    const port = server.port;
    await server.close();
    const journal = new MemoryJournal();
    const line = whip('invoice:10');
    await journal.append([line]);
    await expect(rcon.sink({ port, password: 'secret' }, journal).give(itemOf(line))).rejects.toThrow(/could not connect.*nothing sent.*ECONNREFUSED/);
    expect(await lineOf(journal, 'invoice:10')).toEqual(line);
  });

  it('a wrong password on a Source server (answered with id -1 after an empty response): thrown, nothing sent', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:11');
    await journal.append([line]);
    await expect(rcon.sink({ port: server.port, password: 'wrong' }, journal).give(itemOf(line))).rejects.toThrow(/Authentication failed/);
    expect(server.logins.failed).toBe(1);
    expect(server.commands).toEqual([]);
  });

  it('a login that is never answered: thrown after timeoutMs, the connection closed, nothing sent', async () => {
    const server = await rcon.server();
    server.answerLogin = false;
    const journal = new MemoryJournal();
    const line = whip('invoice:19');
    await journal.append([line]);
    await expect(rcon.sink(server, journal, { timeoutMs: 50 }).give(itemOf(line))).rejects.toThrow(/could not connect.*nothing sent.*(no login answer within 50 ms|Timeout)/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.connections).toBe(0);
    expect(await lineOf(journal, 'invoice:19')).toEqual(line);
  });

  it('the journal refusing the mark: nothing sent', async () => {
    const server = await rcon.server();
    const memory = new MemoryJournal();
    const line = whip('invoice:12');
    await memory.append([line]);
    const journal = hooked(memory, () => {
      throw new Error('journal down');
    });
    await expect(rcon.sink(server, journal).give(itemOf(line))).rejects.toThrow('journal down');
    expect(server.commands).toEqual([]);
  });

  it('the connection lost while the mark was written: the mark removed, nothing sent, sent on the next give', async () => {
    const server = await rcon.server();
    const memory = new MemoryJournal();
    const line = whip('invoice:13');
    await memory.append([line]);
    let drop = true;
    const journal = hooked(memory, async (entries) => {
      if (drop && (entries[0] as JournalLine).sending !== undefined) {
        drop = false;
        server.dropAll();
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    });
    const sink = rcon.sink(server, journal);
    await expect(sink.give(itemOf(line))).rejects.toThrow(/not sent for product 42: RCON: not connected/);
    expect(await lineOf(memory, 'invoice:13')).toEqual(line);
    expect(server.commands).toEqual([]);
    await sink.give(itemOf(line));
    expect(server.commands).toEqual(['give Steve whip 1']);
  });
});

describe('restart on a file journal', () => {
  it('a command lost mid-way is never sent by the next process; the window survives it', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    const path = files.file();
    const first = new FileJournal(path);
    const line = whip('invoice:14');
    await first.append([line]);
    await expect(rcon.sink(server, first).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    await first.close();
    server.answer = (command) => server.minecraft(command);
    const second = files.journal(path);
    await expect(rcon.sink(server, second).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toEqual(['give Steve whip 1']);
    expect((await windowOf(second, 'invoice:14'))?.command).toBe('give Steve whip 1');
  });

  it('a mark left by a process killed after it (no window yet): the next process writes the window, sends nothing', async () => {
    const server = await rcon.server();
    const path = files.file();
    const first = new FileJournal(path);
    await first.append([{ ...whip('invoice:15'), sending: NOW - 1 }]);
    await first.close();
    const second = files.journal(path);
    await expect(rcon.sink(server, second).give(itemOf(whip('invoice:15')))).rejects.toMatchObject({ unverified: { from: NOW - 1, to: NOW } });
    expect(await windowOf(second, 'invoice:15')).toMatchObject({ from: NOW - 1, cause: 'unknownCommand' });
    expect(server.commands).toEqual([]);
  });
});

describe('values that could break out of the command: nothing sent, marked for staff', () => {
  it.each([
    ['a semicolon', 'Ste;ve'],
    ['a double quote', 'Ste"ve'],
    ['a single quote', "Ste've"],
    ['a newline', 'Ste\nve'],
    ['a section sign', '§cSteve'],
    ['a bidi override', 'Ste\u202eve'],
    ['a zero-width space', 'Ste\u200bve'],
    ['a space', 'Ste ve'],
    ['a letter outside ASCII', 'Stéve'],
    ['a leading dash', '-Steve'],
  ])('a player name with %s', async (_what, player) => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:16', player);
    await journal.append([line]);
    const error = await rcon.sink(server, journal).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RconStaffError);
    expect(error).toMatchObject({ staff: true, message: expect.stringContaining('{player} is outside the player names a command may hold') });
    expect(server.logins.ok + server.commands.length).toBe(0);
    expect(await lineOf(journal, 'invoice:16')).toEqual(line);
  });

  it('a product name with a quote, in a template that uses it', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:17');
    line.item.product_name = 'Whip" , "extra';
    await journal.append([line]);
    const sink = rcon.sink(server, journal, { commands: { '42': ['give {player} whip {quantity}', 'say {player} bought {productName}'] } });
    await expect(sink.give(itemOf(line))).rejects.toThrow(/\{productName\} holds a character that could break out/);
    expect(server.commands).toEqual([]); // all or none: the first command was not sent either
  });

  it('no template for the product and no "*": nothing sent, for staff', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:18');
    await journal.append([line]);
    const error = await rcon.sink(server, journal, { commands: { '99': ['give {player} x 1'] } }).give(itemOf(line)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RconStaffError', staff: true, message: 'RCON: nothing sent for product 42: no command template for product 42 and no "*"' });
    expect(server.logins.ok).toBe(0);
  });
});

describe('vote rewards', () => {
  it('given by the vote command, with the mark on the reward row', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const { row, reward } = scrolls('vote:a:0');
    await journal.append([row]);
    await rcon.sink(server, journal, { voteCommands: { '*': ['give {player} {rewardName} {amount}', 'say {rewardId}, {deliveryId}'] } }).giveVoteReward(reward);
    expect(server.commands).toEqual(['give Steve Scroll 4', 'say 2, vote:a:0']);
    expect((await journal.pending()).find((e) => e.deliveryId === 'vote:a:0')).toEqual({ ...row, sending: NOW });
  });

  it('a row not in the journal is written with its mark', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const { row, reward } = scrolls('vote:b:0');
    await rcon.sink(server, journal).giveVoteReward({ ...reward, recovered: true });
    expect((await journal.pending()).find((e) => e.deliveryId === 'vote:b:0')).toEqual({ ...row, recordedAt: NOW, recovered: true, sending: NOW });
  });

  it('lost mid-command: a window, never sent again; a row found with its mark: a window, nothing sent', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    const journal = new MemoryJournal();
    const lost = scrolls('vote:c:0');
    const marked = scrolls('vote:c:1');
    await journal.append([lost.row, { ...marked.row, sending: NOW - 7 }]);
    const sink = rcon.sink(server, journal);
    await expect(sink.giveVoteReward(lost.reward)).rejects.toBeInstanceOf(RconWindowError);
    await expect(sink.giveVoteReward(lost.reward)).rejects.toBeInstanceOf(RconWindowError);
    await expect(sink.giveVoteReward(marked.reward)).rejects.toBeInstanceOf(RconWindowError);
    expect(server.commands).toEqual(['give Steve scroll 4']);
    expect(await windowOf(journal, 'vote:c:0')).toMatchObject({ cause: 'unknownCommand', command: 'give Steve scroll 4', from: NOW });
    expect(await windowOf(journal, 'vote:c:1')).toMatchObject({ cause: 'unknownCommand', command: 'give Steve scroll 4', from: NOW - 7 });
  });

  it('no vote commands configured: nothing sent, for staff', async () => {
    const server = await rcon.server();
    const { reward } = scrolls('vote:d:0');
    await expect(rcon.sink(server, new MemoryJournal(), { voteCommands: undefined }).giveVoteReward(reward)).rejects.toBeInstanceOf(RconStaffError);
    expect(server.logins.ok).toBe(0);
  });
});

describe('{productId}', () => {
  it("is the product's id as the merchant wrote it (product_id_string), never the store's numeric product_id", async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    // The demo Survival store's "64 Diamonds": merchant id "minecraft:diamond", so product_id 0.
    const base = whip('invoice:diamond');
    const line: JournalLine = { ...base, item: { ...base.item, product_id: 0, product_id_string: 'minecraft:diamond', product_name: '64 Diamonds', quantity_to_grant: 64 } };
    await journal.append([line]);
    await rcon.sink(server, journal, { commands: { 'minecraft:diamond': ['give {player} {productId} {quantity}'] } }).give(itemOf(line));
    expect(server.commands).toEqual(['give Steve minecraft:diamond 64']);
  });
});
