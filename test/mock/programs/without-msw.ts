// Run by test/mock/without-msw.test.ts, bundled into a temporary directory where msw
// cannot be resolved: the mock's import, `mock.fetch` and `mock.listen()` must work, and
// `mock.handlers` must say how to install msw. Prints one JSON line; exits by itself.
import { StorefrontClient } from '../../../src/index.js';
import { createMockService, exampleSeed } from '../../../src/mock/index.js';

const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });
const apiKey = exampleSeed.servers[0]!.apiKey;

const inProcess = await new StorefrontClient({ apiKey, fetch: mock.fetch, now: mock.clock.now }).getCatalog();

const server = await mock.listen({ port: 0 });
const overHttp = await new StorefrontClient({ apiKey, baseUrl: server.url }).getCatalog();
await server.close();

let handlersError = '';
try {
  void mock.handlers;
} catch (error) {
  handlersError = (error as Error).message;
}
console.log(JSON.stringify({ inProcess: inProcess.products.length, overHttp: overHttp.products.length, handlersError }));
