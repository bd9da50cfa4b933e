/**
 * `teamgames bridge`, assembled: config → secrets → log → journal → client → sink →
 * the delivery loop → the HTTP API (what the journal holds is given to each player once
 * they join, never at start); one banner line saying what it
 * serves where. `stop()` (SIGTERM, SIGINT) stops accepting requests, stops the loop
 * (work in flight settles), closes the API, the sink and the journal.
 *
 * @module
 */
import type { DestinationStream } from 'pino';
import type { JournalDeps } from '../host/databases.js';
import type { TeamgamesEnv } from '../host/io.js';
import type { Redact } from '../host/redact.js';
import { DEFAULT_BASE_URL, StorefrontClient, VERSION, inspectJournal, type DeliveredItem, type GivenVoteReward, type StorefrontEvent } from '../index.js';
import { playerNameProblem } from '../common/player-name.js';
import { readBridgeConfig, type BridgeConfig, type RconGiveConfig } from './config.js';
import { openBridgeJournal, type BridgeJournal } from './journal.js';
import { createLogger, secretRedactor, type BridgeLogger } from './log.js';
import { createMetrics, type BridgeMetrics } from './metrics.js';
import { Roster } from './roster.js';
import { rconPasswordOf, readSecrets, withSecretProblems, type BridgeSecrets } from './secrets.js';
import { startBridgeServer } from './http/index.js';
import { openRconSink } from './rcon/index.js';
import { createStaffDesk, openStaffPage, recorded } from './staff-page/index.js';
import type { ItemSink } from './sink.js';
import { createWebhookSink } from './webhook/index.js';
import type { DeliveryJournal } from '../journals/contract.js';

/** What the bridge takes from outside, injectable for tests. */
export interface BridgeDeps {
  env: TeamgamesEnv;
  /** Where the log lines go. Default: stdout. */
  logDestination?: DestinationStream;
  /** The fetch of the client and the webhook. Default: the global one. */
  fetch?: typeof globalThis.fetch;
  /** Loads a database driver. Default: `import()`. */
  journalDeps?: JournalDeps;
}

/** A running bridge. */
export interface RunningBridge {
  /** The HTTP API's address, `http://host:port`. */
  url: string;
  /** The staff page's address, when the config has a `staff` section. */
  staffUrl?: string;
  log: BridgeLogger;
  /** Stops it all; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * The bridge's redaction: the secrets read at start, and from the moment it is read an RCON
 * password that differs from the one read at start (a rotated one; the latest only).
 * @internal
 */
export function redaction(secrets: BridgeSecrets): { redact: Redact; hide: (rconPassword: string) => void } {
  const atStart = secretRedactor(secrets);
  // The latest password read, whatever it is: the one read at start is redacted by both.
  let rotated: Redact | undefined;
  return {
    redact: (text) => (rotated === undefined ? atStart(text) : rotated(atStart(text))),
    hide: (rconPassword) => {
      rotated = secretRedactor({ rconPassword });
    },
  };
}

async function openSink(config: BridgeConfig, secrets: BridgeSecrets, journal: DeliveryJournal, log: BridgeLogger, deps: BridgeDeps, hide: (rconPassword: string) => void): Promise<{ sink: ItemSink; where: string }> {
  const { webhook, rcon } = config.give;
  if (webhook !== undefined) {
    const url = new URL(webhook.url);
    return { sink: createWebhookSink(webhook, { token: secrets.token, log, ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }) }), where: `webhook ${url.origin}${url.pathname}` };
  }
  const rconConfig = rcon as RconGiveConfig;
  // Read at each connection as secrets.ts read it at start (its variable or file, checked
  // again: a rotated file is picked up), and redacted from then on.
  const read = rconPasswordOf(rconConfig, deps.env);
  const password = async () => {
    const value = await read();
    hide(value);
    return value;
  };
  // Its own module, loaded only for an RCON bridge (rcon-client with it).
  return { sink: await openRconSink(rconConfig, { journal, log, now: Date.now }, password), where: `rcon ${rconConfig.host}:${rconConfig.port}` };
}

