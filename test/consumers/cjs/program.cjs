// A plain CommonJS consumer: require() of the main entry and of teamgames-sdk/mock, an
// in-process mock (mock.fetch, no msw), a catalog and a claim.
const { StorefrontClient, isStorefrontError } = require('teamgames-sdk');
const { createMockService, exampleSeed } = require('teamgames-sdk/mock');

async function main() {
  const apiKey = exampleSeed.servers[0].apiKey;
  const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
  let agent = '';
  const fetch = (url, init) => {
    agent = new Headers(init && init.headers).get('user-agent') || '';
    return mock.fetch(url, init);
  };
  const client = new StorefrontClient({ apiKey, fetch, now: mock.clock.now });
  const { products } = await client.getCatalog();
  mock.addPurchase(apiKey, { playerName: 'Ann', id: 101, quantity: 1 });
  const claim = await client.claim('Ann');
  if (products.length === 0 || claim.code !== 'SUCCESS') throw new Error(`cjs: catalog ${products.length}, claim ${claim.code}`);
  if (!/^teamgames-sdk\/\S+ node\/\S+$/.test(agent)) throw new Error(`cjs: User-Agent ${agent}`);
  if (!isStorefrontError(await client.claim('').catch((error) => error), 'INVALID_INPUT')) throw new Error('cjs: the guard is broken');
  console.log(`cjs: require() of both entries: ${products.length} products, a claim, User-Agent ${agent}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
