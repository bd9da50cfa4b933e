import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StorefrontClientOptions } from '../../src/index.js';

const LAZY_PARTS = ['../../src/internal/events.js', '../../src/delivery/file-store.js', '../../src/delivery/engine.js', '../../src/checkout.js'];

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

type Sdk = typeof import('../../src/index.js');

/** A client whose fetch answers `body` and counts the requests it was given. */
function countingClient(sdk: Sdk, body: string, options: Partial<StorefrontClientOptions> = {}) {
  const sent = { count: 0 };
  const client = new sdk.StorefrontClient({
    apiKey: 'tg_live_key',
    baseUrl: 'http://127.0.0.1:9',
    fetch: async () => {
      sent.count += 1;
      return new Response(body);
    },
    ...options,
  });
  return { client, sent };
}

describe('event hooks that fail to load', () => {
  it('fails the call before anything is sent, and frees the claim guard for the next try', async () => {
    const { sdk } = await sdkWithFailingPart('../../src/internal/events.js');
    const { client, sent } = countingClient(sdk, '{}', { onEvent: () => {} });
    await expect(client.claim('Ann')).rejects.toThrow(Error);
    // Not RATE_LIMIT from the local guard: the first attempt never reached the service.
    await expect(client.claim('Ann')).rejects.toThrow(Error);
    expect(sent.count).toBe(0);
  });
});

describe('FileJournal whose implementation fails to load', () => {
  it('rejects the call and loads again on the next one', async () => {
    const { sdk, recover } = await sdkWithFailingPart('../../src/delivery/file-store.js');
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

describe('deliver whose engine fails to load', () => {
  it('rejects before claiming anything and loads again on the next call', async () => {
    const { sdk, recover } = await sdkWithFailingPart('../../src/delivery/engine.js');
    const { client, sent } = countingClient(sdk, '{"status":"ERROR","code":"NO_ITEMS","message":"none"}', { journal: new sdk.MemoryJournal() });
    await expect(client.deliver('Ann', () => {})).rejects.toThrow(Error);
    expect(sent.count).toBe(0);
    recover();
    expect((await client.deliver('Ann', () => {})).code).toBe('NO_ITEMS');
    expect(sent.count).toBe(1);
  });
});

describe('checkout whose part (cart checks and reader) fails to load', () => {
  it('rejects before anything is sent and loads again on the next call', async () => {
    const { sdk, recover } = await sdkWithFailingPart('../../src/checkout.js');
    const { client, sent } = countingClient(sdk, '{"status":"INVALID_STOCK","productsAffected":[]}');
    const cart = { username: 'Ann', items: [{ id: 1, quantity: 1 }] };
    await expect(client.checkout(cart)).rejects.toThrow(Error);
    expect(sent.count).toBe(0);
    recover();
    expect((await client.checkout(cart)).outcome).toBe('INVALID_STOCK');
    expect(sent.count).toBe(1);
  });
});
