/**
 * Automatic delivery: purchases reach online players without a `/claim`, exactly once.
 * `client.startDeliveryLoop` previews each online player about every `pollIntervalMs`
 * and delivers what a preview shows (journaled intents, the claim when the service's 10 s
 * window allows, `give` for each item); a `/claim` typed by a player goes through the
 * same loop. The guide is docs/delivering-purchases.md ("Automatic delivery").
 *
 * Shows: `startDeliveryLoop` over a file journal, a `give` that dedupes on `deliveryId`,
 * `join`/`leave` from the game's events, a purchase arriving with nobody typing anything,
 * a `/claim` answered in one call, `stats()`, the loop's events, and `stop()`.
 *
 * Run it against the mock (see docs/testing-with-the-mock.md):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   export TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a
 *   TEAMGAMES_SANDBOX=1 npx tsx examples/auto-delivery.ts
 *
 * With TEAMGAMES_SANDBOX=1 (only against the mock: the `/__mock/` admin routes exist
 * nowhere else) the program makes the purchases itself, through the sandbox: one for
 * Player123 while they are offline, one for Alice while she is online. Without it, it
 * delivers whatever Player123 and Alice have bought on your store.
 *
 * Time: about 21 s of real time. Player123's purchase is seen by the preview sent when
 * they join and claimed one service window (10 s) later, with nobody typing anything.
 * Alice's `/claim` is exactly once too: a preview now (her last call, at her join, is a
 * window old), the claim one window later. A purchase made while a player is online
 * arrives at their next poll (`pollIntervalMs`, 30 s by default) plus one window.
 *
 * The journal is written to a temporary directory and deleted at the end; a real bridge
 * keeps it on durable storage and starts the loop at every start (what a crash left
 * pending is given on the player's next join).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileJournal, StorefrontClient, type DeliveredItem, type DeliveryLoop, type StorefrontEvent } from 'teamgames-sdk';

// #region claim-handler
/**
 * The game's `/claim` command. `loop.claim` resolves for every outcome (`OFFLINE` for a
 * player the loop does not hold online, `STOPPED` while the bridge shuts down); it rejects
 * only for a name the SDK refuses or a call from inside `give` for the same player (an
 * `InvalidInputError`), which the catch turns into a line for the player.
 */
export async function onClaimCommand(loop: DeliveryLoop, tell: (player: string, text: string) => void, player: string): Promise<void> {
  try {
    const report = await loop.claim(player);
    tell(player, report.message);
  } catch (error) {
    tell(player, 'Your purchases could not be checked right now; they are safe and will be delivered automatically.');
    console.error(`/claim for ${JSON.stringify(player)}: ${String(error)}`);
  }
}
// #endregion claim-handler

const baseUrl = process.env['TEAMGAMES_BASE_URL']; // the sandbox's admin routes live there too
const sandbox = process.env['TEAMGAMES_SANDBOX'] === '1';

// A console "game": what it applied, by deliveryId (in a real game: a table, written in the
// same transaction as the item, so a grant repeated after a crash is skipped).
const applied = new Set<string>();
const give = (item: DeliveredItem): void => {
  if (applied.has(item.deliveryId)) return; // given already (the process died before the journal heard of it)
  applied.add(item.deliveryId);
  console.log(`[game] give ${item.player_name} ${item.product_id_string} x${item.quantity_to_grant} (${item.deliveryId})`);
};
const tell = (player: string, text: string) => console.log(`[chat] to ${player}: ${text}`);

// What the loop reports: deliveries, unverified windows (staff must look), its errors.
let delivered: (player: string, granted: number) => void = () => {};
const onEvent = (event: StorefrontEvent): void => {
  if (event.type === 'delivery') delivered(event.playerName, event.report.granted.length);
  else if (event.type === 'unverified') console.log(`[staff] check ${event.window.playerName}'s purchases between ${new Date(event.window.from).toISOString()} and ${new Date(event.window.to).toISOString()}`);
  else if (event.type === 'stuck') console.log(`[staff] ${event.deliveryId} for ${event.playerName} failed ${event.attempts} times: ${String(event.error)}`);
  else if (event.type === 'playerBlocked') console.log(`[staff] deliveries to ${event.playerName} are blocked: ${event.code}`);
  else if (event.type === 'loopError') console.log(`[log] delivery loop: ${String(event.error)}`);
};

/** Resolves to the number of items of the first delivery to `player`, or 0 after `ms`. */
function deliveryTo(player: string, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(0), ms);
    delivered = (name, granted) => {
      if (name !== player || granted === 0) return;
      clearTimeout(timer);
      resolve(granted);
    };
  });
}

/** A purchase, through the sandbox's admin route (the mock only). */
async function buyInSandbox(playerName: string, id: number, quantity: number): Promise<void> {
  const apiKey = process.env['TEAMGAMES_API_KEY'];
  const response = await fetch(new URL('/__mock/purchases', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiKey, playerName, id, quantity }),
  });
  if (!response.ok) throw new Error(`the sandbox refused the purchase: HTTP ${response.status}`);
}

async function main(): Promise<void> {
  if (sandbox && !baseUrl) throw new Error('TEAMGAMES_SANDBOX=1 needs TEAMGAMES_BASE_URL pointing at the mock.');
  const dir = mkdtempSync(join(tmpdir(), 'teamgames-auto-'));
  const journal = new FileJournal(join(dir, 'teamgames-journal.jsonl'));
  try {
    // #region loop
    // The key and the service: TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL.
    const client = new StorefrontClient({ journal, onEvent });
    // Each online player previewed every 30 s (the default), at most 10 calls a second (the default).
    const loop = client.startDeliveryLoop({ give, pollIntervalMs: 30_000, maxCallsPerSecond: 10 });

    if (sandbox) {
      console.log('> Player123, offline, buys 2 Shark packs on the store');
      await buyInSandbox('Player123', 302, 2);
    }
    // The game's join and quit events.
    const arrived = deliveryTo('Player123', 25_000);
    for (const player of ['Player123', 'Alice', 'Bob']) {
      console.log(`> ${player} joins`);
      loop.join(player);
    }
    // Nobody types anything: the preview at the join saw the purchase, the claim follows one window later.
    const items = await arrived;
    console.log(items > 0 ? `  (${items} item(s) delivered to Player123, no /claim typed)` : '  (nothing for Player123 within 25 s: nothing bought?)');

    if (sandbox) {
      console.log('> Alice buys an Abyssal whip on the store');
      await buyInSandbox('Alice', 101, 1);
    }
    console.log('> Alice types /claim');
    const started = performance.now();
    await onClaimCommand(loop, tell, 'Alice');
    console.log(`  (answered in ${Math.round(performance.now() - started)} ms: a preview, then the claim one window later)`);

    console.log('> Bob quits');
    loop.leave('Bob');
    // #endregion loop

    const { online, calls, previews, claims, granted, intervalMs } = loop.stats();
    console.log(`loop: ${online} online, ${calls} calls (${previews} previews, ${claims} claims), ${granted} granted, interval ${intervalMs / 1000} s`);
    // On shutdown: no call and no grant after this; what is pending stays in the journal.
    await loop.stop();
    console.log(`journal: ${(await journal.pending()).length} pending`);
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
