/**
 * The bridge's small decisions, each alone (issue #46 point 2): which client event becomes
 * which log line (level, words, fields), which hosts are loopback, how a give is counted and
 * logged (given, not given, in a window), the redaction of a rotated RCON password, and how
 * often the open windows are counted (a failed count is not kept).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeliveredItem, GivenVoteReward, StorefrontEvent } from '../../src/index.js';
import type { DeliveryJournal, JournalEntry } from '../../src/journals/contract.js';
import { counted, inWindow, isLoopback, logEvent, onPlayerList, redaction, undoer, windowCounter } from '../../src/bridge/bridge.js';
import type { BridgeLogger } from '../../src/bridge/log.js';
import type { BridgeMetrics } from '../../src/bridge/metrics.js';
import type { BridgeSecrets } from '../../src/bridge/secrets.js';
import type { ItemSink } from '../../src/bridge/sink.js';
import { journalWindow } from '../support/journal.js';

afterEach(() => {
  vi.useRealTimers();
});

type Call = [level: string, message: string, fields?: Record<string, unknown>];

function recorder(): { log: BridgeLogger; calls: Call[] } {
  const calls: Call[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void calls.push(fields === undefined ? [level, message] : [level, message, fields]);
  return { calls, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), flush: () => undefined } };
}

const logged = (event: Record<string, unknown>): Call[] => {
  const { log, calls } = recorder();
  logEvent(log, event as unknown as StorefrontEvent);
  return calls;
};

describe('which client event becomes which line', () => {
  const error = new Error('boom');
  it.each<[string, Record<string, unknown>, Call[]]>([
    ['a retry: a warning with the operation, the attempt and the reason', { type: 'retry', operation: 'claim', attempt: 2, reason: 'HTTP 503', delayMs: 10 }, [['warn', 'retrying a call to the store', { operation: 'claim', attempt: 2, reason: 'HTTP 503' }]]],
    ['an unverified window: an error with the window', { type: 'unverified', operation: 'claim', window: { playerName: 'Steve', from: 1, to: 2 } }, [['error', 'unverified window: items may have been claimed without being given; staff must check (teamgames journal windows)', { window: { playerName: 'Steve', from: 1, to: 2 } }]]],
    ['a journal error: "the journal failed"', { type: 'journalError', operation: 'claim', playerName: 'Steve', error }, [['error', 'the journal failed', { player: 'Steve', error }]]],
    ['a loop error: "a delivery run failed"', { type: 'loopError', operation: 'startDeliveryLoop', playerName: 'Steve', error }, [['error', 'a delivery run failed', { player: 'Steve', error }]]],
    ['a stuck item', { type: 'stuck', operation: 'claim', playerName: 'Steve', deliveryId: 'invoice:1', attempts: 3, error }, [['error', 'an item keeps failing to be given; marked for staff (teamgames journal pending)', { player: 'Steve', deliveryId: 'invoice:1', attempts: 3, error }]]],
    ['a stuck vote reward', { type: 'stuck', operation: 'claim', playerName: 'Steve', deliveryId: 'vote:1', attempts: 3, error, reward: { reward: '1' } }, [['error', 'a vote reward keeps failing to be given; marked for staff (teamgames journal pending)', { player: 'Steve', deliveryId: 'vote:1', attempts: 3, error }]]],
    ['a blocked player: a warning with the code and the runs', { type: 'playerBlocked', operation: 'startDeliveryLoop', playerName: 'Steve', code: 'RATE_LIMIT', runs: 4 }, [['warn', 'deliveries of a player are blocked', { player: 'Steve', code: 'RATE_LIMIT', runs: 4 }]]],
    ['an unblocked player: info', { type: 'playerUnblocked', operation: 'startDeliveryLoop', playerName: 'Steve' }, [['info', 'deliveries of a player are unblocked', { player: 'Steve' }]]],
    ['checkout hints that cannot be read: an error', { type: 'sharedHintsError', operation: 'startDeliveryLoop', error }, [['error', "the journal's checkout hints (the shops' expectCheckout) cannot be read: hinted players wait for the routine polls until they can", { error }]]],
    ['checkout hints read again: info', { type: 'sharedHintsError', operation: 'startDeliveryLoop' }, [['info', "the journal's checkout hints are read again"]]],
    ['a delivery that granted: info with the counts', { type: 'delivery', operation: 'startDeliveryLoop', playerName: 'Steve', report: { code: 'SUCCESS', granted: [{}], failed: [], pending: 0 } }, [['info', 'delivery', { player: 'Steve', code: 'SUCCESS', granted: 1, failed: 0, pending: 0 }]]],
    ['a delivery that only failed: info with the counts', { type: 'delivery', operation: 'startDeliveryLoop', playerName: 'Steve', report: { code: 'SUCCESS', granted: [], failed: [{}, {}], pending: 2 } }, [['info', 'delivery', { player: 'Steve', code: 'SUCCESS', granted: 0, failed: 2, pending: 2 }]]],
    ['a delivery that did nothing: no line', { type: 'delivery', operation: 'startDeliveryLoop', playerName: 'Steve', report: { code: 'NO_ITEMS', granted: [], failed: [], pending: 0 } }, []],
    ['any other event: no line', { type: 'request', operation: 'claim' }, []],
  ])('%s', (_title, event, calls) => {
    expect(logged(event)).toEqual(calls);
  });
});

describe('loopback hosts', () => {
  it.each(['localhost', '::1', '[::1]', '127.0.0.1', '127.10.20.30'])('%s is loopback', (host) => {
    expect(isLoopback(host)).toBe(true);
  });
  it.each(['', '0.0.0.0', '10.0.0.1', 'x127.0.0.1', '127.0.0.1.example.com', '::', 'example.com'])('%j is not', (host) => {
    expect(isLoopback(host)).toBe(false);
  });
});

describe('whether a failed give is in a window', () => {
  it.each<[unknown, boolean]>([
    [Object.assign(new Error('lost'), { unverified: { from: 1, to: 2 } }), true],
    [Object.assign(new Error('lost'), { unverified: { from: Number.NaN } }), false],
    [Object.assign(new Error('lost'), { unverified: {} }), false],
    [new Error('refused'), false],
    [undefined, false],
    [null, false],
  ])('%s: %s', (error, expected) => {
    expect(inWindow(error)).toBe(expected);
  });
});

describe('gives, counted and logged', () => {
  const item = { deliveryId: 'invoice:1', player_name: 'Steve' } as unknown as DeliveredItem;
  const reward = { deliveryId: 'vote:1', playerName: 'Alex' } as unknown as GivenVoteReward;
  const sinkThat = (outcome: () => Promise<void>): ItemSink => ({ give: outcome, giveVoteReward: outcome, close: async () => undefined });
  const metricsLog = () => {
    const counts: string[] = [];
    return { counts, metrics: { current: { give: (kind: string, outcome: string) => void counts.push(`${kind} ${outcome}`) } as unknown as BridgeMetrics } };
  };

  it('before the metrics exist, a give still resolves and a failure still rejects with its error', async () => {
    const { log, calls } = recorder();
    await expect(counted(sinkThat(async () => undefined), {}, log).give(item)).resolves.toBeUndefined();
    expect(calls).toEqual([['info', 'item given', { player: 'Steve', deliveryId: 'invoice:1' }]]);
    const refused = new Error('refused');
    await expect(counted(sinkThat(async () => Promise.reject(refused)), {}, log).give(item)).rejects.toBe(refused);
    const lost = Object.assign(new Error('lost'), { unverified: { from: 1, to: 2 } });
    await expect(counted(sinkThat(async () => Promise.reject(lost)), {}, log).giveVoteReward(reward)).rejects.toBe(lost);
  });

  it('a give in a window: counted unverified, an error line (never "given"), the error thrown again', async () => {
    const { log, calls } = recorder();
    const { metrics, counts } = metricsLog();
    const lost = Object.assign(new Error('lost'), { unverified: { from: 1, to: 2 } });
    const gives = counted(sinkThat(async () => Promise.reject(lost)), metrics, log);
    await expect(gives.give(item)).rejects.toBe(lost);
    await expect(gives.giveVoteReward(reward)).rejects.toBe(lost);
    expect(counts).toEqual(['purchase unverified', 'vote unverified']);
    expect(calls).toEqual([
      ['error', 'item NOT confirmed given: its outcome is unknown, a window for staff (teamgames journal windows); never given again', { player: 'Steve', deliveryId: 'invoice:1', error: lost }],
      ['error', 'vote reward NOT confirmed given: its outcome is unknown, a window for staff (teamgames journal windows); never given again', { player: 'Alex', deliveryId: 'vote:1', error: lost }],
    ]);
  });

  it('a sink that throws no error at all: counted failed, the same nothing thrown again', async () => {
    const { log, calls } = recorder();
    const { metrics, counts } = metricsLog();
    const outcome = await counted(sinkThat(async () => Promise.reject(undefined)), metrics, log)
      .give(item)
      .then(
        () => 'resolved',
        (error: unknown) => ({ rejected: error }),
      );
    expect(outcome).toEqual({ rejected: undefined });
    expect(counts).toEqual(['purchase failed']);
    expect(calls).toEqual([['warn', 'item not given; it stays pending and is tried again', { player: 'Steve', deliveryId: 'invoice:1', error: undefined }]]);
  });
});

describe("a poll of the game's player list", () => {
  it('hands the roster the valid names only; a change is one debug line with the counts, no change none', () => {
    const { log, calls } = recorder();
    const handed: string[][] = [];
    let answer = { joined: ['Steve'], left: [] as string[] };
    const poll = onPlayerList({
        replace: (players) => {
          handed.push([...players]);
          return answer;
        },
      }, log);
    poll(['Steve', '', 'x'.repeat(65)]);
    expect(handed).toEqual([['Steve']]);
    expect(calls).toEqual([['debug', 'online players reconciled', { joined: 1, left: 0 }]]);
    answer = { joined: [], left: [] };
    poll(['Steve']);
    answer = { joined: [], left: ['Steve', 'Alex'] };
    poll([]);
    expect(calls).toEqual([
      ['debug', 'online players reconciled', { joined: 1, left: 0 }],
      ['debug', 'online players reconciled', { joined: 0, left: 2 }],
    ]);
  });
});

describe('what stop undoes', () => {
  it('every step, last first, once; a step that fails is logged and the next still runs', async () => {
    const { log, calls } = recorder();
    const ran: string[] = [];
    const failure = new Error('cannot close');
    const steps: Array<() => Promise<void>> = [async () => void ran.push('journal'), async () => {
        ran.push('sink');
        throw failure;
      }, async () => void ran.push('server')];
    const undo = undoer(steps, log);
    await undo();
    expect(ran).toEqual(['server', 'sink', 'journal']);
    expect(calls).toEqual([['error', 'stopping: a step failed', { error: failure }]]);
    await undo();
    expect(ran).toEqual(['server', 'sink', 'journal']);
    steps.push(async () => void ran.push('late'));
    await undo();
    expect(ran).toEqual(['server', 'sink', 'journal', 'late']);
  });
});

describe('the redaction of the RCON password', () => {
  const secrets = { apiKey: 'api-key-0123456789', token: 'token-0123456789abcdef', rconPassword: 'first-password' } as unknown as BridgeSecrets;

  it('the one read at start, and from its reading a rotated one (the latest only; the first stays hidden)', () => {
    const { redact, hide } = redaction(secrets);
    const text = 'first-password second-password third-password';
    expect(redact(text)).toBe('<redacted> second-password third-password');
    hide('second-password');
    expect(redact(text)).toBe('<redacted> <redacted> third-password');
    hide('third-password');
    expect(redact(text)).toBe('<redacted> second-password <redacted>');
    hide('first-password');
    expect(redact(text)).toBe('<redacted> second-password third-password');
  });
});

describe('the count of open windows', () => {
  function journalOf(entries: JournalEntry[], failures: { left: number }): DeliveryJournal {
    return {
      pending: async () => {
        if (failures.left > 0) {
          failures.left--;
          throw new Error('the disk is gone');
        }
        return entries.slice();
      },
    } as unknown as DeliveryJournal;
  }

  it('is reused for 5 s of the monotonic clock, whenever the clock reads', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    vi.advanceTimersByTime(60_000);
    const entries: JournalEntry[] = [journalWindow('window:1', 'Steve')];
    const count = windowCounter(journalOf(entries, { left: 0 }));
    expect(await count()).toBe(1);
    entries.push(journalWindow('window:2', 'Alex'));
    vi.advanceTimersByTime(4_999);
    expect(await count()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await count()).toBe(2);
  });

  it('a failed count is not kept: the next call reads again', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const count = windowCounter(journalOf([journalWindow('window:1', 'Steve')], { left: 1 }));
    await expect(count()).rejects.toThrow(/the disk is gone/);
    expect(await count()).toBe(1);
  });
});