/** Whether a listener's host is loopback only (`localhost`, `::1`, `127.x.y.z`). @internal */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The client's events worth a line: what staff must see, never a request's headers. @internal */
export function logEvent(log: BridgeLogger, event: StorefrontEvent): void {
  switch (event.type) {
    case 'retry':
      log.warn('retrying a call to the store', { operation: event.operation, attempt: event.attempt, reason: event.reason });
      return;
    case 'unverified':
      log.error('unverified window: items may have been claimed without being given; staff must check (teamgames journal windows)', { window: event.window });
      return;
    case 'journalError':
    case 'loopError':
      log.error(`${event.type === 'journalError' ? 'the journal failed' : 'a delivery run failed'}`, { player: event.playerName, error: event.error });
      return;
    case 'stuck':
      log.error(event.reward === undefined ? 'an item keeps failing to be given; marked for staff (teamgames journal pending)' : 'a vote reward keeps failing to be given; marked for staff (teamgames journal pending)', { player: event.playerName, deliveryId: event.deliveryId, attempts: event.attempts, error: event.error });
      return;
    case 'playerBlocked':
      log.warn('deliveries of a player are blocked', { player: event.playerName, code: event.code, runs: event.runs });
      return;
    case 'playerUnblocked':
      log.info('deliveries of a player are unblocked', { player: event.playerName });
      return;
    case 'sharedHintsError':
      if (event.error === undefined) log.info("the journal's checkout hints are read again");
      else log.error("the journal's checkout hints (the shops' expectCheckout) cannot be read: hinted players wait for the routine polls until they can", { error: event.error });
      return;
    case 'delivery':
      if (event.report.granted.length > 0 || event.report.failed.length > 0) log.info('delivery', { player: event.playerName, code: event.report.code, granted: event.report.granted.length, failed: event.report.failed.length, pending: event.report.pending });
      return;
  }
  // Any other event (a request, a response…) is no line.
}

/** Whether a give's error says its outcome is unknown and its window is written (the engine then reports the window). @internal */
export function inWindow(error: unknown): boolean {
  return Number.isFinite((error as { unverified?: { from?: unknown } } | null | undefined)?.unverified?.from);
}

/** The sink's gives, counted and logged: given, not given (pending), or in a window (never "given"). @internal */
export function counted(sink: ItemSink, metrics: { current?: BridgeMetrics }, log: BridgeLogger) {
  const track = async <T extends { deliveryId: string }>(kind: 'purchase' | 'vote', give: (x: T) => Promise<void>, x: T, player: string) => {
    try {
      await give(x);
      metrics.current?.give(kind, 'given');
      log.info(kind === 'purchase' ? 'item given' : 'vote reward given', { player, deliveryId: x.deliveryId });
    } catch (error) {
      if (inWindow(error)) {
        metrics.current?.give(kind, 'unverified');
        log.error(kind === 'purchase' ? 'item NOT confirmed given: its outcome is unknown, a window for staff (teamgames journal windows); never given again' : 'vote reward NOT confirmed given: its outcome is unknown, a window for staff (teamgames journal windows); never given again', { player, deliveryId: x.deliveryId, error });
        throw error;
      }
      metrics.current?.give(kind, 'failed');
      log.warn(kind === 'purchase' ? 'item not given; it stays pending and is tried again' : 'vote reward not given; it stays pending', { player, deliveryId: x.deliveryId, error });
      throw error;
    }
  };
  return {
    give: (item: DeliveredItem) => track('purchase', (i) => sink.give(i), item, item.player_name),
    giveVoteReward: (reward: GivenVoteReward) => track('vote', (r) => sink.giveVoteReward(r), reward, reward.playerName),
  };
}

/** What a poll of the game's player list does: the roster takes the valid names; a change is a debug line. @internal */
export function onPlayerList(roster: Pick<Roster, 'replace'>, log: BridgeLogger): (list: readonly string[]) => void {
  return (list) => {
    const valid = list.filter((name) => playerNameProblem(name) === undefined);
    const { joined, left } = roster.replace(valid);
    if (joined.length > 0 || left.length > 0) log.debug('online players reconciled', { joined: joined.length, left: left.length });
  };
}

/** An epoch-ms time as ISO text; one outside Date's range as its number. */
function iso(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

/** How long a count of open windows is reused (a scrape and a health check close together read the journal once). */
const WINDOW_COUNT_MS = 5_000;

/** The journal's windows staff have not resolved, counted at most every {@link WINDOW_COUNT_MS} (monotonic clock). @internal */
export function windowCounter(journal: DeliveryJournal): () => Promise<number> {
  let last: { at: number; count: Promise<number> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= WINDOW_COUNT_MS) {
      const count = inspectJournal(journal).then((seen) => seen.openWindows.length);
      // A failed read is not kept: the next asks again.
      count.catch(() => (last = undefined));
      last = { at: now, count };
    }
    return last.count;
  };
}

/** Runs the steps pushed so far, last first, once each; a step that fails is logged and the others still run. @internal */
export function undoer(steps: Array<() => Promise<void>>, log: BridgeLogger): () => Promise<void> {
  return async () => {
    for (const step of steps.splice(0).reverse()) await step().catch((error: unknown) => log.error('stopping: a step failed', { error }));
  };
}

/**
 * Starts the bridge the config file describes.
 * @throws UsageError for a bad config or a missing secret; the journal's, the sink's or
 *   the listener's error when one cannot start (everything started before is closed).
 */
