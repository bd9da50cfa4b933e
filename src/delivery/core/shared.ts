/**
 * What every client on one journal shares, whichever engine it came from, kept in a
 * registry keyed on the journal object (a WeakMap): the per-player order, the lines the
 * journal refused (granted from memory), the grants still running or given but not yet
 * acknowledged, when each player's list was last seen, and the journal's one delivery
 * loop in this process. Small and loaded with the client: the loop's one-per-journal
 * check needs it before any delivery runs.
 *
 * @module
 * @internal
 */
import { resolve } from 'node:path';
import { JournalError, isStorefrontError, type Operation } from '../../errors.js';
import { DEFAULT_JOURNAL_PATH, type DeliveryJournal, type JournalEntry } from '../../journals/contract.js';
import { FileJournal } from '../../journals/file/journal.js';
import { PlayerLocks } from './locks.js';

// One FileJournal per path in the process: a file journal refuses a second owner.
const defaultJournals = new Map<string, FileJournal>();

/** The default file journal, for a client given none (one per path in the process; its file is opened on first use, never here). */
export function defaultJournal(): DeliveryJournal {
  const path = resolve(DEFAULT_JOURNAL_PATH);
  let found = defaultJournals.get(path);
  if (found === undefined) defaultJournals.set(path, (found = new FileJournal(path)));
  return found;
}

/**
 * What every client on one journal shares, whichever engine it came from: two clients on
 * one journal must not interleave for a player, nor forget each other's unwritten lines.
 */
export interface Shared {
  /** The per-player order. */
  locks: PlayerLocks;
  /** Claimed lines (and settled intents) the journal failed to record: granted from here, written again on the next call. */
  unjournaled: Map<string, JournalEntry>;
  /** Lines whose grant outlived `grantTimeoutMs` and still runs: never granted a second time meanwhile. */
  granting: Set<string>;
  /** Lines the game was given whose acknowledgement the journal has not taken yet: never given again by this process. */
  given: Set<string>;
  /** When each player's whole list of undelivered purchases was last seen (a preview's or a claim's answer). */
  seen: Map<string, SeenAt>;
  /** The delivery loop running on this journal, if any: one per journal in a process. */
  loop: object | undefined;
}

/** A moment on both clocks: the wall time to stamp, the monotonic time to measure from. */
export interface SeenAt {
  wall: number;
  mono: number;
}

/** Players whose last-seen moment is remembered; the oldest are forgotten first (their next window starts at 0). */
export const SEEN_LIMIT = 100_000;

const registry = new WeakMap<DeliveryJournal, Shared>();

export function sharedOf(journal: DeliveryJournal): Shared {
  let state = registry.get(journal);
  if (state === undefined) registry.set(journal, (state = { locks: new PlayerLocks(), unjournaled: new Map(), granting: new Set(), given: new Set(), seen: new Map(), loop: undefined }));
  return state;
}

/** The per-player order every client of `journal` shares; vote rewards queue in it too. */
export function playerLocksOf(journal: DeliveryJournal): PlayerLocks {
  return sharedOf(journal).locks;
}

/**
 * Registers `loop` as the journal's one delivery loop in this process; returns the loop
 * already running, if any (then nothing is registered). {@link releaseLoop} undoes it.
 */
export function claimLoop(journal: DeliveryJournal, loop: object): object | undefined {
  const state = sharedOf(journal);
  // A loop claims once (when it starts): any loop registered already is another one.
  if (state.loop !== undefined) return state.loop;
  state.loop = loop;
  return undefined;
}

/** Unregisters `loop`, when it is the journal's loop. */
export function releaseLoop(journal: DeliveryJournal, loop: object): void {
  const state = sharedOf(journal);
  if (state.loop === loop) state.loop = undefined;
}

/** A journal's failure as a {@link JournalError} (as it is when it is one already). */
export function journalErrorOf(operation: Operation, error: unknown, redact: ((text: string) => string) | undefined): JournalError {
  if (isStorefrontError(error, 'JOURNAL_FAILED')) return error;
  const text = String((error as Error | undefined)?.message ?? error).slice(0, 200);
  return new JournalError(`${operation}: the delivery journal failed (${redact === undefined ? text : redact(text)})`, { operation, cause: error });
}

/**
 * The engine's modes once `modes.ts` has been evaluated (it sets its class here): an engine
 * then runs them without waiting for `import()`, the same turns as a static import. Typed
 * `unknown` here (this module is below the modes); engine.ts knows the class.
 */
export const loadedModes: { DeliveryModes?: unknown } = {};
