/**
 * How a secret's file is read (host/secrets.ts), and the redaction's identity, loaded afresh
 * for each test (issue #46 point 2): the 64 KiB read is a module-level bound, and a module
 * loaded once before the tests would hide a change to it. What is followed (a symbolic link,
 * unless the rules say not to), what is checked (a regular file, the mode only when asked,
 * the owner only when asked and where the platform has users), and what a refusal says.
 */
import { chown, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as CommandLine from '../../src/common/command-line.js';
import type * as Redact from '../../src/host/redact.js';
import type * as Secrets from '../../src/host/secrets.js';
import { needsRoot } from '../support/second-user.js';

let secrets: typeof Secrets;
let redact: typeof Redact;
let UsageError: typeof CommandLine.UsageError;
beforeEach(async () => {
  vi.resetModules();
  secrets = await import('../../src/host/secrets.js');
  redact = await import('../../src/host/redact.js');
  ({ UsageError } = await import('../../src/common/command-line.js'));
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function file(text: string, mode = 0o600): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'secret-file-'));
  const path = join(dir, 'secret');
  await writeFile(path, text, { mode });
  return path;
}
const refusal = async (work: Promise<unknown>): Promise<string> => {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as Error).message;
};
const rules = (extra: Partial<Secrets.SmallFileRules> = {}): Secrets.SmallFileRules => ({ refuse: (why) => new UsageError(`--x: ${why}`), maxBytes: 100, ...extra });

describe('readSmallFile', () => {
  it('reads a regular file with no check given', async () => {
    expect(await secrets.readSmallFile(await file('held\n'), rules())).toBe('held\n');
  });

  it('follows a symbolic link unless told not to; told not to, says so, and a missing file is its errno', async () => {
    const target = await file('held\n');
    const link = `${target}.link`;
    await symlink(target, link);
    expect(await secrets.readSmallFile(link, rules())).toBe('held\n');
    expect(await refusal(secrets.readSmallFile(link, rules({ noFollow: true })))).toBe('--x: a symbolic link: name the file itself');
    expect(await refusal(secrets.readSmallFile(`${target}.missing`, rules({ noFollow: true })))).toBe('--x: ENOENT');
    expect(await refusal(secrets.readSmallFile(`${target}.missing`, rules()))).toBe('--x: ENOENT');
  });

  it('a loop of links, not told to refuse links, is its errno (ELOOP), not a link refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'secret-file-'));
    await symlink(join(dir, 'b'), join(dir, 'a'));
    await symlink(join(dir, 'a'), join(dir, 'b'));
    expect(await refusal(secrets.readSmallFile(join(dir, 'a'), rules()))).toBe('--x: ELOOP');
  });

  it('a failure with no errno code is "unreadable"', async () => {
    const check = () => {
      throw new Error('no code');
    };
    expect(await refusal(secrets.readSmallFile(await file('held\n'), rules({ check })))).toBe('--x: unreadable');
  });
});

describe('firstLineOf', () => {
  it('reads the first 64 KiB only: a line that starts inside them is read, one after them is not', async () => {
    expect(await secrets.firstLineOf(await file(`${'\n'.repeat(64 * 1024 - 3)}key`), '--x')).toBe('key');
    expect(await secrets.firstLineOf(await file(`${'\n'.repeat(64 * 1024)}key`), '--x')).toBe('');
  });

  it('follows a symbolic link to the file, whose own mode is checked', async () => {
    const target = await file('key\n');
    const link = `${target}.link`;
    await symlink(target, link);
    expect(await secrets.firstLineOf(link, '--x', true, true)).toBe('key');
  });

  it('checks the mode only when asked (ownOnly)', async () => {
    const path = await file('key\n', 0o644);
    expect(await secrets.firstLineOf(path, '--x')).toBe('key');
    expect(await refusal(secrets.firstLineOf(path, '--x', true))).toBe(`--x: cannot read ${path} (other users may read or change it, mode 0644: chmod o-rwx ${path})`);
  });

  it('on Windows (no Unix modes) the mode is not checked', async () => {
    const path = await file('key\n', 0o644);
    const own = Object.getOwnPropertyDescriptor(process, 'platform')!;
    Object.defineProperty(process, 'platform', { value: 'win32', configurable: true });
    try {
      expect(await secrets.firstLineOf(path, '--x', true, true)).toBe('key');
    } finally {
      Object.defineProperty(process, 'platform', own);
    }
  });

  it('where the platform has no user ids (no process.geteuid), the owner is not checked', async () => {
    const path = await file('key\n');
    await chown(path, 4321, 4321).catch(() => undefined);
    const own = Object.getOwnPropertyDescriptor(process, 'geteuid');
    Object.defineProperty(process, 'geteuid', { value: undefined, configurable: true, writable: true });
    try {
      expect(await secrets.firstLineOf(path, '--x', true, true)).toBe('key');
    } finally {
      if (own !== undefined) Object.defineProperty(process, 'geteuid', own);
    }
  });

  const root = process.getuid?.() === 0 ? { uid: 0, gid: 0 } : undefined;
  it.skipIf(root === undefined)(needsRoot("the owner: this process's user or root when asked (ownerMustBeMe), anyone's when not", root), async () => {
    // This process seen as user 1234 (not root), so that root's file, the user's own and a third user's differ.
    vi.spyOn(process, 'geteuid').mockReturnValue(1234);
    const owned = async (uid: number) => {
      const path = await file('key\n');
      await chown(path, uid, uid);
      return path;
    };
    expect(await secrets.firstLineOf(await owned(0), '--x', true, true)).toBe('key');
    expect(await secrets.firstLineOf(await owned(1234), '--x', true, true)).toBe('key');
    const third = await owned(4321);
    expect(await secrets.firstLineOf(third, '--x', true)).toBe('key');
    expect(await refusal(secrets.firstLineOf(third, '--x', true, true))).toBe(
      `--x: cannot read ${third} (owned by user 4321, who may change it, not by this process's user (1234) or root: chown 1234 ${third})`,
    );
  });
});

describe('redaction', () => {
  it('NO_SECRET gives the text back as it is', () => {
    expect(redact.NO_SECRET('key-1 and all')).toBe('key-1 and all');
    expect(redact.redactValue({ a: ['key-1'] }, redact.NO_SECRET)).toEqual({ a: ['key-1'] });
  });

  it('a blank key removes nothing; a key is removed', () => {
    expect(redact.keyRedactor('')('a b')).toBe('a b');
    expect(redact.keyRedactor('key-1')('a key-1 b')).toBe('a <redacted> b');
  });
});