export async function startBridge(configPath: string, deps: BridgeDeps): Promise<RunningBridge> {
  // A config with mistakes is named with the missing secrets too: one run, every problem.
  const config = await readBridgeConfig(configPath).catch(async (error: unknown) => {
    throw await withSecretProblems(error, deps.env);
  });
  const secrets = await readSecrets(config, deps.env);
  const { redact, hide } = redaction(secrets);
  const log = createLogger(config.log.level, redact, deps.logDestination);
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = undoer(cleanups, log);
  try {
    const journal: BridgeJournal = await openBridgeJournal(config.journal, secrets.databaseUrl, deps.journalDeps);
    cleanups.push(() => journal.close());
    const desk = createStaffDesk(config.staff);
    const baseUrl = config.baseUrl ?? (deps.env.TEAMGAMES_BASE_URL?.trim() || DEFAULT_BASE_URL);
    const client = new StorefrontClient({
      apiKey: secrets.apiKey,
      baseUrl,
      journal: journal.journal,
      onEvent: (event) => {
        logEvent(log, event);
        desk?.event(event);
      },
      ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }),
    });
    const { sink, where: sinkWhere } = await openSink(config, secrets, journal.journal, log, deps, hide);
    cleanups.push(() => sink.close());
    const metricsRef: { current?: BridgeMetrics } = {};
    const gives = recorded(desk, counted(sink, metricsRef, log));

    // What a crash or a stop left in the journal is given to each player once they are in
    // the game, never before: the loop's first run for a player who joins finishes their
    // purchases and their vote rewards. (Given at start, a command runs
    // for a player who is not there: Minecraft answers "No player was found", the reply
    // counts as given, and the item is gone.) Staff see them meanwhile in `teamgames
    // journal pending`.
    const waiting = await inspectJournal(journal.journal);
    if (waiting.pending.length > 0) log.info('the journal holds items for players not in the game yet; each is given when its player joins', { pending: waiting.pending.length, openWindows: waiting.openWindows.length });
    // A window is an item that may not have reached its player: an error until staff resolve it, at every start.
    if (waiting.openWindows.length > 0) {
      log.error('the journal holds unverified windows staff have not resolved: items that may not have reached their players (teamgames journal windows)', {
        openWindows: waiting.openWindows.length,
        windows: waiting.openWindows.slice(0, 20).map((w) => ({ player: w.playerName, from: iso(w.from), to: iso(w.to), cause: w.cause, command: w.command })),
      });
    }
    const openWindows = windowCounter(journal.journal);

    const loop = client.startDeliveryLoop({ ...config.loop, give: gives.give, giveVoteReward: gives.giveVoteReward });
    cleanups.push(() => loop.stop());
    const metrics = createMetrics(() => loop.stats(), openWindows);
    metricsRef.current = metrics;
    const roster = new Roster(loop);
    if (sink.players !== undefined) {
      const players = sink.players;
      players.start(onPlayerList(roster, log));
      cleanups.push(() => players.stop());
    }
    const server = await startBridgeServer({ loop, roster, metrics, log, journal: journal.journal, token: secrets.token, redact, host: config.listen.host, port: config.listen.port, openWindows });
    // Closed before the loop stops (cleanups run in reverse): no request reaches a stopped loop.
    cleanups.push(() => server.close());
    let staffUrl: string | undefined;
    if (config.staff !== undefined && desk !== undefined) {
      const staffPage = await openStaffPage(config.staff, { desk, journal: journal.journal, loop, online: () => roster.players(), log, sink: sinkWhere, redact });
      cleanups.push(() => staffPage.close());
      staffUrl = staffPage.url;
      log.info(`staff page on ${staffUrl}${isLoopback(config.staff.listen.host) ? ' (loopback: reach it by an SSH tunnel or a TLS reverse proxy)' : ', not loopback: put it behind TLS'}`, { staffPage: staffUrl });
    }

    if (!isLoopback(config.listen.host)) log.warn(`the HTTP API listens on ${config.listen.host}, not loopback: every machine that reaches it can try tokens; keep it behind a firewall`);
    log.info(`teamgames bridge ${VERSION}: HTTP API on ${server.url}, items to ${sinkWhere}, journal ${journal.where}, store ${baseUrl}`, { api: server.url, sink: sinkWhere, journal: journal.where, store: baseUrl });

    let stopped: Promise<void> | undefined;
    return {
      url: server.url,
      ...(staffUrl === undefined ? {} : { staffUrl }),
      log,
      stop: () =>
        (stopped ??= (async () => {
          server.stopAccepting();
          // The loop first: a /claim waiting in it gets its STOPPED answer while the
          // listener still has its connection (closed first, it was reset). Its cleanup
          // below awaits the same stop, and logs it if it failed.
          await loop.stop().catch(() => undefined);
          await cleanup();
          log.info('stopped');
          log.flush();
        })()),
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
