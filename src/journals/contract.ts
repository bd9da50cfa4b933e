/**
 * The delivery journal: where {@link StorefrontClient.deliver} records what it claimed
 * (or intends to claim) before granting anything, so a crash, a failing grant or a lost
 * answer never loses a paid item.
 *
 * @module
 */
import type { JournalError } from '../errors.js';
import { describe, fail } from '../internal/validate.js';
import type { Transaction } from '../wire/claim.js';
import type { CheckoutHint, SharedCheckoutHint } from './checkout-hints.js';
import type { GrantFailureNote } from './grant-failure.js';
import type { JournalVoteEntry } from './vote-entries.js';

export type { GrantFailureNote } from './grant-failure.js';

/**
 * One record of the journal: a purchase line ({@link JournalLine}), the mark of a claim
 * about to be sent ({@link JournalClaimMark}), an unverified window kept for staff
 * ({@link JournalWindow}) or a vote reward's record ({@link JournalVoteEntry}). Journals
 * store them as they are (JSON).
 */
export type JournalEntry = JournalLine | JournalClaimMark | JournalWindow | JournalVoteEntry;

/** How an {@link UnverifiedWindow} arose. */
export type WindowCause =
  /** An exactly-once claim whose answer was lost took purchases no preview had shown. */
  | 'lostClaim'
  /** A `fast` claim whose answer was lost, or a crash before its lines were journaled. */
  | 'claimMark'
  /**
   * A vote reward claim whose answer was lost (or a crash before its rows were journaled),
   * and the service's counters did not identify what it bought: see
   * {@link JournalWindow.reward} and {@link JournalWindow.points}.
   */
  | 'lostVote'
  /**
   * A command sent to the game (the bridge's RCON delivery) whose outcome is unknown: the
   * connection was lost after it was written, no reply came in time, or a restart found
   * the item's `sending` mark ({@link JournalLine.sending}). It is never sent again: staff
   * check whether it ran (see {@link JournalWindow.command}).
   */
  | 'unknownCommand';

/**
 * An {@link UnverifiedWindow} as the journal keeps it: written before the window is
 * reported, kept until staff resolve it (then kept as `resolved`, with who, when and
 * why: an audit trail, never deleted by the SDK), never dropped by compaction. While a
 * window of a player is open, the player's texts say staff are checking.
 */
export interface JournalWindow {
  /** `window:<uuid>`: the id staff pass to {@link resolveWindow}. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** `unverified` (open) or `resolved`. */
  state: 'unverified' | 'resolved';
  /** Start of the window, epoch ms (see {@link UnverifiedWindow.from}). */
  from: number;
  /** End of the window, epoch ms. */
  to: number;
  /** How it arose. */
  cause: WindowCause;
  /** When it was found and written, epoch ms. */
  recordedAt: number;
  /** The node that found it, in a journal shared by several nodes. */
  node?: string;
  /** `lostVote` windows: the reward id(s) the lost call(s) asked for (comma-separated when several). */
  reward?: string;
  /**
   * `lostVote` windows: the most points the lost call(s) can have spent that no granted
   * row accounts for, as the service's counters tell (what they moved, less a point for
   * each unit of the call that found it); absent when the counters could not tell (see the
   * delivery guide, "Vote rewards").
   */
  points?: number;
  /**
   * `unknownCommand` windows: the command(s) whose outcome is unknown, as sent (several
   * commands of one item on separate lines), for staff to check in the game's log.
   */
  command?: string;
  /** Set once resolved. */
  resolution?: WindowResolution;
}

/** Who closed a window, when, and what they found. */
export interface WindowResolution {
  /** Who handled it (a staff name, a Discord id). */
  by: string;
  /** When, epoch ms. */
  at: number;
  /** What was found and done (e.g. "granted 1 × VIP rank by hand, invoice 1043"). */
  note: string;
}

/**
 * What {@link DeliveryJournal.resolveWindow} did, decided atomically by the journal.
 *
 * - `resolved`: this call closed the window; `window` is the record as now stored.
 * - `alreadyResolved`: the window was resolved before; nothing was written, and `window`
 *   holds the first resolution, unchanged.
 * - `notFound`: no window has this id (never written, or the id names a purchase line).
 */
