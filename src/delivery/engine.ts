/**
 * Crash-safe delivery: {@link StorefrontClient.deliver} and
 * {@link StorefrontClient.resumeDeliveries}, over a {@link DeliveryJournal}.
 *
 * The service marks a purchase delivered when the claim call succeeds, not when the game
 * grants the item. `deliver` closes that gap: the claimed lines are written to the journal
 * (durably) before the first grant, and each line is acknowledged after its grant returns.
 * Whatever happens in between (a grant that throws, a crash) leaves the line in the
 * journal, and the next `deliver` for that player, or `resumeDeliveries` at startup,
 * grants it again. A line is never granted again once acknowledged.
 *
 * Two modes:
 * - `default`: one claim call. A claim whose answer is lost (a timeout, a reset, a 5xx
 *   from a proxy: {@link ClaimOutcomeUnknownError}) may have delivered items that the
 *   game never learns about: those are lost.
 * - `exactlyOnce`: preview first (with the raw rows, for their invoices), journal the
 *   intent, wait out the service's 10 s window, then claim. When the claim's answer is
 *   lost, the next run previews again: intended invoices no longer pending were delivered
 *   by the lost claim and are granted from the journal; those still pending are claimed
 *   normally. The cost: one more call and ~10 s per delivery.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { ResponseValidationError, isStorefrontError, type Operation, type StorefrontError } from '../errors.js';
import { checkIntegerInRange, checkNonBlank, checkOptionsObject, checkSignal, describe, fail } from '../internal/validate.js';
import { CLAIM_WINDOW_MS, SUCCESS_MESSAGE } from '../normalize.js';
import type { ClaimOptions, ClaimResult, Transaction } from '../wire/claim.js';
import { FileJournal } from './file-journal.js';
import { DEFAULT_JOURNAL_PATH, type DeliveryJournal, type JournalEntry } from './journal.js';
import type { DeliverOptions, DeliveredItem, DeliveryCode, DeliveryFailure, DeliveryMode, DeliveryReport, GrantFunction, ResumeOptions, ResumeReport, SleepFunction } from './types.js';

const DEFAULT_RATE_LIMIT_WAITS = 3;
const MAX_RATE_LIMIT_WAITS = 100;
const DELIVER_OPTIONS = ['mode', 'signal', 'sleep', 'maxRateLimitWaits'] as const;
const RESUME_OPTIONS = ['signal', 'sleep', 'maxRateLimitWaits'] as const;

const PARTIAL_MESSAGE = 'Some items could not be delivered yet; they will be delivered on your next claim.';
const UNKNOWN_OUTCOME_MESSAGE = 'The store did not answer in time. Your purchase is safe; try again in a few seconds.';
const ERROR_MESSAGE = 'The store is unavailable right now. Your purchase is safe; try again later.';

// One FileJournal per path in the process, so two clients never compact over each other.
const defaultJournals = new Map<string, FileJournal>();

/** What the engine needs from the client. @internal */
export interface DeliveryEngineConfig {
  claim: (playerName: string, options: ClaimOptions) => Promise<ClaimResult>;
  now: () => number;
  journal: DeliveryJournal | undefined;
}

interface Control {
  signal: AbortSignal | undefined;
  sleep: SleepFunction;
  maxWaits: number;
}

interface Tally {
  granted: DeliveredItem[];
  failed: DeliveryFailure[];
}

interface StepOutcome {
  code: Exclude<DeliveryCode, 'PARTIAL'> | 'SUCCESS';
  message: string;
  error?: StorefrontError;
}

type Reconciled = { ok: true; pending: Map<string, Transaction>; previewedAt: number; outcome: StepOutcome } | { ok: false; outcome: StepOutcome };

/**
 * The engine behind `deliver` and `resumeDeliveries`: one per client, serializing the
 * work per player so two calls for one player never grant the same line concurrently.
 * @internal
 */
export class DeliveryEngine {
  readonly #config: DeliveryEngineConfig;
  readonly #locks = new Map<string, Promise<void>>();
  #journal: DeliveryJournal | undefined;

  constructor(config: DeliveryEngineConfig) {
    this.#config = config;
    this.#journal = config.journal;
  }

