/**
 * The RCON sink as the delivery engine calls it (`deliver` with the sink's give, as the
 * bridge's loop does), and the sink's life: the password asked at each login, a connection the game
 * closed while idle, close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryJournal, StorefrontClient, type JournalLine, type StorefrontEvent } from '../../src/index.js';
import { KEY, inProcessStore } from '../support/reliability.js';
import { itemOf, rconSuite, whip } from '../support/rcon-sink.js';

const { mock, sleep, client } = inProcessStore();
const rcon = rconSuite();
afterEach(() => mock.reset());

describe('through the delivery engine', () => {
  it('a purchase is given by its command once, then acknowledged: nothing left in the journal', async () => {
    const server = await rcon.server();
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const sink = rcon.sink(server, journal);
    const report = await client(journal).deliver('Steve', sink.give, { mode: 'fast', sleep });
    expect(report.granted).toHaveLength(1);
    expect(server.commands).toEqual(['give Steve whip 1']);
    expect(await journal.pending()).toEqual([]);
    await client(journal).deliver('Steve', sink.give, { mode: 'fast', sleep });
    expect(server.commands).toHaveLength(1);
  });

  it('a command lost mid-way: the line acknowledged, an open window left for staff, never sent again', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const sink = rcon.sink(server, journal);
    const events: StorefrontEvent[] = [];
    const report = await client(journal, { onEvent: (event) => void events.push(event) }).deliver('Steve', sink.give, { mode: 'fast', sleep });
    // Never reported as given: not granted, not failed (it is never retried), a window.
    expect(report).toMatchObject({ code: 'PARTIAL', granted: [], failed: [], pending: 0, unverified: { playerName: 'Steve', from: expect.any(Number), to: expect.any(Number) } });
    expect(report.message).toBe('We could not confirm the delivery of every recent purchase. If something you bought is missing, staff can check it for you.');
    expect(events.filter((e) => e.type === 'unverified')).toEqual([expect.objectContaining({ type: 'unverified', window: report.unverified })]);
    const left = await journal.pending();
    expect(left).toEqual([expect.objectContaining({ state: 'unverified', cause: 'unknownCommand', command: 'give Steve whip 1', playerName: 'Steve' })]);
    expect(left[0]?.deliveryId).toMatch(/^window:command:/);
    server.answer = (command) => server.minecraft(command);
    await client(journal).deliver('Steve', sink.give, { mode: 'fast', sleep });
    expect(server.commands).toHaveLength(1);
  });

  it('a command lost while the window cannot be written: the failure note keeps the sending mark, so a restart never sends it again', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    // The window's write fails once (a full disk for a moment); the engine's note after it succeeds.
    const append = journal.append.bind(journal);
    let refuseWindow = true;
    journal.append = async (entries) => {
      if (refuseWindow && entries.some((e) => e.state === 'unverified')) {
        refuseWindow = false;
        throw new Error('ENOSPC: no space left on device');
      }
      return append(entries);
    };
    await client(journal).deliver('Steve', rcon.sink(server, journal).give, { mode: 'fast', sleep });
    expect(server.commands).toHaveLength(1);
    const [line] = (await journal.pending()) as JournalLine[];
    expect(line).toMatchObject({ state: 'claimed', sending: expect.any(Number), lastError: { attempts: 1 } });
    // The process dies here; the next one, on the same journal, with a game that answers.
    server.answer = (command) => server.minecraft(command);
    await client(journal).deliver('Steve', rcon.sink(server, journal).give, { mode: 'fast', sleep });
    expect(server.commands).toHaveLength(1);
    expect(await journal.pending()).toEqual([expect.objectContaining({ state: 'unverified', cause: 'unknownCommand', command: 'give Steve whip 1' })]);
  });

  it('a name no command may hold: nothing sent, the line marked for staff (stuck) at the first attempt', async () => {
    const server = await rcon.server();
    mock.addPurchase(KEY, { playerName: 'Bad;Name', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const report = await client(journal).deliver('Bad;Name', rcon.sink(server, journal).give, { mode: 'fast', sleep });
    expect(report.failed).toHaveLength(1);
    const [line] = (await journal.pending()) as JournalLine[];
    expect(line?.lastError).toMatchObject({ attempts: 1, stuck: true, message: expect.stringContaining('{player} is outside the player names') });
    expect(line?.sending).toBeUndefined();
    expect(server.logins.ok + server.commands.length).toBe(0);
  });
});

describe('a give that says its outcome is unknown', () => {
  it('with a span that is not finite times: a plain failure, the line kept pending (no window reported from nonsense)', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 1, quantity: 1 });
    const journal = new MemoryJournal();
    const give = () => {
      throw Object.assign(new Error('odd'), { unverified: { from: Number.NaN, to: 5 } });
    };
    const report = await client(journal).deliver('Steve', give, { mode: 'fast', sleep });
    expect(report).toMatchObject({ code: 'PARTIAL', granted: [], failed: [expect.anything()], pending: 1 });
    expect(report.unverified).toBeUndefined();
  });
});

describe('vote rewards through the engine', () => {
  it('a vote reward command lost mid-way: the row settled into its window, reported PARTIAL with the window, never given again', async () => {
    const server = await rcon.server();
    server.answer = () => ({ drop: true });
    const journal = new MemoryJournal();
    const row = { total_points: '20', vote_points: 15, votes_month: 1, give_amount: 2, reward_id: 2, reward_name: 'Scroll' };
    const fetch: typeof globalThis.fetch = async () => new Response(JSON.stringify(row));
    const events: StorefrontEvent[] = [];
    const sdk = new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io', fetch, journal, retry: 0, onEvent: (event) => void events.push(event) });
    const sink = rcon.sink(server, journal);
    const report = await sdk.deliverVoteReward({ player: 'Ann', reward: 2, amount: 1 }, sink.giveVoteReward);
    expect(report).toMatchObject({ code: 'PARTIAL', granted: [], failed: [], unverified: { playerName: 'Ann', reward: '2' } });
    expect(report.message).toBe('We could not confirm every vote reward you claimed. If one is missing, staff can check it for you.');
    expect(events.filter((e) => e.type === 'unverified')).toHaveLength(1);
    expect((await journal.pending('Ann')).filter((e) => e.state === 'voteClaimed')).toEqual([]);
    expect((await journal.pending('Ann')).filter((e) => e.state === 'unverified')).toEqual([expect.objectContaining({ cause: 'unknownCommand', command: 'give Ann scroll 2' })]);
    server.answer = (command) => server.minecraft(command);
    await sdk.resumeVoteRewards(sink.giveVoteReward);
    expect(server.commands).toEqual(['give Ann scroll 2']);
  });
});

describe('the sink', () => {
  it('reconnects when the game closed the idle connection: the next item is sent, no window', async () => {
    const server = await rcon.server();
    const journal = new MemoryJournal();
    const sink = rcon.sink(server, journal);
    await sink.give(itemOf(whip('invoice:1')));
    server.dropAll();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await sink.give(itemOf(whip('invoice:2')));
    expect(server.commands).toEqual(['give Steve whip 1', 'give Steve whip 1']);
    expect(server.logins.ok).toBe(2);
    expect((await journal.pending()).filter((e) => e.state === 'unverified')).toEqual([]);
  });

  it('the password is asked at each connection: a rotated one logs in after the game restarts; none to be had: thrown, nothing sent', async () => {
    const server = await rcon.server();
    let password: string | Error = server.password;
    const asked = { port: server.port, get password(): string {
      if (password instanceof Error) throw password;
      return password;
    } };
    const sink = rcon.sink(asked, new MemoryJournal());
    await sink.give(itemOf(whip('invoice:3')));
    server.password = 'rotated-password';
    password = 'rotated-password';
    server.dropAll();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await sink.give(itemOf(whip('invoice:4')));
    expect(server.logins).toEqual({ ok: 2, failed: 0 });
    password = new Error('give.rcon.passwordFile: cannot read /run/rcon (ENOENT)');
    server.dropAll();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(sink.give(itemOf(whip('invoice:5')))).rejects.toThrow('give.rcon.passwordFile: cannot read /run/rcon (ENOENT)');
    expect(server.commands).toHaveLength(2);
  });

  it('close waits for the command in flight, then nothing more is sent', async () => {
    const server = await rcon.server();
    server.answer = (command) => ({ delayMs: 30, reply: server.minecraft(command) });
    const journal = new MemoryJournal();
    const sink = rcon.sink(server, journal);
    const giving = sink.give(itemOf(whip('invoice:6')));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await sink.close();
    await giving;
    expect((await journal.pending()).filter((e) => e.state === 'unverified')).toEqual([]);
    await expect(sink.give(itemOf(whip('invoice:7')))).rejects.toThrow('RCON: the bridge is stopping');
    expect(server.commands).toEqual(['give Steve whip 1']);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.connections).toBe(0);
  });
});
