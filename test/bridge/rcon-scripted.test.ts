/**
 * The RCON sink's decisions over a scripted connection (what each command's fate is told
 * to be), for the cases a real server cannot stage on demand: a command certainly not sent
 * after an earlier one of the item ran, a mark that cannot be removed, and what each case
 * logs for the owner.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { RconWindowError, rconSinkOn, type SinkLink } from '../../src/bridge/rcon/sink.js';
import type { Sent } from '../../src/bridge/rcon/link.js';
import type { RconGiveConfig } from '../../src/bridge/rcon/types.js';
import { NOW, itemOf, recordingLog, scrolls, whip } from '../support/rcon-sink.js';

/** A connection whose commands meet the fates given, in order (then replies). */
function scripted(fates: Sent[]): SinkLink & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    exclusive: (work) => work(),
    connect: async () => undefined,
    send: async (command) => {
      sent.push(command);
      return fates.shift() ?? { reply: 'ok' };
    },
    close: async () => undefined,
  };
}

// The scripted replies (`ok`, `done`, `fine`, `x…`) are this game's "done"; no online check (its own suite covers it).
const config: RconGiveConfig = { host: 'h', port: 1, timeoutMs: 100, commands: { '42': ['give {player} whip {quantity}', 'say thanks {player}'] }, voteCommands: { '2': ['give {player} scroll {amount}'] }, game: 'custom', replies: { done: ['^(ok|done|fine|x+)$'] }, checkOnline: false };

