/**
 * A consumer's program, copied into a fresh project that installed the packed tarball.
 * The same file is type-checked and run as TS node16 (ESM), TS bundler (ESM) and TS
 * commonjs (node10 resolution, compiled to `require`), and run as is by Bun and Deno.
 * It uses the main entry and `teamgames-sdk/mock`, so types from both must resolve.
 *
 * Environment: CONSUMER_KIND names the project (printed), CONSUMER_RUNTIME the runtime
 * (`node`, `bun`, `deno`) whose name the client's User-Agent must carry.
 */
import { existsSync, readFileSync } from 'node:fs';
import process from 'node:process';
import {
  FileJournal,
  StorefrontClient,
  isStorefrontError,
  type Catalog,
  type ClaimResult,
  type DeliveredItem,
  type DeliveryReport,
  type StorefrontClientOptions,
} from 'teamgames-sdk';
import { createMockService, exampleSeed, type MockSeed, type MockService, type PurchaseRow } from 'teamgames-sdk/mock';

const kind = process.env['CONSUMER_KIND'] ?? 'consumer';
const runtime = process.env['CONSUMER_RUNTIME'] ?? 'node';

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`${kind}: ${what}`);
}

/** The headers a fetch call carries, whether the SDK passes a `Request` or a URL and init. */
function headersOf(input: string | URL | Request, init?: RequestInit): Headers {
  const headers = new Headers(input instanceof Request ? input.headers : undefined);
  new Headers(init?.headers).forEach((value, name) => headers.set(name, value));
  return headers;
}

// The types of both entries are the SDK's, not `any` (each line is an error, or tsc fails).
// @ts-expect-error an apiKey is a string
export const notAKey: StorefrontClientOptions = { apiKey: 42 };
// @ts-expect-error a seed has servers
export const noServers: MockSeed = {};

async function main(): Promise<void> {
  const apiKey = exampleSeed.servers[0]!.apiKey;
  const mock: MockService = createMockService({ seed: exampleSeed, now: Date.parse('2026-01-01T00:00:00Z') });

  // The in-process mock: mock.fetch answers without network or msw. The wrapper keeps
  // the User-Agent the SDK sends, which must name the runtime it runs on.
  const agents: string[] = [];
  const fetch: typeof globalThis.fetch = (input, init) => {
    agents.push(headersOf(input, init).get('user-agent') ?? '');
    return mock.fetch(input, init);
  };
  const client = new StorefrontClient({ apiKey, fetch, now: mock.clock.now });

  const catalog: Catalog = await client.getCatalog();
  check(catalog.products.length > 0, 'the catalog is empty');
  const bought: PurchaseRow = mock.addPurchase(apiKey, { playerName: 'Ann', id: 101, quantity: 2 });
  const claim: ClaimResult = await client.claim('Ann');
  check(claim.code === 'SUCCESS' && claim.claims.length === 1, `claim: ${JSON.stringify(claim)}`);
  check(bought.catalogid === 101, 'addPurchase returned another product');
  check(agents.length === 2, `the custom fetch saw ${agents.length} calls, not 2`);
  check(
    agents.every((agent) => new RegExp(`^teamgames-sdk/\\S+ ${runtime}/\\S+$`).test(agent)),
    `the User-Agent must name the runtime (${runtime}/<version>): ${JSON.stringify(agents[0])}`,
  );
  const refused = await new StorefrontClient({ apiKey: 'wrong-key', fetch: mock.fetch }).getCatalog().then(
    () => 'no error',
    (error: unknown) => error,
  );
  check(isStorefrontError(refused, 'AUTHENTICATION_FAILED'), `a wrong key: ${String(refused)}`);
  console.log(`${kind}: in process (mock.fetch): ${catalog.products.length} products, a claim, User-Agent ${agents[0]}`);

  // The mock over real HTTP.
  const server = await mock.listen({ port: 0 });
  try {
    const overHttp = new StorefrontClient({ apiKey, baseUrl: server.url, now: mock.clock.now });
    mock.clock.advance(10_000);
    const { products } = await overHttp.getCatalog();
    mock.addPurchase(apiKey, { playerName: 'Bob', id: 302, quantity: 1 });
    const result = await overHttp.claim('Bob');
    check(result.code === 'SUCCESS', `claim over HTTP: ${result.code}`);
    console.log(`${kind}: over HTTP (mock.listen at ${server.url}): ${products.length} products, a claim`);
  } finally {
    await server.close();
  }

  // deliver with a FileJournal: a grant that fails stays in the journal file, and a new
  // client on the reopened journal grants it.
  const path = `${process.cwd()}/journal-${runtime}.jsonl`;
  const sleep = async (ms: number): Promise<void> => {
    mock.clock.advance(ms);
  };
  const given: string[] = [];
  let refuse = true;
  const give = (item: DeliveredItem): void => {
    // The Shark pack (catalog id 302, product id 385) fails the first time.
    if (item.product_id_string === '385' && refuse) throw new Error('the game is saving');
    given.push(`${item.product_id_string} x${item.quantity_to_grant}`);
  };
  mock.addPurchase(apiKey, { playerName: 'Cid', id: 101, quantity: 1 });
  mock.addPurchase(apiKey, { playerName: 'Cid', id: 302, quantity: 3 });
  const journal = new FileJournal(path);
  const first = new StorefrontClient({ apiKey, fetch: mock.fetch, now: mock.clock.now, journal });
  const report: DeliveryReport = await first.deliver('Cid', give, { sleep });
  check(report.code === 'PARTIAL' && report.granted.length === 1 && report.pending === 1, `deliver: ${report.code}, pending ${report.pending}`);
  await journal.close();
  check(existsSync(path) && readFileSync(path, 'utf8').includes('Cid'), `the journal ${path} holds nothing for Cid`);

  refuse = false;
  const reopened = new FileJournal(path);
  check((await reopened.pending('Cid')).length === 1, 'the reopened journal lost the pending grant');
  const second = new StorefrontClient({ apiKey, fetch: mock.fetch, now: mock.clock.now, journal: reopened });
  const resumed = await second.resumeDeliveries(give, { sleep });
  check(resumed.granted.length === 1 && resumed.pending === 0, `resume: granted ${resumed.granted.length}, pending ${resumed.pending}`);
  await reopened.close();
  check(given.length === 2, `granted ${JSON.stringify(given)}`);
  console.log(`${kind}: deliver with a FileJournal: ${given.join(', ')} (one after reopening the journal)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
