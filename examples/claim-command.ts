/**
 * A `/claim` command for a game-server bridge: the player types `/claim` (or `::claim`)
 * in game, the bridge asks TeamGames what they paid for, and grants it on the game thread.
 *
 * Shows: one shared client (its local guard is the per-player cooldown), a message for
 * every claim code, granting each line, and recovering from a lost answer
 * (`ClaimOutcomeUnknownError`) with a preview instead of a blind retry.
 *
 * Run it against the mock (see docs/testing-with-the-mock.md):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   export TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a
 *   curl -s -X POST "$TEAMGAMES_BASE_URL/__mock/purchases" \
 *     -d '{"apiKey":"demo-key-3f9c2a","playerName":"Player123","id":302,"quantity":2}'
 *   npx tsx examples/claim-command.ts Player123
 *
 * `examples/claim-command.test.ts` tests this handler with the in-process mock.
 */
import { pathToFileURL } from 'node:url';
import { ClaimOutcomeUnknownError, StorefrontClient, isStorefrontError, type ClaimResult, type Transaction } from 'teamgames-sdk';

// #region game
/** What the bridge needs from the game: give items and talk to a player. */
export interface Game {
  /** Gives `amount` of the item the store calls `productId` to a player. Runs on the game thread. */
  give(player: string, productId: string, amount: number): void;
  /** Sends a chat line to a player. */
  tell(player: string, text: string): void;
  /** Runs `task` on the game thread (the next server tick); game state is not thread-safe. */
  onGameThread(task: () => void): void;
  /** Alerts the staff (a Discord channel, a log the owner reads). */
  alertStaff(text: string): void;
}
// #endregion game

// #region handler
/**
 * Handles `/claim` for one player. Never throws: every outcome ends in a message.
 * The client's local guard (one claim per player per 10 s) is the cooldown, so a
 * spammed command never reaches the service.
 */
export async function handleClaimCommand(client: StorefrontClient, game: Game, player: string): Promise<ClaimResult['code'] | 'ERROR'> {
  let result: ClaimResult;
  try {
    result = await client.claim(player);
  } catch (error) {
    if (error instanceof ClaimOutcomeUnknownError) {
      // The request went out but the answer was lost: the items may already be marked
      // delivered. Never claim again blindly; tell the player and let staff reconcile
      // with a preview (see reconcileLostClaim below).
      game.tell(player, 'The store did not answer in time. Staff have been told; do not worry, your purchase is safe.');
      game.alertStaff(`claim for ${player}: outcome unknown (${error.reason}); run reconcileLostClaim after 10 s`);
      return 'ERROR';
    }
    // Bad key, store unreachable …: nothing was delivered.
    game.tell(player, 'The store is unavailable right now. Please try again in a few minutes.');
    game.alertStaff(`claim for ${player} failed: ${isStorefrontError(error) ? `${error.code}: ${error.message}` : String(error)}`);
    return 'ERROR';
  }

  switch (result.code) {
    case 'SUCCESS':
      // The service has marked these delivered: grant them all now, on the game thread.
      game.onGameThread(() => {
        for (const item of result.claims) grant(game, item);
        game.tell(player, result.message);
      });
      break;
    case 'PREVIEW': // only when asking for a preview; listed for completeness
      game.tell(player, `${result.claims.length} purchase(s) waiting.`);
      break;
    case 'NO_ITEMS':
    case 'ALREADY_CLAIMED':
      game.tell(player, result.message);
      break;
    case 'RATE_LIMIT':
      game.tell(player, `Please wait ${Math.ceil(result.retryAfterMs / 1000)} s before claiming again.`);
      break;
    case 'INVALID_PLAYER':
      game.tell(player, 'The store does not accept this name. Please contact staff.');
      break;
    case 'PRODUCT_NOT_FOUND':
      // Nothing was delivered; the store owner removed a product someone paid for.
      game.tell(player, 'One of your purchases needs staff attention; nothing was lost.');
      game.alertStaff(`claim for ${player}: PRODUCT_NOT_FOUND (${result.message})`);
      break;
    case 'UNKNOWN':
      // An answer this SDK version does not know: never grant on it.
      game.tell(player, 'The store gave an unexpected answer. Staff have been told.');
      game.alertStaff(`claim for ${player}: unknown answer ${result.serverCode} "${result.message}"`);
      break;
  }
  return result.code;
}

/** One purchase line: `quantity_to_grant` already multiplies units per purchase. */
function grant(game: Game, item: Transaction): void {
  game.give(item.player_name, item.product_id_string, item.quantity_to_grant);
}
// #endregion handler

// #region reconcile
/**
 * After a `ClaimOutcomeUnknownError`, once the 10 s window has passed: what is still
 * pending was not delivered by the lost call (the player can `/claim` it again); what
 * disappeared was delivered by it and must be granted by hand from the staff's records.
 */
export async function reconcileLostClaim(client: StorefrontClient, player: string): Promise<Transaction[]> {
  const preview = await client.previewClaim(player);
  return preview.code === 'PREVIEW' ? preview.claims : [];
}
// #endregion reconcile

// A console "game" so the example runs on its own.
async function main(): Promise<void> {
  const client = new StorefrontClient(); // TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL
  const game: Game = {
    give: (player, productId, amount) => console.log(`[game] give ${player} ${productId} x${amount}`),
    tell: (player, text) => console.log(`[chat] to ${player}: ${text}`),
    onGameThread: (task) => setImmediate(task),
    alertStaff: (text) => console.log(`[staff] ${text}`),
  };
  const player = process.argv[2] ?? 'Player123';

  console.log(`> ${player} types /claim`);
  console.log(`  -> ${await handleClaimCommand(client, game, player)}`);
  await new Promise((resolve) => setImmediate(resolve)); // let the game tick run
  console.log(`> ${player} types /claim again at once`);
  console.log(`  -> ${await handleClaimCommand(client, game, player)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
