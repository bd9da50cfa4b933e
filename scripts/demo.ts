/**
 * `npm run demo`: the whole storefront flow against the embedded mock over real HTTP,
 * printed as a transcript. No network, no key: the mock listens on 127.0.0.1 with the
 * example seed, and the client shares the mock's clock, so the 10 s claim window is
 * waited out instantly.
 */
import { ClaimOutcomeUnknownError, StorefrontClient, type ClaimResult, type Product } from 'teamgames-sdk';
import { createMockService, exampleSeed } from 'teamgames-sdk/mock';

const API_KEY = exampleSeed.servers[0]!.apiKey; // a fake key, only valid against the mock
const PLAYER = 'Player123';

const mock = createMockService({ seed: exampleSeed, now: Date.parse('2026-06-01T12:00:00Z') });
const { url, close } = await mock.listen({ port: 0 });
const client = new StorefrontClient({ apiKey: API_KEY, baseUrl: url, now: mock.clock.now });

const money = (n: number) => `$${n.toFixed(2)}`;
const step = (title: string) => console.log(`\n== ${title}`);
const say = (text: string) => console.log(`   ${text}`);

function showProducts(products: readonly Product[]) {
  for (const p of products) {
    const sale = p.priceWithSale < p.priceOriginal ? `  (sale: was ${money(p.priceOriginal)})` : '';
    const price = p.priceWithSale === 0 ? 'FREE' : money(p.priceWithSale);
    say(`#${p.id} ${p.name.padEnd(22)} ${price.padStart(8)}${sale}`);
  }
}

/** What a game server does with a claim result: grant lines, or a message to the player. */
function handleClaim(player: string, result: ClaimResult) {
  say(`code=${result.code}  status=${result.status}`);
  switch (result.code) {
    case 'SUCCESS':
      for (const t of result.claims) say(`grant> ::give ${t.player_name} ${t.product_id_string} x${t.quantity_to_grant}   (${t.product_name})`);
      say(`tell ${player}: "${result.message}"`);
      break;
    case 'PREVIEW':
      for (const t of result.claims) say(`waiting: ${t.product_name} x${t.quantity_to_grant} (product ${t.product_id_string})`);
      break;
    case 'RATE_LIMIT':
      say(`tell ${player}: "${result.message}" (retry in ${result.retryAfterMs} ms, ${result.source} guard)`);
      break;
    default:
      say(`tell ${player}: "${result.message}"`);
  }
}

try {
  console.log(`TeamGames SDK demo: mock service listening at ${url} (sandbox key ${API_KEY}, clock frozen at ${new Date(mock.clock.now()).toISOString()})`);

  step('Catalog: everything on sale now (disabled and not-yet-listed products are hidden)');
  const catalog = await client.getCatalog();
  showProducts(catalog.products);

  step('Catalog: category 1 (Weapons)');
  showProducts((await client.getCatalog({ categoryId: 1 })).products);

  step('Checkout with an expired coupon');
  const rejected = await client.checkout({ username: PLAYER, items: [{ id: 102, quantity: 1 }], coupon: 'WINTER2024' });
  say(`outcome=${rejected.outcome}${rejected.outcome === 'COUPON_REJECTED' ? `  tell player: "${rejected.error}"` : ''}`);

  step('Checkout: 1 Armadyl godsword (20% sale) + 2 Shark packs, coupon SPRING (10% off)');
  const checkout = await client.checkout({
    username: PLAYER,
    items: [
      { id: 102, quantity: 1 },
      { id: 302, quantity: 2 },
    ],
    coupon: 'SPRING',
  });
  if (checkout.outcome !== 'PAYMENT_REQUIRED') throw new Error(`expected PAYMENT_REQUIRED, got ${checkout.outcome}`);
  say(`outcome=${checkout.outcome}  total=${typeof checkout['total'] === 'number' ? money(checkout['total']) : '?'}  transactionId=${checkout.transactionId}`);
  say(`send the player to: ${checkout.redirect}`);

  step('The player pays at the redirect (the mock pay page)');
  const page = await fetch(checkout.redirect);
  await page.text();
  say(`GET pay page -> HTTP ${page.status}; purchase rows now: ${mock.purchases(API_KEY, PLAYER).map((r) => `${r.productname}=${r.paymentstatus}/${r.deliverystatus}`).join(', ')}`);

  step(`In game, ${PLAYER} types ::claim — first a preview (changes nothing)`);
  handleClaim(PLAYER, await client.previewClaim(PLAYER));

  step('Claim right after the preview: the 10 s window is met (no request sent)');
  handleClaim(PLAYER, await client.claim(PLAYER));

  step('10 s later on the shared clock: the claim goes through');
  mock.clock.advance(10_000);
  handleClaim(PLAYER, await client.claim(PLAYER));

  step('Claim again after another 10 s: nothing new');
  mock.clock.advance(10_000);
  handleClaim(PLAYER, await client.claim(PLAYER));

  step('A new player takes the free Starter pack, then claims with the legacy v3 endpoint');
  const free = await client.checkout({ username: 'NewPlayer', items: [{ id: 303, quantity: 1 }] });
  say(`outcome=${free.outcome} (nothing to pay; claimable at once)`);
  handleClaim('NewPlayer', await client.claimLegacy('NewPlayer'));

  step('Out of stock: 3 sets of Dragon claws when 2 are left');
  const stock = await client.checkout({ username: PLAYER, items: [{ id: 103, quantity: 3 }] });
  say(`outcome=${stock.outcome}${stock.outcome === 'INVALID_STOCK' ? `  products affected: ${stock.productsAffected.length}` : ''}`);

  step(`Votes: ${PLAYER} votes 3 times, then spends all points on Vote Mystery Boxes`);
  mock.recordVote(API_KEY, PLAYER, 3);
  const vote = await client.claimVoteReward({ player: PLAYER, reward: '1', amount: 'all' });
  for (const r of vote.rewards) say(`grant> ::give ${PLAYER} vote_reward_${r.reward_id} x${r.give_amount}   (${r.reward_name}; ${r.vote_points} points left, ${r.total_points} ever)`);
  const broke = await client.claimVoteReward({ player: PLAYER, reward: '2', amount: 1 });
  say(`Double XP scroll: insufficientPoints=${broke.insufficientPoints}  "${broke.messages[0] ?? ''}"`);

  console.log('\nDemo complete.');
} catch (error) {
  if (error instanceof ClaimOutcomeUnknownError) console.error('claim outcome unknown:', error.message);
  process.exitCode = 1;
  throw error;
} finally {
  await close();
}
