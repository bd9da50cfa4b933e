/**
 * How a lock's holder is told from /proc (src/journals/file/holder.ts), on any machine: the
 * module is given another machine's /proc texts (a boot id, `/proc/<pid>/stat` lines, files
 * that cannot be read) and loaded afresh for each test, since it reads the boot id once.
 * file-lock-boot.test.ts proves the same against this machine's real /proc and processes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

type Holder = typeof import('../../src/journals/file/holder.js');

const BOOT = '0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3';
const OTHER_BOOT = '00000000-1111-4222-8333-444444444444';
const PID = 4242;

/** A `/proc/<pid>/stat` line: `name` in parentheses, then `state` (field 3), fields 4 to 21, and `start` (field 22). */
const statLine = (state: string, start: string, name = 'java') => `${PID} (${name}) ${state} ${Array.from({ length: 18 }, (_, i) => i + 1).join(' ')} ${start} 0 0 0\n`;

/** holder.ts loaded afresh, reading `files` (a path missing there cannot be read); every read is recorded. */
async function withProc(files: Record<string, string>): Promise<{ holder: Holder; reads: string[] }> {
  vi.resetModules();
  const holder = await import('../../src/journals/file/holder.js');
  const reads: string[] = [];
  vi.spyOn(holder.proc, 'read').mockImplementation((path) => {
    reads.push(path);
    return files[path];
  });
  return { holder, reads };
}

const BOOT_FILE = '/proc/sys/kernel/random/boot_id';
const ownStat = `/proc/${process.pid}/stat`;
const statOf = `/proc/${PID}/stat`;

afterEach(() => {
  vi.restoreAllMocks();
  vi.resetModules();
});

describe('this boot and this process (what a lock records)', () => {
  it('the boot id is read once, trimmed; the start time is field 22 of this process\'s stat', async () => {
    const { holder, reads } = await withProc({ [BOOT_FILE]: `${BOOT}\n`, [ownStat]: statLine('R', '123456') });
    expect(holder.thisBoot()).toBe(BOOT);
    expect(holder.ownIncarnation()).toStrictEqual({ boot: BOOT, start: '123456' });
    expect(holder.thisBoot()).toBe(BOOT);
    expect(reads.filter((path) => path === BOOT_FILE)).toHaveLength(1);
  });

  it('without /proc (macOS, Windows): no boot, no start, and the lock records neither field (not even as undefined)', async () => {
    const { holder } = await withProc({});
    expect(holder.thisBoot()).toBeUndefined();
    expect(holder.ownIncarnation()).toStrictEqual({});
  });

  it('a blank boot id is none; a stat without field 22 gives no start: each field recorded only when known', async () => {
    const { holder } = await withProc({ [BOOT_FILE]: '\n', [ownStat]: `${process.pid} (node) R 1 2 3\n` });
    expect(holder.ownIncarnation()).toStrictEqual({});
    const other = await withProc({ [BOOT_FILE]: BOOT });
    expect(other.holder.ownIncarnation()).toStrictEqual({ boot: BOOT });
    const started = await withProc({ [ownStat]: statLine('S', '77') });
    expect(started.holder.ownIncarnation()).toStrictEqual({ start: '77' });
  });
});

describe('whether a lock\'s holder is gone for sure (holderGone)', () => {
  it('another boot: gone, whatever runs with its pid now', async () => {
    const { holder } = await withProc({ [BOOT_FILE]: BOOT, [statOf]: statLine('S', '500') });
    expect(holder.holderGone(PID, { boot: OTHER_BOOT, start: '500' })).toBe(true);
    expect(holder.holderGone(PID, { boot: BOOT, start: '500' })).toBeUndefined();
  });

  it('this machine\'s boot unknown: the recorded boot proves nothing, the start time decides', async () => {
    const { holder } = await withProc({ [statOf]: statLine('S', '500') });
    expect(holder.holderGone(PID, { boot: OTHER_BOOT, start: '500' })).toBeUndefined();
    expect(holder.holderGone(PID, { boot: OTHER_BOOT, start: '501' })).toBe(true);
  });

  it('its pid started at another time (reused): gone; a zombie: gone; the same start, running: not known to be gone', async () => {
    const { holder } = await withProc({ [BOOT_FILE]: BOOT, [statOf]: statLine('S', '500') });
    expect(holder.holderGone(PID, { boot: BOOT, start: '499' })).toBe(true);
    expect(holder.holderGone(PID, { boot: BOOT })).toBeUndefined();
    const zombie = await withProc({ [BOOT_FILE]: BOOT, [statOf]: statLine('Z', '500') });
    expect(zombie.holder.holderGone(PID, { boot: BOOT, start: '500' })).toBe(true);
    expect(zombie.holder.holderGone(PID, {})).toBe(true);
  });

  it('a command name holding ") Z 1 ": the state after the last ")" is read', async () => {
    const { holder } = await withProc({ [BOOT_FILE]: BOOT, [statOf]: statLine('S', '500', 'x) Z 1 (y') });
    expect(holder.holderGone(PID, { boot: BOOT, start: '500' })).toBeUndefined();
  });

  it.each([
    ['unreadable (gone, or hidden from this user)', undefined],
    ['cut short (no field 22)', `${PID} (java) S 1 2 3\n`],
    ['a start time with a letter after its digits', statLine('S', '500a')],
    ['a start time with a letter before its digits', statLine('S', 'a500')],
    ['an empty start time', statLine('S', '')],
  ])('its stat %s: not known to be gone (the caller asks kill(pid, 0))', async (_, text) => {
    const { holder } = await withProc({ [BOOT_FILE]: BOOT, ...(text === undefined ? {} : { [statOf]: text }) });
    expect(holder.holderGone(PID, { boot: BOOT, start: '499' })).toBeUndefined();
  });
});

describe('the fields read from a lock file (readIncarnation)', () => {
  it('keeps a boot id and a start time only in the form this SDK writes', async () => {
    const { holder } = await withProc({});
    expect(holder.readIncarnation({ boot: BOOT, start: '500' })).toStrictEqual({ boot: BOOT, start: '500' });
    for (const start of ['x500', '500x', '', ' 500', '1'.repeat(21), 500]) expect(holder.readIncarnation({ start })).toStrictEqual({});
    for (const boot of [`x${BOOT}`, `${BOOT}x`, BOOT.toUpperCase(), '', 'a'.repeat(65), 42]) expect(holder.readIncarnation({ boot })).toStrictEqual({});
  });
});
