/**
 * Every record a journal reads back is validated like an answer from the network
 * (src/journals/contract.ts, `entryProblem`): a record of the wrong shape is damage, named
 * by its problem, never an item to grant. Each field of each kind of record, one by one,
 * and through a journal of the user's that returns it: deliver grants nothing.
 */
import { describe, expect, it } from 'vitest';
import { checkJournal } from '../../src/journals/contract.js';
import { entryProblem } from '../../src/journals/entry-checks.js';
import { InvalidInputError, MemoryJournal, StorefrontClient, type DeliveryJournal, type JournalEntry } from '../../src/index.js';
import { journalLine } from '../support/journal.js';

const line = journalLine('invoice:1');
const mark = { deliveryId: 'claim:1', playerName: 'Ann', state: 'claiming', recordedAt: 1 };
const window = { deliveryId: 'window:1', playerName: 'Ann', state: 'unverified', from: 1, to: 2, cause: 'lostClaim', recordedAt: 2 };
const resolved = { ...window, state: 'resolved', resolution: { by: 'staff', at: 3, note: 'granted by hand' } };
const voteMark = { deliveryId: 'vote:1', playerName: 'Ann', state: 'voteClaiming', reward: '1', amount: 2, recordedAt: 1 };
const voteRow = { deliveryId: 'vote:1:0', playerName: 'Ann', state: 'voteClaimed', recordedAt: 1, reward: { total_points: '5', vote_points: 3, votes_month: 5, give_amount: 2, reward_id: 1, reward_name: 'Box' } };
const counters = { deliveryId: 'votes:Ann', playerName: 'Ann', state: 'voteCounters', totalPoints: 5, votePoints: 3, recordedAt: 1, prices: [{ reward: '1', name: 'Box', cost: 1, give: 1, learnedAt: 1 }] };
/** A function carrying `fields` (a function's own `name` is read-only to assignment, not to definition). */
const functionWith = (fields: object) => Object.defineProperties(() => undefined, Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, { value, enumerable: true }])));
const voteWindow = { ...window, cause: 'lostVote', reward: '1', points: 2 };

