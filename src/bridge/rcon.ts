/**
 * The bridge's RCON sink: each item given by running its command template(s) over the
 * Source RCON protocol, at most once and never silently. A command cannot be deduped by
 * the game, so the sink journals that it is about to send (the line's `sending` mark)
 * before it sends, and a command whose outcome is unknown (the connection lost after its
 * bytes were written, no reply in time, or a mark found at the next give) becomes an
 * `unknownCommand` window for staff, and is never sent again.
 *
 * @module
 * @internal
 */
import { readFile } from 'node:fs/promises';
import type { DeliveredItem, GivenVoteReward, JournalEntry, JournalLine, JournalVoteReward, JournalWindow } from '../index.js';
import { RconLink, messageOf, type Sent } from './rcon-link.js';
import { listPlayers } from './rcon-players.js';
import { PURCHASE_PLACEHOLDERS, VOTE_PLACEHOLDERS, render, templateProblem, templatesFor } from './rcon-template.js';
import type { ItemSink, RconGiveConfig, RconSinkDeps } from './rcon-types.js';

/**
 * A give the sink refuses for good (no template, a value that could break out of the
 * command): nothing was sent, the item stays pending and is marked for staff at once
 * (`staff`: the engine sets the line's `lastError.stuck`).
 * @internal
 */
export class RconStaffError extends Error {
  override readonly name = 'RconStaffError';
  readonly staff = true;
}

/** The deterministic id of an item's `unknownCommand` window: a crash between writing it and acknowledging the item never writes two. @internal */
export function commandWindowId(deliveryId: string): string {
  return `window:command:${deliveryId}`;
}

/** One item to give, purchase or vote reward alike. */
interface Job {
  deliveryId: string;
  player: string;
  /** What the item is, for logs and errors: `product 12` or `vote reward 1`. */
  what: string;
  templates: readonly string[] | undefined;
  values: Record<string, string>;
  /** The item's journal record in `entries`, or one made from the item when the journal has none. */
  record(entries: readonly JournalEntry[]): JournalLine | JournalVoteReward;
}

/**
 * The RCON sink of `teamgames bridge` (`give.rcon`): gives purchases and vote rewards by
 * RCON commands, and lists the players online from the `list` command when
 * `players.source` is `"list"`.
 *
 * @throws Error naming the template that is wrong (an unknown placeholder, a control character).
 * @internal
 */
export function createRconSink(config: RconGiveConfig, deps: RconSinkDeps): ItemSink {
  checkTemplates(config.commands, 'give.rcon.commands', PURCHASE_PLACEHOLDERS);
  if (config.voteCommands !== undefined) checkTemplates(config.voteCommands, 'give.rcon.voteCommands', VOTE_PLACEHOLDERS);
  const link = new RconLink({ host: config.host, port: config.port, timeoutMs: config.timeoutMs, password: () => passwordOf(config) }, deps.log);
  return rconSinkOn(link, config, deps);
}

/** What the sink needs of its connection ({@link RconLink}; a scripted one in tests). @internal */
export interface SinkLink {
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  connect(): Promise<void>;
  send(command: string): Promise<Sent>;
  close(): Promise<void>;
}

/** The sink over a connection already made ({@link createRconSink}'s, or a test's). @internal */
export function rconSinkOn(link: SinkLink, config: RconGiveConfig, deps: RconSinkDeps): ItemSink {
  const sink = new RconSink(config, deps, link);
  const players = config.players?.source === 'list' ? listPlayers(link, { listCommand: config.players.listCommand ?? 'list', intervalMs: config.players.intervalMs ?? 10_000 }, deps.log) : undefined;
  return {
    give: (item) => sink.give(item),
    giveVoteReward: (reward) => sink.giveVoteReward(reward),
    ...(players === undefined ? {} : { players }),
    async close() {
      await players?.stop();
      await link.close();
    },
  };
}

function checkTemplates(table: Readonly<Record<string, readonly string[]>>, field: string, placeholders: readonly string[]): void {
  for (const [key, templates] of Object.entries(table)) {
    if (!Array.isArray(templates) || templates.length === 0) throw new Error(`${field}["${key}"]: must be a non-empty list of command templates`);
    templates.forEach((template: unknown, i) => {
      const problem = templateProblem(template, placeholders);
      if (problem !== undefined) throw new Error(`${field}["${key}"][${i}]: ${problem}`);
    });
  }
}

/** The RCON password: given, else from its environment variable, else from its file (one trailing newline dropped). */
async function passwordOf(config: RconGiveConfig): Promise<string> {
  if (config.password !== undefined) return config.password;
  const fromEnv = config.passwordEnv === undefined ? undefined : process.env[config.passwordEnv];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (config.passwordFile !== undefined) return (await readFile(config.passwordFile, 'utf8')).replace(/\r?\n$/, '');
  throw new Error(`RCON: no password (set ${config.passwordEnv ?? 'the variable named by give.rcon.passwordEnv'} or give.rcon.passwordFile)`);
}

class RconSink {
  readonly #config: RconGiveConfig;
  readonly #deps: RconSinkDeps;
  readonly #link: SinkLink;
  /** Windows this process must write and could not yet (the journal refused): their items are never sent again. */
  readonly #unwritten = new Map<string, JournalWindow>();

  constructor(config: RconGiveConfig, deps: RconSinkDeps, link: SinkLink) {
    this.#config = config;
    this.#deps = deps;
    this.#link = link;
  }

