import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { encodeApiKey } from 'teamgames-sdk';
import { createMockService, exampleSeed, type MockService } from 'teamgames-sdk/mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OutputStream } from '../../src/common/output.js';
import { EXIT, runTeamgames, type ClientOverrides, type TeamgamesEnv } from '../../src/cli/program.js';
import { T0, TEXT } from '../support/fixtures.js';

const KEY = exampleSeed.servers[0]!.apiKey;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let mock: MockService;
let url = '';
let close: () => Promise<void>;

beforeAll(async () => {
  mock = createMockService({ seed: exampleSeed, now: T0 });
  ({ url, close } = await mock.listen({ port: 0 }));
});
afterAll(() => close());
beforeEach(() => mock.reset());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  asked: string[];
}

interface RunOptions {
  env?: TeamgamesEnv;
  interactive?: boolean;
  answer?: boolean;
  /** Which streams are terminals (default: neither, as in a pipe). */
  tty?: { stdout?: boolean; stderr?: boolean };
  overrides?: ClientOverrides;
  /** stdout fails every write with this system code (`EPIPE`: its reader closed it). */
  stdoutFails?: string;
}

/** A test double of a Node stream: keeps what is written, or fails every write with `fails`, through the callback. */
function stream(keep: (text: string) => void, isTTY = false, fails?: string): OutputStream {
  return {
    isTTY,
    write(text, done) {
      if (fails === undefined) keep(text);
      done?.(fails === undefined ? null : Object.assign(new Error(`write ${fails}`), { code: fails }));
      return fails === undefined;
    },
  };
}

async function run(argv: string[], options: RunOptions = {}): Promise<Run> {
  const out = { stdout: '', stderr: '', asked: [] as string[] };
  const code = await runTeamgames(
    argv,
    {
      stdout: stream((t) => (out.stdout += t), options.tty?.stdout, options.stdoutFails),
      stderr: stream((t) => (out.stderr += t), options.tty?.stderr),
      interactive: options.interactive ?? false,
      confirm: async (question) => {
        out.asked.push(question);
        return options.answer ?? false;
      },
    },
    options.env ?? { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url },
    { retry: 0, timeoutMs: 2_000, ...options.overrides },
  );
  return { code, ...out };
}

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function expectNoSecret(r: Run) {
  expect(r.stdout + r.stderr).not.toContain(KEY);
  expect(r.stdout + r.stderr).not.toContain(encodeApiKey(KEY));
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
}

describe('teamgames catalog', () => {
  it('prints the products on sale as a table, with sale prices and the free badge', async () => {
    const r = await run(['catalog']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^id\s+productId\s+name\s+price\s+units\s+note/);
    expect(r.stdout).toMatch(/102\s+11802\s+Armadyl godsword\s+19\.99\s+1\s+sale, was 24\.99/);
    expect(r.stdout).toMatch(/303\s+starter_pack\s+Starter pack\s+0\.00\s+1\s+FREE/);
    expect(r.stdout).not.toContain('Holiday box'); // disabled
  });

  it('narrows to a category', async () => {
    const r = await run(['catalog', '--category', '2']);
    expect(r.stdout).toContain('Donator rank');
    expect(r.stdout).not.toContain('Abyssal whip');
  });

  it('prints the catalog as JSON with --json', async () => {
    const r = await run(['catalog', '--category', '1', '--json']);
    expect(r.code).toBe(EXIT.OK);
    const body = JSON.parse(r.stdout) as { message: string; products: Array<{ id: number }> };
    expect(body.message).toBe('SUCCESS');
    expect(body.products.map((p) => p.id)).toEqual([101, 102, 103]);
  });

  it('refuses a category that is not a positive integer (exit 2)', async () => {
    const r = await run(['catalog', '--category', 'weapons']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toBe('teamgames: --category must be a positive integer, got "weapons" (see teamgames --help)\n');
  });
});

describe('teamgames preview', () => {
  it('lists what waits, changing nothing', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 302, quantity: 2 });
    const r = await run(['preview', 'Player123']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain('PREVIEW: You have 1 purchase waiting to be claimed.');
    expect(r.stdout).toMatch(/385\s+Shark pack\s+200\s+2\s+1\.99/);
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Undelivered');
  });

  it('adds the purchase rows with --raw', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const r = await run(['preview', 'Player123', '--raw']);
    expect(r.stdout).toContain('Purchase rows:');
    expect(r.stdout).toMatch(/1\s+4151\s+1\s+1\s+Paid\s+Undelivered/);
  });

  it('says when there is nothing, as JSON too', async () => {
    const r = await run(['preview', 'Nobody', '--json']);
    expect(r.code).toBe(EXIT.OK);
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'NO_ITEMS', claims: [] });
  });
});

