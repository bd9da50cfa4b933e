import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The one part loaded on first use: the file journal's store.
const LAZY_PARTS = ['../../src/journals/file/store.js'];

afterEach(() => {
  for (const path of LAZY_PARTS) vi.doUnmock(path);
  vi.resetModules();
});

/**
 * Makes one lazily loaded module fail to load until `recover()`, then imports a fresh
 * copy of the SDK that will load it. vitest wraps the module's error in its own.
 */
async function sdkWithFailingPart(path: string) {
  let failing = true;
  vi.resetModules();
  vi.doMock(path, async (importOriginal) => {
    if (failing) throw new Error(`cannot load ${path}`);
    return importOriginal();
  });
  const sdk = await import('../../src/index.js');
  return { sdk, recover: () => (failing = false) };
}

describe('FileJournal whose implementation fails to load', () => {
  it('rejects the call and loads again on the next one', async () => {
    const { sdk, recover } = await sdkWithFailingPart('../../src/journals/file/store.js');
    const dir = mkdtempSync(join(tmpdir(), 'teamgames-lazy-'));
    try {
      const journal = new sdk.FileJournal(join(dir, 'journal.jsonl'));
      await expect(journal.pending()).rejects.toThrow(Error);
      recover();
      expect(await journal.pending()).toEqual([]);
      await journal.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