export type WindowResolveOutcome =
  | {
      /** This call closed the window. */
      outcome: 'resolved';
      /** The record as now stored, with this call's resolution. */
      window: JournalWindow;
    }
  | {
      /** The window was resolved before; nothing was written. */
      outcome: 'alreadyResolved';
      /** The record as stored, with the first resolution. */
      window: JournalWindow;
    }
  | {
      /** No window has this id. */
      outcome: 'notFound';
    };

/**
 * One purchase line in the journal.
 *
 * - `claimed`: the service marked it delivered; the game has not confirmed the grant yet.
 *   {@link StorefrontClient.deliver} and {@link StorefrontClient.resumeDeliveries} grant
 *   it and then acknowledge it.
 * - `intended` (exactly-once mode): seen in a preview and about to be claimed. If the
 *   claim's outcome is lost, the next run previews again: an intended line that is no
 *   longer pending was delivered by the lost claim and is granted from the journal.
 */
export interface JournalLine {
  /** Stable id of the purchase line; the game's dedupe key. See {@link DeliveredItem.deliveryId}. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** `claimed` (to grant) or `intended` (to reconcile); see above. */
  state: 'claimed' | 'intended';
  /** The purchase as the service listed it. */
  item: Transaction;
  /** The service's invoice of the line (exactly-once mode), as text. */
  invoice?: string;
  /** When the entry was written, in epoch ms of the client's clock. */
  recordedAt: number;
  /**
   * Intended lines in a journal shared by several nodes: the node that wrote the intent
   * ({@link DeliveryJournal.nodeId}). Another node never settles it on a claim of its own
   * that found nothing; it reconciles it (preview, then grant what the lost claim took)
   * once it holds the player's lock.
   */
  node?: string;
  /**
   * Intended lines: when the preview that listed them was sent, in epoch ms of the
   * client's clock. A claim whose answer is lost may also have taken purchases paid after
   * this moment, which no preview showed: the start of the {@link UnverifiedWindow}.
   */
  previewedAt?: number;
  /** Claimed lines whose grant failed: the last failure, for staff (`teamgames journal pending`). */
  lastError?: GrantFailureNote;
  /**
   * Intended lines: set (in the same append as the claimed lines that replace it) once a
   * claim's lines are journaled, so the intent is settled even if the process dies before
   * it is acknowledged. A settled intent is acknowledged, never reconciled.
   */
  settled?: boolean;
  /**
   * Claimed lines given by a command that cannot be deduped (the bridge's RCON delivery):
   * when the command was about to be sent, in epoch ms, written (durably) before it is
   * sent. A line still carrying it when its give starts may have been given: it becomes an
   * `unknownCommand` window for staff and is never sent again. To the delivery engine it
   * is a claimed line like any other.
   */
  sending?: number;
}

/**
 * The mark `mode: 'fast'` writes before it sends a claim, and removes once the claim's
 * lines are journaled (or nothing was claimed). A mark still in the journal means a claim
 * may have delivered items that no journal line records (the process died, or the answer
 * was lost): the next `deliver` for that player, or `resumeDeliveries`, reports an
 * {@link UnverifiedWindow} from `recordedAt`.
 */
export interface JournalClaimMark {
  /** `claim:<uuid>`; the claim's lines get `claim:<uuid>:<index>`. */
  deliveryId: string;
  /** The player, exact name. */
  playerName: string;
  /** Always `claiming`. */
  state: 'claiming';
  /** When the claim was about to be sent, in epoch ms of the client's clock. */
  recordedAt: number;
  /**
   * When the SDK last saw everything still undelivered for the player (a preview's or a
   * claim's answer), in epoch ms of the client's clock: the claim can only have taken
   * unseen purchases completed after it, the start of the {@link UnverifiedWindow} a lost
   * answer opens. Absent when this process had not seen the player's list: the window
   * then starts at `0` (every purchase of the player is in question).
   */
  since?: number;
}

