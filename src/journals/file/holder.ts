/**
 * Which process wrote a file journal's lock, as Linux tells it: the boot it ran in
 * (`/proc/sys/kernel/random/boot_id`) and its start time (`/proc/<pid>/stat`, field 22,
 * clock ticks since that boot). A pid alone does not name a process: after a reboot or a
 * power cut the pid in a lock may be PID 1 or any program's, and a pid is reused once its
 * process is gone, so "a process with that pid runs" is no proof that the holder does.
 *
 * Why not an OS lock that dies with its process (`flock`, `fcntl`): Node has none, and
 * the SDK takes no native dependency. Where `/proc` is not Linux's (macOS, Windows, BSD), a
 * lock records neither and staleness falls back to the pid alone (`kill(pid, 0)`), as a
 * lock written by an earlier version of the SDK (without these fields) is judged.
 *
 * @module
 * @internal
 */
import { readFileSync } from 'node:fs';

/** What a lock records of its holder beyond its pid (absent off Linux). */
export interface Incarnation {
  boot?: string;
  start?: string;
}

/**
 * How this module reads `/proc`: a file's text, or `undefined` when it cannot be read
 * (gone, hidden, not Linux). Tests give it another machine's texts.
 * @internal
 */
export const proc = {
  read(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
};

let boot: string | undefined | null = null;

/** This boot's id, read once (it never changes while the machine runs); `undefined` off Linux. */
export function thisBoot(): string | undefined {
  if (boot === null) boot = proc.read('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
  return boot;
}

/** A process's state (field 3) and start time (field 22) from `/proc/<pid>/stat`; `undefined` when it cannot be read (gone, hidden, not Linux). */
function processStat(pid: number): { state: string; start: string } | undefined {
  const text = proc.read(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // Field 2, the command's name, is in parentheses and may hold spaces and ')': the fields
  // after the last ')' start at field 3. split gives at least one field (the state); a
  // missing field 22 reads as 'undefined', which is not a start time.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, start] = [fields[0] as string, String(fields[22 - 3])];
  return /^\d+$/.test(start) ? { state, start } : undefined;
}

/** What the lock this process writes records of it: this boot and its start time. */
export function ownIncarnation(): Incarnation {
  const [bootId, start] = [thisBoot(), processStat(process.pid)?.start];
  return { ...(bootId === undefined ? {} : { boot: bootId }), ...(start === undefined ? {} : { start }) };
}

/**
 * The incarnation fields of a lock file's JSON, each kept only in the form this SDK writes
 * (a boot id of hex digits and dashes, a start time of digits): anything else is read as
 * absent, and the pid alone decides, never a field that could not have been written here.
 */
export function readIncarnation(value: { boot?: unknown; start?: unknown }): Incarnation {
  const { boot: bootId, start } = value;
  const valid = (field: unknown, form: RegExp): field is string => typeof field === 'string' && form.test(field);
  return { ...(valid(bootId, /^[0-9a-f-]{1,64}$/) ? { boot: bootId } : {}), ...(valid(start, /^\d{1,20}$/) ? { start } : {}) };
}

/**
 * Whether the process that wrote a lock of this host is gone for sure: it ran in an earlier
 * boot, its pid now names a process that started at another time (the pid was reused), or
 * it exited and waits to be reaped (a zombie). `undefined` when this cannot be told here
 * (no `/proc`, a process hidden from this user, a lock without these fields): the caller
 * then asks `kill(pid, 0)`.
 */
export function holderGone(pid: number, recorded: Incarnation): true | undefined {
  const bootId = thisBoot();
  if (recorded.boot !== undefined && bootId !== undefined && recorded.boot !== bootId) return true;
  const now = processStat(pid);
  if (now === undefined) return undefined;
  if (now.state === 'Z') return true;
  return recorded.start !== undefined && now.start !== recorded.start ? true : undefined;
}
