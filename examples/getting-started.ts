/**
 * Getting started: list the catalog and claim for one player. The program of
 * docs/getting-started.md.
 *
 * Run it against the mock (no account, no key needed):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a npx tsx examples/getting-started.ts
 *
 * Against your store: set TEAMGAMES_API_KEY to the raw key from the TeamGames dashboard
 * and leave TEAMGAMES_BASE_URL unset.
 */
import { StorefrontClient } from 'teamgames-sdk';

// The raw key from TEAMGAMES_API_KEY (an InvalidInputError naming it when unset), the
// service from TEAMGAMES_BASE_URL (unset: https://api.teamgames.io).
const client = new StorefrontClient();

const { products } = await client.getCatalog();
for (const p of products) {
  const price = p.priceWithSale === 0 ? 'free' : p.priceWithSale.toFixed(2);
  console.log(`#${p.id}  ${p.name}  ${price}`);
}

const result = await client.claim('Player123');
if (result.code === 'SUCCESS') {
  for (const t of result.claims) console.log(`give ${t.player_name} ${t.product_id_string} x${t.quantity_to_grant}`);
} else {
  console.log(`${result.code}: ${result.message}`);
}