  /** The journal; the default file journal is opened on first use, never at construction. */
  get journal(): DeliveryJournal {
    if (this.#journal === undefined) {
      const path = resolve(DEFAULT_JOURNAL_PATH);
      let journal = defaultJournals.get(path);
      if (journal === undefined) defaultJournals.set(path, (journal = new FileJournal(path)));
      this.#journal = journal;
    }
    return this.#journal;
  }

  async deliver(playerName: unknown, grant: unknown, options: unknown): Promise<DeliveryReport> {
    const op: Operation = 'deliver';
    const player = checkNonBlank(playerName, 'playerName', op);
    const grantFn = checkGrant(grant, op);
    const opts = checkOptions(options, DELIVER_OPTIONS, op);
    const mode = opts.mode ?? 'default';
    if (mode !== 'default' && mode !== 'exactlyOnce') fail('options.mode', `must be 'default' or 'exactlyOnce', got ${describe(mode)}`, op);
    const control = controlOf(opts, op);
    return this.#locked(player, () => this.#deliver(player, grantFn, mode, control));
  }

  async resume(grant: unknown, options: unknown): Promise<ResumeReport> {
    const op: Operation = 'resumeDeliveries';
    const grantFn = checkGrant(grant, op);
    const control = controlOf(checkOptions(options, RESUME_OPTIONS, op), op);
    const journal = this.journal;
    const players = [...new Set((await journal.pending()).map((e) => e.playerName))];
    const tally: Tally = { granted: [], failed: [] };
    const errors: ResumeReport['errors'] = [];
    for (const player of players) {
      await this.#locked(player, async () => {
        const entries = await journal.pending(player);
        await this.#grantAll(entries.filter((e) => e.state === 'claimed'), grantFn, tally);
        if (!entries.some((e) => e.state === 'intended')) return;
        const reconciled = await this.#reconcile(player, grantFn, tally, control);
        if (!reconciled.ok && reconciled.outcome.error !== undefined) errors.push({ playerName: player, error: reconciled.outcome.error });
      });
    }
    return { ...tally, pending: (await journal.pending()).length, errors };
  }

  async #deliver(player: string, grant: GrantFunction, mode: DeliveryMode, control: Control): Promise<DeliveryReport> {
    const journal = this.journal;
    const tally: Tally = { granted: [], failed: [] };
    const entries = await journal.pending(player);
    // Lines a crash or a failing grant left behind go first: they were paid first.
    await this.#grantAll(entries.filter((e) => e.state === 'claimed'), grant, tally);
    const exactlyOnce = mode === 'exactlyOnce' || entries.some((e) => e.state === 'intended');
    const outcome = exactlyOnce ? await this.#exactlyOnce(player, grant, tally, control) : await this.#plain(player, grant, tally, control);
    const pending = (await journal.pending(player)).length;
    const code: DeliveryCode = tally.failed.length > 0 ? 'PARTIAL' : tally.granted.length > 0 ? 'SUCCESS' : outcome.code;
    const message = code === 'PARTIAL' ? PARTIAL_MESSAGE : code === 'SUCCESS' && outcome.code !== 'SUCCESS' ? SUCCESS_MESSAGE : outcome.message;
    return { code, granted: tally.granted, failed: tally.failed, pending, message, ...(outcome.error === undefined ? {} : { error: outcome.error }) };
  }

  /** Default mode: claim → journal → grant → acknowledge. */
  async #plain(player: string, grant: GrantFunction, tally: Tally, control: Control): Promise<StepOutcome> {
    let result: ClaimResult;
    try {
      result = await this.#claim(player, {}, control);
    } catch (error) {
      return failed(error);
    }
    if (result.code !== 'SUCCESS') return outcomeOf(result);
    const batch = `claim:${randomUUID()}`;
    const entries = result.claims.map((item, index) => this.#entry(`${batch}:${index}`, player, 'claimed', item));
    await this.journal.append(entries);
    await this.#grantAll(entries, grant, tally);
    return { code: 'SUCCESS', message: result.message };
  }

  /** Exactly-once mode: preview → reconcile → journal the intent → wait → claim → grant. */
  async #exactlyOnce(player: string, grant: GrantFunction, tally: Tally, control: Control): Promise<StepOutcome> {
    const reconciled = await this.#reconcile(player, grant, tally, control);
    if (!reconciled.ok || reconciled.pending.size === 0) return reconciled.outcome;

    const intents = [...reconciled.pending].map(([invoice, item]) => this.#entry(`invoice:${invoice}`, player, 'intended', item, invoice));
    await this.journal.append(intents);
    // The preview took this player's window; claiming before it ends is refused.
    const wait = CLAIM_WINDOW_MS - (this.#config.now() - reconciled.previewedAt);
    if (wait > 0) await pause(control, wait);

    let result: ClaimResult;
    try {
      result = await this.#claim(player, { includeRawTransactions: true }, control);
    } catch (error) {
      // The intents stay: the next run's preview tells what the lost claim did.
      return failed(error);
    }
    if (result.code === 'NO_ITEMS' || result.code === 'ALREADY_CLAIMED') {
      // We hold this player's lock, so the previewed lines went to another claimer.
      await this.journal.acknowledge(intents.map((e) => e.deliveryId));
      return outcomeOf(result);
    }
    if (result.code !== 'SUCCESS') return outcomeOf(result);

    const rows = linesOf(result);
    const claimed =
      rows === undefined
        ? // No invoices in the answer: the claim took every undelivered line, the previewed ones included.
          result.claims.map((item, index) => this.#entry(`claim:${randomUUID()}:${index}`, player, 'claimed', item))
        : [...rows].map(([invoice, item]) => this.#entry(`invoice:${invoice}`, player, 'claimed', item, invoice));
    // Intents this claim did not deliver went to another claimer. Dropped before the
    // claimed lines are written: a crash in between leaves the claimed lines as intents,
    // which the next preview then finds delivered and grants.
    const ids = new Set(claimed.map((e) => e.deliveryId));
    const gone = intents.filter((e) => !ids.has(e.deliveryId)).map((e) => e.deliveryId);
    if (gone.length > 0) await this.journal.acknowledge(gone);
    await this.journal.append(claimed);
    await this.#grantAll(claimed, grant, tally);
    return { code: 'SUCCESS', message: result.message };
  }

  /**
   * Previews with the raw rows and settles the intents an earlier run left: the ones no
   * longer pending were delivered by a claim whose answer was lost, so they are granted
   * from the journal now.
   */
  async #reconcile(player: string, grant: GrantFunction, tally: Tally, control: Control): Promise<Reconciled> {
    let preview: ClaimResult;
    try {
      preview = await this.#claim(player, { preview: true, includeRawTransactions: true }, control);
    } catch (error) {
      return { ok: false, outcome: failed(error) };
    }
    // The service starts the window when the preview arrives, which is before its answer
    // is back here but after it was sent: timing from the answer never claims too early
    // (timing from the send did, and the refused claim cost a second 10 s window).
    const previewedAt = this.#config.now();
    let pending: Map<string, Transaction>;
    if (preview.code === 'PREVIEW') {
      const rows = linesOf(preview);
      if (rows === undefined) {
        const error = new ResponseValidationError(
          { operation: 'claim', endpoint: '/api/v4/store/transaction/update' },
          'the preview did not list an invoice for every line (rawTransactions), so exactly-once delivery cannot track them',
        );
        return { ok: false, outcome: { code: 'ERROR', message: ERROR_MESSAGE, error } };
      }
      pending = rows;
    } else if (preview.code === 'NO_ITEMS' || preview.code === 'ALREADY_CLAIMED') {
      pending = new Map();
    } else {
      return { ok: false, outcome: outcomeOf(preview) };
    }

    const intents = (await this.journal.pending(player)).filter((e) => e.state === 'intended');
    const delivered = intents.filter((e) => e.invoice === undefined || !pending.has(e.invoice)).map((e) => ({ ...e, state: 'claimed' as const, recordedAt: this.#config.now() }));
    if (delivered.length > 0) {
      await this.journal.append(delivered);
      await this.#grantAll(delivered, grant, tally);
    }
    return { ok: true, pending, previewedAt, outcome: outcomeOf(preview) };
  }

  /** Grants each line, acknowledging it right after; a throwing grant leaves its line pending. */
  async #grantAll(entries: readonly JournalEntry[], grant: GrantFunction, tally: Tally): Promise<void> {
    for (const entry of entries) {
      const item: DeliveredItem = { ...structuredClone(entry.item), deliveryId: entry.deliveryId };
      try {
        await grant(item);
      } catch (error) {
        tally.failed.push({ item, error });
        continue;
      }
      await this.journal.acknowledge([entry.deliveryId]);
      tally.granted.push(item);
    }
  }

  /** A claim that waits out `RATE_LIMIT` (the local guard's or the service's) a few times. */
  async #claim(player: string, options: ClaimOptions, control: Control): Promise<ClaimResult> {
    const claimOptions: ClaimOptions = control.signal === undefined ? options : { ...options, signal: control.signal };
    for (let waits = 0; ; waits++) {
      const result = await this.#config.claim(player, claimOptions);
      if (result.code !== 'RATE_LIMIT' || waits >= control.maxWaits) return result;
      await pause(control, result.retryAfterMs);
    }
  }

  #entry(deliveryId: string, playerName: string, state: JournalEntry['state'], item: Transaction, invoice?: string): JournalEntry {
    return { deliveryId, playerName, state, item, ...(invoice === undefined ? {} : { invoice }), recordedAt: this.#config.now() };
  }

  async #locked<T>(player: string, run: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(player) ?? Promise.resolve();
    let release!: () => void;
    const mine = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.#locks.set(player, mine);
    await previous;
    try {
      return await run();
    } finally {
      release();
      if (this.#locks.get(player) === mine) this.#locks.delete(player);
    }
  }
}

/** Pairs each claim with its raw row's invoice; undefined when they do not line up. */
function linesOf(result: ClaimResult): Map<string, Transaction> | undefined {
  const raw = result.rawTransactions;
  if (raw === undefined || raw.length !== result.claims.length) return undefined;
  const lines = new Map<string, Transaction>();
  for (let i = 0; i < raw.length; i++) {
    const invoice = raw[i]?.['invoice'];
    if ((typeof invoice !== 'string' && typeof invoice !== 'number') || String(invoice) === '') return undefined;
    if (lines.has(String(invoice))) return undefined;
    lines.set(String(invoice), result.claims[i] as Transaction);
  }
  return lines;
}

function outcomeOf(result: ClaimResult): StepOutcome {
  // A preview's NO_ITEMS / ALREADY_CLAIMED read the same as a claim's; an empty PREVIEW is NO_ITEMS.
  if (result.code === 'PREVIEW') return result.claims.length === 0 ? { code: 'NO_ITEMS', message: result.message } : { code: 'SUCCESS', message: result.message };
  return { code: result.code === 'SUCCESS' ? 'SUCCESS' : result.code, message: result.message };
}

function failed(error: unknown): StepOutcome {
  if (!isStorefrontError(error)) throw error;
  if (error.code === 'CLAIM_OUTCOME_UNKNOWN') {
    return { code: 'OUTCOME_UNKNOWN', message: UNKNOWN_OUTCOME_MESSAGE, error };
  }
  return { code: 'ERROR', message: ERROR_MESSAGE, error };
}

async function pause(control: Control, ms: number): Promise<void> {
  control.signal?.throwIfAborted();
  await control.sleep(ms);
  control.signal?.throwIfAborted();
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function checkGrant(value: unknown, op: Operation): GrantFunction {
  if (typeof value !== 'function') fail('grant', `must be a function (item) => void | Promise<void>, got ${describe(value)}`, op);
  return value as GrantFunction;
}

type RawOptions = { mode?: unknown; signal?: unknown; sleep?: unknown; maxRateLimitWaits?: unknown };

function checkOptions(value: unknown, allowed: readonly string[], op: Operation): RawOptions {
  return checkOptionsObject(value as RawOptions | undefined, allowed, 'options', op);
}

function controlOf(opts: RawOptions, op: Operation): Control {
  const signal = checkSignal(opts.signal, op);
  if (opts.sleep !== undefined && typeof opts.sleep !== 'function') fail('options.sleep', `must be a function (ms) => Promise<void>, got ${describe(opts.sleep)}`, op);
  const maxWaits = opts.maxRateLimitWaits === undefined ? DEFAULT_RATE_LIMIT_WAITS : checkIntegerInRange(opts.maxRateLimitWaits, 0, MAX_RATE_LIMIT_WAITS, 'options.maxRateLimitWaits', op);
  return { signal, sleep: (opts.sleep as SleepFunction | undefined) ?? ((ms) => realSleep(ms, signal)), maxWaits };
}
