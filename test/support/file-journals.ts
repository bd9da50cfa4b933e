/**
 * Scratch file journals for the file journal's suites (test/journals/file*.test.ts): a
 * temp root removed after the suite, a directory of its own per journal, journals closed
 * after each test (no lock outlives a test), what a restarted process reads, an injected
 * file-system error, FileHandle's prototype (spying there reaches the journal's handles),
 * and the journal's modules under a lower size limit.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, vi } from 'vitest';
import { FileJournal, type FileJournalOptions } from '../../src/journals/file/journal.js';

/** A scratch root for one suite, named `teamgames-<name>-…` in the temp directory. */
export function scratchJournals(name: string) {
  // Its real path: the journal locks a file's real path (macOS's tmpdir is behind a symlink).
  const root = realpathSync(mkdtempSync(join(tmpdir(), `teamgames-${name}-`)));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const j of opened.splice(0)) await j.close().catch(() => undefined);
  });
  let n = 0;
  return {
    root,
    /** A journal path in a directory of its own, so tests can list what lies beside it. */
    file(): string {
      const dir = join(root, `case-${++n}`);
      mkdirSync(dir);
      return join(dir, 'journal.jsonl');
    },
    /** A journal closed after the test. */
    journal(path: string, options?: FileJournalOptions): FileJournal {
      const made = new FileJournal(path, options);
      opened.push(made);
      return made;
    },
    /** Closes `made` (a journal of a freshly loaded module) after the test. */
    closing<T extends { close(): Promise<void> }>(made: T): T {
      opened.push(made);
      return made;
    },
  };
}

/** The ids a fresh journal reads from the file, as another process would after a restart. */
export async function reload(path: string): Promise<string[]> {
  const fresh = new FileJournal(path);
  try {
    return (await fresh.pending()).map((e) => e.deliveryId);
  } finally {
    await fresh.close();
  }
}

/** A file-system error as Node gives it: a message starting with its code, and the code. */
export const fsError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: injected failure`), { code });

/** FileHandle's `write`, as spies see it. */
export type Write = (this: FileHandle, data: Buffer | string, offset?: number, length?: number, position?: number | null) => Promise<{ bytesWritten: number }>;
/** FileHandle's `read`, as spies see it. */
export type Read = (this: FileHandle, buffer: Buffer, offset: number, length: number, position: number) => Promise<{ bytesRead: number }>;
/** The FileHandle methods the suites spy on. */
export interface FileHandleMethods {
  write: Write;
  read: Read;
  datasync: () => Promise<void>;
  sync: () => Promise<void>;
  truncate: (length?: number) => Promise<void>;
  chmod: (mode: number) => Promise<void>;
}

/**
 * FileHandle's prototype, where its methods live (probed with a file in `dir`): spying
 * there reaches the journal's handles.
 */
export async function fileHandlePrototype(dir: string): Promise<FileHandleMethods> {
  const probe = await open(join(dir, 'probe'), 'w');
  try {
    return Object.getPrototypeOf(probe) as FileHandleMethods;
  } finally {
    await probe.close();
  }
}

/**
 * Runs `work` with the journal's modules loaded afresh under a size limit of `bytes`
 * (reading the real 256 MiB takes seconds): `work` imports what it tests, and the
 * modules are unloaded after it.
 */
export async function underSizeLimit<T>(bytes: number, work: () => Promise<T>): Promise<T> {
  vi.resetModules();
  vi.doMock('../../src/journals/file/files.js', async (importOriginal) => ({ ...(await importOriginal<object>()), MAX_JOURNAL_BYTES: bytes }));
  try {
    return await work();
  } finally {
    vi.doUnmock('../../src/journals/file/files.js');
    vi.resetModules();
  }
}