describe('teamgames claim', () => {
  it('refuses without --yes when nobody can answer', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const r = await run(['claim', 'Player123']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('refusing to claim without confirmation; pass --yes');
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Undelivered');
  });

  it('asks on a terminal; "no" changes nothing', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const r = await run(['claim', 'Player123'], { interactive: true, answer: false });
    expect(r.asked[0]).toMatch(/Mark every paid purchase of "Player123" as delivered\?.*\[y\/N\]/);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toBe('teamgames: claim cancelled; nothing changed\n');
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Undelivered');
  });

  it('claims after "yes" and lists what to grant', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
    const r = await run(['claim', 'Player123'], { interactive: true, answer: true });
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain(`SUCCESS: ${TEXT.success}`);
    expect(r.stdout).toMatch(/995\s+Coins \(10M\)\s+10000000\s+1/);
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Delivered');
  });

  it('claims with --yes and --json; a second claim is rate limited, then already claimed', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const first = await run(['claim', 'Player123', '--yes', '--json']);
    expect(JSON.parse(first.stdout)).toMatchObject({ code: 'SUCCESS', claims: [{ product_id_string: '4151', quantity_to_grant: 1 }] });

    const limited = await run(['claim', 'Player123', '--yes']);
    expect(limited.code).toBe(EXIT.OK);
    expect(limited.stdout).toContain(`RATE_LIMIT: ${TEXT.rateLimit}`);
    expect(limited.stdout).toContain('Try again in 10 s.');

    mock.clock.advance(10_000);
    const again = await run(['claim', 'Player123', '-y']);
    expect(again.stdout).toBe(`ALREADY_CLAIMED: ${TEXT.alreadyClaimed}\n`);
  });
});

