/**
 * The RCON command templates (src/bridge/rcon/template.ts): placeholders filled, a value
 * that could break out of the command refused (never escaped), templates checked when the
 * sink is made, the product's own templates before `"*"`.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../src/index.js';
import { createRconSink } from '../../src/bridge/rcon/sink.js';
import { PURCHASE_PLACEHOLDERS, VOTE_PLACEHOLDERS, render, templateProblem, templatesFor, valueProblem } from '../../src/bridge/rcon/template.js';
import { recordingLog } from '../support/rcon-sink.js';

describe('render', () => {
  it('fills every placeholder, as often as it appears; text outside placeholders as it is', () => {
    expect(render(['give {player} diamond {quantity}', 'say {player}: {productName} #{productId} ({deliveryId}) x{quantity}'], { player: 'Steve_1', quantity: '64', productName: 'VIP rank [gold]', productId: '12', deliveryId: 'invoice:77' })).toEqual({
      commands: ['give Steve_1 diamond 64', 'say Steve_1: VIP rank [gold] #12 (invoice:77) x64'],
    });
  });

  it('refuses the whole item on the first bad value, naming the placeholder', () => {
    expect(render(['give {player} x 1', 'say {productName}'], { player: 'Steve', productName: 'a;b' })).toEqual({ refused: '{productName} holds a character that could break out of the command (a quote, \\, ;, {, }, §, a control or format character)' });
    expect(render(['give {player} x {quantity}'], { player: 'Ste ve', quantity: '-1' })).toEqual({ refused: '{player} is outside the player names a command may hold (A-Z a-z 0-9 _, then also . and -, at most 64)' });
    expect(render(['give {player} x {quantity}'], { player: 'Steve', quantity: '1.5' })).toEqual({ refused: '{quantity} is not a non-negative integer' });
  });

  it('a value missing is empty, hence refused', () => {
    expect(render(['say {productName}'], {})).toEqual({ refused: '{productName} is empty' });
  });

  it('a brace written twice is a literal brace: JSON text for tellraw', () => {
    expect(render(['tellraw {player} {{"text":"Thanks for {productName}!","color":"gold"}}', '{{player}}'], { player: 'Steve', productName: 'VIP rank' })).toEqual({
      commands: ['tellraw Steve {"text":"Thanks for VIP rank!","color":"gold"}', '{player}'],
    });
  });

  it('a template without placeholders is sent as it is', () => {
    expect(render(['save-all'], {})).toEqual({ commands: ['save-all'] });
  });
});

describe('valueProblem', () => {
  it.each(['Steve', 'a', 'Steve_01', 'x.y-z', '76561198000000000', 'A'.repeat(64)])('player %j: accepted', (name) => {
    expect(valueProblem('player', name)).toBeUndefined();
  });

  it.each(['', 'A'.repeat(65), 'Ste ve', '.Steve', '-Steve', 'Ste;ve', 'Ste"ve', "Ste've", 'Ste\\ve', 'Ste\nve', 'Ste\rve', '§aSteve', 'Stéve', 'Ste\u202eve', 'Ste\u200bve', 'Ste\u0000ve', '名前', 'Steve\n'])('player %j: refused', (name) => {
    expect(valueProblem('player', name)).toMatch(/outside the player names/);
  });

  it.each([
    ['0', undefined],
    ['1', undefined],
    ['9007199254740991', undefined],
    ['', 'is not a non-negative integer'],
    ['01', 'is not a non-negative integer'],
    ['-1', 'is not a non-negative integer'],
    ['1e3', 'is not a non-negative integer'],
    ['1 ', 'is not a non-negative integer'],
    ['12345678901234567', 'is not a non-negative integer'],
  ])('quantity %j', (value, problem) => {
    expect(valueProblem('quantity', value)).toBe(problem);
    expect(valueProblem('amount', value)).toBe(problem);
  });

  it.each(['VIP rank', 'Diamonds x64 [gold] (sale!)', 'Épée 名前 🐉', 'invoice:1043', 'a'.repeat(100)])('text %j: accepted', (text) => {
    expect(valueProblem('productName', text)).toBeUndefined();
  });

  it.each([
    ['a double quote', 'a"b'],
    ['a single quote', "a'b"],
    ['a backquote', 'a`b'],
    ['a backslash', 'a\\b'],
    ['a semicolon', 'a;b'],
    ['an opening brace', 'a{b'],
    ['a closing brace', 'a}b'],
    ['a section sign', 'a§b'],
    ['a newline', 'a\nb'],
    ['a tab', 'a\tb'],
    ['DEL', 'a\u007fb'],
    ['a C1 control', 'a\u0085b'],
    ['a bidi override', 'a\u202eb'],
    ['a zero-width joiner', 'a\u200db'],
    ['a line separator', 'a\u2028b'],
    ['a paragraph separator', 'a\u2029b'],
    ['a lone surrogate', 'a\ud800b'],
  ])('text with %s: refused', (_what, text) => {
    expect(valueProblem('rewardName', text)).toMatch(/could break out of the command/);
  });

  it('text: empty or over 100 characters refused', () => {
    expect(valueProblem('productId', '')).toBe('is empty');
    expect(valueProblem('productId', 'a'.repeat(101))).toBe('is longer than 100 characters');
  });
});

describe('templateProblem', () => {
  it.each([
    ['give {player} diamond {quantity}', PURCHASE_PLACEHOLDERS],
    ['say {productName} {productId} {deliveryId}', PURCHASE_PLACEHOLDERS],
    ['give {player} emerald {amount} {rewardId} {rewardName} {deliveryId}', VOTE_PLACEHOLDERS],
    ['save-all', PURCHASE_PLACEHOLDERS],
    ['tellraw {player} {{"text":"{productName}"}}', PURCHASE_PLACEHOLDERS],
  ])('%j: fine', (template, placeholders) => {
    expect(templateProblem(template, placeholders)).toBeUndefined();
  });

  it.each<[unknown, readonly string[], string]>([
    ['', PURCHASE_PLACEHOLDERS, 'must be a non-empty string'],
    ['   ', PURCHASE_PLACEHOLDERS, 'must be a non-empty string'],
    [7, PURCHASE_PLACEHOLDERS, 'must be a non-empty string'],
    ['give {player}\nop {player}', PURCHASE_PLACEHOLDERS, 'must not contain control characters (a newline would send a second command)'],
    ['give {player}\u2028op', PURCHASE_PLACEHOLDERS, 'must not contain control characters'],
    ['give {player} {amount}', PURCHASE_PLACEHOLDERS, 'has an unknown placeholder {amount} (known: {player}, {quantity}, {productId}, {productName}, {deliveryId})'],
    ['give {player} {quantity}', VOTE_PLACEHOLDERS, 'has an unknown placeholder {quantity}'],
    ['give {Player} 1', PURCHASE_PLACEHOLDERS, 'has an unknown placeholder {Player}'],
    ['give {} 1', PURCHASE_PLACEHOLDERS, 'has an unknown placeholder {}'],
    ['give {player 1', PURCHASE_PLACEHOLDERS, 'has a brace that is not part of a placeholder'],
    ['tellraw {player} {"text":"hi"}', PURCHASE_PLACEHOLDERS, 'has an unknown placeholder {"text":"hi"}'],
    ['tellraw {player} {{"text":"hi"}', PURCHASE_PLACEHOLDERS, 'has a brace that is not part of a placeholder (write a literal brace twice: {{ or }})'],
    ['give {player} {{quantity}}}', PURCHASE_PLACEHOLDERS, 'has a brace that is not part of a placeholder'],
    ['give player} 1', PURCHASE_PLACEHOLDERS, 'has a brace that is not part of a placeholder'],
  ])('%j: refused', (template, placeholders, problem) => {
    expect(templateProblem(template, placeholders)).toContain(problem);
  });
});

describe('templatesFor', () => {
  const table = { '12': ['a'], rank_vip: ['b'], '*': ['c'] };
  it('the first key found, else "*", else nothing', () => {
    expect(templatesFor(table, ['12', 'rank_vip'])).toEqual(['a']);
    expect(templatesFor(table, ['4', 'rank_vip'])).toEqual(['b']);
    expect(templatesFor(table, ['4', 'x'])).toEqual(['c']);
    expect(templatesFor({ '12': ['a'] }, ['4'])).toBeUndefined();
    expect(templatesFor(undefined, ['12'])).toBeUndefined();
  });

  it('keys of the object prototype are not templates', () => {
    expect(templatesFor({}, ['constructor', 'toString', '__proto__'])).toBeUndefined();
  });
});

describe('createRconSink checks the templates', () => {
  const make = (commands: Record<string, unknown>, voteCommands?: Record<string, unknown>) => () =>
    createRconSink({ host: '127.0.0.1', port: 1, timeoutMs: 100, commands: commands as Record<string, string[]>, ...(voteCommands === undefined ? {} : { voteCommands: voteCommands as Record<string, string[]> }) }, { journal: new MemoryJournal(), log: recordingLog(), now: () => 0 }, async () => 'x');

  it.each<[Record<string, unknown>, Record<string, unknown> | undefined, string]>([
    [{ '12': ['give {player} {amount}'] }, undefined, 'give.rcon.commands["12"][0]: has an unknown placeholder {amount}'],
    [{ '12': ['ok', 'give {player}\n'] }, undefined, 'give.rcon.commands["12"][1]: must not contain control characters'],
    [{ '12': [] }, undefined, 'give.rcon.commands["12"]: must be a non-empty list of command templates'],
    [{ '12': 'give {player} x 1' }, undefined, 'give.rcon.commands["12"]: must be a non-empty list'],
    [{ '*': ['ok'] }, { '1': ['give {player} {quantity}'] }, 'give.rcon.voteCommands["1"][0]: has an unknown placeholder {quantity}'],
  ])('%j %j', (commands, voteCommands, message) => {
    expect(make(commands, voteCommands)).toThrow(message);
  });

  it('good templates: a sink, nothing connected yet', async () => {
    const sink = make({ '*': ['give {player} x {quantity}'] }, { '*': ['give {player} y {amount}'] })();
    expect(sink.players).toBeUndefined();
    await sink.close();
  });
});
