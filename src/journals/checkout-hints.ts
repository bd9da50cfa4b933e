/**
 * The checkout hint's rules, in one place for every path a hint takes (#47): what a hint is
 * ({@link CheckoutHint}) and its check, used by the loop's `expect`, by the shared
 * journals and by {@link expectCheckout}; the hint as a shared journal hands it back
 * ({@link SharedCheckoutHint}); the bounds every holder of hints keeps.
 *
 * @module
 */
import { playerNameProblem } from '../common/player-name.js';
import { JournalError } from '../errors.js';
import { checkIntegerInRange, checkOptionsObject, checkPlayerName, describe, describeSecret, fail } from '../internal/validate.js';
import { CLAIM_WINDOW_MS } from '../wire/claim.js';
import type { Operation } from '../errors/base.js';

/**
 * What {@link DeliveryLoop.expect} (or {@link expectCheckout}) is told of a checkout.
 *
 * @example
 * ```ts
 * const hint: CheckoutHint = { transactionId: result.transactionId, expiresInMs: 15 * 60_000 };
 * loop.expect('Player123', hint);
 * ```
 */
export interface CheckoutHint {
  /**
   * The `transactionId` {@link StorefrontClient.checkout} returned. The hint ends once a
   * claim delivers a line of that transaction; without it, once a claim delivers anything.
   */
  transactionId?: string;
  /**
   * How long the loop keeps claiming for the player, in ms: a payment page can take
   * minutes. Default `600000` (10 minutes); from `10000` to `3600000`.
   */
  expiresInMs?: number;
}

/** A hint once checked: its transaction (if any) and its life in ms. @internal */
export interface CheckedCheckoutHint {
  transactionId: string | undefined;
  expiresInMs: number;
}

/**
 * A checkout hint as a shared journal hands it back ({@link DeliveryJournal.liveCheckoutHints}):
 * its times measured by the database's clock when it was read, never by a node's (the
 * nodes' and the shop's clocks differ).
 *
 * @example
 * ```ts
 * for (const hint of await journal.liveCheckoutHints()) console.log(hint.playerName, hint.transactionId ?? '(any)', hint.remainingMs);
 * ```
 */
export interface SharedCheckoutHint {
  /** The player, exact name. */
  playerName: string;
  /** The transaction the hint waits for; absent when it named none (any delivery satisfies it). */
  transactionId?: string;
  /** How long ago it was written, in ms (0 or more). */
  ageMs: number;
  /** How long it still lives, in ms (more than 0; at most an hour). */
  remainingMs: number;
}

/**
 * The default life of a hint. Payments complete within a few minutes of the checkout (the
 * simulation draws the delay from a log-normal distribution with a median of 60 s, 2 % over
 * 5 minutes); 10 minutes covers a slow card check or a second attempt, and a hint whose
 * purchase never completes (an abandoned cart) costs at most 30 + 15 calls.
 */
export const HINT_DEFAULT_MS = 600_000;
/** The longest a hint lives: never a claim every window for a player for hours. */
export const HINT_MAX_MS = 3_600_000;
/**
 * The most hints held at once (one per player): a flood of hints is refused, never grows
 * memory. Also the most a shared journal hands back at once (the newest), and keeps.
 */
export const HINT_LIMIT = 10_000;
const TRANSACTION_ID = /^[\w.:-]{1,128}$/;
/** A hint's fields (only the keys are read). */
const HINT_KEYS = Object.keys({ transactionId: 0, expiresInMs: 0 } satisfies Record<keyof CheckoutHint, 0>);

/**
 * Checks a hint (`undefined` is the empty hint): the one rule set of `loop.expect`, the
 * bridge's route and {@link expectCheckout}. A bad value is described, never echoed, when
 * `secretSafe` (the shop's side, where a key may be passed by mistake).
 * @internal
 */
export function checkCheckoutHint(hint: unknown, operation: Operation, secretSafe = false): CheckedCheckoutHint {
  if (secretSafe && hint != null && (typeof hint !== 'object' || Array.isArray(hint))) fail('hint', `must be an object, got ${describeSecret(hint)}`, operation);
  const given = checkOptionsObject((hint ?? undefined) as { [K in keyof CheckoutHint]?: unknown } | undefined, HINT_KEYS, 'hint', operation);
  const { transactionId } = given;
  if (transactionId !== undefined && (typeof transactionId !== 'string' || !TRANSACTION_ID.test(transactionId))) {
    const got = secretSafe ? describeSecret(transactionId) : describe(transactionId);
    fail('hint.transactionId', `must be the transactionId checkout returned (1 to 128 letters, digits, '_', '.', ':' or '-'), got ${got}`, operation);
  }
  const life = given.expiresInMs === undefined ? HINT_DEFAULT_MS : checkIntegerInRange(given.expiresInMs, CLAIM_WINDOW_MS, HINT_MAX_MS, 'hint.expiresInMs', operation);
  return { transactionId: transactionId as string | undefined, expiresInMs: life };
}

/**
 * The arguments of a journal's `addCheckoutHint`, checked by the rules of
 * {@link checkCheckoutHint}: a hint the loops would refuse is never written.
 * @internal
 */
export function checkSharedHintArguments(playerName: unknown, hint: unknown): { playerName: string } & CheckedCheckoutHint {
  const name = checkPlayerName(playerName, 'playerName', 'expectCheckout');
  return { playerName: name, ...checkCheckoutHint(hint, 'expectCheckout', true) };
}

/**
 * A hint read back from a shared journal's row, checked like an answer from the network:
 * a row that is not a hint fails loudly (a JournalError naming the journal), never becomes
 * claims for a name nobody checked.
 * @internal
 */
export function sharedHintOf(journal: string, row: { playerName: unknown; transactionId: unknown; ageMs: unknown; remainingMs: unknown }): SharedCheckoutHint {
  const { playerName, transactionId } = row;
  const ageMs = Math.max(0, Math.round(Number(row.ageMs)));
  const remainingMs = Math.round(Number(row.remainingMs));
  const bad = (what: string) => new JournalError(`${journal}: a row of the checkout hints is not a hint (${what}); it was changed outside the SDK`);
  if (typeof playerName !== 'string' || playerNameProblem(playerName) !== undefined) throw bad('its player name is not a player name');
  if (transactionId !== null && transactionId !== undefined && transactionId !== '' && (typeof transactionId !== 'string' || !TRANSACTION_ID.test(transactionId))) throw bad('its transaction id is not one');
  if (!Number.isFinite(ageMs) || !Number.isFinite(remainingMs) || remainingMs > HINT_MAX_MS) throw bad(`its times are not a hint's: age ${describe(row.ageMs)}, remaining ${describe(row.remainingMs)}`);
  return typeof transactionId === 'string' && transactionId !== '' ? { playerName, transactionId, ageMs, remainingMs } : { playerName, ageMs, remainingMs };
}