describe('teamgames vote', () => {
  it('spends points on a reward', async () => {
    mock.recordVote(KEY, 'Player123', 3);
    const r = await run(['vote', 'Player123', '1', 'all']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain('You have claimed 3 x Vote Mystery Box.');
    expect(r.stdout).toMatch(/1\s+Vote Mystery Box\s+3\s+0\s+1\s+3/);
  });

  it('reports too few points, as JSON', async () => {
    mock.recordVote(KEY, 'Player123', 1);
    const r = await run(['vote', 'Player123', '2', '1', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ rewards: [], insufficientPoints: true });
  });

  it('refuses an amount that is neither a number nor "all"', async () => {
    const r = await run(['vote', 'Player123', '1', 'lots']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('<amount> must be a positive integer, got "lots"');
  });
});

describe('teamgames failures', () => {
  it('a wrong key: exit 3, one line labelled with the command, never the key', async () => {
    for (const argv of [['catalog'], ['preview', 'Player123'], ['claim', 'Player123', '--yes'], ['vote', 'Player123', '1', '1']]) {
      const r = await run(argv, { env: { TEAMGAMES_API_KEY: 'not-a-key-9z', TEAMGAMES_BASE_URL: url } });
      expect(r.code, argv.join(' ')).toBe(EXIT.AUTH);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^teamgames: ${argv[0]}: the API key was refused`));
      expect(r.stderr).not.toContain('not-a-key-9z');
      expectNoSecret(r);
    }
  });

  it('a wrong key with --json: a JSON error line on stderr', async () => {
    const r = await run(['catalog', '--json'], { env: { TEAMGAMES_API_KEY: 'not-a-key-9z', TEAMGAMES_BASE_URL: url } });
    expect(r.code).toBe(EXIT.AUTH);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: 'AUTHENTICATION_FAILED' });
    expect(r.stdout).toBe('');
  });

  it('an unreachable host: exit 4, one line labelled with the command the user ran', async () => {
    const port = await closedPort();
    for (const argv of [['catalog'], ['preview', 'Player123'], ['claim', 'Player123', '--yes'], ['vote', 'Player123', '1', '1']]) {
      const r = await run([...argv, '--base-url', `http://127.0.0.1:${port}`]);
      expect(r.code, argv.join(' ')).toBe(EXIT.NETWORK);
      expect(r.stderr).toMatch(new RegExp(`^teamgames: ${argv[0]}: could not reach 127\\.0\\.0\\.1:\\d+/\\S+ \\(ECONNREFUSED\\)\n$`));
      expectNoSecret(r);
    }
  });

  it('no key: exit 2', async () => {
    const r = await run(['catalog'], { env: { TEAMGAMES_BASE_URL: url } });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('TEAMGAMES_API_KEY is not set');
  });

  it('a plain-http URL that is not loopback: exit 2, naming the flag or the variable it came from', async () => {
    const flag = await run(['catalog', '--base-url', 'http://shop.example.com']);
    expect(flag.code).toBe(EXIT.USAGE);
    expect(flag.stderr).toMatch(/^teamgames: invalid --base-url: plain http: is only allowed for loopback hosts .* \(see teamgames --help\)\n$/);
    const fromEnv = await run(['catalog'], { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: 'http://shop.example.com' } });
    expect(fromEnv.code).toBe(EXIT.USAGE);
    expect(fromEnv.stderr).toMatch(/^teamgames: invalid TEAMGAMES_BASE_URL: plain http:/);
    expect(flag.stderr + fromEnv.stderr).not.toContain('options.');
  });

  it.each([[[]], [['nope']], [['preview']], [['vote', 'a', 'b']], [['catalog', '--raw']], [['catalog', '--colour']], [['claim', 'a', 'b']]])(
    'usage error for %j: exit 2',
    async (argv) => {
      const r = await run(argv);
      expect(r.code).toBe(EXIT.USAGE);
      expect(r.stderr).toMatch(/^teamgames: .+ \(see teamgames --help\)\n$/);
    },
  );

  it('--help documents every command and exit code', async () => {
    const r = await run(['--help'], { env: {} });
    expect(r.code).toBe(EXIT.OK);
    for (const word of ['catalog', 'preview', 'claim', 'vote', '--json', '--base-url', '--timeout <ms>', 'TEAMGAMES_API_KEY', 'NO_COLOR', 'Exit codes']) {
      expect(r.stdout).toContain(word);
    }
    expect(r.stdout).toMatch(/^ {2}2 {2}usage: unknown option/m);
  });
});

describe('teamgames with stdout closed (piped into a reader that exited)', () => {
  const FAILED = 'teamgames: claim: could not write to stdout (EPIPE); the answer follows on stderr\n';

  it('a claim that went through: exit 6, one line saying so, then the items to grant on stderr', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
    const r = await run(['claim', 'Player123', '--yes'], { stdoutFails: 'EPIPE' });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    expect(r.stderr.startsWith(`${FAILED}SUCCESS: ${TEXT.success}\n`)).toBe(true);
    expect(r.stderr).toMatch(/Delivered to Player123 \(grant these in game now\):\n.*\n.*\n995\s+Coins \(10M\)\s+10000000\s+1/);
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Delivered');
  });

  it('with --json: a JSON error line, then the result as one JSON line', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const r = await run(['claim', 'Player123', '--yes', '--json'], { stdoutFails: 'EPIPE' });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    const [error, result, rest] = r.stderr.split('\n');
    expect(JSON.parse(error!)).toEqual({ error: 'OUTPUT_FAILED', message: FAILED.slice('teamgames: '.length, -1) });
    expect(JSON.parse(result!)).toMatchObject({ code: 'SUCCESS', claims: [{ product_id_string: '4151', quantity_to_grant: 1 }] });
    expect(rest).toBe('');
  });

  it('every command reports it the same way, with the code the full disk gave', async () => {
    mock.recordVote(KEY, 'Player123', 5);
    for (const argv of [['catalog'], ['preview', 'Player123'], ['vote', 'Player123', '1', '1']]) {
      const r = await run(argv, { stdoutFails: 'ENOSPC' });
      expect(r.code, argv[0]).toBe(EXIT.OUTPUT_FAILED);
      expect(r.stderr.split('\n')[0]).toBe(`teamgames: ${argv[0]}: could not write to stdout (ENOSPC); the answer follows on stderr`);
      expect(r.stderr.split('\n').length).toBeGreaterThan(2);
    }
  });

  it('colours the failure line red when stderr is a terminal, and the answer for stderr', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const r = await run(['claim', 'Player123', '--yes'], { stdoutFails: 'EPIPE', tty: { stderr: true }, env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url } });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    expect(r.stderr).toContain('\u001b[31mteamgames: claim: could not write to stdout (EPIPE)');
    expect(r.stderr).toContain('\u001b[32mSUCCESS\u001b[39m');
  });

  it('--help names exit code 6', async () => {
    const r = await run(['--help'], { env: {} });
    expect(r.stdout).toMatch(/^ {2}6 {2}the answer could not be written to stdout \(a closed pipe, a full disk\)/m);
    const closed = await run(['--help'], { env: {}, stdoutFails: 'EPIPE' });
    expect(closed.code).toBe(EXIT.OUTPUT_FAILED);
    expect(closed.stderr).toMatch(/^teamgames: could not write to stdout \(EPIPE\); the answer follows on stderr\nUsage: teamgames/);
  });
});

