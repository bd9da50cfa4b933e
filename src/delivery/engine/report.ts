/**
 * What a delivery gathers as it goes, and how it becomes a {@link DeliveryReport}: the
 * codes, the texts for players, and the small readers of claim answers the engine needs.
 *
 * @module
 * @internal
 */
import { isStorefrontError, type JournalError, type Operation, type StorefrontError } from '../../errors.js';
import { SUCCESS_MESSAGE, type ClaimOptions, type ClaimResult, type Transaction } from '../../wire/claim.js';
import type { JournalLine } from '../../journals/contract.js';
import { ERROR_MESSAGE, type DeliveredItem, type DeliveryCode, type DeliveryEvent, type DeliveryFailure, type DeliveryReport, type UnverifiedWindow } from '../core/index.js';

const PARTIAL_MESSAGE = 'Some items could not be delivered yet; they will be delivered on your next claim.';
const UNKNOWN_OUTCOME_MESSAGE = 'The store did not answer in time. Your purchase is safe; try again in a few seconds.';
const UNVERIFIED_MESSAGE = 'We could not confirm the delivery of every recent purchase. If something you bought is missing, staff can check it for you.';

/** What one `deliver` or `resumeDeliveries` call gathers for its report. */
/** The client a run works for: its claim (with its own options) and its `onEvent`. */
export interface RunVia {
  claim: (playerName: string, options: ClaimOptions) => Promise<ClaimResult>;
  onEvent: ((event: DeliveryEvent) => void) | undefined;
  /** Removes the client's key, in every form, from a text the SDK shows (a player's message). */
  redact?: (text: string) => string;
}

/**
 * What the delivery loop adds to a run, beyond `deliver`'s public options.
 * @internal
 */
export interface RunExtras {
  /** Lines not to give on this run (their per-item backoff holds): they stay pending. */
  defer?: (line: JournalLine) => boolean;
  /** Failed grants after which a line is marked for staff (`lastError.stuck`) and a `stuck` event is emitted. */
  staffAfterAttempts?: number;
  /** Set by the delivery loop, which gives what is left again on its own: a `PARTIAL` text says so. */
  retriedByLoop?: boolean;
}


export interface Run {
  operation: Operation;
  via: RunVia;
  extras: RunExtras;
  granted: DeliveredItem[];
  failed: DeliveryFailure[];
  unverified: UnverifiedWindow[];
  /** Lines whose grant ended in a window it wrote (their outcome unknown): neither granted nor failed. */
  windowed?: number;
  journalError?: JournalError;
  /** Set when a window of the player is open (found now or kept in the journal). */
  windowOpen?: boolean;
  /** Set when something unexpected happened after a claim succeeded (the lines were kept). */
  error?: StorefrontError;
}

export interface StepOutcome {
  code: Exclude<DeliveryCode, 'PARTIAL'>;
  message: string;
  error?: StorefrontError;
}

/**
 * The report of one `deliver` call. `windowKnown`: a window of this player was reported
 * earlier and not handled yet, so the texts say staff are checking all the same.
 */
export function deliveryReport(run: Run, outcome: StepOutcome, pending: number, windowKnown = false): DeliveryReport {
  // An item whose grant ended in a window is not given: never SUCCESS for it.
  const code: DeliveryCode = run.failed.length > 0 || (run.windowed ?? 0) > 0 ? 'PARTIAL' : run.granted.length > 0 ? 'SUCCESS' : outcome.code;
  // The delivery loop gives what is left again on its own: the player need not claim. (The
  // text is written here, not in a constant: a module loaded by import() inside a test keeps
  // the constant it was loaded with, and StrykerJS could not see a test kill its mutant.)
  const partial = run.extras.retriedByLoop === true ? 'Some items could not be delivered yet; they will be delivered automatically, while you are online or when you next join.' : PARTIAL_MESSAGE;
  let message = code === 'PARTIAL' ? partial : code === 'SUCCESS' && outcome.code !== 'SUCCESS' ? SUCCESS_MESSAGE : outcome.message;
  // Never "already claimed" (or "safe, try again") when a lost claim may have taken something unseen.
  if (run.unverified.length > 0 || windowKnown) {
    message = run.failed.length > 0 ? `${partial} ${UNVERIFIED_MESSAGE}` : UNVERIFIED_MESSAGE;
  }
  const error = outcome.error ?? run.error;
  const unverified = mergedWindows(run.unverified)[0];
  return {
    code,
    granted: run.granted,
    failed: run.failed,
    pending,
    // The service's text reaches the player: a proxy or a store echoing the key must not.
    message: run.via.redact === undefined ? message : run.via.redact(message),
    ...(error === undefined ? {} : { error }),
    ...(unverified === undefined ? {} : { unverified }),
    ...(run.journalError === undefined ? {} : { journalError: run.journalError }),
  };
}

/** One window per player, covering every window reported for that player. */
export function mergedWindows(windows: readonly UnverifiedWindow[]): UnverifiedWindow[] {
  const byPlayer = new Map<string, UnverifiedWindow>();
  for (const w of windows) {
    const known = byPlayer.get(w.playerName);
    byPlayer.set(w.playerName, known === undefined ? { ...w } : { playerName: w.playerName, from: Math.min(known.from, w.from), to: Math.max(known.to, w.to) });
  }
  return [...byPlayer.values()];
}

export function newRun(operation: Operation, via: RunVia, extras: RunExtras = {}): Run {
  return { operation, via, extras, granted: [], failed: [], unverified: [] };
}

/** Pairs each claim with its raw row's invoice; undefined when they do not line up. */
export function linesOf(result: ClaimResult): Map<string, Transaction> | undefined {
  const raw = result.rawTransactions;
  if (raw === undefined || raw.length !== result.claims.length) return undefined;
  const lines = new Map<string, Transaction>();
  for (const [i, row] of raw.entries()) {
    const invoice = row['invoice'];
    if ((typeof invoice !== 'string' && typeof invoice !== 'number') || String(invoice) === '') return undefined;
    if (lines.has(String(invoice))) return undefined;
    lines.set(String(invoice), result.claims[i] as Transaction);
  }
  return lines;
}

export function outcomeOf(result: ClaimResult): StepOutcome {
  // A preview's NO_ITEMS / ALREADY_CLAIMED read the same as a claim's; an empty PREVIEW is NO_ITEMS.
  if (result.code === 'PREVIEW') return result.claims.length === 0 ? { code: 'NO_ITEMS', message: result.message } : { code: 'SUCCESS', message: result.message };
  return { code: result.code, message: result.message };
}

export function journalOutcome(run: Run): StepOutcome {
  return { code: 'ERROR', message: ERROR_MESSAGE, ...(run.journalError ? { error: run.journalError } : {}) };
}

export function failed(error: unknown): StepOutcome {
  if (!isStorefrontError(error)) throw error;
  if (error.code === 'CLAIM_OUTCOME_UNKNOWN') {
    return { code: 'OUTCOME_UNKNOWN', message: UNKNOWN_OUTCOME_MESSAGE, error };
  }
  return { code: 'ERROR', message: ERROR_MESSAGE, error };
}