describe('over a scripted connection', () => {
  it('the second command of an item certainly not sent, after the first ran: a window for the item, not a retry', async () => {
    const journal = new MemoryJournal();
    const line = whip('invoice:1');
    await journal.append([line]);
    const link = scripted([{ reply: 'done' }, { notSent: new Error('RCON: not connected') }]);
    const log = recordingLog();
    await expect(rconSinkOn(link, config, { journal, log, now: () => NOW }).give(itemOf(line))).rejects.toBeInstanceOf(RconWindowError);
    expect((await journal.pending()).find((e) => e.state === 'unverified')).toMatchObject({ command: 'give Steve whip 1\nsay thanks Steve' });
    expect(log.lines.find((l) => l.level === 'error')).toEqual({ level: 'error', message: 'RCON command outcome unknown; a window for staff, never sent again', fields: { deliveryId: 'invoice:1', player: 'Steve', command: 'say thanks Steve', error: 'RCON: not connected' } });
  });

  it('the mark that cannot be removed after a command certainly not sent: logged, thrown; the next give makes it a window', async () => {
    const memory = new MemoryJournal();
    const line = whip('invoice:2');
    await memory.append([line]);
    let appends = 0;
    const journal: DeliveryJournal = {
      append: async (entries: readonly JournalEntry[]) => {
        if (++appends === 2) throw new Error('journal down');
        return memory.append(entries);
      },
      pending: (player) => memory.pending(player),
      acknowledge: (ids) => memory.acknowledge(ids),
    };
    const log = recordingLog();
    const sink = rconSinkOn(scripted([{ notSent: new Error('RCON: not connected') }]), config, { journal, log, now: () => NOW });
    await expect(sink.give(itemOf(line))).rejects.toThrow('RCON: not sent for product 42: RCON: not connected');
    expect(log.lines).toEqual([{ level: 'warn', message: 'RCON mark not removed; the next give makes it a window', fields: { deliveryId: 'invoice:2', error: 'journal down' } }]);
    await expect(sink.give(itemOf(line))).rejects.toMatchObject({ name: 'RconWindowError', unverified: { from: NOW, to: NOW } });
    expect((await memory.pending()).find((e) => e.state === 'unverified')).toMatchObject({ from: NOW, command: 'give Steve whip 1\nsay thanks Steve' });
  });

  it('the online check certainly not sent, or sent without an answer: nothing marked, the error names what failed', async () => {
    const journal = new MemoryJournal();
    const line = whip('invoice:6');
    await journal.append([line]);
    const { replies: _custom, ...rest } = config;
    const checked: RconGiveConfig = { ...rest, game: 'minecraft', checkOnline: true };
    const notSent = scripted([{ notSent: new Error('RCON: the command could not be written') }]);
    await expect(rconSinkOn(notSent, checked, { journal, log: recordingLog(), now: () => NOW }).give(itemOf(line))).rejects.toThrow('RCON: not sent for product 42: the online check (list) failed: RCON: the command could not be written');
    const unknown = scripted([{ unknown: new Error('RCON: Connection closed') }]);
    await expect(rconSinkOn(unknown, checked, { journal, log: recordingLog(), now: () => NOW }).give(itemOf(line))).rejects.toThrow('RCON: not sent for product 42: the online check (list) failed: RCON: Connection closed');
    expect([notSent.sent, unknown.sent]).toEqual([['list'], ['list']]);
    expect(await journal.pending()).toEqual([line]);
  });

  it('what a run command logs: the item, the command and its reply (200 characters at most)', async () => {
    const log = recordingLog();
    const link = scripted([{ reply: 'x'.repeat(300) }, { reply: 'fine' }]);
    await rconSinkOn(link, config, { journal: new MemoryJournal(), log, now: () => NOW }).give(itemOf(whip('invoice:3')));
    expect(log.lines).toEqual([
      { level: 'info', message: 'RCON command run', fields: { deliveryId: 'invoice:3', player: 'Steve', command: 'give Steve whip 1', reply: 'x'.repeat(200) } },
      { level: 'info', message: 'RCON command run', fields: { deliveryId: 'invoice:3', player: 'Steve', command: 'say thanks Steve', reply: 'fine' } },
    ]);
  });

  it('what a refusal and a window log', async () => {
    const log = recordingLog();
    const journal = new MemoryJournal();
    const sink = rconSinkOn(scripted([{ unknown: new Error('RCON: Connection closed') }]), config, { journal, log, now: () => NOW });
    await expect(sink.give(itemOf(whip('invoice:4', 'Ste ve')))).rejects.toThrow(/nothing sent/);
    await expect(sink.give(itemOf(whip('invoice:5')))).rejects.toBeInstanceOf(RconWindowError);
    await expect(sink.give(itemOf(whip('invoice:5')))).rejects.toBeInstanceOf(RconWindowError);
    expect(log.lines).toEqual([
      { level: 'error', message: 'RCON command refused; nothing sent, marked for staff', fields: { deliveryId: 'invoice:4', player: 'Ste ve', reason: expect.stringContaining('{player} is outside') } },
      { level: 'error', message: 'RCON command outcome unknown; a window for staff, never sent again', fields: { deliveryId: 'invoice:5', player: 'Steve', command: 'give Steve whip 1', error: 'RCON: Connection closed' } },
      { level: 'info', message: 'RCON window written for staff', fields: { deliveryId: 'invoice:5', player: 'Steve', window: 'window:command:invoice:5' } },
      { level: 'error', message: 'RCON command outcome already in a window; not sent again', fields: { deliveryId: 'invoice:5', player: 'Steve', window: 'window:command:invoice:5' } },
    ]);
  });

  it('a window the journal refuses is logged; the window names the node of a shared journal, and no node otherwise', async () => {
    const memory = new MemoryJournal();
    let refuse = true;
    const shared: DeliveryJournal = {
      nodeId: 'node-7',
      append: async (entries) => {
        if (refuse && entries[0]?.state === 'unverified') throw new Error('disk full');
        return memory.append(entries);
      },
      pending: (player) => memory.pending(player),
      acknowledge: (ids) => memory.acknowledge(ids),
    };
    const log = recordingLog();
    const sink = rconSinkOn(scripted([{ unknown: new Error('RCON: Timeout for packet id 1') }]), config, { journal: shared, log, now: () => NOW });
    await expect(sink.give(itemOf(whip('invoice:6')))).rejects.toThrow(/window could not be written/);
    expect(log.lines.at(-1)).toEqual({ level: 'error', message: 'RCON window not written; the item is never sent again by this process', fields: { deliveryId: 'invoice:6', window: 'window:command:invoice:6', error: 'disk full' } });
    refuse = false;
    await expect(sink.give(itemOf(whip('invoice:6')))).rejects.toBeInstanceOf(RconWindowError);
    expect((await memory.pending()).find((e) => e.state === 'unverified')).toStrictEqual({ deliveryId: 'window:command:invoice:6', playerName: 'Steve', state: 'unverified', from: NOW, to: NOW, cause: 'unknownCommand', recordedAt: NOW, command: 'give Steve whip 1\nsay thanks Steve', node: 'node-7' });

    const alone = new MemoryJournal();
    await expect(rconSinkOn(scripted([{ unknown: new Error('lost') }]), config, { journal: alone, log, now: () => NOW }).give(itemOf(whip('invoice:7')))).rejects.toBeInstanceOf(RconWindowError);
    expect((await alone.pending()).find((e) => e.state === 'unverified')).toStrictEqual({ deliveryId: 'window:command:invoice:7', playerName: 'Steve', state: 'unverified', from: NOW, to: NOW, cause: 'unknownCommand', recordedAt: NOW, command: 'give Steve whip 1\nsay thanks Steve' });
  });

  it('a mark found for an item no template renders now: the window says so, nothing sent', async () => {
    const journal = new MemoryJournal();
    await journal.append([{ ...whip('invoice:8', 'Ste;ve'), sending: NOW - 3 }]);
    const link = scripted([]);
    await expect(rconSinkOn(link, config, { journal, log: recordingLog(), now: () => NOW }).give(itemOf(whip('invoice:8', 'Ste;ve')))).rejects.toMatchObject({ unverified: { from: NOW - 3, to: NOW } });
    expect((await journal.pending()).find((e) => e.state === 'unverified')).toMatchObject({ from: NOW - 3, command: expect.stringMatching(/^\(not renderable now: \{player\} is outside/) });
    expect(link.sent).toEqual([]);
  });

  it('a vote reward row made from the reward: exactly its fields (recovered only when set); its refusal names the reward', async () => {
    const journal = new MemoryJournal();
    const { row, reward } = scrolls('vote:z:0');
    await rconSinkOn(scripted([]), config, { journal, log: recordingLog(), now: () => NOW }).giveVoteReward(reward);
    expect((await journal.pending()).find((e) => e.deliveryId === 'vote:z:0')).toStrictEqual({ ...row, recordedAt: NOW, sending: NOW });
    await expect(rconSinkOn(scripted([]), { ...config, voteCommands: {} }, { journal, log: recordingLog(), now: () => NOW }).giveVoteReward(scrolls('vote:z:1').reward)).rejects.toThrow('RCON: nothing sent for vote reward 2: no command template for vote reward 2 and no "*"');
  });
});
