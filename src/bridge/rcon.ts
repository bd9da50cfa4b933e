/**
 * The bridge's RCON sink: each item given by running its command template(s) over the
 * Source RCON protocol, at most once and never silently. A command cannot be deduped by
 * the game, so the sink checks the player is online (the game's list command, on the
 * connection it then sends on), journals that it is about to send (the line's `sending`
 * mark) before it sends, and reads each reply (rcon-replies.ts): done; did not happen
 * because the player is not there (the item stays pending for their next join); did not
 * happen for good (an unknown command, item or argument: marked for staff at once); or
 * unknown. A command whose outcome is unknown (such a reply, the connection lost after its
 * bytes were written, no reply in time, a mark found at the next give, or a later command
 * of the item that did not happen after earlier ones ran) becomes an `unknownCommand`
 * window for staff, is never sent again, and is reported as a window, never as given.
 * Every journal write goes through the delivery core's records (`delivery/item-records.ts`):
 * records read back checked, a window the journal refuses kept in the memory every client of
 * the journal shares.
 *
 * @module
 * @internal
 */
import { readFile } from 'node:fs/promises';
import type { DeliveredItem, GivenVoteReward, JournalEntry, JournalLine, JournalVoteReward, JournalWindow } from '../index.js';
import { itemRecordsOf, type ItemRecords } from '../delivery/records/index.js';
import { RconLink, messageOf, type Sent } from './rcon-link.js';
import { listPlayers, parseOnline } from './rcon-players.js';
import { listCommandOf, meaningOf, replyRules, type Game, type ReplyRules } from './rcon-replies.js';
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

/**
 * A give whose outcome is unknown, thrown once its `unknownCommand` window is durable in
 * the journal: the engine acknowledges the item (never given again) and reports the window
 * (`unverified`), never as given nor as failed.
 * @internal
 */
export class RconWindowError extends Error {
  override readonly name = 'RconWindowError';
  /** The window's span, epoch ms (what the engine reports). */
  readonly unverified: { from: number; to: number };

  constructor(message: string, window: { from: number; to: number }) {
    super(message);
    this.unverified = { from: window.from, to: window.to };
  }
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
  /** How its replies are read. */
  rules: ReplyRules;
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
  const game = config.game ?? 'minecraft';
  const players = config.players?.source === 'list' ? listPlayers(link, { listCommand: config.players.listCommand ?? listCommandOf(game) ?? 'list', intervalMs: config.players.intervalMs ?? 10_000, game }, deps.log) : undefined;
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
  /** The delivery core's records of the journal: every write of the sink goes through them. */
  readonly #records: ItemRecords;
  readonly #game: Game;
  /** The game's list command for the online check, or `undefined` (no check). */
  readonly #listCommand: string | undefined;
  /** The rules of vote rewards and of products without their own patterns. */
  readonly #rules: ReplyRules;
  readonly #productRules = new Map<string, ReplyRules>();

