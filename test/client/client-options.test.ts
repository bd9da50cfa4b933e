import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClaimOutcomeUnknownError, InvalidInputError, MemoryJournal, StorefrontClient, TimeoutError } from 'teamgames-sdk';
import { createMockService } from 'teamgames-sdk/mock';
import { KEY, T0, storeSeed } from '../support/fixtures.js';

/** A fetch that never answers: it only ends when its signal aborts (a hanging host). */
const hanging: typeof fetch = (_input, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason));
  });

/** A fetch that records the User-Agent and the URL, and answers an empty catalog. */
function recording() {
  const seen: Array<{ url: string; userAgent: string | null }> = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    seen.push({ url: String(input), userAgent: new Headers(init?.headers).get('user-agent') });
    return Response.json({ message: 'SUCCESS', products: [] });
  };
  return { seen, fetch };
}

function thrown(run: () => unknown): InvalidInputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('did not throw');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('environment defaults', () => {
  it('reads TEAMGAMES_API_KEY and TEAMGAMES_BASE_URL when the options are absent', async () => {
    vi.stubEnv('TEAMGAMES_API_KEY', KEY);
    vi.stubEnv('TEAMGAMES_BASE_URL', 'http://127.0.0.1:4010/');
    const mock = createMockService({ seed: storeSeed, now: T0 });
    const urls: string[] = [];
    const client = new StorefrontClient({ fetch: (input, init) => (urls.push(String(input)), mock.fetch(input, init)) });
    expect((await client.getCatalog()).products.length).toBeGreaterThan(0); // the key from the environment was accepted
    expect(urls).toEqual(['http://127.0.0.1:4010/api/v2/client/global/products']);
    expect(String(new StorefrontClient())).toBe('StorefrontClient { baseUrl: http://127.0.0.1:4010 }');
  });

  it('lets an option win over the environment', () => {
    vi.stubEnv('TEAMGAMES_API_KEY', 'not-this-one');
    vi.stubEnv('TEAMGAMES_BASE_URL', 'http://127.0.0.1:1');
    expect(String(new StorefrontClient({ apiKey: KEY, baseUrl: 'https://api.teamgames.io' }))).toBe('StorefrontClient { baseUrl: https://api.teamgames.io }');
  });

  it('names the variable, never its value, when the environment holds a bad one', () => {
    vi.stubEnv('TEAMGAMES_API_KEY', ' secret-key-with-a-space');
    const key = thrown(() => new StorefrontClient());
    expect(key.argument).toBe('TEAMGAMES_API_KEY (environment variable)');
    expect(key.message).toMatch(/leading or trailing whitespace/);
    expect(key.message).not.toContain('secret');

    vi.stubEnv('TEAMGAMES_API_KEY', KEY);
    vi.stubEnv('TEAMGAMES_BASE_URL', 'http://example.com');
    const url = thrown(() => new StorefrontClient());
    expect(url.argument).toBe('TEAMGAMES_BASE_URL (environment variable)');
    expect(url.message).toMatch(/only allowed for loopback hosts/);
  });

  it('says both ways in when there is no key at all', () => {
    vi.stubEnv('TEAMGAMES_API_KEY', '');
    const error = thrown(() => new StorefrontClient());
    expect(error.message).toBe(
      'StorefrontClient: invalid options.apiKey: is required: pass { apiKey } (the raw key from the TeamGames dashboard) or set the TEAMGAMES_API_KEY environment variable',
    );
  });

  describe('under Deno without --allow-env', () => {
    afterEach(() => {
      vi.unstubAllGlobals();
      vi.unstubAllEnvs();
    });

    /** A Deno-like global whose permission query answers `state` for every variable. */
    const denoWith = (state: 'granted' | 'prompt' | 'denied') => {
      const asked: string[] = [];
      vi.stubGlobal('Deno', {
        version: { deno: '2.1.0' },
        permissions: { querySync: (d: { name: string; variable: string }) => (asked.push(`${d.name}:${d.variable}`), { state }) },
      });
      return asked;
    };

    it('says the runtime denies reading the variable and names --allow-env, although the key is set', () => {
      vi.stubEnv('TEAMGAMES_API_KEY', KEY);
      for (const state of ['prompt', 'denied'] as const) {
        const asked = denoWith(state);
        const error = thrown(() => new StorefrontClient());
        expect(error.message).toBe(
          'StorefrontClient: invalid options.apiKey: is required, and the runtime denies reading the TEAMGAMES_API_KEY environment variable (set or not): run Deno with --allow-env (or --allow-env=TEAMGAMES_API_KEY,TEAMGAMES_BASE_URL), or pass { apiKey }',
        );
        expect(error.message).not.toContain(KEY);
        expect(asked).toContain('env:TEAMGAMES_API_KEY');
      }
    });

    it('reads the key when the permission is granted, and still asks to set it when it is unset', () => {
      denoWith('granted');
      vi.stubEnv('TEAMGAMES_API_KEY', KEY);
      expect(() => new StorefrontClient()).not.toThrow();
      vi.stubEnv('TEAMGAMES_API_KEY', '');
      expect(thrown(() => new StorefrontClient()).message).toMatch(/or set the TEAMGAMES_API_KEY environment variable$/);
    });

    it('needs no permission when the key is an option', () => {
      denoWith('prompt');
      expect(() => new StorefrontClient({ apiKey: KEY })).not.toThrow();
    });
  });
});

