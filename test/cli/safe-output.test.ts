/**
 * Issue #34 points 3 and 4 on `teamgames catalog|preview|claim`: what the store answers is
 * data, not control (escape sequences, newlines, bidi and invisible characters in product
 * names, messages and errors are shown escaped, one row per product; `--json` keeps the
 * exact values and is valid JSON with nothing a terminal acts on), and a key the store (or
 * a proxy) echoes inside an answer it accepted is in no printed string, in any form.
 * The store is the real mock in process, its answers rewritten by a hostile proxy.
 */
import { encodeApiKey } from 'teamgames-sdk';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { OutputStream } from '../../src/common/output.js';
import { stream } from '../support/cli.js';
import { EXIT, runTeamgames, type TeamgamesEnv } from '../../src/cli/program.js';
import { T0 } from '../support/fixtures.js';

const KEY = exampleSeed.servers[0]!.apiKey;
const mock = createMockService({ seed: exampleSeed, now: T0 });
beforeEach(() => mock.reset());

// Every form the SDK's redaction knows.
const base64 = encodeApiKey(KEY);
const unpadded = base64.replace(/=+$/, '');
const urlSafe = unpadded.replace(/\+/g, '-').replace(/\//g, '_');
const KEY_FORMS = [KEY, encodeURIComponent(KEY), base64, unpadded, encodeURIComponent(base64), urlSafe];

// What a hostile name does on a terminal: clear the screen, a forged row, bidi reordering, a
// C1 CSI (8-bit), an invisible zero-width space, a line separator.
const HOSTILE = 'Dragon\u001b[2J\u001b[H claws\nforged-row 0.00\r\u202eevil\u2066\u009b31m\u200b\u2028end\u007f';
// Anything a terminal acts on, raw.
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;

type Rewrite = (path: string, body: Record<string, unknown>) => void;

/** The mock behind a proxy that rewrites each JSON answer with `rewrite`. */
function proxy(rewrite: Rewrite): typeof fetch {
  return async (input, init) => {
    const response = await mock.fetch(input, init);
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    const body = (await response.json()) as Record<string, unknown>;
    rewrite(path, body);
    return new Response(JSON.stringify(body), { status: response.status, headers: { 'content-type': 'application/json' } });
  };
}

async function run(argv: string[], fetchImpl: typeof fetch, env: TeamgamesEnv = { TEAMGAMES_API_KEY: KEY }) {
  const out = { stdout: '', stderr: '' };
  const code = await runTeamgames(argv, { stdout: stream((t) => (out.stdout += t)), stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, { ...env, TEAMGAMES_BASE_URL: 'http://127.0.0.1:9' }, { retry: 0, fetch: fetchImpl });
  return { code, ...out };
}

const hostileCatalog = proxy((_, body) => {
  const products = body['products'] as Array<Record<string, unknown>>;
  (products[0] as Record<string, unknown>)['name'] = HOSTILE;
});

describe('teamgames: what the store answers is shown, never obeyed', () => {
  it('catalog: a product name with escape sequences, a newline, bidi and invisible characters is one escaped row', async () => {
    const r = await run(['catalog'], hostileCatalog);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain('Dragon\\u001b[2J\\u001b[H claws\\u000aforged-row 0.00\\u000d\\u202eevil\\u2066\\u009b31m\\u200b\\u2028end\\u007f');
    // One row per product: the header, the rule, then exactly one line each.
    const { products } = JSON.parse((await run(['catalog', '--json'], hostileCatalog)).stdout) as { products: unknown[] };
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2 + products.length);
  });

  it('catalog --json: the exact name, valid JSON, nothing raw a terminal acts on', async () => {
    const r = await run(['catalog', '--json'], hostileCatalog);
    expect(r.code).toBe(EXIT.OK);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const body = JSON.parse(r.stdout) as { products: Array<{ name: string }> };
    expect(body.products[0]?.name).toBe(HOSTILE);
  });

  it('preview and claim: the message and product names escaped; --json exact', async () => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
    const hostile = proxy((_, body) => {
      body['message'] = `${HOSTILE} message`;
      const claims = (body['data'] as { claims: Array<Record<string, unknown>> }).claims;
      for (const c of claims) c['product_name'] = HOSTILE;
    });
    const preview = await run(['preview', 'Player123'], hostile);
    expect(preview.code).toBe(EXIT.OK);
    expect(preview.stdout).not.toMatch(RAW_CONTROL);
    expect(preview.stdout).toMatch(/^PREVIEW: Dragon\\u001b\[2J.*\\u007f message\n/);
    mock.clock.advance(10_000);
    const claim = await run(['claim', 'Player123', '--yes', '--json'], hostile);
    expect(claim.stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(claim.stdout)).toMatchObject({ code: 'SUCCESS', message: `${HOSTILE} message`, claims: [{ product_name: HOSTILE }] });
  });

  it('an error carrying the answer: escaped on one line; --json valid', async () => {
    const failing: typeof fetch = async () => new Response(`\u001b[2J\u001b[31mFAKE: all good\u009b0m\n\u202eforged`, { status: 502 });
    const r = await run(['catalog'], failing);
    expect(r.code).toBe(EXIT.FAILURE);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr.split('\n')).toHaveLength(2); // one line and its newline
    const json = await run(['catalog', '--json'], failing);
    expect(json.stderr).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: expect.any(String) });
  });
});

