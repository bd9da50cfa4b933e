/**
 * examples/behind-a-proxy.ts, run as a user runs it (a process, `HTTPS_PROXY` set) through
 * a real proxy on 127.0.0.1 to the mock over HTTP: every call goes through the proxy, and
 * what the proxy sees (request lines and headers, what it could log) holds no key in any form.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';
import { startProxy, type TestProxy } from '../test/support/proxy.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const KEY = exampleSeed.servers[0]!.apiKey;
const mock = createMockService({ seed: exampleSeed });
let server: { url: string; close(): Promise<void> };
let proxy: TestProxy;

beforeAll(async () => {
  server = await mock.listen({ port: 0 });
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

it('sends every call through HTTPS_PROXY in a CONNECT tunnel with the proxy login; the proxy sees host and port, never the key', async () => {
  mock.addPurchase(KEY, { playerName: 'Player123', id: 101 });
  // A proxy with a login: undici sends it to the proxy as Proxy-Authorization.
  const proxyUrl = proxy.url.replace('http://', 'http://bridge:s3cret@');
  const env = { ...process.env, HTTPS_PROXY: proxyUrl, TEAMGAMES_API_KEY: KEY, TEAMGAMES_BASE_URL: server.url, NO_COLOR: '1' };
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/behind-a-proxy.ts'], { cwd: root, env, timeout: 30_000 });

  expect(stdout).toContain(`8 products through ${new URL(proxy.url).host}`);
  expect(stdout).toContain('SUCCESS');
  const { host } = new URL(server.url);
  expect(proxy.log.map((e) => `${e.method} ${e.target}`)).toEqual(proxy.log.map(() => `CONNECT ${host}`));
  expect(proxy.log.length).toBeGreaterThan(0);
  for (const entry of proxy.log) expect(entry.headers['proxy-authorization']).toBe(`Basic ${Buffer.from('bridge:s3cret').toString('base64')}`);
  const seen = JSON.stringify(proxy.log);
  for (const secret of [KEY, Buffer.from(KEY).toString('base64'), encodeURIComponent(KEY)]) expect(seen).not.toContain(secret);
}, 40_000);