describe('per-call timeoutMs', () => {
  it('bounds one read, rejecting with TimeoutError naming that timeout, while other calls keep the client\'s', async () => {
    vi.useFakeTimers();
    const client = new StorefrontClient({ apiKey: KEY, fetch: hanging, retry: 0, timeoutMs: 60_000, catalogCacheTtlMs: 0 });
    const quick = client.getCatalog({ timeoutMs: 500 });
    const quickError = quick.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(500);
    const error = await quickError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ timeoutMs: 500, attempts: 1 });

    const slow = client.getCatalog().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(59_999);
    let settled = false;
    void slow.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await slow).toMatchObject({ timeoutMs: 60_000 });
  });

  it('turns a claim that timed out into ClaimOutcomeUnknownError (it may have been applied)', async () => {
    vi.useFakeTimers();
    const client = new StorefrontClient({ apiKey: KEY, fetch: hanging });
    const claim = client.claim('Player1', { timeoutMs: 1_000 }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await claim).toBeInstanceOf(ClaimOutcomeUnknownError);
    expect(await claim).toMatchObject({ reason: 'timeout', message: expect.stringContaining('within 1000 ms') });
  });

  it('is taken by every call', async () => {
    const { fetch, seen } = recording();
    const client = new StorefrontClient({ apiKey: KEY, fetch, rateLimit: false });
    const options = { timeoutMs: 1_000 };
    // Every call reaches fetch (the answers, a catalog body, matter not): none refused the option.
    await Promise.allSettled([
      client.getCatalog(options),
      client.claim('P', options),
      client.claimLegacy('P', options),
      client.claimStoreTransactions('P', options),
      client.checkout({ username: 'P', items: [{ id: 1, quantity: 1 }] }, options),
      client.claimVoteReward({ player: 'P', reward: '1', amount: 'all' }, options),
    ]);
    expect(seen).toHaveLength(6);
  });
});

