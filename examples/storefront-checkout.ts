/**
 * A storefront checkout endpoint: catalog → cart → checkout → redirect, with a
 * player-facing answer for every checkout outcome. This is the function a shop page,
 * a launcher or a Discord bot calls; `examples/web-shop/` wraps it in a whole page.
 *
 * Run it against the mock:
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a npx tsx examples/storefront-checkout.ts
 */
import { pathToFileURL } from 'node:url';
import { InvalidInputError, StorefrontClient, isStorefrontError, type CartItem, type Product } from 'teamgames-sdk';

// #region answer
/** What the shop shows: send the player somewhere, or tell them something. */
export type CheckoutAnswer = { kind: 'redirect'; url: string; transactionId: string } | { kind: 'message'; text: string; transactionId?: string };

/** Checks a cart out for `username` and turns every outcome into plain words. */
export async function checkoutCart(client: StorefrontClient, username: string, cart: CartItem[], coupon?: string): Promise<CheckoutAnswer> {
  try {
    const result = await client.checkout({ username, items: cart, ...(coupon ? { coupon } : {}) });
    switch (result.outcome) {
      case 'PAYMENT_REQUIRED':
        return { kind: 'redirect', url: result.redirect, transactionId: result.transactionId };
      case 'FREE':
        return { kind: 'message', text: `Your order is free. Log in as ${username} and type ::claim to receive it.`, transactionId: result.transactionId };
      case 'INVALID_STOCK':
        return { kind: 'message', text: 'Some items are no longer available or not in stock any more. Please review your cart.' };
      case 'COUPON_REJECTED':
        return { kind: 'message', text: result.error }; // the service's text is meant for the player
      case 'BASKET_REJECTED':
        return { kind: 'message', text: `This cart cannot be paid in one payment${result.message ? ` (${result.message})` : ''}. Remove some items and try again.` };
      case 'GATEWAY_ERROR':
        return { kind: 'message', text: `The store cannot take this payment: ${result.message}` };
      case 'UNKNOWN':
        // A status this SDK version does not know (the service may add some): never a redirect.
        console.error(`checkout answered status ${result.status}, code ${result.code || '(none)'}: ${result.message}`);
        return { kind: 'message', text: 'The store could not take this order. Nothing was charged; please tell the server staff.' };
    }
  } catch (error) {
    if (error instanceof InvalidInputError) return { kind: 'message', text: `Please check your order: ${error.rule} (${error.argument}).` };
    // Wrong key, store unreachable …: the player cannot fix it; log it for the owner.
    console.error(`checkout failed: ${isStorefrontError(error) ? error.code : String(error)}`);
    return { kind: 'message', text: 'The store is unavailable right now. Nothing was charged; please try again later.' };
  }
}
// #endregion answer

/** A price label: the sale price, the list price struck when on sale, or "free". */
export function priceLabel(p: Product): string {
  if (p.priceWithSale === 0) return 'free';
  return p.priceWithSale < p.priceOriginal ? `${p.priceWithSale.toFixed(2)} (was ${p.priceOriginal.toFixed(2)})` : p.priceWithSale.toFixed(2);
}

async function main(): Promise<void> {
  const client = new StorefrontClient(); // TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL

  // #region catalog
  const { products } = await client.getCatalog();
  for (const p of products) console.log(`#${p.id} ${p.name}: ${priceLabel(p)}`);
  // #endregion catalog

  // The player's cart: the two cheapest paid products, one unit each.
  const cart = products
    .filter((p) => p.priceWithSale > 0)
    .sort((a, b) => a.priceWithSale - b.priceWithSale)
    .slice(0, 2)
    .map((p) => ({ id: p.id, quantity: 1 }));
  if (cart.length === 0) {
    console.log('Nothing for sale.');
    return;
  }

  const answer = await checkoutCart(client, 'Player123', cart);
  console.log(answer.kind === 'redirect' ? `Send the player to ${answer.url}` : answer.text);

  const free = products.find((p) => p.priceWithSale === 0);
  if (free) {
    const answer = await checkoutCart(client, 'Player123', [{ id: free.id, quantity: 1 }]);
    console.log(`${free.name}: ${answer.kind === 'message' ? answer.text : answer.url}`);
  }
  console.log(`A bad coupon: ${JSON.stringify(await checkoutCart(client, 'Player123', cart, 'NOT-A-COUPON'))}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
