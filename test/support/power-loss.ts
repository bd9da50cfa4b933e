/**
 * A recording file system for power-cut simulations of the file journal (issue #27 point 3),
 * in the spirit of SQLite's crash tests: installed over `fsCalls` (src/journals/file/files.ts),
 * it passes every call to the real file system (in a temp dir) and logs, in order, every
 * call that changes something: a name created, a write (inode, offset, bytes), a truncate,
 * an fsync/fdatasync, a rename, a link, an unlink, a directory sync. From the log, at any
 * step k, {@link cutState} builds what a power cut before step k would leave under POSIX
 * rules, and {@link materialize} writes it into a fresh directory:
 *
 * - per file (inode): the data as of its last fsync/fdatasync before k, plus a prefix of the
 *   later, unsynced writes (none, some, all; the last one kept may be torn: cut at any
 *   byte, at a line boundary or at a 4 KiB block boundary), chosen independently per file;
 * - per directory: the names as of its last directory sync before k, plus a prefix of the
 *   later name changes (creations, renames, links, unlinks): a name change nobody synced
 *   may be lost, so a renamed-over journal shows the old file's content under its name,
 *   and a new file whose directory was never synced has no name at all.
 *
 * The recorder can also "lose power" at step `dieAt`: that call and every later one never
 * settle (the process is gone), so what ran before is exactly what the world saw.
 *
 * It can break the journal on purpose, to prove a campaign has teeth: `sync` makes every
 * `datasync()` a no-op, `dirsync` every directory sync, and `batch` writes an append of
 * several entries as one line per entry (what 0.1.0 did).
 */
import { createHash } from 'node:crypto';
import { constants, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsCalls } from '../../src/journals/file/files.js';
import { seededRandom } from '../../src/mock/service/random.js';

/** How the journal's safeguards may be broken, to prove a campaign catches it. */
export type Breakage = 'none' | 'sync' | 'dirsync' | 'batch';

/** One change to the file system, in the order it reached it. */
export type Step =
  | { kind: 'create'; path: string; inode: number }
  | { kind: 'write'; inode: number; offset: number; bytes: Buffer }
  | { kind: 'truncate'; inode: number; size: number }
  | { kind: 'sync'; inode: number; how: 'fsync' | 'fdatasync' }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'link'; from: string; to: string }
  | { kind: 'unlink'; path: string }
  | { kind: 'dirsync'; dir: string };

/**
 * When the power goes at step k: `before` the call that would make step k (everything the
 * program did since step k − 1 returned, a claim sent, a grant, happened), or `returning`:
 * as step k − 1 returns, before the program hears of it (nothing after it happened).
 */
export type Moment = 'before' | 'returning';

/** What one recording saw: the steps, and whether the power went (at `dieAt`). */
export interface Recording {
  readonly steps: Step[];
  /** Resolves when the power goes (the call at step `dieAt` is attempted). */
  readonly died: Promise<void>;
  readonly dead: boolean;
  /** Puts the real calls back and closes every real handle left open. */
  uninstall(): Promise<void>;
}

const never = <T>(): Promise<T> => new Promise<T>(() => {});

function flagsOf(flags: unknown): { create: boolean; append: boolean } {
  if (typeof flags === 'number') return { create: (flags & constants.O_CREAT) !== 0, append: (flags & constants.O_APPEND) !== 0 };
  const text = typeof flags === 'string' ? flags : 'r';
  return { create: /[wa]/.test(text), append: text.includes('a') };
}

/** Splits `{"op":"put","entries":[…]}\n` into one `{"op":"put","entry":…}` line per entry (0.1.0's form). */
function perEntryLines(bytes: Buffer): Buffer {
  const text = bytes.toString('utf8');
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) return bytes;
  let line: { op?: unknown; entries?: unknown };
  try {
    line = JSON.parse(text) as typeof line;
  } catch {
    return bytes;
  }
  if (line.op !== 'put' || !Array.isArray(line.entries) || line.entries.length < 2) return bytes;
  return Buffer.from(line.entries.map((entry) => `${JSON.stringify({ op: 'put', entry })}\n`).join(''));
}

/**
 * What the recorder knows as the calls go: the log, the page cache's view of names and
 * sizes, the real handles open, and whether the power is gone.
 */
