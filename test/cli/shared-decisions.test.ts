/**
 * What both command-line programs share, in process (issue #46 point 1): the first line of
 * a secret file and which files are refused (type, modes, owner, size read), the API key
 * from the environment or its file, the text table, the redaction of every string of an
 * answer (keys included), and how an answer reaches stdout or, when stdout fails, stderr.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, answer, jsonText, table } from '../../src/cli/shared.js';
import type { TeamgamesIo } from '../../src/host/io.js';
import { NO_SECRET, keyRedactor, redactValue } from '../../src/host/redact.js';
import { apiKeyOf, firstLineOf } from '../../src/host/secrets.js';
import { UsageError } from '../../src/common/command-line.js';
import type { OutputStream } from '../../src/common/output.js';
import { needsRoot, secondUser } from '../support/second-user.js';

async function file(text: string | Buffer, mode = 0o600): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-shared-'));
  const path = join(dir, 'secret');
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

const refusal = async (work: Promise<unknown>) => {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as Error).message;
};

describe('firstLineOf', () => {
  it('is the first non-blank line, trimmed, whatever the line ends; "" when there is none', async () => {
    expect(await firstLineOf(await file('\r\n  \n\t key-1 \r\nkey-2\n'), 'KEY')).toBe('key-1');
    expect(await firstLineOf(await file('only'), 'KEY')).toBe('only');
    expect(await firstLineOf(await file('key-1\nkey-2\n'), 'KEY')).toBe('key-1');
    expect(await firstLineOf(await file(' \n\n'), 'KEY')).toBe('');
    expect(await firstLineOf(await file(''), 'KEY')).toBe('');
  });

  it.skipIf(!existsSync('/proc/self/fd'))('closes the file after each read, a refused one included', async () => {
    const good = await file('k\n');
    const open = await file('k\n', 0o644);
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 5; i++) {
      await firstLineOf(good, 'KEY');
      await firstLineOf(open, 'KEY', true).catch(() => undefined);
    }
    expect(readdirSync('/proc/self/fd').length).toBe(before);
  });

  it('reads only the first 64 KiB', async () => {
    expect(await firstLineOf(await file(`${'\n'.repeat(64 * 1024)}late`), 'KEY')).toBe('');
    expect(await firstLineOf(await file(`${'\n'.repeat(64 * 1024 - 4)}late`), 'KEY')).toBe('late');
  });

  it('refuses what is not a regular file, or not there, naming what and why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-shared-'));
    expect(await refusal(firstLineOf(dir, 'KEY_FILE'))).toBe(`KEY_FILE: cannot read ${dir} (not a regular file)`);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await refusal(firstLineOf(fifo, 'KEY_FILE'))).toBe(`KEY_FILE: cannot read ${fifo} (not a regular file)`);
    expect(await refusal(firstLineOf(join(dir, 'none'), 'KEY_FILE'))).toBe(`KEY_FILE: cannot read ${join(dir, 'none')} (ENOENT)`);
  });

  it('with ownOnly, refuses a file other users may read, write or run, or its group may change; its group may read it', async () => {
    for (const mode of [0o601, 0o602, 0o604, 0o607]) {
      const path = await file('k\n', mode);
      expect(await refusal(firstLineOf(path, 'KEY_FILE', true))).toBe(`KEY_FILE: cannot read ${path} (other users may read or change it, mode 0${mode.toString(8)}: chmod o-rwx ${path})`);
    }
    const group = await file('k\n', 0o620);
    expect(await refusal(firstLineOf(group, 'KEY_FILE', true))).toBe(`KEY_FILE: cannot read ${group} (its group may change it, mode 0620: chmod g-w ${group})`);
    const shown = await file('k\n', 0o060);
    expect(await refusal(firstLineOf(shown, 'KEY_FILE', true))).toBe(`KEY_FILE: cannot read ${shown} (its group may change it, mode 0060: chmod g-w ${shown})`);
    for (const mode of [0o600, 0o640, 0o610, 0o700, 0o400]) expect(await firstLineOf(await file('k\n', mode), 'KEY_FILE', true)).toBe('k');
    // Without ownOnly, any mode.
    expect(await firstLineOf(await file('k\n', 0o666), 'KEY_FILE')).toBe('k');
  });

  const other = secondUser();
  it.skipIf(other === undefined)(needsRoot('with ownerMustBeMe, refuses a file another user owns (not root); root may own it', other), async () => {
    const path = await file('k\n', 0o600);
    await chown(path, other!.uid, other!.gid);
    const me = process.geteuid!();
    expect(await firstLineOf(path, 'KEY_FILE', true)).toBe('k');
    expect(await firstLineOf(path, 'KEY_FILE', false, true)).toBe('k');
    expect(await refusal(firstLineOf(path, 'KEY_FILE', true, true))).toBe(`KEY_FILE: cannot read ${path} (owned by user ${other!.uid}, who may change it, not by this process's user (${me}) or root: chown ${me} ${path})`);
    await chown(path, 0, other!.gid);
    expect(await firstLineOf(path, 'KEY_FILE', true, true)).toBe('k');
  });
});

describe('apiKeyOf', () => {
  it('is TEAMGAMES_API_KEY trimmed, else the first line of TEAMGAMES_API_KEY_FILE, else undefined', async () => {
    const keyFile = await file('file-key\n');
    expect(await apiKeyOf({ TEAMGAMES_API_KEY: ' env-key ', TEAMGAMES_API_KEY_FILE: keyFile })).toBe('env-key');
    expect(await apiKeyOf({ TEAMGAMES_API_KEY: '  ', TEAMGAMES_API_KEY_FILE: keyFile })).toBe('file-key');
    expect(await apiKeyOf({})).toBeUndefined();
    expect(await apiKeyOf({ TEAMGAMES_API_KEY_FILE: '  ' })).toBeUndefined();
  });

  it('refuses a file without a key, and one other users may read', async () => {
    const empty = await file('\n \n');
    expect(await refusal(apiKeyOf({ TEAMGAMES_API_KEY_FILE: empty }))).toBe(`TEAMGAMES_API_KEY_FILE: ${empty} holds no key on its first line`);
    const open = await file('k\n', 0o644);
    expect(await refusal(apiKeyOf({ TEAMGAMES_API_KEY_FILE: open }))).toContain('other users may read or change it, mode 0644');
  });

  const other = secondUser();
  it.skipIf(other === undefined)(needsRoot('refuses a key file another user owns only when ownerMustBeMe', other), async () => {
    const path = await file('k\n', 0o600);
    await chown(path, other!.uid, other!.gid);
    expect(await apiKeyOf({ TEAMGAMES_API_KEY_FILE: path })).toBe('k');
    expect(await refusal(apiKeyOf({ TEAMGAMES_API_KEY_FILE: path }, true))).toContain(`owned by user ${other!.uid}`);
  });
});

describe('table', () => {
  it('aligns columns to the widest cell, a dash line under the headers, no trailing blanks, cells made printable', () => {
    expect(table(['id', 'name', 'n'], [['1', 'Whip', '10'], ['22', 'a\u001b[2Jb', ''], ['3']])).toBe(
      ['id  name         n', '--  -----------  --', '1   Whip         10', '22  a\\u001b[2Jb', '3', ''].join('\n'),
    );
    expect(table(['a', 'b'], [])).toBe('a  b\n-  -\n');
  });
});

describe('redaction', () => {
  const KEY = 'key-with\\backslash';

  it('keyRedactor removes the key, its forms, and the form a table shows (escaped)', () => {
    const redact = keyRedactor(KEY);
    expect(redact(`raw ${KEY} url ${encodeURIComponent(KEY)} base64 ${Buffer.from(KEY).toString('base64')}`)).toBe('raw <redacted> url <redacted> base64 <redacted>');
    expect(redact(table(['key'], [[KEY]]))).toBe(`key\n${'-'.repeat(19)}\n<redacted>\n`);
    const plain = keyRedactor('plain-key-1');
    expect(plain('a plain-key-1 b')).toBe('a <redacted> b');
  });

  it('redactValue redacts every string at any depth, keys too; other values and Dates as they are; NO_SECRET is the value itself', () => {
    const redact = (t: string) => t.replaceAll('S3CRET', '<r>');
    const date = new Date(0);
    expect(redactValue({ a: 'x S3CRET', S3CRET: [1, 'S3CRET', null, { b: true, c: date }] }, redact)).toEqual({ a: 'x <r>', '<r>': [1, '<r>', null, { b: true, c: date }] });
    expect((redactValue({ c: date }, redact) as { c: Date }).c).toBe(date);
    expect(redactValue('S3CRET', redact)).toBe('<r>');
    expect(redactValue(7, redact)).toBe(7);
    const value = { a: 'S3CRET' };
    expect(redactValue(value, NO_SECRET)).toBe(value);
    expect(NO_SECRET('S3CRET')).toBe('S3CRET');
  });

  it('jsonText is redacted JSON, indented when asked, with nothing a terminal acts on', () => {
    const redact = (t: string) => t.replaceAll('S3CRET', '<r>');
    expect(jsonText({ a: 'S3CRET\u001b' }, redact)).toBe('{"a":"<r>\\u001b"}');
    expect(jsonText({ a: 1 }, NO_SECRET, 2)).toBe('{\n  "a": 1\n}');
  });
});

describe('answer', () => {
  const paint = (tone: string, text: string) => `[${tone}]${text}`;
  function io(stdoutFails?: Error): { io: TeamgamesIo; out: string[]; err: string[] } {
    const out: string[] = [];
    const err: string[] = [];
    const stream = (into: string[], fails?: Error): OutputStream => ({
      write(text, done) {
        into.push(text);
        done?.(fails ?? null);
        return true;
      },
    });
    return { io: { stdout: stream(out, stdoutFails), stderr: stream(err), interactive: false, confirm: async () => false }, out, err };
  }
  const redact = (t: string) => t.replaceAll('S3CRET', '<r>');

  it('writes the human text, or the JSON indented, redacted, to stdout: exit 0', async () => {
    const human = io();
    expect(await answer(human.io, 'claim: ', false, { a: 1 }, (p) => p('good', 'S3CRET done\n'), paint, paint, redact)).toBe(EXIT.OK);
    expect(human.out).toEqual(['[good]<r> done\n']);
    const json = io();
    expect(await answer(json.io, 'claim: ', true, { a: 'S3CRET' }, () => 'unused', paint, paint, redact)).toBe(0);
    expect(json.out).toEqual(['{\n  "a": "<r>"\n}\n']);
    expect(json.err).toEqual([]);
  });

  it('when stdout fails: one line on stderr saying so, then the answer there (JSON on one line): exit 6', async () => {
    const failed = Object.assign(new Error('broken pipe'), { code: 'EPIPE' });
    const human = io(failed);
    expect(await answer(human.io, 'claim: ', false, {}, (p) => p('good', 'S3CRET done\n'), paint, (t, x) => `<${t}>${x}`, redact)).toBe(EXIT.OUTPUT_FAILED);
    expect(human.err).toEqual(['<bad>teamgames: claim: could not write to stdout (EPIPE); the answer follows on stderr\n<good><r> done\n']);
    const json = io(failed);
    expect(await answer(json.io, 'claim: ', true, { a: 'S3CRET' }, () => 'unused', paint, paint, redact)).toBe(6);
    expect(json.err).toEqual(['{"error":"OUTPUT_FAILED","message":"claim: could not write to stdout (EPIPE); the answer follows on stderr"}\n{"a":"<r>"}\n']);
  });

  it('the exit codes keep their documented numbers', () => {
    expect(EXIT).toEqual({ OK: 0, FAILURE: 1, USAGE: 2, AUTH: 3, NETWORK: 4, OUTCOME_UNKNOWN: 5, OUTPUT_FAILED: 6, ALREADY_RESOLVED: 7 });
  });
});