  give(item: DeliveredItem): Promise<void> {
    const { deliveryId, ...transaction } = item;
    return this.#give({
      deliveryId,
      player: item.player_name,
      what: `product ${item.product_id}`,
      templates: templatesFor(this.#config.commands, [String(item.product_id), item.product_id_string]),
      values: { player: item.player_name, quantity: String(item.quantity_to_grant), productId: item.product_id_string, productName: item.product_name, deliveryId },
      // One entry per deliveryId in a journal: the one with the item's id is its line.
      record: (entries) => (entries.find((e) => e.deliveryId === deliveryId) as JournalLine | undefined) ?? { deliveryId, playerName: item.player_name, state: 'claimed', item: transaction, recordedAt: this.#deps.now() },
    });
  }

  giveVoteReward(reward: GivenVoteReward): Promise<void> {
    const { deliveryId, playerName, recovered, ...row } = reward;
    return this.#give({
      deliveryId,
      player: playerName,
      what: `vote reward ${reward.reward_id}`,
      templates: templatesFor(this.#config.voteCommands, [String(reward.reward_id)]),
      values: { player: playerName, amount: String(reward.give_amount), rewardId: String(reward.reward_id), rewardName: reward.reward_name, deliveryId },
      record: (entries) =>
        (entries.find((e) => e.deliveryId === deliveryId) as JournalVoteReward | undefined) ?? {
          deliveryId,
          playerName,
          state: 'voteClaimed',
          reward: row,
          recordedAt: this.#deps.now(),
          ...(recovered === undefined ? {} : { recovered }),
        },
    });
  }

  /** The at-most-once protocol of one item (the bridge's plan, "RCON"). */
  async #give(job: Job): Promise<void> {
    const { journal, log } = this.#deps;
    const windowId = commandWindowId(job.deliveryId);
    const unwritten = this.#unwritten.get(windowId);
    if (unwritten !== undefined) return this.#writeWindow(job, unwritten);
    const entries = await journal.pending(job.player);
    const record = job.record(entries);
    if (entries.some((e) => e.deliveryId === windowId)) {
      log.warn('RCON command outcome already in a window; not sent again', { deliveryId: job.deliveryId, window: windowId });
      return;
    }
    const rendered = job.templates === undefined ? { refused: `no command template for ${job.what} and no "*"` } : render(job.templates, job.values);
    if (record.sending !== undefined) {
      // A command for it may have run before a crash (or a lost acknowledgement): never again.
      const commands = 'commands' in rendered ? rendered.commands : [`(not renderable now: ${rendered.refused})`];
      return this.#writeWindow(job, this.#window(job, record.sending, commands));
    }
    if ('refused' in rendered) {
      log.error('RCON command refused; nothing sent, marked for staff', { deliveryId: job.deliveryId, player: job.player, reason: rendered.refused });
      throw new RconStaffError(`RCON: nothing sent for ${job.what}: ${rendered.refused}`);
    }
    await this.#link.exclusive(() => this.#send(job, record, rendered.commands));
  }

  /** Connect, mark, send: holding the connection, so no `list` poll runs in between. */
  async #send(job: Job, record: JournalLine | JournalVoteReward, commands: readonly string[]): Promise<void> {
    const { journal, log, now } = this.#deps;
    await this.#link.connect();
    const sending = now();
    await journal.append([{ ...record, sending }]);
    for (const [i, command] of commands.entries()) {
      const sent = await this.#link.send(command);
      if ('reply' in sent) {
        log.info('RCON command run', { deliveryId: job.deliveryId, player: job.player, command, reply: sent.reply.slice(0, 200) });
        continue;
      }
      if ('notSent' in sent && i === 0) {
        // Certainly not sent: the mark goes, and the item is given again later.
        await journal.append([record]).catch((error: unknown) => log.warn('RCON mark not removed; the next give makes it a window', { deliveryId: job.deliveryId, error: messageOf(error) }));
        throw new Error(`RCON: not sent for ${job.what}: ${sent.notSent.message}`);
      }
      log.error('RCON command outcome unknown; a window for staff, never sent again', { deliveryId: job.deliveryId, player: job.player, command, error: messageOf('notSent' in sent ? sent.notSent : sent.unknown) });
      return this.#writeWindow(job, this.#window(job, sending, commands));
    }
  }

  #window(job: Job, from: number, commands: readonly string[]): JournalWindow {
    const now = this.#deps.now();
    const node = this.#deps.journal.nodeId;
    return {
      deliveryId: commandWindowId(job.deliveryId),
      playerName: job.player,
      state: 'unverified',
      from,
      to: Math.max(now, from),
      cause: 'unknownCommand',
      recordedAt: now,
      command: commands.join('\n'),
      ...(node === undefined ? {} : { node }),
    };
  }

  /** Writes the window; resolves once it is durable (the item is then acknowledged), else keeps it in memory and throws. */
  async #writeWindow(job: Job, window: JournalWindow): Promise<void> {
    try {
      await this.#deps.journal.append([window]);
    } catch (error) {
      this.#unwritten.set(window.deliveryId, window);
      this.#deps.log.error('RCON window not written; the item is never sent again by this process', { deliveryId: job.deliveryId, window: window.deliveryId, error: messageOf(error) });
      throw new Error(`RCON: the outcome of ${job.what} is unknown and its window could not be written (retried; never sent again): ${messageOf(error)}`);
    }
    this.#unwritten.delete(window.deliveryId);
    this.#deps.log.warn('RCON command outcome unknown: window written for staff', { deliveryId: job.deliveryId, player: job.player, window: window.deliveryId });
  }
}