describe('teamgames command-line errors', () => {
  it.each([
    [['catalog', '--prot', '1'], 'unknown option --prot'],
    [['catalog', '-x'], 'unknown option -x'],
    [['catalog', '--category'], '--category needs a value'],
    [['catalog', '--base-url', '--raw'], '--base-url needs a value'],
    [['catalog', '--timeout'], '--timeout needs a value'],
    [['preview', 'Player123', '--raw=yes'], '--raw takes no value'],
  ])('%j: "%s", exit 2', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toBe(`teamgames: ${message} (see teamgames --help)\n`);
  });

  it('reports them as a JSON line with --json', async () => {
    const r = await run(['catalog', '--json', '--prot']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(JSON.parse(r.stderr)).toEqual({ error: 'USAGE', message: 'unknown option --prot' });
  });

  it('names a bad argument as the user typed it, labelled with the command', async () => {
    const longName = await run(['preview', 'P'.repeat(65)]);
    expect(longName.code).toBe(EXIT.USAGE);
    expect(longName.stderr).toBe('teamgames: preview: invalid <player>: must be at most 64 characters, got 65 (see teamgames --help)\n');
    const badKey = await run(['catalog'], { env: { TEAMGAMES_API_KEY: 'demo\u2013key', TEAMGAMES_BASE_URL: url } });
    expect(badKey.code).toBe(EXIT.USAGE);
    expect(badKey.stderr).toMatch(/^teamgames: invalid TEAMGAMES_API_KEY: must fit in an HTTP header/);
    expect(badKey.stderr).not.toContain('demo');
    const blankReward = await run(['vote', 'Player123', ' ', '1']);
    expect(blankReward.code).toBe(EXIT.USAGE);
    expect(blankReward.stderr).toBe('teamgames: vote: invalid <reward>: must not be blank (see teamgames --help)\n');
  });
});

describe('teamgames --timeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(['0', 'abc', '1.5'])('refuses %j (exit 2)', async (value) => {
    const r = await run(['catalog', '--timeout', value]);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toBe(`teamgames: --timeout must be a positive integer, got "${value}" (see teamgames --help)\n`);
  });

  it("refuses a value above the client's ceiling, naming the flag", async () => {
    const r = await run(['catalog', '--timeout', '2147483648']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toBe('teamgames: invalid --timeout: must be a positive integer number of milliseconds up to 2147483647, got 2147483648 (see teamgames --help)\n');
  });

  it('bounds each attempt (and wins over the default)', async () => {
    vi.useFakeTimers();
    // A service that never answers: only the timeout ends the call.
    const silent: typeof fetch = (input, init) =>
      new Promise((_resolve, reject) => {
        const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
        signal?.addEventListener('abort', () => reject(signal.reason as Error));
      });
    const pending = run(['catalog', '--timeout', '25'], { overrides: { fetch: silent } });
    await vi.advanceTimersByTimeAsync(1_000); // the run's default is 2000 ms: only --timeout ends it here
    const r = await pending;
    expect(r.code).toBe(EXIT.NETWORK);
    expect(r.stderr).toMatch(/^teamgames: catalog: no answer from \S+ within 25 ms\n$/);
  });
});

