/**
 * More of `teamgames`'s own decisions, in process (issue #46 point 2): the catalog's notes,
 * the purchase rows only `--raw` shows (empty cells for what a row lacks), a vote's reward
 * messages and its "no rows" answer, how an error's text is put on one line and labelled
 * with the command (only the SDK's own errors, only when they carry the SDK's label), the
 * client's argument names as typed, the base URL from the environment, the progress line on
 * a terminal, and a failed write of `--version`.
 */
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { OutputStream } from '../../src/common/output.js';
import { EXIT } from '../../src/cli/program.js';
import { InvalidInputError, JournalError, VERSION } from '../../src/index.js';
import { against, answering, stream } from '../support/cli.js';
import { T0 } from '../support/fixtures.js';

const KEY = exampleSeed.servers[0]!.apiKey;
const mock = createMockService({ seed: exampleSeed, now: T0 });
beforeEach(() => mock.reset());

const run = against(mock, KEY);

/** `teamgames claim Steve` confirmed by a person whose terminal fails with `error`: how the CLI prints an error. */
const failingWith = (error: unknown, argv = ['claim', 'Steve']) => run(argv, { confirm: async () => Promise.reject(error) });

const product = (id: number, priceOriginal: number, priceWithSale: number) => ({ id, productId: `p${id}`, name: `Product ${id}`, price: priceOriginal, priceOriginal, priceWithSale, quantity: 1, description: '', image: '', disabled: false, sales: [] });

describe("the catalog's notes", () => {
  it('free (even when it was priced) is FREE only; a sale only below the original price', async () => {
    const r = await run(['catalog'], { overrides: answering({ message: 'SUCCESS', products: [product(1, 5, 0), product(2, 5, 5), product(3, 5, 4)] }) });
    expect(r).toEqual({ code: 0, stdout: 'id  productId  name       price  units  note\n--  ---------  ---------  -----  -----  --------------\n1   p1         Product 1  0.00   1      FREE\n2   p2         Product 2  5.00   1\n3   p3         Product 3  4.00   1      sale, was 5.00\n', stderr: '' });
  });
});

describe('the purchase rows', () => {
  const row = { invoice: 7, productid: '385', quantity: 1, givequantity: null, paymentstatus: 'Paid', deliverystatus: 'Undelivered' };
  const claimAnswer = (rawTransactions: unknown[]) => ({ status: 'SUCCESS', code: 'NO_ITEMS', message: 'nothing', data: { claims: [], rawTransactions } });

  it('--raw: a cell the row lacks or holds null is empty', async () => {
    const r = await run(['preview', 'Steve', '--raw'], { overrides: answering(claimAnswer([row])) });
    expect(r.stdout).toBe('NO_ITEMS: nothing\n\nPurchase rows:\ninvoice  productid  quantity  givequantity  paymentstatus  deliverystatus  created\n-------  ---------  --------  ------------  -------------  --------------  -------\n7        385        1                       Paid           Undelivered\n');
  });

  it('--raw with no rows (or none sent): no block; without --raw (and for a claim): never', async () => {
    expect((await run(['preview', 'Steve', '--raw'], { overrides: answering(claimAnswer([])) })).stdout).toBe('NO_ITEMS: nothing\n');
    expect((await run(['preview', 'Steve', '--raw'], { overrides: answering({ status: 'SUCCESS', code: 'NO_ITEMS', message: 'nothing', data: { claims: [] } }) })).stdout).toBe('NO_ITEMS: nothing\n');
    expect((await run(['preview', 'Steve'], { overrides: answering(claimAnswer([row])) })).stdout).toBe('NO_ITEMS: nothing\n');
    expect((await run(['claim', 'Steve', '--yes'], { overrides: answering(claimAnswer([row])) })).stdout).toBe('NO_ITEMS: nothing\n');
  });
});

describe("a vote's answer", () => {
  const reward = { reward_id: 1, reward_name: 'Box', give_amount: 1, vote_points: 0, votes_month: 1, total_points: '3' };

  it('a reward row says its message only when it has one', async () => {
    const r = await run(['vote', 'Steve', '1', '1'], { overrides: answering([{ ...reward, message: 'Enjoy.' }, { ...reward, reward_id: 2, message: '' }, { ...reward, reward_id: 3 }]) });
    expect(r.stdout).toBe('Enjoy.\nreward  name  give  points left  votes this month  points ever\n------  ----  ----  -----------  ----------------  -----------\n1       Box   1     0            1                 3\n2       Box   1     0            1                 3\n3       Box   1     0            1                 3\n');
  });

  it('no rows at all: says so', async () => {
    expect(await run(['vote', 'Steve', '1', '1'], { overrides: answering([]) })).toEqual({ code: 0, stdout: 'No answer rows.\n', stderr: '' });
  });
});

