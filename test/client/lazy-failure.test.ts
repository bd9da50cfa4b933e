import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('../../src/internal/events.js');
  vi.resetModules();
});

describe('event hooks that fail to load', () => {
  it('fails the call before anything is sent, and frees the claim guard for the next try', async () => {
    vi.resetModules();
    vi.doMock('../../src/internal/events.js', () => {
      throw new Error('cannot load the event hooks');
    });
    const { StorefrontClient } = await import('../../src/index.js');
    let sent = 0;
    const client = new StorefrontClient({
      apiKey: 'tg_live_key',
      baseUrl: 'http://127.0.0.1:9',
      fetch: async () => {
        sent += 1;
        return new Response('{}');
      },
      onEvent: () => {},
    });
    // vitest wraps the module's error in its own.
    await expect(client.claim('Ann')).rejects.toThrow(Error);
    // Not RATE_LIMIT from the local guard: the first attempt never reached the service.
    await expect(client.claim('Ann')).rejects.toThrow(Error);
    expect(sent).toBe(0);
  });
});

describe('FileJournal whose implementation fails to load', () => {
  it('rejects the call and loads again on the next one', async () => {
    vi.resetModules();
    let fail = true;
    vi.doMock('../../src/journals/file-store.js', async (importOriginal) => {
      if (fail) throw new Error('cannot load the file journal');
      return importOriginal();
    });
    const { FileJournal } = await import('../../src/index.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'teamgames-lazy-'));
    try {
      const journal = new FileJournal(join(dir, 'journal.jsonl'));
      await expect(journal.pending()).rejects.toThrow(Error);
      fail = false;
      expect(await journal.pending()).toEqual([]);
      await journal.close();
    } finally {
      vi.doUnmock('../../src/journals/file-store.js');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deliver whose engine fails to load', () => {
  it('rejects before claiming anything and loads again on the next call', async () => {
    vi.resetModules();
    let fail = true;
    vi.doMock('../../src/delivery.js', async (importOriginal) => {
      if (fail) throw new Error('cannot load the delivery engine');
      return importOriginal();
    });
    const { MemoryJournal, StorefrontClient } = await import('../../src/index.js');
    let sent = 0;
    const client = new StorefrontClient({
      apiKey: 'tg_live_key',
      baseUrl: 'http://127.0.0.1:9',
      journal: new MemoryJournal(),
      fetch: async () => {
        sent += 1;
        return new Response('{"status":"ERROR","code":"NO_ITEMS","message":"none"}');
      },
    });
    try {
      await expect(client.deliver('Ann', () => {})).rejects.toThrow(Error);
      expect(sent).toBe(0);
      fail = false;
      expect((await client.deliver('Ann', () => {})).code).toBe('NO_ITEMS');
      expect(sent).toBe(1);
    } finally {
      vi.doUnmock('../../src/delivery.js');
    }
  });
});