describe('teamgames: a key the store echoes is never printed', () => {
  const echo = proxy((path, body) => {
    const forms = KEY_FORMS.join(' | ');
    if (path.endsWith('/products')) {
      const [first, second] = body['products'] as Array<Record<string, unknown>>;
      Object.assign(first as object, { name: `Echo ${KEY}`, productId: base64, description: forms });
      Object.assign(second as object, { name: urlSafe, image: `https://cdn.example/x.png?k=${encodeURIComponent(base64)}` });
      body['message'] = forms;
      return;
    }
    body['message'] = `accepted key ${KEY} (${base64})`;
    for (const c of (body['data'] as { claims: Array<Record<string, unknown>> }).claims) Object.assign(c, { product_name: `${unpadded} ${urlSafe}`, product_id_string: KEY, [KEY]: base64 });
  });

  const expectNoKey = (text: string) => {
    for (const form of KEY_FORMS) expect(text).not.toContain(form);
  };

  it.each([
    [['catalog']],
    [['catalog', '--json']],
    [['preview', 'Player123']],
    [['preview', 'Player123', '--raw', '--json']],
    [['claim', 'Player123', '--yes']],
    [['claim', 'Player123', '--yes', '--json']],
  ])('%j: in no form, text or JSON', async (argv) => {
    mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
    const r = await run(argv, echo);
    expect(r.code).toBe(EXIT.OK);
    expectNoKey(r.stdout + r.stderr);
    expect(r.stdout).toContain('<redacted>');
    if (argv.includes('--json')) JSON.parse(r.stdout);
  });

  it('with stdout closed, the answer written to stderr holds no key either', async () => {
    const out = { stderr: '' };
    const closed: OutputStream = { write: (_t, done) => (done?.(Object.assign(new Error('EPIPE'), { code: 'EPIPE' })), false) };
    for (const json of [false, true]) {
      const code = await runTeamgames(['catalog', ...(json ? ['--json'] : [])], { stdout: closed, stderr: stream((t) => (out.stderr += t)), interactive: false, confirm: async () => false }, { TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: 'http://127.0.0.1:9' }, { retry: 0, fetch: echo });
      expect(code).toBe(EXIT.OUTPUT_FAILED);
    }
    expect(out.stderr).toContain('<redacted>');
    expectNoKey(out.stderr);
  });

  it('the key from TEAMGAMES_API_KEY_FILE (its first line): used, and redacted the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-key-'));
    try {
      await writeFile(join(dir, 'key'), `${KEY}\n`, { mode: 0o600 });
      mock.addPurchase(KEY, { playerName: 'Player123', id: 301, quantity: 1 });
      const r = await run(['preview', 'Player123', '--json'], echo, { TEAMGAMES_API_KEY_FILE: join(dir, 'key') });
      expect(r.code).toBe(EXIT.OK);
      expectNoKey(r.stdout + r.stderr);
      expect(JSON.parse(r.stdout)).toMatchObject({ code: 'PREVIEW', message: 'accepted key <redacted> (<redacted>)' });
      const missing = await run(['catalog'], echo, { TEAMGAMES_API_KEY_FILE: join(dir, 'absent') });
      expect(missing).toMatchObject({ code: EXIT.USAGE, stderr: `teamgames: TEAMGAMES_API_KEY_FILE: cannot read ${join(dir, 'absent')} (ENOENT) (see teamgames --help)\n` });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(process.platform === 'win32')('a key file other users may read or change is refused, named with its mode and the fix; its group may read it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tg-key-'));
    try {
      const path = join(dir, 'key');
      await writeFile(path, `${KEY}\n`);
      for (const mode of [0o644, 0o602, 0o604]) {
        await chmod(path, mode);
        const r = await run(['catalog'], echo, { TEAMGAMES_API_KEY_FILE: path });
        expect(r).toMatchObject({ code: EXIT.USAGE, stderr: `teamgames: TEAMGAMES_API_KEY_FILE: cannot read ${path} (other users may read or change it, mode 0${mode.toString(8)}: chmod o-rwx ${path}) (see teamgames --help)\n` });
        expectNoKey(r.stdout + r.stderr);
      }
      await chmod(path, 0o640);
      expect((await run(['catalog'], echo, { TEAMGAMES_API_KEY_FILE: path })).code).toBe(EXIT.OK);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