class Recorder {
  readonly steps: Step[] = [];
  readonly handles = new Set<FileHandle>();
  /** The inode each name has now (the page cache's view), by absolute path. */
  readonly names = new Map<string, number>();
  /** Each inode's size now, for appends. */
  readonly sizes = new Map<number, number>();
  readonly died: Promise<void>;
  dead = false;
  #nextInode = 1;
  #die!: () => void;

  constructor(
    readonly dieAt: number,
    readonly moment: Moment,
    readonly breakage: Breakage,
  ) {
    this.died = new Promise<void>((resolve) => (this.#die = resolve));
  }

  /** Whether the power is gone (and goes now when this is step `dieAt`). */
  gone(): boolean {
    if (!this.dead && this.moment === 'before' && this.steps.length >= this.dieAt) this.#powerOff();
    return this.dead;
  }

  /** Logs a step done; `true` when the power goes as it returns (`moment: 'returning'`): the caller never hears of it. */
  log(step: Step): boolean {
    this.steps.push(step);
    if (!this.dead && this.moment === 'returning' && this.steps.length >= this.dieAt) this.#powerOff();
    return this.dead;
  }

  /** A new file's inode, empty. */
  created(path: string): number {
    const inode = this.#nextInode++;
    this.names.set(path, inode);
    this.sizes.set(inode, 0);
    return inode;
  }

  inodeOf(path: string): number {
    let inode = this.names.get(path);
    if (inode === undefined) {
      // A file that was there before the recording: treat it as durable, as it is.
      inode = this.#nextInode++;
      this.names.set(path, inode);
      this.sizes.set(inode, statSync(path).size);
    }
    return inode;
  }

  #powerOff(): void {
    this.dead = true;
    this.#die();
  }
}

/** A write through a recorded handle: the bytes asked for and where they land (`at`: the caller's position argument). */
function writeArguments(data: Buffer | string, a?: unknown, b?: unknown, c?: unknown): { bytes: Buffer; at: number | null | undefined } {
  if (typeof data === 'string') return { bytes: Buffer.from(data, typeof b === 'string' ? (b as BufferEncoding) : 'utf8'), at: a as number | null | undefined };
  const offset = (a as number | undefined) ?? 0;
  const length = (b as number | undefined) ?? data.length - offset;
  return { bytes: Buffer.from(data.subarray(offset, offset + length)), at: c as number | null | undefined };
}

/** A file's handle as the recorder hands it out: writes, truncates and syncs logged; after the power goes, every call hangs. */
function recordedFile(r: Recorder, target: FileHandle, inode: number, append: boolean): FileHandle {
  let position = 0;
  const write = async (data: Buffer | string, a?: unknown, b?: unknown, c?: unknown) => {
    if (r.gone()) return never();
    let { bytes, at } = writeArguments(data, a, b, c);
    const asked = bytes.length;
    if (r.breakage === 'batch') bytes = perEntryLines(bytes);
    const offset = append ? (r.sizes.get(inode) ?? 0) : typeof at === 'number' ? at : position;
    const { bytesWritten } = await target.write(bytes, 0, bytes.length, append ? null : offset);
    const written = bytes.subarray(0, bytesWritten);
    if (r.log({ kind: 'write', inode, offset, bytes: Buffer.from(written) })) return never();
    r.sizes.set(inode, Math.max(r.sizes.get(inode) ?? 0, offset + bytesWritten));
    if (!append && typeof at !== 'number') position = offset + bytesWritten;
    // The caller sees its own byte count (a batch split into lines is longer).
    return { bytesWritten: bytesWritten === bytes.length ? asked : Math.min(asked, bytesWritten), buffer: data };
  };
  const truncate = async (size = 0) => {
    if (r.gone()) return never();
    await target.truncate(size);
    if (r.log({ kind: 'truncate', inode, size })) return never();
    r.sizes.set(inode, size);
  };
  const sync = (how: 'fsync' | 'fdatasync') => async () => {
    if (r.gone()) return never();
    if (how === 'fdatasync' && r.breakage === 'sync') return;
    await (how === 'fsync' ? target.sync() : target.datasync());
    if (r.log({ kind: 'sync', inode, how })) return never();
  };
  return recordedHandle(r, target, { write, truncate, datasync: sync('fdatasync'), sync: sync('fsync') });
}

/** A directory's handle: its sync logged (or skipped, with `breakage: 'dirsync'`). */
function recordedDirectory(r: Recorder, target: FileHandle, dir: string): FileHandle {
  const sync = async () => {
    if (r.gone()) return never();
    if (r.breakage === 'dirsync') return;
    await target.sync();
    if (r.log({ kind: 'dirsync', dir })) return never();
  };
  return recordedHandle(r, target, { datasync: sync, sync });
}

/** The real handle behind a proxy: `calls` instead of its own, `close` forgotten by the recorder, every method hanging once the power is gone. */
function recordedHandle(r: Recorder, target: FileHandle, calls: Record<string, (...args: never[]) => unknown>): FileHandle {
  const close = async () => {
    r.handles.delete(target);
    await target.close();
  };
  return new Proxy(target, {
    get(file, key) {
      if (r.dead && typeof key === 'string' && typeof (file as unknown as Record<string, unknown>)[key] === 'function') return () => never();
      if (key === 'close') return close;
      if (typeof key === 'string' && Object.hasOwn(calls, key)) return calls[key];
      const value = Reflect.get(file, key, file) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(file) : value;
    },
  });
}

/** The recorder's `open`: a file created is logged (a name in its directory, an inode). */
function recordedOpen(r: Recorder, real: typeof fsCalls): typeof fsCalls.open {
  return (async (path: string, flags?: unknown, mode?: unknown) => {
    if (r.gone()) return never();
    const existed = existsSync(path);
    const file = await real.open(path, flags as never, mode as never);
    if (r.dead) {
      // The power went while it opened: the caller hangs, and the handle is closed here, as
      // `uninstall()` may already have closed the others (left open, the garbage collector
      // would close it with Node's DEP0137 warning, at random in a later test file).
      await file.close().catch(() => undefined);
      return never();
    }
    r.handles.add(file);
    if ((await file.stat()).isDirectory()) return recordedDirectory(r, file, path);
    const { create, append } = flagsOf(flags);
    if (existed || !create) return recordedFile(r, file, r.inodeOf(path), append);
    const inode = r.created(path);
    if (r.log({ kind: 'create', path, inode })) return never();
    return recordedFile(r, file, inode, append);
  }) as typeof fsCalls.open;
}

/** The recorder's name changes (rename, link, unlink) and its readdir, over the real ones. */
function recordedNames(r: Recorder, real: typeof fsCalls): Pick<typeof fsCalls, 'rename' | 'link' | 'unlink' | 'readdir'> {
  return {
    rename: (async (from: string, to: string) => {
      if (r.gone()) return never();
      await real.rename(from, to);
      const inode = r.inodeOf(from);
      r.names.delete(from);
      r.names.set(to, inode);
      if (r.log({ kind: 'rename', from, to })) return never();
    }) as typeof fsCalls.rename,
    link: (async (from: string, to: string) => {
      if (r.gone()) return never();
      await real.link(from, to);
      r.names.set(to, r.inodeOf(from));
      if (r.log({ kind: 'link', from, to })) return never();
    }) as typeof fsCalls.link,
    unlink: (async (path: string) => {
      if (r.gone()) return never();
      await real.unlink(path);
      r.names.delete(path);
      if (r.log({ kind: 'unlink', path })) return never();
    }) as typeof fsCalls.unlink,
    readdir: ((...args: Parameters<typeof real.readdir>) => (r.gone() ? never() : real.readdir(...args))) as typeof fsCalls.readdir,
  };
}

/**
 * Installs the recorder over `fsCalls` until `uninstall()`. `dieAt`: the power goes when
 * step number `dieAt` (0-based) is about to happen; `Infinity` for never.
 */
export function record(options: { dieAt?: number; breakage?: Breakage; moment?: Moment } = {}): Recording {
  const r = new Recorder(options.dieAt ?? Infinity, options.moment ?? 'before', options.breakage ?? 'none');
  const real = { ...fsCalls };
  Object.assign(fsCalls, { open: recordedOpen(r, real), ...recordedNames(r, real) });
  return {
    steps: r.steps,
    died: r.died,
    get dead() {
      return r.dead;
    },
    async uninstall() {
      Object.assign(fsCalls, real);
      for (const file of r.handles) await file.close().catch(() => undefined);
      r.handles.clear();
    },
  };
}

/** How one file's unsynced writes fare in a power cut: the first `keep` of them land, then `tear` bytes of the next. */
export interface FileFate {
  keep: number;
  tear?: number;
}

/** One choice of what a power cut keeps: per directory a prefix of its unsynced name changes, per inode its {@link FileFate}. */
export interface CutChoice {
  /**
   * How many of each directory's unsynced name changes survive (missing: none), by the
   * directory's rank in the log (the first directory changed is 0): a replay of the same
   * run in another directory takes the same choice.
   */
  names: number[];
  /** Per inode (missing: none of its unsynced writes). */
  files: Record<number, FileFate>;
  /** A short description, for reports. */
  label: string;
}

interface FileState {
  synced: Buffer;
  /** Writes and truncates since the last sync, in order. */
  pending: Array<{ kind: 'write'; offset: number; bytes: Buffer } | { kind: 'truncate'; size: number }>;
}

type NameChange = { kind: 'set'; name: string; inode: number } | { kind: 'delete'; name: string };

/** The log replayed up to step k: what is durable, and what is not yet. */
export interface Walked {
  files: Map<number, FileState>;
  /** Per directory: its names as of its last sync, and the changes since, in order. */
  dirs: Map<string, { synced: Map<string, number>; pending: NameChange[] }>;
}

/** Replays steps [0, k) of a log: the durable state and what came after each file's or directory's last sync. */
export function walk(steps: readonly Step[], k: number): Walked {
  const files = new Map<number, FileState>();
  const dirs = new Map<string, { synced: Map<string, number>; current: Map<string, number>; pending: NameChange[] }>();
  const current = new Map<number, Buffer>();
  const dirOf = (path: string) => {
    const dir = dirname(path);
    let state = dirs.get(dir);
    if (state === undefined) dirs.set(dir, (state = { synced: new Map(), current: new Map(), pending: [] }));
    return state;
  };
  const change = (path: string, inode: number | undefined) => {
    const d = dirOf(path);
    const name = basename(path);
    if (inode === undefined) {
      d.current.delete(name);
      d.pending.push({ kind: 'delete', name });
    } else {
      d.current.set(name, inode);
      d.pending.push({ kind: 'set', name, inode });
    }
  };
  const file = (inode: number) => {
    let state = files.get(inode);
    if (state === undefined) files.set(inode, (state = { synced: Buffer.alloc(0), pending: [] }));
    return state;
  };
  for (const step of steps.slice(0, k)) {
    switch (step.kind) {
      case 'create':
        file(step.inode);
        current.set(step.inode, Buffer.alloc(0));
        change(step.path, step.inode);
        break;
      case 'write':
        file(step.inode).pending.push({ kind: 'write', offset: step.offset, bytes: step.bytes });
        current.set(step.inode, applyWrite(current.get(step.inode) ?? Buffer.alloc(0), step.offset, step.bytes));
        break;
      case 'truncate':
        file(step.inode).pending.push({ kind: 'truncate', size: step.size });
        current.set(step.inode, applyTruncate(current.get(step.inode) ?? Buffer.alloc(0), step.size));
        break;
      case 'sync': {
        const state = file(step.inode);
        state.synced = current.get(step.inode) ?? Buffer.alloc(0);
        state.pending = [];
        break;
      }
      case 'rename': {
        const inode = dirOf(step.from).current.get(basename(step.from));
        change(step.from, undefined);
        change(step.to, inode);
        break;
      }
      case 'link':
        change(step.to, dirOf(step.from).current.get(basename(step.from)));
        break;
      case 'unlink':
        change(step.path, undefined);
        break;
      case 'dirsync': {
        const d = dirOf(join(step.dir, 'x'));
        d.synced = new Map(d.current);
        d.pending = [];
        break;
      }
    }
  }
  return { files, dirs: new Map([...dirs].map(([dir, d]) => [dir, { synced: d.synced, pending: d.pending }])) };
}

function applyWrite(data: Buffer, offset: number, bytes: Buffer): Buffer {
  const out = Buffer.alloc(Math.max(data.length, offset + bytes.length));
  data.copy(out);
  bytes.copy(out, offset);
  return out;
}

function applyTruncate(data: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  data.copy(out, 0, 0, Math.min(size, data.length));
  return out;
}

/** What a directory holds after a cut: name → content. */
export type CutState = Map<string, Map<string, Buffer>>;

/** The state a power cut leaves for one {@link CutChoice}. */
export function cutState(walked: Walked, choice: CutChoice): CutState {
  const out: CutState = new Map();
  for (const [rank, [dir, d]] of [...walked.dirs].entries()) {
    const names = new Map(d.synced);
    for (const change of d.pending.slice(0, choice.names[rank] ?? 0)) {
      if (change.kind === 'set') names.set(change.name, change.inode);
      else names.delete(change.name);
    }
    const contents = new Map<string, Buffer>();
    for (const [name, inode] of names) contents.set(name, fileAfterCut(walked.files.get(inode), choice.files[inode]));
    out.set(dir, contents);
  }
  return out;
}

function fileAfterCut(state: FileState | undefined, fate: FileFate | undefined): Buffer {
  if (state === undefined) return Buffer.alloc(0);
  let data = state.synced;
  const keep = Math.min(fate?.keep ?? 0, state.pending.length);
  for (const op of state.pending.slice(0, keep)) data = op.kind === 'write' ? applyWrite(data, op.offset, op.bytes) : applyTruncate(data, op.size);
  const next = state.pending[keep];
  if (fate?.tear !== undefined && next?.kind === 'write' && fate.tear > 0) data = applyWrite(data, next.offset, next.bytes.subarray(0, Math.min(fate.tear, next.bytes.length)));
  return data;
}

/** A fingerprint of a cut state, to check each distinct state once. */
export function fingerprint(state: CutState): string {
  const hash = createHash('sha256');
  for (const [dir, names] of [...state].sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(`${dir}\0`);
    for (const [name, data] of [...names].sort(([a], [b]) => a.localeCompare(b))) hash.update(`${name}\0${data.length}\0`).update(data);
  }
  return hash.digest('hex');
}

/**
 * Writes a cut state into `into`: every directory of the state must be `from` (the
 * recorded run's directory), which becomes `into`.
 */
export function materialize(state: CutState, from: string, into: string): void {
  mkdirSync(into, { recursive: true });
  for (const [dir, names] of state) {
    if (dir !== from) throw new Error(`materialize: the run changed ${dir}, outside its directory ${from}`);
    for (const [name, data] of names) writeFileSync(join(into, name), data);
  }
}

/** Tear points within a write: every line end, every 4 KiB boundary of the file, and one random byte. */
function tearPoints(op: { offset: number; bytes: Buffer }, random: () => number): number[] {
  const points = new Set<number>();
  for (let i = op.bytes.indexOf(0x0a); i !== -1 && i < op.bytes.length - 1; i = op.bytes.indexOf(0x0a, i + 1)) points.add(i + 1);
  for (let b = Math.ceil((op.offset + 1) / 4096) * 4096; b < op.offset + op.bytes.length; b += 4096) points.add(b - op.offset);
  if (op.bytes.length > 1) points.add(1 + Math.floor(random() * (op.bytes.length - 1)));
  return [...points].sort((a, b) => a - b);
}

/**
 * The choices worth trying at one step: nothing unsynced survives; everything survives (a
 * process crash); each file alone torn at each of its tear points (the others as synced);
 * and `random` choices where every file and directory picks its own prefix and tear.
 */
export function choices(walked: Walked, random: () => number, randomCount: number): CutChoice[] {
  const out: CutChoice[] = [{ names: [], files: {}, label: 'only what was synced' }];
  const all: CutChoice = { names: [...walked.dirs.values()].map((d) => d.pending.length), files: {}, label: 'everything written' };
  for (const [inode, f] of walked.files) all.files[inode] = { keep: f.pending.length };
  out.push(all);
  for (const [inode, f] of walked.files) {
    const last = f.pending.length - 1;
    const op = f.pending[last];
    if (op?.kind !== 'write') continue;
    for (const tear of tearPoints(op, random)) out.push({ names: all.names, files: { ...all.files, [inode]: { keep: last, tear } }, label: `inode ${inode} torn at byte ${tear} of its last write` });
  }
  for (let i = 0; i < randomCount; i++) {
    const choice: CutChoice = { names: [...walked.dirs.values()].map((d) => Math.floor(random() * (d.pending.length + 1))), files: {}, label: 'random' };
    for (const [inode, f] of walked.files) {
      const keep = Math.floor(random() * (f.pending.length + 1));
      const op = f.pending[keep];
      const fate: FileFate = { keep };
      if (op?.kind === 'write' && random() < 0.5) {
        const points = tearPoints(op, random);
        const tear = points[Math.floor(random() * points.length)];
        if (tear !== undefined) fate.tear = tear;
      }
      choice.files[inode] = fate;
    }
    out.push(choice);
  }
  return out;
}

/** The seeded generator the mock's faults use (mulberry32). */
export const seeded = seededRandom;