describe("an error's line", () => {
  it('on one line: every run of white space one space, none around', async () => {
    expect(await failingWith(new Error('  the terminal\n\n  is  gone \t'))).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames: the terminal is gone\n' });
  });

  it("the SDK's error labelled with its operation: relabelled with the command", async () => {
    expect((await failingWith(new JournalError('claimVoteReward: the journal is gone', { operation: 'claimVoteReward' }))).stderr).toBe('teamgames: claim: the journal is gone\n');
  });

  it('not relabelled: an error not the SDK\'s, one without an operation, one whose text does not start with it', async () => {
    expect((await failingWith(Object.assign(new Error('claimVoteReward: the terminal is gone'), { operation: 'claimVoteReward' }))).stderr).toBe('teamgames: claimVoteReward: the terminal is gone\n');
    expect((await failingWith(new JournalError('undefined: the journal is gone'))).stderr).toBe('teamgames: undefined: the journal is gone\n');
    expect((await failingWith(new JournalError('the journal is gone', { operation: 'claimVoteReward' }))).stderr).toBe('teamgames: the journal is gone\n');
    expect((await failingWith(new JournalError('claimVoteReward the journal is gone', { operation: 'claimVoteReward' }))).stderr).toBe('teamgames: claimVoteReward the journal is gone\n');
  });

  it("an invalid argument, named as typed; labelled with the command only when the SDK's call named its operation", async () => {
    expect((await failingWith(new InvalidInputError('options.categoryId', 'must be small'))).stderr).toBe('teamgames: invalid --category: must be small (see teamgames --help)\n');
    expect((await failingWith(new InvalidInputError('input.amount', 'must be small', 'claimVoteReward'))).stderr).toBe('teamgames: claim: invalid <amount>: must be small (see teamgames --help)\n');
    expect((await failingWith(new InvalidInputError('input.reward', 'must be short', 'claimVoteReward'))).stderr).toBe('teamgames: claim: invalid <reward>: must be short (see teamgames --help)\n');
    expect((await failingWith(new InvalidInputError('options.other', 'must be known'))).stderr).toBe('teamgames: invalid options.other: must be known (see teamgames --help)\n');
  });
});

describe('the client it builds', () => {
  it('TEAMGAMES_BASE_URL, trimmed; blank is the default', async () => {
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input, init) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return mock.fetch(input, init);
    };
    expect((await run(['catalog'], { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: ' http://127.0.0.1:7 ' }, overrides: { fetch } })).code).toBe(0);
    expect((await run(['catalog'], { env: { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: '  ' }, overrides: { fetch } })).code).toBe(0);
    expect(urls.map((u) => new URL(u).origin)).toEqual(['http://127.0.0.1:7', 'https://api.teamgames.io']);
  });
});

describe('the timeout', () => {
  /** A store that never answers (until the call is aborted). */
  const silent: typeof globalThis.fetch = (_input, init) =>
    new Promise((_resolve, reject) => {
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error), { once: true });
    });

  it("without --timeout, the caller's own timeoutMs holds", async () => {
    const r = await run(['catalog'], { overrides: { fetch: silent, timeoutMs: 20 } });
    expect(r).toMatchObject({ code: EXIT.NETWORK, stdout: '' });
    expect(r.stderr).toMatch(/^teamgames: catalog: .*20 ms/);
  });

  it('--timeout wins over it', async () => {
    const r = await run(['catalog', '--timeout', '30'], { overrides: { fetch: silent, timeoutMs: 60_000 } });
    expect(r.code).toBe(EXIT.NETWORK);
    expect(r.stderr).toMatch(/^teamgames: catalog: .*30 ms/);
  });
});

describe('the progress line, on a terminal', () => {
  const terminal = (keep: (text: string) => void): OutputStream => Object.assign(stream(keep), { isTTY: true });

  it('shows a retry only, then clears it; the caller\'s onEvent still hears every event', async () => {
    let stderr = '';
    const heard: string[] = [];
    let calls = 0;
    const fetch: typeof globalThis.fetch = async (input, init) => (++calls === 1 ? new Response('busy', { status: 503, headers: { 'retry-after': '0' } }) : mock.fetch(input, init));
    const r = await run(['catalog'], { env: { TEAMGAMES_API_KEY: KEY, TERM: 'xterm' }, stderr: terminal((t) => (stderr += t)), overrides: { fetch, retry: 1, onEvent: (e) => void heard.push(e.type) } });
    expect(r.code).toBe(0);
    expect(stderr).toContain('teamgames: catalog: ');
    expect(stderr).toContain('trying again (attempt 2)');
    expect(stderr).not.toContain('NaN');
    expect(heard).toContain('retry');
    expect(heard).toContain('response');
  });

  it('a call without a retry draws nothing, with no onEvent of the caller', async () => {
    let stderr = '';
    const r = await run(['catalog'], { env: { TEAMGAMES_API_KEY: KEY, TERM: 'xterm' }, stderr: terminal((t) => (stderr += t)) });
    expect(r.code).toBe(0);
    expect(stderr).toBe('');
  });
});

describe('--version', () => {
  it('a stdout that cannot be written: said on stderr, unlabelled, then the version', async () => {
    let stderr = '';
    const broken: OutputStream = {
      write(_text, done) {
        done?.(Object.assign(new Error('broken pipe'), { code: 'EPIPE' }));
        return false;
      },
    };
    const r = await run(['--version'], { env: {}, stdout: broken, stderr: stream((t) => (stderr += t)) });
    expect(r.code).toBe(EXIT.OUTPUT_FAILED);
    expect(stderr).toMatch(/^teamgames: could not write to stdout \(.*\); the answer follows on stderr\n/);
    expect(stderr.endsWith(`teamgames ${VERSION}\n`)).toBe(true);
  });
});
