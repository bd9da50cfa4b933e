/**
 * `teamgames`'s own decisions, in process against the mock's fetch (issue #46 point 1):
 * which argument is a subcommand, each command's arguments and options (every refusal's
 * words), the positive integers it takes, the texts of each answer (an empty catalog, a
 * sale, a rate limit's wait, an unknown code, waiting rows, vote rows), and how a failure
 * becomes an exit code and a line (or a JSON line).
 */
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { EXIT, USAGE } from '../../src/cli/program.js';
import { VERSION } from '../../src/index.js';
import { against, answering } from '../support/cli.js';
import { T0 } from '../support/fixtures.js';

const KEY = exampleSeed.servers[0]!.apiKey;
const mock = createMockService({ seed: exampleSeed, now: T0 });
beforeEach(() => mock.reset());

const run = against(mock, KEY);

describe('the command line', () => {
  it.each([
    [[], 'missing command (catalog, preview, claim, vote, journal or bridge)'],
    [['nope'], 'unknown command "nope" (catalog, preview, claim, vote, journal or bridge)'],
    [['preview'], 'preview: missing <player>'],
    [['vote', 'Steve'], 'vote: missing <reward>'],
    [['vote', 'Steve', '1'], 'vote: missing <amount>'],
    [['catalog', 'extra'], 'catalog: unexpected argument "extra"'],
    [['preview', 'Steve', 'extra'], 'preview: unexpected argument "extra"'],
    [['catalog', '--raw'], 'catalog: --raw does not apply to this command'],
    [['preview', 'Steve', '--yes'], 'preview: --yes does not apply to this command'],
    [['claim', 'Steve', '--category', '1'], 'claim: --category does not apply to this command'],
    [['vote', 'Steve', '1', '1', '--raw'], 'vote: --raw does not apply to this command'],
    [['catalog', '--category', '0'], '--category must be a positive integer, got "0"'],
    [['catalog', '--category', '01'], '--category must be a positive integer, got "01"'],
    [['catalog', '--category', '1.5'], '--category must be a positive integer, got "1.5"'],
    [['catalog', '--timeout=0'], '--timeout must be a positive integer, got "0"'],
    [['vote', 'Steve', '1', '0'], '<amount> must be a positive integer, got "0"'],
  ])('%j: "%s", exit 2', async (argv, message) => {
    const r = await run(argv);
    expect(r).toEqual({ code: EXIT.USAGE, stdout: '', stderr: `teamgames: ${message} (see teamgames --help)\n` });
  });

  it('--help and --version answer without a key; -h and -v too', async () => {
    for (const flag of ['--help', '-h']) expect(await run([flag], { env: {} })).toEqual({ code: 0, stdout: USAGE, stderr: '' });
    for (const flag of ['--version', '-v']) expect(await run([flag], { env: {} })).toEqual({ code: 0, stdout: `teamgames ${VERSION}\n`, stderr: '' });
  });

  it('no key: exit 2, in JSON too', async () => {
    const message = 'TEAMGAMES_API_KEY is not set (the raw key of the game server, from the TeamGames dashboard; or TEAMGAMES_API_KEY_FILE, a file holding it)';
    expect(await run(['catalog'], { env: { TEAMGAMES_API_KEY: '  ' } })).toEqual({ code: 2, stdout: '', stderr: `teamgames: ${message} (see teamgames --help)\n` });
    expect(JSON.parse((await run(['catalog', '--json'], { env: {} })).stderr)).toEqual({ error: 'USAGE', message });
  });

  it('"journal" and "bridge" are subcommands only as the first argument that is not an option', async () => {
    const help = await run(['--json', 'journal', '--help'], { env: {} });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: teamgames journal/);
    expect((await run(['bridge', '--help'], { env: {} })).stdout).toMatch(/^Usage: teamgames bridge/);
    // After `--`, or after another command, it is an argument.
    expect((await run(['--', 'journal'], { env: {} })).stderr).toBe('teamgames: unknown command "journal" (catalog, preview, claim, vote, journal or bridge) (see teamgames --help)\n');
    expect((await run(['preview', 'journal', 'x'], { env: {} })).stderr).toBe('teamgames: preview: unexpected argument "x" (see teamgames --help)\n');
  });
});

