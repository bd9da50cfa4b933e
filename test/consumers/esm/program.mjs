// A plain ESM consumer: import of the main entry and of teamgames-sdk/mock, an in-process
// mock (mock.fetch, no msw), a catalog and a claim, with top-level await.
import { StorefrontClient, isStorefrontError } from 'teamgames-sdk';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';

const apiKey = exampleSeed.servers[0].apiKey;
const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
let agent = '';
const fetch = (url, init) => {
  agent = new Headers(init?.headers).get('user-agent') ?? '';
  return mock.fetch(url, init);
};
const client = new StorefrontClient({ apiKey, fetch, now: mock.clock.now });
const { products } = await client.getCatalog();
mock.addPurchase(apiKey, { playerName: 'Ann', id: 101, quantity: 1 });
const claim = await client.claim('Ann');
if (products.length === 0 || claim.code !== 'SUCCESS') throw new Error(`esm: catalog ${products.length}, claim ${claim.code}`);
if (!/^teamgames-sdk\/\S+ node\/\S+$/.test(agent)) throw new Error(`esm: User-Agent ${agent}`);
if (!isStorefrontError(await client.claim('').catch((error) => error), 'INVALID_INPUT')) throw new Error('esm: the guard is broken');
console.log(`esm: import of both entries: ${products.length} products, a claim, User-Agent ${agent}`);
