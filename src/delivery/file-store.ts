/**
 * The file journal's implementation, loaded by {@link FileJournal} on its first use so
 * that importing the SDK does not load it.
 *
 * @module
 * @internal
 */
import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { JournalEntry } from './journal.js';

type Line = { op: 'put'; entry: JournalEntry } | { op: 'ack'; ids: string[] };

/** One journal file: its pending entries in memory, every change appended and flushed. */
export class FileStore {
  readonly #path: string;
  readonly #compactAfter: number;
  readonly #fsync: boolean;
  #entries = new Map<string, JournalEntry>();
  #lines = 0;
  #file: FileHandle | undefined;
  #loaded: Promise<void> | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(path: string, compactAfter: number, fsync: boolean) {
    this.#path = path;
    this.#compactAfter = compactAfter;
    this.#fsync = fsync;
  }

  /** Records entries (the caller's copies, kept as they are) and flushes them. */
  append(entries: readonly JournalEntry[]): Promise<void> {
    return this.#exclusive(async () => {
      await this.#write(entries.map((entry) => ({ op: 'put', entry }) satisfies Line));
      for (const entry of entries) this.#entries.set(entry.deliveryId, entry);
    });
  }

  pending(playerName?: string): Promise<JournalEntry[]> {
    return this.#exclusive(async () => {
      const out: JournalEntry[] = [];
      for (const entry of this.#entries.values()) {
        if (playerName === undefined || entry.playerName === playerName) out.push(structuredClone(entry));
      }
      return out;
    });
  }

  acknowledge(ids: string[]): Promise<void> {
    return this.#exclusive(async () => {
      await this.#write([{ op: 'ack', ids }]);
      for (const id of ids) this.#entries.delete(id);
      await this.#maybeCompact();
    });
  }

  close(): Promise<void> {
    return this.#exclusive(async () => {
      const file = this.#file;
      this.#file = undefined;
      this.#loaded = undefined;
      await file?.close();
    });
  }

  /** Runs one operation at a time, after the file is loaded. */
  #exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(async () => {
      this.#loaded ??= this.#load();
      try {
        await this.#loaded;
      } catch (error) {
        this.#loaded = undefined;
        throw error;
      }
      return run();
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }

  async #load(): Promise<void> {
    let text = '';
    try {
      text = await readFile(this.#path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const entries = new Map<string, JournalEntry>();
    const lines = text.split('\n');
    const tail = lines.pop() as string; // the text after the last newline: '' unless torn
    let goodBytes = 0;
    let count = 0;
    let torn = false;
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] as string;
      const line = raw.trim() === '' ? null : parseLine(raw);
      if (line === undefined) {
        // A crash mid-write can only tear the last line: drop it. Anything else is damage.
        if (tail.trim() === '' && lines.slice(i + 1).every((rest) => rest.trim() === '')) {
          torn = true;
          break;
        }
        throw new Error(`FileJournal: ${this.#path} line ${i + 1} is not a journal record; the journal is damaged (fix or move the file; nothing was changed)`);
      }
      goodBytes += Buffer.byteLength(raw) + 1;
      if (line === null) continue;
      count += 1;
      apply(entries, line);
    }
    // The last line without its newline: complete records are kept (the newline is added),
    // a torn one is cut off so the next line does not glue onto it.
    let missingNewline = false;
    if (!torn && tail.trim() !== '') {
      const line = parseLine(tail);
      if (line !== undefined) {
        apply(entries, line);
        count += 1;
        goodBytes += Buffer.byteLength(tail);
        missingNewline = true;
      }
    }
    this.#entries = entries;
    this.#lines = count;
    const file = await open(this.#path, 'a+');
    const cut = goodBytes < Buffer.byteLength(text);
    if (cut) await file.truncate(goodBytes);
    if (missingNewline) await file.write('\n');
    if (cut || missingNewline) await file.sync();
    this.#file = file;
    if (text === '') await syncDirectory(dirname(this.#path));
  }

  async #write(lines: readonly Line[]): Promise<void> {
    const file = this.#file as FileHandle;
    await file.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    if (this.#fsync) await file.datasync();
    this.#lines += lines.length;
  }

  async #maybeCompact(): Promise<void> {
    if (this.#lines <= this.#compactAfter || this.#lines <= 2 * this.#entries.size) return;
    const temp = `${this.#path}.compact`;
    const out = await open(temp, 'w');
    try {
      await out.write([...this.#entries.values()].map((entry) => `${JSON.stringify({ op: 'put', entry } satisfies Line)}\n`).join(''));
      await out.sync();
    } finally {
      await out.close();
    }
    await this.#file?.close();
    this.#file = undefined;
    await rename(temp, this.#path);
    await syncDirectory(dirname(this.#path));
    this.#file = await open(this.#path, 'a+');
    this.#lines = this.#entries.size;
  }
}

function parseLine(raw: string): Line | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const line = value as Partial<Line> & { entry?: Partial<JournalEntry>; ids?: unknown };
  if (line.op === 'put' && typeof line.entry?.deliveryId === 'string' && typeof line.entry.playerName === 'string') return line as Line;
  if (line.op === 'ack' && Array.isArray(line.ids) && line.ids.every((id) => typeof id === 'string')) return line as Line;
  return undefined;
}

function apply(entries: Map<string, JournalEntry>, line: Line): void {
  if (line.op === 'put') entries.set(line.entry.deliveryId, line.entry);
  else for (const id of line.ids) entries.delete(id);
}

async function syncDirectory(path: string): Promise<void> {
  // Makes a created or renamed file's name durable; not supported on every platform.
  let dir: FileHandle | undefined;
  try {
    dir = await open(path, 'r');
    await dir.sync();
  } catch {
    // Windows cannot open a directory; the rename is still atomic there.
  } finally {
    await dir?.close();
  }
}
