import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('../../src/internal/events.js');
  vi.resetModules();
});

describe('a lazily loaded part that fails to load', () => {
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