describe('the answers', () => {
  it('an empty catalog says so; a free product and a sale are noted', async () => {
    const empty = await run(['catalog'], { overrides: answering({ status: 'SUCCESS', message: 'ok', data: [] }) });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe('No products on sale.\n');
    const r = await run(['catalog']);
    expect(r.stdout).toMatch(/\bFREE\b/);
    expect(r.stdout).toMatch(/sale, was \d+\.\d\d/);
  });

  it('a rate limit says how long to wait, in whole seconds rounded up', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 301, quantity: 1 });
    expect((await run(['claim', 'Steve', '--yes'])).code).toBe(0);
    mock.addPurchase(KEY, { playerName: 'Steve', id: 301, quantity: 1 });
    const limited = await run(['claim', 'Steve', '--yes']);
    expect(limited.stdout).toMatch(/^RATE_LIMIT: .*\nTry again in \d+ s\.\n$/);
  });

  it('a preview lists the rows as waiting, not delivered; a claim as delivered', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 301, quantity: 1 });
    const preview = await run(['preview', 'Steve']);
    expect(preview.stdout).toMatch(/^PREVIEW: .*\n\nWaiting for Steve:\nproduct/);
    mock.clock.advance(11_000);
    const claim = await run(['claim', 'Steve', '--yes']);
    expect(claim.stdout).toMatch(/^SUCCESS: .*\n\nDelivered to Steve \(grant these in game now\):\nproduct/);
  });

  it('a claim a person declines changes nothing: exit 1', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 301, quantity: 1 });
    const r = await run(['claim', 'Steve'], { confirm: async () => false });
    expect(r).toEqual({ code: EXIT.FAILURE, stdout: '', stderr: 'teamgames: claim cancelled; nothing changed\n' });
    expect(mock.purchases(KEY, 'Steve')[0]!.deliverystatus).not.toBe('Delivered');
  });

  it('vote: "ALL" (any case) is all', async () => {
    const none = await run(['vote', 'Steve', '1', 'ALL']);
    expect(none.code).toBe(0);
    expect(none.stdout).not.toBe('');
  });
});

describe('failures', () => {
  it('a claim sent without an answer: exit 5, labelled with the command', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 301, quantity: 1 });
    mock.faults.add({ operation: 'claim', kind: 'dropAfter', times: 1 });
    const r = await run(['claim', 'Steve', '--yes']);
    expect(r.code).toBe(EXIT.OUTCOME_UNKNOWN);
    expect(r.stderr).toMatch(/^teamgames: claim: /);
    expect(r.stderr).not.toContain('(see teamgames --help)');
  });

  it('an unexpected answer: exit 1, its JSON line names the error code', async () => {
    const r = await run(['catalog', '--json'], { overrides: { fetch: async () => new Response('nope', { status: 500 }) } });
    expect(r.code).toBe(EXIT.FAILURE);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: expect.stringMatching(/^[A-Z_]+$/), message: expect.stringMatching(/^catalog: /) });
  });

  it('a network failure: exit 4, its JSON line names the error code', async () => {
    const r = await run(['catalog', '--json'], { overrides: { fetch: async () => Promise.reject(new TypeError('boom')) } });
    expect(r.code).toBe(EXIT.NETWORK);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: 'NETWORK_ERROR', message: expect.stringMatching(/^catalog: /) });
  });
});