/**
 * Durable storage for deliveries. Small on purpose, so it is easy to back with a shared
 * database when several game servers deliver for one key (one row per `deliveryId`:
 * `append` upserts, `acknowledge` deletes, `pending` selects).
 *
 * Contract: each method resolves only once its change is durable (it survives a crash
 * of the process). `append` with a `deliveryId` already present replaces that entry.
 * `pending` lists the entries not acknowledged, oldest first.
 *
 * A journal shared by several nodes (processes) also implements
 * {@link DeliveryJournal.withPlayerLock}, a lock on the player across nodes that the
 * engine holds around each delivery and reconciliation, and gives each node its own
 * {@link DeliveryJournal.nodeId}; the shipped `PostgresJournal` and `MySqlJournal` do.
 * The game's `deliveryId` dedupe record must then be shared too. Without a cross-node
 * lock the client serializes calls per player only within itself.
 *
 * @example
 * ```ts
 * // Several game servers on one key: the shipped journal over a shared PostgreSQL
 * // (teamgames-sdk/mysql has MySqlJournal for MySQL and MariaDB).
 * import pg from 'pg';
 * import { PostgresJournal } from 'teamgames-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const client = new StorefrontClient({ journal: new PostgresJournal(pool) }); // the key from TEAMGAMES_API_KEY
 * ```
 * @see [Delivering purchases in game: several game servers, one key](https://github.com/teamgamesllc/teamgames-sdk/blob/main/docs/delivering-purchases.md#several-game-servers-one-key)
 */
export interface DeliveryJournal {
  /** Records entries durably (replacing entries with the same `deliveryId`). */
  append(entries: readonly JournalEntry[]): Promise<void>;
  /** The entries not acknowledged, oldest first; of one player (exact name) when given. */
  pending(playerName?: string): Promise<JournalEntry[]>;
  /** Removes entries for good: the game confirmed the grant (or nothing is left to do). */
  acknowledge(deliveryIds: readonly string[]): Promise<void>;
  /**
   * Optional, for journals shared by several nodes: runs `work` holding a lock on the
   * player that every node of the journal respects, and releases it after (also when the
   * node dies: a database lock held by a connection goes with the connection). Rejects
   * (a {@link JournalError}) when the lock cannot be had in the journal's own time limit;
   * `work` has not run then. Journals without it get the client's in-process lock only.
   */
  withPlayerLock?<T>(playerName: string, work: () => Promise<T>): Promise<T>;
  /**
   * Optional, for journals shared by several nodes: this node's id, written on the
   * intents it journals (see {@link JournalLine.node}). Stable for the life of the
   * journal object, unique across the nodes sharing the journal.
   */
  readonly nodeId?: string;
  /**
   * Optional: closes the window `windowId` with `resolution` as ONE compare-and-set: only
   * while it is still `unverified` (open), so that of several resolves at once (staff on
   * two nodes, the CLI and an admin command) exactly one writes, and every other learns
   * who came first. The shipped journals have it (a conditional `UPDATE` in the SQL
   * journals; the file and memory journals check and write under the journal's own
   * serialization). A journal without it gets a fallback in {@link resolveWindow}: read,
   * check, `append`, serialized per journal object within the process, which is
   * compare-and-set only when one process writes the journal: a journal shared by several
   * processes should implement this method.
   */
  resolveWindow?(windowId: string, resolution: WindowResolution): Promise<WindowResolveOutcome>;
  /**
   * Optional, for journals shared by the game's nodes and a web shop: records a checkout
   * hint (see {@link expectCheckout}, which calls it), its expiry `hint.expiresInMs` (default
   * 10 minutes) from now by the journal's own clock (the database's: never a node's or the
   * shop's, whose clocks differ). One hint per player and transaction: the same hint
   * written again while it lives changes nothing (it never extends itself); once expired,
   * it is written anew. The shipped `PostgresJournal`, `MySqlJournal` (a table of their own,
   * `hintsTable`) and `MemoryJournal` have it; the file journal (one process's) does not.
   *
   * @throws InvalidInputError when the player's name or the hint is not valid (the rules
   *   of {@link DeliveryLoop.expect}); nothing was written.
   */
  addCheckoutHint?(playerName: string, hint?: CheckoutHint): Promise<void>;
  /**
   * Optional, with `addCheckoutHint`: the hints not expired yet, oldest first, at most the
   * newest 10,000, each with its age and remaining life in ms by the journal's clock. A
   * delivery loop on a journal that has it reads it every few seconds and holds each hint
   * as if given to its `expect`. Expired hints are deleted now and then by the reads.
   *
   * A row that is not a hint (changed outside the SDK) fails the read with a JournalError,
   * or, given `onBadRow`, is left out and handed to it, the other hints read: the loop
   * passes one, so one damaged row never stops the others (it shows in
   * `stats().sharedHintsError` and a `sharedHintsError` event).
   */
  liveCheckoutHints?(onBadRow?: (error: JournalError) => void): Promise<SharedCheckoutHint[]>;
  /**
   * Optional, with `liveCheckoutHints`: deletes the hint of the player and transaction
   * (`undefined`: the hint naming none), once a delivery satisfied it. The loop that
   * delivered calls it; the other nodes then drop the hint at their next read, and a loop
   * starting later never holds it. Deleting a hint that is not there does nothing.
   */
  endCheckoutHint?(playerName: string, transactionId?: string): Promise<void>;
}

