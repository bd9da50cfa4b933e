/**
 * The delivery core: what every kind of item (a purchase line, a vote reward row, and so
 * every sink of the bridge) goes through when it is handed to the game, written once.
 *
 * - One bounded give ({@link giveWithin}): `grantTimeoutMs` bounds it (one name, one
 *   default, one check: {@link checkGrantTimeout}); its timeout is marked by a value private to this
 *   module, so nothing a give returns can pass for it. A give still running past its bound
 *   is never given again meanwhile, and is acknowledged if it still returns.
 * - One conversion of whatever a give throws ({@link failureOf}): never throws itself, on
 *   any value (a null-prototype object, a throwing getter, a Proxy), and its text is
 *   redacted.
 * - One memory of "given, not yet acknowledged" (`Shared.given`, `Shared.granting`) for
 *   every kind, and one settling of a given item ({@link settleGiven}).
 * - One failure policy ({@link notedFailure}): the note on the record (`lastError`), its
 *   attempts, and `stuck` once `staffAfterAttempts` is reached (or at once for a give that
 *   refuses for good, `staff: true` on what it threw).
 *
 * @module
 * @internal
 */
import type { Operation } from '../../errors.js';
import { checkIntegerInRange } from '../../internal/validate.js';
import type { DeliveryJournal, GrantFailureNote } from '../../journals/contract.js';
import { sharedOf } from './shared.js';
import { readThrown as read, thrownText as textOf } from './thrown.js';
import { GrantTimeoutError } from './types.js';

/** How long one give may run by default, in ms: purchases, vote rewards and the loop alike. */
export const DEFAULT_GRANT_TIMEOUT_MS = 60_000;
/** The longest `grantTimeoutMs` accepted: 24 h. */
export const MAX_GRANT_TIMEOUT_MS = 86_400_000;

/** Checks a `grantTimeoutMs` (the default when undefined): the one check of that option, wherever it enters. */
export function checkGrantTimeout(value: unknown, argument: string, operation: Operation): number {
  return value === undefined ? DEFAULT_GRANT_TIMEOUT_MS : checkIntegerInRange(value, 1, MAX_GRANT_TIMEOUT_MS, argument, operation);
}

/** The most characters of a give's failure kept on its record. */
const NOTE_LENGTH = 300;

/** What a give threw, converted once: never throws, whatever the value. */
export interface GiveFailure {
  /** What the give threw, as it threw it (what `failed[].error` reports), or the {@link GrantTimeoutError} of its bound. */
  thrown: unknown;
  /** Its text for the record, redacted, at most 300 characters. */
  message: string;
  /** The give refused for good (`staff: true` on what it threw): marked for staff at once. */
  staff: boolean;
  /** The window the give says it wrote (`unverified: { from, to }`, both finite): its outcome unknown. */
  window: { from: number; to: number } | undefined;
  /** The give outlived its bound and still runs. */
  late: boolean;
}

/**
 * Whatever a give threw, as a {@link GiveFailure}; `redact` takes the key out of its text.
 * The one place a thrown value is read: it never throws.
 */
export function failureOf(thrown: unknown, redact: ((text: string) => string) | undefined, late = false): GiveFailure {
  const text = textOf(thrown);
  const span = read(thrown, 'unverified');
  const from = read(span, 'from');
  const to = read(span, 'to');
  const window = Number.isFinite(from) && Number.isFinite(to) ? { from: from as number, to: to as number } : undefined;
  // Redacted before it is cut: a key cut in two would not be found.
  return { thrown, message: (redact === undefined ? text : redact(text)).slice(0, NOTE_LENGTH), staff: read(thrown, 'staff') === true, window, late };
}

// Private to this module: no value a give returns can be it.
const LATE = Symbol('late');

/** What one bounded give needs: the item's id, its journal (what every user of it shares), the call's bound and redaction. */
export interface BoundedGive {
  journal: DeliveryJournal;
  deliveryId: string;
  operation: Operation;
  timeoutMs: number;
  redact: ((text: string) => string) | undefined;
}

/**
 * One give, bounded by `timeoutMs`: `undefined` once it returned (whatever it returned),
 * else its failure. A give still running at its bound is a {@link GrantTimeoutError}
 * (`late`): the item is never given again while it runs, and is settled as given (and
 * acknowledged) if it still returns.
 */
export async function giveWithin(bound: BoundedGive, start: () => unknown): Promise<GiveFailure | undefined> {
  let attempt: Promise<unknown>;
  try {
    attempt = Promise.resolve(start());
  } catch (thrown) {
    return failureOf(thrown, bound.redact);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), bound.timeoutMs)));
  try {
    if ((await Promise.race([attempt, late])) !== LATE) return undefined;
  } catch (thrown) {
    return failureOf(thrown, bound.redact);
  } finally {
    clearTimeout(timer);
  }
  // Still running: the player's other calls go on, and this item waits for it.
  const { journal, deliveryId } = bound;
  const shared = sharedOf(journal);
  shared.granting.add(deliveryId);
  attempt.then(
    async () => {
      shared.granting.delete(deliveryId);
      // Not acknowledged through a run: the next call for the player acknowledges it if this fails, never gives it again.
      await settleGiven(journal, deliveryId, () => journal.acknowledge([deliveryId]).then(() => true, () => false));
    },
    () => shared.granting.delete(deliveryId),
  );
  return failureOf(new GrantTimeoutError(bound.operation, deliveryId, bound.timeoutMs), bound.redact, true);
}

/**
 * An item the game was given (or settled into a window): out of what memory holds unwritten,
 * remembered as given until `acknowledge` says the journal took it, so that this process
 * never gives it again.
 */
export async function settleGiven(journal: DeliveryJournal, deliveryId: string, acknowledge: () => Promise<boolean>): Promise<void> {
  const { unjournaled, unwrittenVotes, given } = sharedOf(journal);
  unjournaled.delete(deliveryId);
  unwrittenVotes.delete(deliveryId);
  given.add(deliveryId);
  if (await acknowledge()) given.delete(deliveryId);
}

/** What the failure policy decided for one record: the record with its note, and whether it was marked for staff just now. */
export interface Noted<R> {
  record: R;
  /** Marked `stuck` by this failure (the `stuck` event is due). */
  stuckNow: boolean;
  attempts: number;
}

/**
 * The failure policy, one for every kind: the failure noted on the record (its text, when,
 * the attempts so far), marked for staff (`stuck`) once `staffAfterAttempts` is reached, or
 * at once for a give that refuses for good. A record stays stuck once marked.
 */
export function notedFailure<R extends { lastError?: GrantFailureNote }>(record: R, failure: GiveFailure, at: number, staffAfterAttempts: number | undefined): Noted<R> {
  const attempts = (record.lastError?.attempts ?? 0) + 1;
  const was = record.lastError?.stuck === true;
  const stuck = was || failure.staff || attempts >= (staffAfterAttempts ?? Number.POSITIVE_INFINITY);
  return { record: { ...record, lastError: { message: failure.message, at, attempts, ...(stuck ? { stuck } : {}) } }, stuckNow: stuck && !was, attempts };
}