describe('the exact texts', () => {
  it('the catalog: one row per product, aligned, a note for a sale and for a free product only', async () => {
    expect(await run(['catalog'])).toEqual({ code: 0, stdout: "id   productId           name                price  units     note\n---  ------------------  ------------------  -----  --------  ---------------\n101  4151                Abyssal whip        9.99   1\n102  11802               Armadyl godsword    19.99  1         sale, was 24.99\n103  13652               Dragon claws        14.99  1\n201  rank_donator        Donator rank        10.00  1\n202  rank_super_donator  Super donator rank  25.00  1\n301  995                 Coins (10M)         2.50   10000000\n302  385                 Shark pack          1.99   100\n303  starter_pack        Starter pack        0.00   1         FREE\n", stderr: '' });
  });

  it('a vote: its messages, then the rewards as a table; too few points said under the messages', async () => {
    mock.recordVote(KEY, 'Steve', 3);
    expect(await run(['vote', 'Steve', '1', 'all'])).toEqual({ code: 0, stdout: "You have claimed 3 x Vote Mystery Box.\nreward  name              give  points left  votes this month  points ever\n------  ----------------  ----  -----------  ----------------  -----------\n1       Vote Mystery Box  3     0            1                 3\n", stderr: '' });
    expect(await run(['vote', 'Steve', '2', '1'])).toEqual({ code: 0, stdout: "Insufficient Points: you have 0 vote points and Double XP scroll costs 5 per unit.\nNot enough vote points.\n", stderr: '' });
  });

  it('a preview with --raw: the rows waiting, then the purchase rows with every column', async () => {
    mock.addPurchase(KEY, { playerName: 'Steve', id: 302, quantity: 2 });
    expect(await run(['preview', 'Steve', '--raw'])).toEqual({ code: 0, stdout: "PREVIEW: You have 1 purchase waiting to be claimed.\n\nWaiting for Steve:\nproduct  name        grant  bought  unit price\n-------  ----------  -----  ------  ----------\n385      Shark pack  200    2       1.99\n\nPurchase rows:\ninvoice  productid  quantity  givequantity  paymentstatus  deliverystatus  created\n-------  ---------  --------  ------------  -------------  --------------  ------------------------\n1        385        2         200           Paid           Undelivered     2026-01-01T00:00:00.000Z\n", stderr: '' });
  });

  it("a failure is labelled with the command the user ran, not the SDK's method", async () => {
    const refused = async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    expect(await run(['catalog'], { overrides: { fetch: refused } })).toEqual({ code: 4, stdout: '', stderr: 'teamgames: catalog: could not reach api.teamgames.io/api/v2/client/global/products (ECONNREFUSED)\n' });
    expect(await run(['preview', 'Steve'], { overrides: { fetch: async () => new Response('oops', { status: 500 }) } })).toEqual({ code: 1, stdout: '', stderr: 'teamgames: preview: api.teamgames.io/api/v4/store/transaction/update answered HTTP 500\n' });
  });

  it('an answer with a code the SDK does not know: said, with the code, and that nothing was granted', async () => {
    const r = await run(['preview', 'Steve'], { overrides: answering({ status: 'SUCCESS', code: 'NEW_THING', message: 'hm' }) });
    expect(r).toEqual({ code: 0, stdout: 'UNKNOWN: hm\nUnrecognised answer from the service (code "NEW_THING"). Nothing was granted.\n', stderr: '' });
  });

  it('a failure that is neither a usage error nor the SDK\'s: exit 1, FAILURE in JSON', async () => {
    const { code, ...out } = await run(['claim', 'Steve', '--json'], { confirm: async () => Promise.reject(new Error('the terminal is gone')) });
    expect(out).toEqual({ stdout: '', stderr: '{"error":"FAILURE","message":"the terminal is gone"}\n' });
  });

  it('an invalid player of a vote is named as typed', async () => {
    expect(await run(['vote', 'P'.repeat(65), '1', '1'])).toEqual({ code: 2, stdout: '', stderr: 'teamgames: vote: invalid <player>: must be at most 64 characters, got 65 (see teamgames --help)\n' });
  });
});
