/**
 * The README's quick start, run by Bun and Deno against the mock over HTTP (the packed
 * package's `teamgames-mock`, started by test/consumers/run.sh). Environment:
 * TEAMGAMES_API_KEY, TEAMGAMES_BASE_URL (the mock's URL).
 */
import process from 'node:process';
import { StorefrontClient } from 'teamgames-sdk';

const apiKey = process.env['TEAMGAMES_API_KEY']!;
const baseUrl = process.env['TEAMGAMES_BASE_URL']!;

// The test's setup: Player123 buys two Abyssal whips (the mock's admin route).
const bought = await fetch(`${baseUrl}/__mock/purchases`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ apiKey, playerName: 'Player123', id: 101, quantity: 2 }),
});
if (!bought.ok) throw new Error(`quick start: the mock refused the purchase: HTTP ${bought.status}`);

// The README's quick start as written: the key and the mock's URL from the environment.
const client = new StorefrontClient();

const { products } = await client.getCatalog();
console.log(products.map((p) => `${p.name}: ${p.priceWithSale}`));

const result = await client.claim('Player123');
if (result.code === 'SUCCESS') {
  for (const t of result.claims) console.log(`give ${t.player_name} ${t.product_id_string} x${t.quantity_to_grant}`);
} else {
  console.log(result.message); // NO_ITEMS, RATE_LIMIT, ALREADY_CLAIMED … all player-facing
  throw new Error(`quick start: the claim answered ${result.code}, not SUCCESS`);
}