describe('teamgames output without rows', () => {
  it('prints no empty "Purchase rows" block after a RATE_LIMIT or NO_ITEMS', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    await run(['claim', 'Player123', '--yes']);
    const limited = await run(['preview', 'Player123', '--raw']);
    expect(limited.stdout).toBe(`RATE_LIMIT: ${TEXT.rateLimitV4}\nTry again in 10 s.\n`);
    const none = await run(['preview', 'Nobody', '--raw']);
    expect(none.stdout).toBe(`NO_ITEMS: ${TEXT.noItems}\n`);
  });
});

describe('teamgames on a terminal', () => {
  const GREEN = '\u001b[32m';
  const YELLOW = '\u001b[33m';
  const RED = '\u001b[31m';
  const END = '\u001b[39m';
  const CLEAR = '\r\u001b[2K';
  const env = (more: TeamgamesEnv): TeamgamesEnv => ({ TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url, ...more });

  /** Answers 503 (retry at once) to the first `times` requests, then passes through. */
  function busyFirst(times: number): typeof fetch {
    let calls = 0;
    return (input, init) => (++calls <= times ? Promise.resolve(new Response('busy', { status: 503, headers: { 'retry-after': '0' } })) : fetch(input, init));
  }

  it('colours outcomes: green when delivered, yellow for the other answers', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
    const tty = { stdout: true };
    const preview = await run(['preview', 'Player123'], { tty });
    expect(preview.stdout.startsWith(`${GREEN}PREVIEW${END}: `)).toBe(true);
    mock.clock.advance(10_000); // past the preview's rate-limit window
    const claimed = await run(['claim', 'Player123', '--yes'], { tty });
    expect(claimed.stdout.startsWith(`${GREEN}SUCCESS${END}: `)).toBe(true);
    const limited = await run(['claim', 'Player123', '--yes'], { tty });
    expect(limited.stdout.startsWith(`${YELLOW}RATE_LIMIT${END}: `)).toBe(true);
    const none = await run(['preview', 'Nobody'], { tty });
    expect(none.stdout).toBe(`${YELLOW}NO_ITEMS${END}: ${TEXT.noItems}\n`);
    mock.recordVote(KEY, 'Player123', 1);
    const poor = await run(['vote', 'Player123', '2', '1'], { tty });
    expect(poor.stdout).toContain(`${YELLOW}Not enough vote points.${END}\n`);
  });

  it('colours a failure red on stderr', async () => {
    const r = await run(['catalog'], { tty: { stderr: true }, env: { TEAMGAMES_API_KEY: 'not-a-key-9z', TEAMGAMES_BASE_URL: url } });
    expect(r.code).toBe(EXIT.AUTH);
    expect(r.stderr.startsWith(`${RED}teamgames: catalog: the API key was refused`)).toBe(true);
    expect(r.stderr.endsWith(`${END}\n`)).toBe(true);
  });

  it('uses no colour in a pipe, with NO_COLOR set, on a dumb terminal, or with --json', async () => {
    // One player per run: a preview opens the player's 10 s rate-limit window.
    const tty = { stdout: true, stderr: true };
    const plain = [
      await run(['preview', 'Nobody1']),
      await run(['preview', 'Nobody2'], { tty, env: env({ NO_COLOR: '1' }) }),
      await run(['preview', 'Nobody3'], { tty, env: env({ TERM: 'dumb' }) }),
      await run(['catalog', '--prot'], { tty, env: env({ NO_COLOR: 'yes' }) }),
    ];
    for (const r of plain) {
      expect(r.stdout + r.stderr).toMatch(/NO_ITEMS|unknown option/);
      expect(r.stdout + r.stderr).not.toContain('\u001b[');
    }
    const json = await run(['preview', 'Nobody4', '--json'], { tty });
    expect(JSON.parse(json.stdout)).toMatchObject({ code: 'NO_ITEMS' });
    // An empty NO_COLOR does not count as set (https://no-color.org).
    const empty = await run(['preview', 'Nobody5'], { tty, env: env({ NO_COLOR: '' }) });
    expect(empty.stdout).toContain(`${YELLOW}NO_ITEMS${END}`);
  });

  it('shows a progress line on stderr while a read is retried, erased before the answer', async () => {
    const r = await run(['catalog', '--category', '3'], { tty: { stderr: true }, overrides: { retry: 2, fetch: busyFirst(2) } });
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).toContain('Shark pack');
    expect(r.stderr).toBe(`${CLEAR}teamgames: catalog: HTTP 503; trying again (attempt 2)…${CLEAR}teamgames: catalog: HTTP 503; trying again (attempt 3)…${CLEAR}`);
  });

  it('erases the progress line before the error line', async () => {
    const r = await run(['catalog'], { tty: { stderr: true }, env: env({ NO_COLOR: '1' }), overrides: { retry: 1, fetch: busyFirst(2) } });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).toMatch(new RegExp(`^\\r\\u001b\\[2Kteamgames: catalog: HTTP 503; trying again \\(attempt 2\\)…\\r\\u001b\\[2Kteamgames: catalog: \\S+ answered HTTP 503`));
  });

  it('shows no progress line when stderr is not a terminal', async () => {
    const events: string[] = [];
    const r = await run(['catalog'], { overrides: { retry: 1, fetch: busyFirst(1), onEvent: (e) => events.push(e.type) } });
    expect(r.code).toBe(EXIT.OK);
    expect(r.stderr).toBe('');
    expect(events).toContain('retry'); // the retry happened; it was just not drawn
  });

  it("keeps the caller's onEvent listener when drawing progress", async () => {
    const events: string[] = [];
    await run(['catalog'], { tty: { stderr: true }, overrides: { retry: 1, fetch: busyFirst(1), onEvent: (e) => events.push(e.type) } });
    expect(events).toContain('retry');
  });
});