  constructor(config: RconGiveConfig, deps: RconSinkDeps, link: SinkLink) {
    this.#config = config;
    this.#deps = deps;
    this.#link = link;
    this.#records = itemRecordsOf(deps.journal);
    this.#game = config.game ?? 'minecraft';
    const list = config.players?.source === 'list' ? (config.players.listCommand ?? listCommandOf(this.#game)) : listCommandOf(this.#game);
    this.#listCommand = config.checkOnline === false ? undefined : list;
    this.#rules = replyRules(this.#game, config.replies);
    for (const [key, patterns] of Object.entries(config.productReplies ?? {})) this.#productRules.set(key, replyRules(this.#game, patterns, config.replies));
  }

  /** The rules of a product: its own patterns (by `product_id`, `product_id_string`, then `"*"`), then the game's. */
  #rulesOf(keys: readonly string[]): ReplyRules {
    for (const key of [...keys, '*']) {
      const rules = this.#productRules.get(key);
      if (rules !== undefined) return rules;
    }
    return this.#rules;
  }

  give(item: DeliveredItem): Promise<void> {
    const { deliveryId, ...transaction } = item;
    return this.#give({
      deliveryId,
      player: item.player_name,
      what: `product ${item.product_id}`,
      templates: templatesFor(this.#config.commands, [String(item.product_id), item.product_id_string]),
      values: { player: item.player_name, quantity: String(item.quantity_to_grant), productId: item.product_id_string, productName: item.product_name, deliveryId },
      rules: this.#rulesOf([String(item.product_id), item.product_id_string]),
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
      rules: this.#rules,
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
    const { log } = this.#deps;
    const windowId = commandWindowId(job.deliveryId);
    // A window this process could not write yet: its item is never sent again.
    const unwritten = this.#records.unwritten(windowId);
    if (unwritten !== undefined) return this.#writeWindow(job, unwritten);
    const entries = await this.#records.entriesOf(job.player);
    const record = job.record(entries);
    const known = entries.find((e): e is JournalWindow => e.deliveryId === windowId);
    if (known !== undefined) {
      // Resolved by staff already: nothing left to report, the item is settled.
      if (known.state === 'resolved') return;
      log.error('RCON command outcome already in a window; not sent again', { deliveryId: job.deliveryId, player: job.player, window: windowId });
      throw new RconWindowError(`RCON: the outcome of ${job.what} is unknown: window ${windowId} for staff (never sent again)`, known);
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

  /** Connect, check the player is online, mark, send: holding the connection, so no `list` poll runs in between. */
  async #send(job: Job, record: JournalLine | JournalVoteReward, commands: readonly string[]): Promise<void> {
    const { log, now } = this.#deps;
    await this.#link.connect();
    if (this.#listCommand !== undefined) await this.#checkOnline(job, this.#listCommand);
    const sending = now();
    // Durable before the command: a journal that refuses the mark stops it here.
    await this.#records.mark({ ...record, sending });
    for (const [i, command] of commands.entries()) {
      const sent = await this.#link.send(command);
      if ('reply' in sent) {
        const meaning = meaningOf(sent.reply, job.rules);
        const fields = { deliveryId: job.deliveryId, player: job.player, command, reply: sent.reply.slice(0, 200) };
        if (meaning === 'done') {
          log.info('RCON command run', fields);
          continue;
        }
        if (i === 0 && meaning === 'absent') {
          // Nothing ran: the mark goes, and the item waits for the player's next join.
          await this.#unmark(job, record);
          log.warn('RCON: the game says the player is not there; nothing given, kept for their next join', fields);
          throw new Error(`RCON: ${job.what} not given: the game answered "${sent.reply.slice(0, 200)}" (the player is not there); given when they are back`);
        }
        if (i === 0 && meaning === 'refused') {
          await this.#unmark(job, record);
          log.error(`RCON command refused by the game for ${job.what}; nothing given, marked for staff (fix the command template or the product)`, { ...fields, what: job.what });
          throw new RconStaffError(`RCON: ${job.what} not given: the game refused "${command}" with "${sent.reply.slice(0, 200)}" (fix the command template or the product, then retry it)`);
        }
        // A reply that says nothing known, or a command after the first that did not run
        // while earlier ones did: the item is partly given, or maybe given.
        log.error(meaning === 'unknown' ? 'RCON reply not understood: the outcome is unknown; a window for staff, never sent again' : `RCON command ${i + 1} of ${commands.length} did not run after the ones before it did; a window for staff, never sent again`, { ...fields, what: job.what, meaning, ran: commands.slice(0, i) });
        return this.#writeWindow(job, this.#window(job, sending, commands));
      }
      if ('notSent' in sent && i === 0) {
        // Certainly not sent: the mark goes, and the item is given again later.
        await this.#unmark(job, record);
        throw new Error(`RCON: not sent for ${job.what}: ${sent.notSent.message}`);
      }
      log.error('RCON command outcome unknown; a window for staff, never sent again', { deliveryId: job.deliveryId, player: job.player, command, error: messageOf('notSent' in sent ? sent.notSent : sent.unknown) });
      return this.#writeWindow(job, this.#window(job, sending, commands));
    }
  }

  /** The mark removed (nothing ran); a failure is logged: the next give then makes the item a window. */
  async #unmark(job: Job, record: JournalLine | JournalVoteReward): Promise<void> {
    const failed = await this.#records.rewrite(record);
    if (failed !== undefined) this.#deps.log.warn('RCON mark not removed; the next give makes it a window', { deliveryId: job.deliveryId, error: messageOf(failed) });
  }

  /**
   * Asks the game who is online, on the connection the commands then use: a player not in
   * the list (names compared exactly) gets nothing now. Nothing is marked yet, so every
   * failure here leaves the item pending.
   */
  async #checkOnline(job: Job, listCommand: string): Promise<void> {
    const sent = await this.#link.send(listCommand);
    if (!('reply' in sent)) throw new Error(`RCON: not sent for ${job.what}: the online check (${listCommand}) failed: ${messageOf('notSent' in sent ? sent.notSent : sent.unknown)}`);
    const online = parseOnline(sent.reply, this.#game);
    if (online === undefined) {
      this.#deps.log.warn('RCON list reply not understood; the item waits (is the game right, or set checkOnline: false)', { deliveryId: job.deliveryId, command: listCommand, reply: sent.reply.slice(0, 200) });
      throw new Error(`RCON: not sent for ${job.what}: the reply to ${listCommand} could not be read, so whether ${job.player} is online is not known`);
    }
    if (!online.includes(job.player)) {
      this.#deps.log.info('RCON: the player is not online; nothing sent, kept for their next join', { deliveryId: job.deliveryId, player: job.player });
      throw new Error(`RCON: not sent for ${job.what}: ${job.player} is not online (${listCommand}); given when they are back`);
    }
  }

  #window(job: Job, from: number, commands: readonly string[]): JournalWindow {
    const now = this.#deps.now();
    const node = this.#records.nodeId;
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

  /** Writes the window, then throws {@link RconWindowError} (the engine acknowledges the item and reports the window); when it cannot, keeps it in memory and throws a plain error (the item stays pending). */
  async #writeWindow(job: Job, window: JournalWindow): Promise<never> {
    const error = await this.#records.window(window);
    if (error !== undefined) {
      this.#deps.log.error('RCON window not written; the item is never sent again by this process', { deliveryId: job.deliveryId, window: window.deliveryId, error: messageOf(error) });
      throw new Error(`RCON: the outcome of ${job.what} is unknown and its window could not be written (retried; never sent again): ${messageOf(error)}`);
    }
    this.#deps.log.info('RCON window written for staff', { deliveryId: job.deliveryId, player: job.player, window: window.deliveryId });
    throw new RconWindowError(`RCON: the outcome of ${job.what} is unknown: window ${window.deliveryId} for staff (never sent again)`, window);
  }
}
