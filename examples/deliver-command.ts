/**
 * A crash-safe `/claim` command: `client.deliver` (exactly-once, its default), over a file
 * journal, with a grant that dedupes on `deliveryId`. Nothing a player paid for is lost,
 * even when the process crashes, a grant throws or the claim's answer is lost; nothing is
 * given twice. The guide is docs/delivering-purchases.md ("Never losing an item").
 *
 * Shows: `resumeDeliveries` at startup, `deliver(player, grant)`,
 * granting on the game thread, the game-side dedupe on `deliveryId`, a grant that fails
 * once ("inventory full") and is delivered from the journal by the next `/claim`, a
 * message for every report code, and the staff alerts for an unverified window and a
 * failing journal.
 *
 * Run it against the mock (see docs/testing-with-the-mock.md):
 *
 *   npm run mock -- --port 4010        # in another terminal
 *   export TEAMGAMES_BASE_URL=http://127.0.0.1:4010 TEAMGAMES_API_KEY=demo-key-3f9c2a
 *   curl -s -X POST "$TEAMGAMES_BASE_URL/__mock/purchases" \
 *     -d '{"apiKey":"demo-key-3f9c2a","playerName":"Player123","id":302,"quantity":2}'
 *   TEAMGAMES_SANDBOX=1 npx tsx examples/deliver-command.ts Player123
 *
 * Time: exactly-once mode previews, then waits out the service's 10 s window before it
 * claims, through the `sleep` option (a real `setTimeout` by default). Against the real
 * service, or the mock without TEAMGAMES_SANDBOX, this program therefore takes about
 * half a minute of real time (two commands, each waiting out at least one window). With TEAMGAMES_SANDBOX=1 (only against the mock: the
 * `/__mock/` admin routes exist nowhere else), `sleep` moves the sandbox's clock forward
 * with `POST $TEAMGAMES_BASE_URL/__mock/clock/advance` instead of waiting, and the
 * client's own clock (`now`, which drives its local 10 s guard) moves with it, so the
 * program finishes in well under a second. Never set it in production.
 *
 * The journal is written to a temporary directory and deleted at the end, so the example
 * leaves nothing behind; a real bridge keeps it on durable storage (the default is
 * `./.teamgames-journal.jsonl`) and calls `resumeDeliveries` at every start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileJournal, StorefrontClient, type DeliveredItem, type DeliveryReport, type GrantFunction, type SleepFunction } from 'teamgames-sdk';

// #region game
/** What the bridge needs from the game. */
export interface Game {
  /** True when the delivery with this id was already applied (a durable record in the game). */
  hasDelivery(deliveryId: string): boolean;
  /**
   * Gives `amount` of the item the store calls `productId` and records `deliveryId` as
   * applied, both in one step (one database transaction). Throws when it cannot.
   */
  give(player: string, productId: string, amount: number, deliveryId: string): void;
  /** Sends a chat line to a player. */
  tell(player: string, text: string): void;
  /** Runs `task` on the game thread (the next server tick); game state is not thread-safe. */
  onGameThread(task: () => void): void;
  /** Alerts the staff (a Discord channel, a log the owner reads). */
  alertStaff(text: string): void;
}
// #endregion game

// #region grant
/**
 * The grant function `deliver` calls for each purchase line. It runs the grant on the
 * game thread and settles when the game is done: resolving acknowledges the line in the
 * journal, throwing keeps it there to be granted again later.
 *
 * The `hasDelivery` check makes the effect exactly-once: a crash after `give` but before
 * the journal records the acknowledgement repeats this call with the same `deliveryId`,
 * and the game skips it.
 */
