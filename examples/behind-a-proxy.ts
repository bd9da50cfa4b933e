/**
 * Behind a proxy: a bridge whose server reaches the internet only through an HTTP proxy.
 * Node's `fetch` ignores `HTTPS_PROXY` without a word, so the client gets a `fetch` that
 * goes through the proxy: Node's own `fetch` with undici's `ProxyAgent` (undici is the
 * library Node's `fetch` is built on). On Node 24 and 22.21+, `NODE_USE_ENV_PROXY=1`
 * makes Node read `HTTPS_PROXY` itself, and none of this is needed.
 *
 *   npm install teamgames-sdk undici@7     # undici 7 on Node 20; undici 8 needs Node 22.19+
 *   HTTPS_PROXY=http://proxy.internal:3128 TEAMGAMES_API_KEY=<API_KEY> npx tsx behind-a-proxy.mts
 *
 * Each call to https://api.teamgames.io is a `CONNECT api.teamgames.io:443` tunnel: the
 * proxy sees the host and the port, never the path, the headers, the key or the answers
 * (TLS runs inside the tunnel). A login for the proxy goes in its URL
 * (`http://user:pass@proxy.internal:3128`) and reaches the proxy only, as
 * `Proxy-Authorization`. CI runs this program through a proxy on 127.0.0.1 against the
 * mock (examples/behind-a-proxy.test.ts).
 */
import { StorefrontClient } from 'teamgames-sdk';
import { ProxyAgent } from 'undici';

const proxyUrl = process.env['HTTPS_PROXY'] ?? process.env['https_proxy'];
if (proxyUrl === undefined) throw new Error('set HTTPS_PROXY to the proxy, e.g. http://proxy.internal:3128');

// #region proxy
// One agent for the whole program: it keeps its tunnels open between calls.
const dispatcher = new ProxyAgent(proxyUrl);
const client = new StorefrontClient({
  // Node's fetch, sent through the proxy; the SDK's timeouts and retries are unchanged.
  fetch: (input, init) => fetch(input, { ...init, dispatcher } as RequestInit),
});
// #endregion proxy

const { products } = await client.getCatalog();
console.log(`${products.length} products through ${new URL(proxyUrl).host}`);
const result = await client.claim('Player123');
console.log(`${result.code}: ${result.message}`);
await dispatcher.close();