describe('the teamgames bin', () => {
  it('runs as a process: stdout, exit code, and the non-TTY claim refusal', async () => {
    const exec = promisify(execFile);
    const tsx = `${ROOT}node_modules/.bin/tsx`;
    const env = { ...process.env, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url };
    const ok = await exec(tsx, ['src/cli/index.ts', 'catalog', '--category', '3'], { cwd: ROOT, env });
    expect(ok.stdout).toContain('Shark pack');
    const refused = await exec(tsx, ['src/cli/index.ts', 'claim', 'Player123'], { cwd: ROOT, env }).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: EXIT.USAGE });
    expect((refused as { stderr: string }).stderr).toContain('refusing to claim without confirmation');
    // Pipes are not terminals: no colour, no progress line, and a readable unknown option.
    const unknown = await exec(tsx, ['src/cli/index.ts', 'catalog', '--prot'], { cwd: ROOT, env }).catch((e: { code: number; stderr: string }) => e);
    expect(unknown).toMatchObject({ code: EXIT.USAGE, stderr: 'teamgames: unknown option --prot (see teamgames --help)\n' });
  }, 30_000);

  it('claims with --yes into a closed pipe: exit 6, no stack, the items to grant on stderr', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
    const env = { ...process.env, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url };
    const child = spawn(`${ROOT}node_modules/.bin/tsx`, ['src/cli/index.ts', 'claim', 'Player123', '--yes'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    // The read end closes at once, long before the claim's answer: as after `| head -c0`.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));

    expect(stderr).not.toMatch(/Unhandled|\n\s+at /);
    expect(stderr).toMatch(/^teamgames: claim: could not write to stdout \(EPIPE\); the answer follows on stderr\nSUCCESS: /);
    expect(stderr).toMatch(/995\s+Coins \(10M\)\s+10000000\s+1/);
    expect(code).toBe(EXIT.OUTPUT_FAILED);
    expect(mock.purchases(KEY, 'Player123')[0]!.deliverystatus).toBe('Delivered');
  }, 30_000);
});