describe('withOptions', () => {
  it('derives a client with other send options that shares the claim guard: one window across both', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1 });
    const client = new StorefrontClient({ apiKey: KEY, fetch: mock.fetch, now: mock.clock.now });
    const derived = client.withOptions({ timeoutMs: 2_000, retry: 0 });
    expect((await client.claim('Player1')).code).toBe('SUCCESS');
    expect(await derived.claim('Player1')).toMatchObject({ code: 'RATE_LIMIT', source: 'local' });
    mock.clock.advance(10_000);
    expect((await derived.claim('Player1')).code).toBe('ALREADY_CLAIMED');
  });

  it('shares the catalog cache: the derived client answers from what the first one read', async () => {
    const { fetch, seen } = recording();
    const client = new StorefrontClient({ apiKey: KEY, fetch });
    const first = await client.getCatalog();
    const derived = client.withOptions({ retry: 0 });
    expect(await derived.getCatalog()).toBe(first);
    expect(seen).toHaveLength(1);
    derived.clearCatalogCache();
    await client.getCatalog();
    expect(seen).toHaveLength(2);
  });

  it('shares the journal and the per-player order: a derived client\'s delivery waits for the first, and each line is granted once', async () => {
    const mock = createMockService({ seed: storeSeed, now: T0 });
    mock.addPurchase(KEY, { playerName: 'Player1', id: 1, quantity: 2 });
    const journal = new MemoryJournal();
    const requests: string[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => (requests.push(new URL(String(input)).pathname), mock.fetch(input, init));
    const client = new StorefrontClient({ apiKey: KEY, fetch, now: mock.clock.now, journal });
    const derived = client.withOptions({ timeoutMs: 5_000 });
    const sleep = async (ms: number) => {
      mock.clock.advance(ms);
    };
    const granted: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inGrant = new Promise<void>((resolve) => (entered = resolve));

    const first = client.deliver('Player1', async (item) => {
      granted.push(item.deliveryId);
      entered();
      await held; // the first delivery is mid-grant
    }, { sleep });
    await inGrant;
    const sentByFirst = requests.length;
    const second = derived.deliver('Player1', (item) => void granted.push(item.deliveryId), { sleep });
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // Its own engine would have previewed by now; the shared one keeps it behind the first.
    expect(requests).toHaveLength(sentByFirst);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.code, b.code]).toEqual(['SUCCESS', 'ALREADY_CLAIMED']);
    expect(granted).toHaveLength(1);
    expect(await journal.pending()).toEqual([]);
  });

  it('keeps what is not given, and its own onEvent and User-Agent', async () => {
    const { fetch, seen } = recording();
    const events: string[] = [];
    const client = new StorefrontClient({ apiKey: KEY, fetch, userAgent: 'shop/1', catalogCacheTtlMs: 0, onEvent: () => events.push('parent') });
    await client.withOptions({ userAgent: 'pages/2', onEvent: () => events.push('derived') }).getCatalog();
    await client.withOptions({ retry: 0 }).getCatalog();
    expect(seen.map((s) => s.userAgent?.split(' ')[0])).toEqual(['pages/2', 'shop/1']);
    expect(new Set(events)).toEqual(new Set(['derived', 'parent']));
    expect(events.indexOf('parent')).toBeGreaterThan(events.lastIndexOf('derived'));
  });

  it('refuses options that cannot differ, naming them and what may change', () => {
    const client = new StorefrontClient({ apiKey: KEY });
    for (const name of ['apiKey', 'baseUrl', 'catalogCacheTtlMs', 'rateLimit', 'now', 'journal']) {
      const error = thrown(() => client.withOptions({ [name]: undefined } as never));
      expect(error.argument).toBe(`options.${name}`);
      expect(error.message).toMatch(/^withOptions: invalid options\.\w+: cannot differ on a derived client.*may change timeoutMs, retry, maxResponseBytes, fetch, userAgent, onEvent$/);
    }
    expect(thrown(() => client.withOptions({ timeoutMs: -1 })).message).toMatch(/^withOptions: invalid options\.timeoutMs: must be a positive integer/);
    expect(thrown(() => client.withOptions({ tiemoutMs: 1 } as never)).message).toBe('withOptions: invalid options.tiemoutMs: unknown option; known: apiKey, baseUrl, timeoutMs, retry, maxResponseBytes, catalogCacheTtlMs, rateLimit, now, fetch, userAgent, onEvent, journal');
    expect(thrown(() => client.withOptions(undefined as never)).message).toBe('withOptions: invalid options: must be an object with the options to change');
  });
});

describe('User-Agent', () => {
  const agentOf = async () => {
    const { fetch, seen } = recording();
    await new StorefrontClient({ apiKey: KEY, fetch }).getCatalog();
    return seen[0]!.userAgent;
  };

  it('names Node under Node', async () => {
    expect(await agentOf()).toMatch(new RegExp(`^teamgames-sdk/\\d+\\.\\d+\\.\\d+ node/${process.versions.node.replaceAll('.', '\\.')}$`));
  });

  it('names Bun and Deno under them, not the Node version they emulate', async () => {
    vi.stubGlobal('Bun', { version: '1.2.3' });
    expect(await agentOf()).toMatch(/ bun\/1\.2\.3$/);
    vi.unstubAllGlobals();
    vi.stubGlobal('Deno', { version: { deno: '2.1.0' } });
    expect(await agentOf()).toMatch(/ deno\/2\.1\.0$/);
  });
});
