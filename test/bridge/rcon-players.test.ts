/**
 * The players online from the RCON `list` command (src/bridge/rcon/players.ts): both reply
 * forms parsed, anything else ignored (never everyone leaving on a reply not understood),
 * and the poller against the test RCON server.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryJournal } from '../../src/index.js';
import type { Sent } from '../../src/bridge/rcon/link.js';
import { listPlayers, parseOnline, parsePlayerList } from '../../src/bridge/rcon/players.js';
import { rconSuite, recordingLog } from '../support/rcon-sink.js';

const rcon = rconSuite();
const TWELVE = Array.from({ length: 12 }, (_, i) => `Player${i}`);

describe('parsePlayerList', () => {
  it.each<[string, string, string[]]>([
    ['Minecraft 1.13+', 'There are 2 of a max of 20 players online: Steve, Alex', ['Steve', 'Alex']],
    ['Minecraft, nobody', 'There are 0 of a max of 20 players online: ', []],
    ['Minecraft, nobody, no trailing space', 'There are 0 of a max of 20 players online:', []],
    ['Minecraft, "a max 20"', 'There are 1 of a max 20 players online: Steve', ['Steve']],
    ['Minecraft before 1.13', 'There are 2/20 players online:\nSteve, Alex', ['Steve', 'Alex']],
    ['Minecraft with formatting codes', '§6There are §c2§6 of a max of §c20§6 players online: §fSteve§r, §fAlex', ['Steve', 'Alex']],
    ['a plain comma list', 'Steve, Alex,Bob_2', ['Steve', 'Alex', 'Bob_2']],
    ['a plain newline list', 'Steve\nAlex\r\n\nBob\n', ['Steve', 'Alex', 'Bob']],
    ['an empty reply', '', []],
    ['a blank reply', ' \n ', []],
    ['Minecraft, ten players or more', `There are 12 of a max of 100 players online: ${TWELVE.join(', ')}`, TWELVE],
    ['Minecraft without the colon', 'There are 0 of a max of 20 players online', []],
    ['Minecraft with spaces and a newline around it', '  There are 1 of a max of 20 players online: Steve\n', ['Steve']],
    ['a long list just under a packet', Array.from({ length: 682 }, (_, i) => `P${String(i).padStart(3, '0')}`).join(', '), Array.from({ length: 682 }, (_, i) => `P${String(i).padStart(3, '0')}`)],
  ])('%s', (_form, reply, players) => {
    expect(parsePlayerList(reply)).toEqual(players);
  });

  it.each([
    ['an error text', 'Unknown command. Type "/help" for help.'],
    ['a sentence', 'No players are online right now'],
    ['a name with a space in a plain list', 'Steve, Alex Smith'],
    ["Minecraft's words after other text", 'Error: There are 1 of a max of 20 players online: Steve'],
    ['Minecraft naming more players than it counts', 'There are 1 of a max of 20 players online: Steve, Alex'],
    ['Minecraft with a name no command may hold', 'There are 1 of a max of 20 players online: Ste;ve'],
    ['control characters', 'Steve\u0000Alex'],
    ['a plain list filling a whole packet (maybe cut)', Array.from({ length: 820 }, (_, i) => `P${String(i).padStart(3, '0')}`).join(', ')],
  ])('%s: not understood', (_what, reply) => {
    expect(parsePlayerList(reply)).toBeUndefined();
  });
});

describe('a reply as long as a packet', () => {
  const names = Array.from({ length: 682 }, (_, i) => `P${String(i).padStart(3, '0')}`);
  it('4095 bytes: parsed; 4096 bytes: may have been cut, not understood', () => {
    expect(parsePlayerList(`${names.join(', ')}${' '.repeat(5)}`)).toEqual(names);
    expect(parsePlayerList(`${names.join(', ')}${' '.repeat(6)}`)).toBeUndefined();
    // Bytes, not characters: a no-break space (trimmed like any space) is 2 bytes.
    expect(parsePlayerList(`${names.join(', ')}${'\u00a0'.repeat(2)}`)).toEqual(names);
    expect(parsePlayerList(`${names.join(', ')}${'\u00a0'.repeat(3)}`)).toBeUndefined();
  });
});

describe('parseOnline: ARK and Source replies at their edges', () => {
  const ark = (lines: string[]) => lines.join('\n');
  it.each<[string, string, string[]]>([
    ['ARK: nobody, with a full stop', 'No Players Connected.', []],
    ['ARK: Windows line ends and trailing spaces', '0. Steve, 76561198000000001 \r\n1. Alex, 76561198000000002\r\n', ['Steve', 'Alex']],
    ['ARK: ten players or more', ark(Array.from({ length: 11 }, (_, i) => `${i}. P${i}, 7656119800000000${i}`)), Array.from({ length: 11 }, (_, i) => `P${i}`)],
  ])('%s', (_what, reply, players) => {
    expect(parseOnline(reply, 'ark')).toEqual(players);
  });

  it.each<[string, string]>([
    ['ARK: "nobody" after other text', 'Server: No Players Connected'],
    ['ARK: "nobody" with more after it', 'No Players Connected yet'],
    ['ARK: "nobody", then a player', 'No Players Connected\n0. Steve, 76561198000000001'],
    ['ARK: a player line after other text', 'Players: 0. Steve, 76561198000000001'],
    ['ARK: a player line with more after its id', '0. Steve, 76561198000000001 (admin)'],
    ['ARK: a reply filling a whole packet (maybe cut)', `${'0. Steve, 76561198000000001\n'.repeat(146)}0. Steve, 765611980`],
  ])('%s: not understood', (_what, reply) => {
    expect(parseOnline(reply, 'ark')).toBeUndefined();
  });

  const status = (...players: string[]) => ['hostname : My Server', 'players : 2 humans, 0 bots (24 max)', '# userid name uniqueid connected ping loss state rate adr', ...players, '#end'].join('\n');
  it('Source: a space before the colon, ids of two digits, runs of spaces, lines indented; a quote mid-line is no player', () => {
    expect(parseOnline(status('#12 "Steve" STEAM_1:0:1 05:00', '#  3   14 "Alex" [U:1:2]', '  # 4   "Eve" [U:1:3]', 'note # 5 "Bot" is not a line of its own'), 'source')).toEqual(['Steve', 'Alex', 'Eve']);
  });

  it('Source: no "hostname:" line at a line start, or a reply filling a whole packet: not understood', () => {
    expect(parseOnline(['myhostname: x', '# 2 "Steve" STEAM_1:0:1'].join('\n'), 'source')).toBeUndefined();
    const full = status(...Array.from({ length: 200 }, (_, i) => `# ${i} "P${i}" STEAM_1:0:${i}`));
    expect(Buffer.byteLength(full)).toBeGreaterThan(4096);
    expect(parseOnline(full, 'source')).toBeUndefined();
    // 4096 bytes exactly: may have been cut too.
    const base = status('# 2 "Steve" STEAM_1:0:1');
    expect(parseOnline(`${base}\n${'x'.repeat(4096 - Buffer.byteLength(base) - 1)}`, 'source')).toBeUndefined();
    expect(parseOnline(`${base}\n${'x'.repeat(4095 - Buffer.byteLength(base) - 1)}`, 'source')).toEqual(['Steve']);
  });

  it('ARK: 4095 bytes are read, 4096 may have been cut', () => {
    const line = '0. Steve, 76561198000000001';
    const pad = (bytes: number) => `${line}\n${' '.repeat(bytes - line.length - 1)}`;
    expect(parseOnline(pad(4095), 'ark')).toEqual(['Steve']);
    expect(parseOnline(pad(4096), 'ark')).toBeUndefined();
  });

  it('a game not named reads as Minecraft', () => {
    expect(parseOnline('There are 1 of a max of 20 players online: Steve', undefined)).toEqual(['Steve']);
  });
});

describe('the list poller', () => {
  it("reads the list in the game's own form (ARK's ListPlayers)", async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'ListPlayers' ? '0. Steve, 76561198000000001\n1. Alex, 76561198000000002' : 'Unknown command');
    const sink = rcon.sink(server, new MemoryJournal(), { game: 'ark', checkOnline: false, players: { source: 'list', listCommand: 'ListPlayers', intervalMs: 1_000 } });
    const players = await new Promise<string[]>((resolve) => sink.players?.start(resolve));
    await sink.players?.stop();
    expect(players).toEqual(['Steve', 'Alex']);
    expect(server.commands).toEqual(['ListPlayers']);
  });

  it("without a listCommand, polls the game's own: ARK's ListPlayers; a custom game's list", async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'ListPlayers' ? '0. Steve, 76561198000000001' : command === 'list' ? 'Alex' : 'Unknown command');
    const ark = rcon.sink(server, new MemoryJournal(), { game: 'ark', checkOnline: false, players: { source: 'list', intervalMs: 1_000 } });
    expect(await new Promise<string[]>((resolve) => ark.players?.start(resolve))).toEqual(['Steve']);
    await ark.close();
    const custom = rcon.sink(server, new MemoryJournal(), { game: 'custom', replies: { done: ['.*'] }, checkOnline: false, players: { source: 'list', intervalMs: 1_000 } });
    expect(await new Promise<string[]>((resolve) => custom.players?.start(resolve))).toEqual(['Alex']);
    await custom.close();
    expect(server.commands).toEqual(['ListPlayers', 'list']);
  });

  it('polls the list command and hands each list over; stop ends it', async () => {
    const server = await rcon.server();
    server.listReply = 'There are 2 of a max of 20 players online: Steve, Alex';
    const sink = rcon.sink(server, new MemoryJournal(), { players: { source: 'list', intervalMs: 10 } });
    const lists: string[][] = [];
    await new Promise<void>((resolve) => {
      sink.players?.start((players) => {
        lists.push(players);
        if (lists.length === 1) server.listReply = 'There are 1 of a max of 20 players online: Alex';
        if (lists.length === 2) resolve();
      });
    });
    await sink.players?.stop();
    const polled = server.commands.length;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(server.commands.length).toBe(polled);
    expect(lists.slice(0, 2)).toEqual([['Steve', 'Alex'], ['Alex']]);
    expect(new Set(server.commands)).toEqual(new Set(['list']));
    expect(server.logins.ok).toBe(1);
  });

  it('its own list command; a reply not understood and a lost connection are logged, the list unchanged, the poll goes on', async () => {
    const server = await rcon.server();
    let n = 0;
    server.answer = () => {
      n++;
      if (n === 1) return 'Unknown command';
      if (n === 2) return { drop: true };
      return 'Steve';
    };
    const log = recordingLog();
    const sink = rcon.sink(server, new MemoryJournal(), { players: { source: 'list', listCommand: 'players', intervalMs: 5 } }, log);
    const players = await new Promise<string[]>((resolve) => sink.players?.start(resolve));
    await sink.players?.stop();
    expect(players).toEqual(['Steve']);
    expect(server.commands.slice(0, 3)).toEqual(['players', 'players', 'players']);
    expect(log.lines.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: 'RCON list reply not understood; online players unchanged', fields: { command: 'players', reply: 'Unknown command' } },
      { level: 'warn', message: 'RCON list failed; online players unchanged', fields: { command: 'players', error: 'RCON: Connection closed' } },
    ]);
    expect(server.logins.ok).toBe(2);
  });

  it('no server: logged, tried again; start twice polls once; players only with source "list"', async () => {
    const server = await rcon.server();
    server.answerLogin = false;
    const log = recordingLog();
    const sink = rcon.sink(server, new MemoryJournal(), { timeoutMs: 20, players: { source: 'list', intervalMs: 5 } }, log);
    const onList = () => undefined;
    sink.players?.start(onList);
    sink.players?.start(onList);
    // Tried again after each failure (waited for, not timed: a loaded machine is slow).
    await expect.poll(() => server.logins.ok, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    await sink.close();
    const logins = server.logins.ok; // counted, never answered
    expect(logins).toBeGreaterThanOrEqual(2);
    expect(log.lines.some((l) => l.message === 'RCON list failed; online players unchanged')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(server.logins.ok).toBe(logins);
    // The game reports its players over the HTTP API: the sink has no `players` at all.
    expect('players' in rcon.sink(server, new MemoryJournal(), { players: { source: 'game' } })).toBe(false);
    expect('players' in rcon.sink(server, new MemoryJournal())).toBe(false);
  });

  it('a list poll and a give never interleave on the connection: the give waits its turn', async () => {
    const server = await rcon.server();
    server.answer = (command) => (command === 'list' ? { delayMs: 30, reply: 'Steve' } : server.minecraft(command));
    const journal = new MemoryJournal();
    const sink = rcon.sink(server, journal, { players: { source: 'list', intervalMs: 1_000 } });
    const listed = new Promise<string[]>((resolve) => sink.players?.start(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { whip, itemOf } = await import('../support/rcon-sink.js');
    await sink.give(itemOf(whip('invoice:1')));
    expect(await listed).toEqual(['Steve']);
    expect(server.commands).toEqual(['list', 'give Steve whip 1']);
  });
});

describe('the list poller, on its own clock', () => {
  afterEach(() => void vi.useRealTimers());

  /** A connection whose `list` replies the test gives, one call at a time. */
  function fakeLink(answers: Array<Sent | Promise<Sent>>) {
    const sent: string[] = [];
    return {
      sent,
      exclusive: <T>(work: () => Promise<T>) => work(),
      connect: async () => undefined,
      send: async (command: string) => {
        sent.push(command);
        return answers.shift() ?? { reply: 'Steve' };
      },
    };
  }

  it('a reply not understood is logged with its first 200 characters; a command lost or never sent, with its error', async () => {
    const link = fakeLink([{ reply: `Unknown command ${'x'.repeat(300)}` }, { notSent: new Error('not connected') }, { unknown: new Error('no reply') }]);
    const log = recordingLog();
    const lists: string[][] = [];
    vi.useFakeTimers();
    const poller = listPlayers(link, { listCommand: 'who', intervalMs: 1_000 }, log);
    poller.start((players) => lists.push(players));
    await vi.advanceTimersByTimeAsync(3_000);
    await poller.stop();
    expect(log.lines).toEqual([
      { level: 'warn', message: 'RCON list reply not understood; online players unchanged', fields: { command: 'who', reply: `Unknown command ${'x'.repeat(184)}` } },
      { level: 'warn', message: 'RCON list failed; online players unchanged', fields: { command: 'who', error: 'not connected' } },
      { level: 'warn', message: 'RCON list failed; online players unchanged', fields: { command: 'who', error: 'no reply' } },
    ]);
    expect(lists).toEqual([['Steve']]);
  });

  it('one poll every intervalMs however often start() is called; none once stopped, also when started after', async () => {
    vi.useFakeTimers();
    const link = fakeLink([]);
    const poller = listPlayers(link, { listCommand: 'list', intervalMs: 1_000 }, recordingLog());
    poller.start(() => undefined);
    poller.start(() => undefined);
    await vi.advanceTimersByTimeAsync(2_500);
    expect(link.sent).toHaveLength(3);
    await poller.stop();
    poller.start(() => undefined);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(link.sent).toHaveLength(3);

    const never = fakeLink([]);
    const stoppedFirst = listPlayers(never, { listCommand: 'list', intervalMs: 1_000 }, recordingLog());
    await stoppedFirst.stop();
    stoppedFirst.start(() => undefined);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(never.sent).toEqual([]);
  });

  it('stop() during a poll waits for it, and nothing is polled after', async () => {
    vi.useFakeTimers();
    let answer!: (sent: Sent) => void;
    const link = fakeLink([new Promise<Sent>((resolve) => (answer = resolve))]);
    const lists: string[][] = [];
    const poller = listPlayers(link, { listCommand: 'list', intervalMs: 1_000 }, recordingLog());
    poller.start((players) => lists.push(players));
    await vi.advanceTimersByTimeAsync(0);
    expect(link.sent).toHaveLength(1);
    let stopped = false;
    const stopping = poller.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    answer({ reply: 'Alex' });
    await stopping;
    expect(lists).toEqual([['Alex']]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(link.sent).toHaveLength(1);
  });
});