/**
 * The arguments of a journal's `resolveWindow`, checked as an append checks its entries:
 * a resolution the next read would refuse as damage is never written.
 *
 * @throws InvalidInputError naming `windowId` or `resolution` and what is wrong; nothing
 *   was written then.
 * @internal
 */
export function checkResolution(windowId: unknown, resolution: unknown): WindowResolution {
  if (typeof windowId !== 'string' || windowId === '') fail('windowId', `must be a non-empty string, got ${describe(windowId)}`);
  const r = resolution as Record<string, unknown> | null;
  if (typeof r !== 'object' || r === null || typeof r['by'] !== 'string' || !isNumber(r['at']) || typeof r['note'] !== 'string') {
    fail('resolution', `must be { by: string, at: finite number, note: string }, got ${describe(resolution)}`);
  }
  return { by: r['by'], at: r['at'], note: r['note'] };
}

/**
 * The window `entry` resolved with `resolution`, or `undefined` when `entry` is not a
 * window (a line, a claim mark, nothing). What every journal's `resolveWindow` writes.
 * @internal
 */
export function resolvedWindow(entry: JournalEntry | undefined, resolution: WindowResolution): JournalWindow | undefined {
  if (entry?.state !== 'unverified') return undefined;
  return { ...entry, state: 'resolved', resolution: { by: resolution.by, at: resolution.at, note: resolution.note } };
}

/**
 * The outcome of a resolve that found `entry` under the window's id and wrote nothing:
 * `alreadyResolved` with the first resolution, or `notFound`.
 * @internal
 */
export function unresolvedOutcome(entry: JournalEntry | undefined): WindowResolveOutcome {
  return entry?.state === 'resolved' ? { outcome: 'alreadyResolved', window: entry } : { outcome: 'notFound' };
}

/**
 * The ids given to a journal's `acknowledge`: those that are strings (anything else, a
 * hole included, names no entry and is ignored).
 *
 * @throws InvalidInputError when `value` is not an array (a string would otherwise be
 *   taken character by character); nothing was acknowledged then.
 * @internal
 */
export function checkIds(value: unknown): string[] {
  if (!Array.isArray(value)) fail('deliveryIds', `must be an array of deliveryIds, got ${describe(value)}`);
  // filter skips holes, which name no entry anyway.
  return Array.prototype.filter.call(value, (id: unknown) => typeof id === 'string') as string[];
}

/** A finite number (`Number.isFinite` is false for anything that is not a number). */
function isNumber(value: unknown): value is number {
  return Number.isFinite(value);
}

/**
 * A copy of what a journal's `append` was given, taken at the call (what the caller changes
 * afterwards is not what gets recorded): each element cloned (a hole reads as
 * `undefined`), anything but an array passed on as it is, for the entries' checks to refuse.
 *
 * @throws InvalidInputError naming the entry that cannot be copied (a function, a symbol);
 *   nothing was recorded then.
 * @internal
 */
export function copyEntries(entries: unknown): unknown {
  if (!Array.isArray(entries)) return entries;
  return Array.from(entries, (entry: unknown, i) => {
    try {
      return structuredClone(entry);
    } catch (error) {
      // A function or a symbol: bad input. Anything else (a value too deep to copy) as thrown.
      if ((error as Error).name !== 'DataCloneError') throw error;
      return fail(`entries[${i}]`, `must be a journal entry: it holds a value JSON cannot keep (${describe(entry)})`);
    }
  });
}

/** The file the default journal writes, relative to the working directory at first use. */
export const DEFAULT_JOURNAL_PATH = '.teamgames-journal.jsonl';

/**
 * Checks the `journal` client option.
 * @internal
 */
export function checkJournal(value: unknown): DeliveryJournal | undefined {
  if (value === undefined) return undefined;
  // Anything with the three methods is a journal (a primitive has none, null neither).
  const journal = value as Partial<DeliveryJournal> | null;
  if (typeof journal?.append !== 'function' || typeof journal.pending !== 'function' || typeof journal.acknowledge !== 'function') {
    fail('options.journal', `must be a DeliveryJournal (an object with append, pending and acknowledge), got ${describe(value)}`);
  }
  return journal as DeliveryJournal;
}

