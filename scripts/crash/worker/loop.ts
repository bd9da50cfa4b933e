/**
 * A `--loop` crash worker: a node of the game that runs `client.startDeliveryLoop` instead
 * of calling `deliver`. The orchestrator tells it who is online here (the config's
 * `online`, then `{"join":…}` / `{"leave":…}` lines on stdin, applied in order), and its
 * players type /claim now and then (`loop.claim`). Its `give` notes, at the moment it is
 * called, whether this node holds the player as online: a call for a player it does not
 * is logged `give-offline` (the campaign's granted_offline) and recorded on the grant.
 *
 * Time: the mock's clock runs CLOCK_SPEED (10) times real time, moved by the orchestrator
 * (scripts/crash/presence.ts), and this node knows it through the clock file (clock.ts).
 * The loop's timers (`platformTimers`, which the loop and its budget read at each call)
 * are set here to that clock: `now()` is the client's clock, and a timer fires once that
 * clock has moved its delay, plus the most this node's view may lag the mock's (one step
 * of the orchestrator), so a 10 s window the loop waits out has passed on the mock too.
 *
 * The drain: every player online, the loop running, until the journal holds no work and
 * the mock lists nothing paid and undelivered.
 *
 * @module
 */
import { platformTimers } from '../../../src/delivery/loop/call-budget.js';
import type { DeliveredItem, DeliveryJournal, DeliveryLoop, StorefrontClient } from '../../../src/index.js';
import { inspectJournal } from '../../../src/index.js';
import { now } from './clock.js';
import type { PresenceCommand, WorkerLoop } from './config.js';
import { config, die, log, random, readLaterLines } from './context.js';
import { undelivered } from './players.js';

type Grant = (item: DeliveredItem, online?: boolean) => Promise<void>;

/** The loop's clock and timers on the mock's clock (see the module's note). */
function followMockClock(settings: WorkerLoop): void {
  platformTimers.now = now;
  platformTimers.setTimeout = (run, ms) => {
    const due = now() + Math.max(0, ms) + settings.marginMs;
    const handle: { real?: ReturnType<typeof setTimeout> } = {};
    const arm = (): void => {
      const left = due - now();
      if (left <= 0) return run();
      handle.real = setTimeout(arm, Math.max(1, Math.ceil(left / settings.speed)));
    };
    handle.real = setTimeout(arm, Math.max(1, Math.ceil((due - now()) / settings.speed)));
    return handle;
  };
  platformTimers.clearTimeout = (handle) => {
    const real = (handle as { real?: ReturnType<typeof setTimeout> } | undefined)?.real;
    if (real !== undefined) clearTimeout(real);
  };
}

/** The node's loop: presence from the orchestrator, /claim now and then, until killed (or, draining, until nothing is left). */
export async function runLoop(client: StorefrontClient, journal: DeliveryJournal, grantFn: Grant): Promise<void> {
  const settings = config.loop as WorkerLoop;
  followMockClock(settings);
  const online = new Set<string>();
  let offlineGives = 0;
  /** deliveryIds whose give succeeded in this process: the SDK promises never to give them again (#33 point 4). */
  const given = new Set<string>();
  const give = (item: DeliveredItem): Promise<void> => {
    // Read when give is called (the loop's own check runs in the same turn).
    const here = online.has(item.player_name);
    if (!here) {
      offlineGives += 1;
      log(`give-offline ${item.deliveryId} ${JSON.stringify(item.player_name)} (online here: ${JSON.stringify([...online])})`);
    }
    if (given.has(item.deliveryId)) log(`give-again ${item.deliveryId} ${JSON.stringify(item.player_name)} (its give already succeeded in this process)`);
    log(`give ${item.deliveryId} ${JSON.stringify(item.player_name)}`);
    const granted = grantFn(item, here);
    // The campaign counts the successful gives per deliveryId and process (count.ts).
    granted.then(
      () => {
        given.add(item.deliveryId);
        log(`give-ok ${item.deliveryId} ${JSON.stringify(item.player_name)}`);
      },
      () => undefined,
    );
    return granted;
  };
  const loop: DeliveryLoop = client.startDeliveryLoop({
    give,
    pollIntervalMs: settings.pollIntervalMs,
    maxCallsPerSecond: settings.maxCallsPerSecond,
    ...(settings.claimMode === undefined ? {} : { claimMode: settings.claimMode }),
  });
  const apply = (command: PresenceCommand): void => {
    if ('join' in command) {
      online.add(command.join);
      loop.join(command.join);
      log(`join ${JSON.stringify(command.join)}`);
    } else {
      online.delete(command.leave);
      loop.leave(command.leave);
      log(`leave ${JSON.stringify(command.leave)}`);
    }
  };
  for (const player of settings.online) apply({ join: player });
  readLaterLines((line) => apply(JSON.parse(line) as PresenceCommand));
  log(`loop started: online ${online.size}, poll ${settings.pollIntervalMs} ms, ${settings.maxCallsPerSecond} calls/s, claimMode ${settings.claimMode ?? 'default'}`);

  if (config.drain) return drainLoop(loop, journal, () => offlineGives);
  // Players type /claim (loop.claim, in the loop's claimMode).
  for (;;) {
    const [lo, hi] = settings.claimEveryMs;
    await new Promise((resolve) => setTimeout(resolve, lo + Math.floor(random() * (hi - lo + 1))));
    const here = [...online];
    if (here.length === 0) continue;
    const player = here[Math.floor(random() * here.length)] as string;
    log(`claim ${JSON.stringify(player)}`);
    loop.claim(player).then(
      (report) => log(`claim ${JSON.stringify(player)} ${report.code ?? ''} granted=${report.granted.length} failed=${report.failed.length} pending=${report.pending}`),
      (error: unknown) => log(`claim ${JSON.stringify(player)} ended: ${error instanceof Error ? error.message : String(error)}`),
    );
    const s = loop.stats();
    log(`stats online=${s.online} calls=${s.calls} previews=${s.previews} claims=${s.claims} granted=${s.granted} pending=${s.pending} unverified=${s.unverified} errors=${s.errors} max_calls_in_1s=${s.maxCallsInOneSecond}`);
  }
}

/** Everyone is online here (the config): waits until the journal holds no work and the mock lists nothing undelivered. */
async function drainLoop(loop: DeliveryLoop, journal: DeliveryJournal, offlineGives: () => number): Promise<void> {
  const startedAt = performance.now();
  for (let round = 1; ; round++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const { pending, openWindows, resolvedWindows } = await inspectJournal(journal, { now: now() });
    const rows = await undelivered();
    if (round % 8 === 0 || (pending.length === 0 && rows.length === 0)) {
      log(`drain round ${round}: journal=${pending.length} (and ${openWindows.length + resolvedWindows.length} windows) undelivered=${rows.length}`);
    }
    if (pending.length === 0 && rows.length === 0) break;
    if (performance.now() - startedAt > 180_000) {
      die(`the loop's drain did not converge in 180 s: journal ${JSON.stringify(pending.slice(0, 5))}, undelivered ${JSON.stringify(rows.slice(0, 5))}`);
    }
  }
  await loop.stop();
  const s = loop.stats();
  log(`drain loop stopped: calls=${s.calls} previews=${s.previews} claims=${s.claims} granted=${s.granted} errors=${s.errors} give-offline=${offlineGives()}`);
}
