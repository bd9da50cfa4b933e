/**
 * What the bridge's log redacts, in process (issue #46 point 1): every secret in every form
 * (raw, URL-encoded, Base64, base64url), the database URL's password and secret parameters
 * (encoded or not), a password in any URL, the API key through the SDK's redaction; short
 * values left alone; an error as its name, code and message at any depth; and the lines
 * pino writes (level names, the levels let through, the header paths censored).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Log from '../../src/bridge/log.js';
import type * as PlainError from '../../src/bridge/plain-error.js';

// Loaded afresh before each test: what replaces a secret is a module-level constant, and a
// module loaded once before the tests would hide a change to it (StrykerJS's mutants of
// module-level code, issue #46).
let createLogger: typeof Log.createLogger;
let secretRedactor: typeof Log.secretRedactor;
let plainError: typeof PlainError.plainError;
beforeEach(async () => {
  vi.resetModules();
  ({ createLogger, secretRedactor } = await import('../../src/bridge/log.js'));
  ({ plainError } = await import('../../src/bridge/plain-error.js'));
});
afterEach(() => {
  vi.restoreAllMocks();
});

const forms = (secret: string) => [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')];

describe('secretRedactor', () => {
  it('with no secret to hide, gives every text back as it was', () => {
    const redact = secretRedactor({});
    // Texts a redactor seeded by mistake (a list that does not start empty) would touch.
    for (const text of ['', 'undefined', 'null', 'Stryker was here', 'a token: tok/en, password hunter2!']) expect(redact(text)).toBe(text);
  });

  it('removes the token and the RCON password in each of their forms', () => {
    const redact = secretRedactor({ token: 'tok/en+with=odd~chars?', rconPassword: 'hunter2!' });
    for (const secret of ['tok/en+with=odd~chars?', 'hunter2!']) {
      for (const form of forms(secret)) expect(redact(`a ${form} b`)).toBe('a <redacted> b');
    }
  });

  it('removes the database URL whole, and its password and secret parameters alone, raw and decoded', () => {
    const url = 'postgres://game:p%40ss%2Fword@db.example:5432/tg?sslpassword=k3y%21&application_name=bridge';
    const redact = secretRedactor({ databaseUrl: url });
    expect(redact(`connect ${url}`)).toBe('connect <redacted>');
    for (const piece of ['p%40ss%2Fword', 'p@ss/word', 'k3y%21', 'k3y!']) expect(redact(`saw ${piece} here`)).toBe('saw <redacted> here');
    expect(redact('user game on db.example, app bridge')).toBe('user game on db.example, app bridge');
  });

  it("removes a secret parameter's value as the URL spells it, a '?' inside it included", () => {
    const redact = secretRedactor({ databaseUrl: 'postgres://game@db.example/tg?application_name=bridge&sslpassword=k3y%21?x' });
    for (const piece of ['k3y%21?x', 'k3y!?x']) expect(redact(`saw ${piece} here`)).toBe('saw <redacted> here');
  });

  it('removes the spelling of a secret that stands in the query as a bare parameter, first or later', () => {
    for (const url of ['postgres://game@db.example/tg?k3y%21&sslpassword=k3y!', 'postgres://game@db.example/tg?application_name=bridge&k3y%21&sslpassword=k3y!']) {
      expect(secretRedactor({ databaseUrl: url })('saw k3y%21 here')).toBe('saw <redacted> here');
    }
  });

  it('a database URL that is not a URL is removed whole', () => {
    const redact = secretRedactor({ databaseUrl: 'not a url at all' });
    expect(redact('x not a url at all y')).toBe('x <redacted> y');
  });

  it('removes the longest first: a password inside its URL leaves no piece behind', () => {
    const redact = secretRedactor({ databaseUrl: 'mysql://u:longpassword@db/x', token: 'longpass' });
    expect(redact('mysql://u:longpassword@db/x')).toBe('<redacted>');
    expect(redact('longpassword')).toBe('<redacted>');
  });

  it('leaves values under 4 characters (they would mask every word), takes 4', () => {
    const short = secretRedactor({ token: 'abc', rconPassword: 'wxyz' });
    expect(short('abc wxyz')).toBe('abc <redacted>');
  });

  it('removes the API key in the forms the SDK knows, and any URL password', () => {
    const key = 'sk-live-key-1';
    const redact = secretRedactor({ apiKey: key });
    expect(redact(`k ${key} b64 ${Buffer.from(key).toString('base64')}`)).toBe('k <redacted> b64 <redacted>');
    expect(redact('see https://user:pw@host/x')).toBe('see https://user:***@host/x');
    expect(secretRedactor({ apiKey: '' })('a b https://u:p@h/')).toBe('a b https://u:***@h/');
    expect(secretRedactor({})('plain text')).toBe('plain text');
  });
});

describe('plainError', () => {
  it('an error is its name, message and a string code, nothing else (no stack, no cause, no headers)', () => {
    const error = Object.assign(new TypeError('bad'), { code: 'E_BAD', headers: { authorization: 'x' }, cause: new Error('c') });
    expect(plainError(error)).toEqual({ name: 'TypeError', message: 'bad' , code: 'E_BAD' });
    expect(plainError(Object.assign(new Error('n'), { code: 42 }))).toEqual({ name: 'Error', message: 'n' });
  });

  it('walks arrays and objects, keeps Dates, primitives and null, and marks what is deeper than 8', () => {
    const date = new Date(0);
    expect(plainError({ a: [new Error('x'), 1, null, 'y'], d: date, u: undefined })).toEqual({ a: [{ name: 'Error', message: 'x' }, 1, null, 'y'], d: date, u: undefined });
    expect((plainError({ d: date }) as { d: Date }).d).toBe(date);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 9; i++) deep = [deep];
    let seen = plainError(deep);
    for (let i = 0; i < 8; i++) seen = (seen as unknown[])[0];
    expect(seen).toEqual(['[too deep]']);
    let fits: unknown = 'bottom';
    for (let i = 0; i < 8; i++) fits = [fits];
    expect(JSON.stringify(plainError(fits))).toBe(JSON.stringify(fits));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(JSON.stringify(plainError(cycle))).toContain('[too deep]');
  });
});

describe('createLogger', () => {
  function capture() {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    return { lines, destination: destination as unknown as import('pino').DestinationStream };
  }

  it('writes JSON lines with the level name, the name, the pid and an ISO time; message and every field redacted', async () => {
    const { lines, destination } = capture();
    const log = createLogger('debug', secretRedactor({ token: 'T0KEN-secret' }), destination);
    log.debug('hello T0KEN-secret', { nested: { list: ['T0KEN-secret'] }, error: Object.assign(new Error('failed with T0KEN-secret'), { code: 'E1' }) });
    log.info('i');
    log.warn('w');
    log.error('e', { n: 1 });
    log.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => l.level)).toEqual(['debug', 'info', 'warn', 'error']);
    expect(lines[0]).toMatchObject({ name: 'teamgames-bridge', pid: process.pid, msg: 'hello <redacted>', nested: { list: ['<redacted>'] }, error: { name: 'Error', message: 'failed with <redacted>', code: 'E1' } });
    expect(lines[0]?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[3]).toMatchObject({ msg: 'e', n: 1 });
    expect(JSON.stringify(lines)).not.toContain('T0KEN');
  });

  it('lets through only the level set and above, and writes nothing when silent', async () => {
    const warn = capture();
    const log = createLogger('warn', (t) => t, warn.destination);
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    const silent = capture();
    const quiet = createLogger('silent', (t) => t, silent.destination);
    quiet.error('e');
    await new Promise((resolve) => setImmediate(resolve));
    expect(warn.lines.map((l) => l.msg)).toEqual(['w', 'e']);
    expect(silent.lines).toEqual([]);
  });

  it('a line below the level costs nothing: no redaction is run for it', () => {
    const seen: string[] = [];
    const log = createLogger('warn', (t) => (seen.push(t), t), capture().destination);
    log.debug('d', { a: 'x' });
    log.info('i');
    expect(seen).toEqual([]);
    log.warn('w');
    expect(seen).toEqual(['w']);
  });

  it('writes to stdout by default, synchronously (nothing lost when the process exits)', () => {
    const stdout = { write: () => true, flush: () => undefined } as unknown as ReturnType<typeof pino.destination>;
    const destination = vi.spyOn(pino, 'destination').mockReturnValue(stdout);
    createLogger('info', (t) => t);
    expect(destination.mock.calls).toEqual([[{ fd: 1, sync: true }]]);
  });

  it('flush reaches the destination', () => {
    let flushed = 0;
    const destination = { write: () => undefined, flush: () => void flushed++ } as unknown as import('pino').DestinationStream;
    createLogger('info', (t) => t, destination).flush();
    expect(flushed).toBe(1);
  });

  it('censors authorization headers by path, whatever their value', async () => {
    const { lines, destination } = capture();
    const log = createLogger('info', (t) => t, destination);
    log.info('request', { request: { authorization: 'Bearer abc', headers: { authorization: 'Basic x', 'x-api-key': 'k' } } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[0]?.request).toEqual({ authorization: '<redacted>', headers: { authorization: '<redacted>', 'x-api-key': '<redacted>' } });
  });
});
