import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { encodeApiKey } from 'teamgames-sdk';
import { createMockService, exampleSeed, type MockService } from 'teamgames-sdk/mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT, runTeamgames, type TeamgamesEnv } from '../../src/cli/program.js';
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

async function run(argv: string[], options: { env?: TeamgamesEnv; interactive?: boolean; answer?: boolean } = {}): Promise<Run> {
  const out = { stdout: '', stderr: '', asked: [] as string[] };
  const code = await runTeamgames(
    argv,
    {
      stdout: { write: (t: string) => (out.stdout += t) },
      stderr: { write: (t: string) => (out.stderr += t) },
      interactive: options.interactive ?? false,
      confirm: async (question) => {
        out.asked.push(question);
        return options.answer ?? false;
      },
    },
    options.env ?? { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: url },
    { retry: 0, timeoutMs: 2_000 },
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
  it('a wrong key: exit 3, one line, never the key', async () => {
    for (const argv of [['catalog'], ['preview', 'Player123'], ['claim', 'Player123', '--yes'], ['vote', 'Player123', '1', '1']]) {
      const r = await run(argv, { env: { TEAMGAMES_API_KEY: 'not-a-key-9z', TEAMGAMES_BASE_URL: url } });
      expect(r.code, argv.join(' ')).toBe(EXIT.AUTH);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('the API key was refused');
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

  it('an unreachable host: exit 4, one line', async () => {
    const port = await closedPort();
    for (const argv of [['catalog'], ['claim', 'Player123', '--yes']]) {
      const r = await run([...argv, '--base-url', `http://127.0.0.1:${port}`]);
      expect(r.code, argv.join(' ')).toBe(EXIT.NETWORK);
      expect(r.stderr).toMatch(/^teamgames: \w+: could not reach 127\.0\.0\.1:\d+\/\S+ \(ECONNREFUSED\)\n$/);
      expectNoSecret(r);
    }
  });

  it('no key: exit 2', async () => {
    const r = await run(['catalog'], { env: { TEAMGAMES_BASE_URL: url } });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toContain('TEAMGAMES_API_KEY is not set');
  });

  it('a plain-http URL that is not loopback: exit 2', async () => {
    const r = await run(['catalog', '--base-url', 'http://shop.example.com']);
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.stderr).toMatch(/^teamgames: .*baseUrl.*\n$/);
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
    for (const word of ['catalog', 'preview', 'claim', 'vote', '--json', '--base-url', 'TEAMGAMES_API_KEY', 'Exit codes']) expect(r.stdout).toContain(word);
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
  }, 20_000);
});