export function grantWith(game: Game): GrantFunction {
  return (item: DeliveredItem) =>
    new Promise<void>((resolve, reject) => {
      game.onGameThread(() => {
        try {
          if (!game.hasDelivery(item.deliveryId)) {
            game.give(item.player_name, item.product_id_string, item.quantity_to_grant, item.deliveryId);
          }
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
}
// #endregion grant

// #region handler
/**
 * Handles `/claim` for one player. Never throws for a service problem: every outcome
 * ends in a message (`report.message` is written for players).
 */
export async function handleClaim(client: StorefrontClient, game: Game, player: string, sleep?: SleepFunction): Promise<DeliveryReport['code']> {
  const report = await client.deliver(player, grantWith(game), sleep ? { sleep } : {});
  game.tell(player, report.message);
  if (report.unverified) {
    // A claim whose answer was lost may have delivered purchases completed in this window
    // that nobody saw: staff compare the store's purchases with the game's deliveryId log.
    const { from, to } = report.unverified;
    game.alertStaff(`check ${player}'s purchases completed between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`);
  }
  if (report.journalError) {
    // Before a claim: nothing was claimed. After one: its items were granted from memory.
    game.alertStaff(`delivery journal failing, deliveries paused: ${report.journalError.message}`);
  }
  switch (report.code) {
    case 'SUCCESS': // everything listed in report.granted is in the player's inventory
    case 'NO_ITEMS':
    case 'ALREADY_CLAIMED':
    case 'RATE_LIMIT': // still refused after the allowed waits (another node keeps claiming)
      break;
    case 'PARTIAL':
      // Some grants threw; those lines stay in the journal and the next /claim (or
      // resumeDeliveries at startup) grants them first.
      for (const { item, error } of report.failed) {
        game.alertStaff(`grant of ${item.deliveryId} (${item.product_name}) to ${player} failed, will retry: ${String(error)}`);
      }
      break;
    case 'OUTCOME_UNKNOWN':
      // The claim went out and its answer was lost. Exactly-once mode journaled what it
      // meant to claim: the next /claim previews and grants whatever the lost claim took,
      // and reports the window in which it may have taken more (report.unverified).
      break;
    case 'PRODUCT_NOT_FOUND': // nothing was delivered: a product someone paid for was removed
    case 'INVALID_PLAYER':
    case 'UNKNOWN':
    case 'ERROR':
      game.alertStaff(`claim for ${player}: ${report.code} ${report.error ? `(${report.error.code}: ${report.error.message})` : report.message}`);
      break;
    default: {
      const unhandled: never = report.code; // the compiler flags a code added in a new version
      game.alertStaff(`claim for ${player}: unexpected report code ${String(unhandled)}`);
    }
  }
  return report.code;
}
// #endregion handler

// #region sandbox-sleep
/**
 * Sandbox only: a `sleep` that, instead of waiting `ms`, moves the mock's clock forward by
 * `ms`, and the `now` to give the client so that its local 10 s guard moves with it.
 */
function sandboxTime(baseUrl: string): { now: () => number; sleep: SleepFunction } {
  let skew = 0;
  return {
    now: () => Date.now() + skew,
    sleep: async (ms) => {
      const response = await fetch(new URL('/__mock/clock/advance', baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ms }),
      });
      if (!response.ok) throw new Error(`the sandbox refused to advance its clock: HTTP ${response.status}`);
      skew += ms;
    },
  };
}
// #endregion sandbox-sleep

// A console "game" so the example runs on its own. Its inventory is full once.
async function main(): Promise<void> {
  const baseUrl = process.env['TEAMGAMES_BASE_URL']; // the sandbox's admin routes live there too
  const sandbox = process.env['TEAMGAMES_SANDBOX'] === '1';
  if (sandbox && !baseUrl) throw new Error('TEAMGAMES_SANDBOX=1 needs TEAMGAMES_BASE_URL pointing at the mock.');
  const time = sandbox && baseUrl ? sandboxTime(baseUrl) : undefined;

  const dir = mkdtempSync(join(tmpdir(), 'teamgames-deliver-'));
  const journal = new FileJournal(join(dir, 'teamgames-journal.jsonl'));

  const applied = new Set<string>(); // in a real game: a table, written with the inventory
  let inventoryFull = true;
  const game: Game = {
    hasDelivery: (id) => applied.has(id),
    give: (player, productId, amount, deliveryId) => {
      if (inventoryFull) {
        inventoryFull = false;
        throw new Error('inventory full');
      }
      applied.add(deliveryId);
      console.log(`[game] give ${player} ${productId} x${amount} (${deliveryId})`);
    },
    tell: (player, text) => console.log(`[chat] to ${player}: ${text}`),
    onGameThread: (task) => setImmediate(task),
    alertStaff: (text) => console.log(`[staff] ${text}`),
  };
  const player = process.argv[2] ?? 'Player123';

  try {
    // The key and the service: TEAMGAMES_API_KEY (required) and TEAMGAMES_BASE_URL.
    const client = new StorefrontClient({ journal, ...(time ? { now: time.now } : {}) });

    // #region startup
    // At startup, before accepting commands: finish what a crash left in the journal.
    const resumed = await client.resumeDeliveries(grantWith(game), time ? { sleep: time.sleep } : {});
    console.log(`startup: resumed ${resumed.granted.length} deliveries, ${resumed.pending} pending`);
    // #endregion startup

    console.log(`> ${player} types /claim`);
    console.log(`  -> ${await handleClaim(client, game, player, time?.sleep)}`);
    console.log(`> ${player} empties their inventory and types /claim again`);
    console.log(`  -> ${await handleClaim(client, game, player, time?.sleep)}`);
    console.log(`journal: ${(await journal.pending()).length} pending`);
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
