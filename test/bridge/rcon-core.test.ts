/**
 * The RCON sink's journal writes go through the delivery core (#45 point 4): a window the
 * journal refuses is held in the memory every client of the journal shares, so the player's
 * text says staff are checking at once and the player's next delivery writes it, and a
 * record read back that is not a journal entry stops the give before anything is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, type JournalEntry } from '../../src/index.js';
import { KEY, inProcessStore } from '../support/reliability.js';
import { itemOf, rconSuite, whip } from '../support/rcon-sink.js';

const { mock, sleep, client } = inProcessStore();
const rcon = rconSuite();
afterEach(() => mock.reset());

/** A memory journal that refuses windows while `refuse` is set. */
function refusingWindows() {
  const journal = new MemoryJournal();
  const append = journal.append.bind(journal);
  const state = { refuse: true };
  journal.append = async (entries: readonly JournalEntry[]) => {
    if (state.refuse && entries.some((e) => e.state === 'unverified')) throw new Error('ENOSPC: no space left on device');
    return append(entries);
  };
  return { journal, state };
}

describe("the RCON sink's journal writes, through the core", () => {
  it('a window the journal refuses is held in the shared memory: the report says staff are checking, and the next delivery writes it before any give', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const { journal, state } = refusingWindows();
    const first = await client(journal).deliver('Steve', rcon.sink(server, journal).give, { mode: 'fast', sleep });
    expect(first.code).toBe('PARTIAL');
    expect(first.message).toMatch(/could not confirm/);
    state.refuse = false;
    // Another sink in this process (a restarted sink, the same journal): nothing is sent, the window is written.
    server.answer = (command) => server.minecraft(command);
    const second = await client(journal).deliver('Steve', rcon.sink(server, journal).give, { mode: 'fast', sleep });
    expect(server.commands).toHaveLength(1);
    expect(second.unverified).toBeDefined();
    expect(await journal.pending()).toEqual([expect.objectContaining({ state: 'unverified', cause: 'unknownCommand', command: 'give Steve whip 1', from: expect.any(Number) })]);
  });

  it('a record read back that is not a journal entry: the give rejects, nothing is sent, nothing written', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const line = whip('invoice:1');
    await journal.append([line]);
    const pending = journal.pending.bind(journal);
    journal.pending = async (player?: string) => [...(await pending(player)), { deliveryId: 'invoice:2', playerName: 'Steve', state: 'claimed', item: 'not an item', recordedAt: 1 } as unknown as JournalEntry];
    await expect(rcon.sink(server, journal).give(itemOf(line))).rejects.toThrow(/not a journal entry/);
    expect(server.commands).toEqual([]);
  });
});