describe('entryProblem', () => {
  it.each<[string, unknown]>([
    ['a claimed line', line],
    ['an intended line with every optional field', { ...line, state: 'intended', invoice: '1', node: 'n', previewedAt: 1, settled: false, lastError: { message: 'm', at: 1, attempts: 1 }, item: { ...line.item, message: 'gift' } }],
    ['a claim mark', mark],
    ['an open window', window],
    ['a window from another node', { ...window, node: 'n', cause: 'claimMark' }],
    ['a resolved window', resolved],
    ['a vote claim mark', voteMark],
    ['a settled vote claim mark for all, from a node', { ...voteMark, amount: 'all', settled: true, node: 'n' }],
    ['a lost vote claim mark a window names', { ...voteMark, window: 'window:1' }],
    ['a vote reward row', voteRow],
    ['a recovered vote reward row that failed once', { ...voteRow, recovered: true, lastError: { message: 'm', at: 1, attempts: 1 }, reward: { ...voteRow.reward, message: 'hi' } }],
    ['vote counters', counters],
    ['a lost vote window', voteWindow],
    ['a lost vote window whose points are unknown', { ...voteWindow, points: undefined }],
    ['counters dropped after a window (no count), prices kept', { ...counters, totalPoints: undefined, votePoints: undefined }],
    ['counters with every point left', { ...counters, votePoints: 5 }],
    ['a claimed line with its sending mark (RCON)', { ...line, sending: 1 }],
    ['a vote reward row with its sending mark (RCON)', { ...voteRow, sending: 1 }],
    ['a window of a command whose outcome is unknown, naming it', { ...window, cause: 'unknownCommand', command: 'give Ann whip 1\nsay Ann thanks' }],
    ['a window of a command, resolved, its command unknown', { ...resolved, cause: 'unknownCommand' }],
    ['a claim mark with its start', { ...mark, since: 5 }],
    ['a lost vote window whose points are none left', { ...voteWindow, points: 0 }],
    ['a line marked for staff', { ...line, lastError: { message: 'm', at: 1, attempts: 3, stuck: true } }],
  ])('%s: a journal entry', (_name, value) => {
    expect(entryProblem(value)).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'not an object (null)'],
    ['a list', [line], 'not an object'],
    ['text', 'claimed', 'not an object'],
    ['no deliveryId', { ...line, deliveryId: undefined }, 'deliveryId is not a non-empty string'],
    ['an empty deliveryId', { ...line, deliveryId: '' }, 'deliveryId is not a non-empty string'],
    ['an empty playerName', { ...line, playerName: '' }, 'playerName is not a non-empty string'],
    ['a numeric playerName', { ...line, playerName: 7 }, 'playerName is not a non-empty string'],
    ['an unknown state', { ...line, state: 'done' }, "state is not 'claimed', 'intended', 'claiming', 'unverified', 'resolved', 'voteClaiming', 'voteClaimed' or 'voteCounters'"],
    ['recordedAt as text', { ...line, recordedAt: '1' }, 'recordedAt is not a number'],
    ['recordedAt not finite', { ...mark, recordedAt: Number.POSITIVE_INFINITY }, 'recordedAt is not a number'],
    ['an item that is a list', { ...line, item: [] }, 'item is not an object'],
    ['no item', { ...line, item: null }, 'item is not an object (null)'],
    ['an item without its name', { ...line, item: { ...line.item, product_name: undefined } }, 'item.product_name is not a string'],
    ['a quantity as text', { ...line, item: { ...line.item, quantity_to_grant: '1' } }, 'item.quantity_to_grant is not a number'],
    ['a price that is not finite', { ...line, item: { ...line.item, product_price: Number.NaN } }, 'item.product_price is not a number'],
    ['an item message that is not text', { ...line, item: { ...line.item, message: 3 } }, 'item.message is not a string'],
    ['a numeric invoice', { ...line, invoice: 1 }, 'invoice is not a string'],
    ['a numeric node', { ...line, node: 1 }, 'node is not a string'],
    ['previewedAt as text', { ...line, previewedAt: 'now' }, 'previewedAt is not a number'],
    ['previewedAt not finite', { ...line, previewedAt: Number.NaN }, 'previewedAt is not a number'],
    ['settled as text', { ...line, settled: 'yes' }, 'settled is not a boolean'],
    ['a lastError that is text', { ...line, lastError: 'failed' }, 'lastError is not { message, at, attempts }'],
    ['a lastError that is null', { ...line, lastError: null }, 'lastError is not { message, at, attempts }'],
    ['a lastError that is a function, not data', { ...line, lastError: Object.assign(() => undefined, { message: 'm', at: 1, attempts: 1 }) }, 'lastError is not { message, at, attempts }'],
    ['a lastError without its message', { ...line, lastError: { at: 1, attempts: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a lastError without its time', { ...line, lastError: { message: 'm', attempts: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a lastError without its count', { ...line, lastError: { message: 'm', at: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a window without its start', { ...window, from: undefined }, 'from is not a number'],
    ['a window whose start is not finite', { ...window, from: Number.NaN }, 'from is not a number'],
    ['a window without its end', { ...window, to: '2' }, 'to is not a number'],
    ['a window whose end is not finite', { ...window, to: Number.POSITIVE_INFINITY }, 'to is not a number'],
    ['a window of an unknown cause', { ...window, cause: 'crash' }, `cause is not 'lostClaim', 'claimMark', 'lostVote' or 'unknownCommand' ("crash")`],
    ['a sending mark as text', { ...line, sending: '1' }, 'sending is not a number'],
    ['a sending mark not finite', { ...line, sending: Number.NaN }, 'sending is not a number'],
    ['a vote row with a sending mark as text', { ...voteRow, sending: 'now' }, 'sending is not a number'],
    ['a window with a numeric command', { ...window, cause: 'unknownCommand', command: 7 }, 'command is not a string'],
    ['a command window naming a reward', { ...window, cause: 'unknownCommand', reward: '1' }, 'reward is not a non-empty string on a lostVote window (and absent on others)'],
    ['a lost vote window without its reward', { ...voteWindow, reward: undefined }, 'reward is not a non-empty string on a lostVote window'],
    ['a claim window naming a reward', { ...window, reward: '1' }, 'reward is not a non-empty string on a lostVote window (and absent on others)'],
    ['a lost vote window with negative points', { ...voteWindow, points: -1 }, 'points is not a non-negative integer'],
    ['a lost vote window with an empty reward', { ...voteWindow, reward: '' }, 'reward is not a non-empty string on a lostVote window'],
    ['a claim mark whose start is text', { ...mark, since: '5' }, 'since is not a number'],
    ['a lastError whose stuck mark is text', { ...line, lastError: { message: 'm', at: 1, attempts: 3, stuck: 'yes' } }, 'lastError.stuck is not a boolean'],
    ['a claim window with points', { ...window, points: 1 }, 'points is not a non-negative integer on a lostVote window'],
    ['a vote mark without its reward', { ...voteMark, reward: '' }, 'reward is not a non-empty string'],
    ['a vote mark of zero units', { ...voteMark, amount: 0 }, "amount is not a positive integer or 'all'"],
    ['a vote mark of a fraction', { ...voteMark, amount: 1.5 }, "amount is not a positive integer or 'all'"],
    ['a vote mark of every unit in capitals', { ...voteMark, amount: 'ALL' }, "amount is not a positive integer or 'all'"],
    ['a vote mark with a numeric node', { ...voteMark, node: 1 }, 'node is not a string'],
    ['a vote mark settled as text', { ...voteMark, settled: 'yes' }, 'settled is not a boolean'],
    ['a vote mark named by a window that is not a string', { ...voteMark, window: 7 }, 'window is not a non-empty string'],
    ['a vote mark named by an empty window', { ...voteMark, window: '' }, 'window is not a non-empty string'],
    ['a vote row without its reward', { ...voteRow, reward: null }, 'reward is not an object (null)'],
    ['a vote row with total_points as a number', { ...voteRow, reward: { ...voteRow.reward, total_points: 5 } }, 'reward.total_points is not a string'],
    ['a vote row without its name', { ...voteRow, reward: { ...voteRow.reward, reward_name: undefined } }, 'reward.reward_name is not a string'],
    ['a vote row giving a fraction', { ...voteRow, reward: { ...voteRow.reward, give_amount: 1.5 } }, 'reward.give_amount is not an integer'],
    ['a vote row with a numeric message', { ...voteRow, reward: { ...voteRow.reward, message: 1 } }, 'reward.message is not a string'],
    ['a vote row recovered as text', { ...voteRow, recovered: 'yes' }, 'recovered is not a boolean'],
    ['a vote row with a lastError that is text', { ...voteRow, lastError: 'x' }, 'lastError is not { message, at, attempts }'],
    ['counters as text', { ...counters, totalPoints: '5' }, 'totalPoints is not a non-negative integer'],
    ['negative points left', { ...counters, votePoints: -1 }, 'votePoints is not a non-negative integer'],
    ['more points left than ever earned', { ...counters, votePoints: 6 }, 'votePoints is above totalPoints'],
    ['counters without prices', { ...counters, prices: undefined }, 'prices is not an array'],
    ['a price of zero points', { ...counters, prices: [{ ...counters.prices[0], cost: 0 }] }, 'prices[0] is not { reward, name, cost, give, learnedAt }'],
    ['a price without its name', { ...counters, prices: [{ ...counters.prices[0], name: undefined }] }, 'prices[0] is not'],
    ['a price whose reward is a number', { ...counters, prices: [{ ...counters.prices[0], reward: 1 }] }, 'prices[0] is not'],
    ['a price given as text', { ...counters, prices: [{ ...counters.prices[0], give: '1' }] }, 'prices[0] is not'],
    ['a price learned at no time', { ...counters, prices: [{ ...counters.prices[0], learnedAt: undefined }] }, 'prices[0] is not'],
    ['a price that is null', { ...counters, prices: [null] }, 'prices[0] is not'],
    ['a price that is text', { ...counters, prices: ['5 points'] }, 'prices[0] is not'],
    ['a price that is a function, not data', { ...counters, prices: [functionWith(counters.prices[0] as object)] }, 'prices[0] is not'],
    ['a vote mark of a numeric reward', { ...voteMark, reward: 1 }, 'reward is not a non-empty string'],
    ['a vote mark of every unit spelled out', { ...voteMark, amount: 'every' }, "amount is not a positive integer or 'all' (\"every\")"],
    ['counters with points left only', { ...counters, totalPoints: undefined }, 'totalPoints is not a non-negative integer'],
    ['counters with points earned only', { ...counters, votePoints: undefined }, 'votePoints is not a non-negative integer'],
    ['a vote row whose reward is a list', { ...voteRow, reward: [] }, 'reward is not an object'],
    ['a vote row whose reward is text', { ...voteRow, reward: 'Box' }, 'reward is not an object ("Box")'],
    ['a vote row with a lastError that is a function, not data', { ...voteRow, lastError: Object.assign(() => undefined, { message: 'm', at: 1, attempts: 1 }) }, 'lastError is not { message, at, attempts }'],
    ['a vote row with a lastError that is null', { ...voteRow, lastError: null }, 'lastError is not { message, at, attempts }'],
    ['a vote row with a lastError without its time', { ...voteRow, lastError: { message: 'm', attempts: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a vote row with a lastError without its count', { ...voteRow, lastError: { message: 'm', at: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a vote row with a lastError without its message', { ...voteRow, lastError: { at: 1, attempts: 1 } }, 'lastError is not { message, at, attempts }'],
    ['a window with a numeric node', { ...window, node: 2 }, 'node is not a string'],
    ['a resolved window without its resolution', { ...resolved, resolution: undefined }, 'resolution is not { by, at, note }'],
    ['a resolved window whose resolution is null', { ...resolved, resolution: null }, 'resolution is not { by, at, note }'],
    ['a resolution without who', { ...resolved, resolution: { at: 3, note: 'n' } }, 'resolution is not { by, at, note }'],
    ['a resolution without when', { ...resolved, resolution: { by: 's', note: 'n' } }, 'resolution is not { by, at, note }'],
    ['a resolution without its note', { ...resolved, resolution: { by: 's', at: 3 } }, 'resolution is not { by, at, note }'],
  ])('%s: "%s"', (_name, value, problem) => {
    expect(entryProblem(value)).toContain(problem);
  });

  it('an open window needs no resolution; a claim mark needs no item', () => {
    expect(entryProblem({ ...window, resolution: undefined })).toBeUndefined();
    expect(entryProblem({ ...mark, item: 'anything' })).toBeUndefined();
  });
});

describe('a journal of the user that returns a damaged record', () => {
  it('deliver grants nothing and names the problem', async () => {
    const records: unknown[] = [{ ...line, playerName: 'Ann', lastError: { message: 'm' } }];
    const journal: DeliveryJournal = { append: async () => undefined, acknowledge: async () => undefined, pending: async () => records as JournalEntry[] };
    const granted: unknown[] = [];
    const client = new StorefrontClient({ apiKey: 'k', baseUrl: 'https://api.teamgames.io', fetch: async () => new Response('{}'), journal, retry: 0 });
    const report = await client.deliver('Ann', (item) => void granted.push(item));
    expect(granted).toEqual([]);
    expect(report.journalError?.message).toMatch(/lastError is not \{ message, at, attempts \}/);
  });
});

describe('the journal option', () => {
  it('takes any object with append, pending and acknowledge; refuses anything else, naming what it got', () => {
    const journal = new MemoryJournal();
    expect(checkJournal(undefined)).toBeUndefined();
    expect(checkJournal(journal)).toBe(journal);
    for (const bad of [null, 'file.jsonl', { append() {}, pending() {} }, { append() {}, acknowledge() {}, pending: 1 }, { pending() {}, acknowledge() {} }]) {
      expect(() => checkJournal(bad)).toThrow(InvalidInputError);
    }
    expect(() => checkJournal('file.jsonl')).toThrow(/options\.journal.*must be a DeliveryJournal \(an object with append, pending and acknowledge\), got/);
  });
});
