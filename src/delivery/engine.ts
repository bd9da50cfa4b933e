/**
 * Crash-safe delivery: {@link StorefrontClient.deliver} and
 * {@link StorefrontClient.resumeDeliveries}, over a {@link DeliveryJournal}.
 *
 * The service marks a purchase delivered when the claim call succeeds, not when the game
 * grants the item. `deliver` closes that gap: what it is about to claim, or has claimed,
 * is written to the journal (durably) before the first grant, and each line is
 * acknowledged after its grant returns. Whatever happens in between (a grant that throws,
 * a crash) leaves the line in the journal, and the next `deliver` for that player, or
 * `resumeDeliveries` at startup, grants it again. A line is never granted again once
 * acknowledged.
 *
 * Two modes:
 * - `exactlyOnce` (the default): preview first (with the raw rows, for their invoices),
 *   journal the intent, wait out the service's 10 s window, then claim. When the claim's
 *   answer is lost, the next run previews again: intended invoices no longer pending were
 *   delivered by the lost claim and are granted from the journal; those still pending are
 *   claimed normally. What the lost claim may have taken beyond the previewed lines is
 *   reported as an {@link UnverifiedWindow}.
 * - `fast`: journal a claim mark, claim, journal the lines, grant. One call; a claim whose
 *   answer is lost (or a crash before its lines reach the journal) loses what it
 *   delivered, reported as an {@link UnverifiedWindow} from the mark.
 *
 * Order is the whole design: the journal proves it can write before anything is claimed,
 * and once a claim succeeded its lines are granted from memory even when the journal
 * fails (reported as `journalError`, the write retried on the next call).
 *
 * @module
 */
import { resolve } from 'node:path';
import { ENDPOINTS } from '../endpoints.js';
import { JournalError, isStorefrontError } from '../errors.js';
import { unusableAnswer } from '../internal/to-error.js';
import type { StorefrontEvent } from '../types.js';
import { CLAIM_WINDOW_MS, type ClaimOptions, type ClaimResult, type Transaction } from '../wire/claim.js';
import { FileJournal } from './file-journal.js';
import { DEFAULT_JOURNAL_PATH, type DeliveryJournal, type JournalClaimMark, type JournalEntry, type JournalLine } from './journal.js';
import { checkDeliverOptions, checkGrant, checkResumeOptions, pause, type Control } from './options.js';
import { PlayerLocks } from './player-locks.js';
import { deliveryReport, failed, journalOutcome, linesOf, mergedWindows, newRun, outcomeOf, ERROR_MESSAGE, type Run, type RunVia, type StepOutcome } from './report.js';
import type { DeliveredItem, DeliveryMode, DeliveryReport, GrantFunction, ResumeReport, UnverifiedWindow } from './types.js';

// One FileJournal per path in the process: a file journal refuses a second owner.
const defaultJournals = new Map<string, FileJournal>();

/** What the engine needs from the clients that share it. @internal */
export interface DeliveryEngineConfig {
  now: () => number;
  journal: DeliveryJournal | undefined;
}

/** What a preview found: the lines still pending, and the intents still journaled for them. */
type Reconciled =
  | { ok: true; pending: Map<string, Transaction>; intents: JournalLine[]; sentAt: number; answeredAt: number; outcome: StepOutcome }
  | { ok: false; outcome: StepOutcome };

/**
 * The engine behind `deliver` and `resumeDeliveries`: one per client and the clients
 * derived from it (`withOptions`), serializing the work per player so two calls for one
 * player never grant the same line concurrently. Each call names the client it runs for
 * (its claim and its `onEvent`).
 * @internal
 */
export class DeliveryEngine {
  readonly #config: DeliveryEngineConfig;
  readonly #locks = new PlayerLocks();
  /** Claimed lines the journal failed to record: granted from here, written again on the next call. */
  readonly #unjournaled = new Map<string, JournalLine>();
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

  async deliver(via: RunVia, playerName: unknown, grant: unknown, options: unknown): Promise<DeliveryReport> {
    const { player, mode, control } = checkDeliverOptions(playerName, options);
    const grantFn = checkGrant(grant, 'deliver');
    return this.#locks.run(player, async () => {
      const run = newRun('deliver', via);
      const report = await this.#acrossNodes(run, player, () => this.#deliver(run, player, grantFn, mode, control));
      return report ?? deliveryReport(run, journalOutcome(run), await this.#pendingCount(run, player));
    });
  }

  async resume(via: RunVia, grant: unknown, options: unknown): Promise<ResumeReport> {
    const grantFn = checkGrant(grant, 'resumeDeliveries');
    const control = checkResumeOptions(options);
    const run = newRun('resumeDeliveries', via);
    let all: JournalEntry[];
    try {
      all = await this.journal.pending();
    } catch (error) {
      // Nothing can be resumed from a journal that cannot be read: say so at startup.
      throw this.#journalFailed(run, undefined, error);
    }
    const players = new Set([...all, ...this.#unjournaled.values()].map((e) => e.playerName));
    const errors: ResumeReport['errors'] = [];
    for (const player of players) {
      await this.#locks.run(player, () =>
        this.#acrossNodes(run, player, async () => {
          const entries = await this.#settle(run, player, grantFn);
          if (entries === undefined || !entries.some((e) => e.state === 'intended')) return;
          const reconciled = await this.#reconcile(run, player, grantFn, control);
          if (!reconciled.ok && reconciled.outcome.error !== undefined) errors.push({ playerName: player, error: reconciled.outcome.error });
        }),
      );
    }
    const pending = await this.#pendingCount(run, undefined);
    return { granted: run.granted, failed: run.failed, pending, errors, unverified: mergedWindows(run.unverified), ...(run.journalError ? { journalError: run.journalError } : {}) };
  }

  async #deliver(run: Run, player: string, grant: GrantFunction, mode: DeliveryMode, control: Control): Promise<DeliveryReport> {
    const entries = await this.#settle(run, player, grant);
    let outcome: StepOutcome;
    if (entries === undefined || run.journalError !== undefined) {
      // The journal cannot record a claim now: claim nothing (what was already claimed is granted above).
      outcome = journalOutcome(run);
    } else if (mode === 'exactlyOnce' || entries.some((e) => e.state === 'intended')) {
      outcome = await this.#exactlyOnce(run, player, grant, control);
    } else {
      outcome = await this.#fast(run, player, grant, control);
    }
    return deliveryReport(run, outcome, await this.#pendingCount(run, player));
  }

  /**
   * Finishes what earlier calls left for this player: lines kept in memory are written
   * again, claim marks left by a crash or a lost answer are reported, claimed lines are
   * granted. Returns the player's journal entries, or undefined when the journal cannot
   * be read.
   */
  async #settle(run: Run, player: string, grant: GrantFunction): Promise<JournalEntry[] | undefined> {
    const remembered = [...this.#unjournaled.values()].filter((e) => e.playerName === player);
    if (remembered.length > 0 && (await this.#write(run, player, (journal) => journal.append(remembered)))) {
      for (const line of remembered) this.#unjournaled.delete(line.deliveryId);
    }
    let entries: JournalEntry[];
    try {
      entries = await this.journal.pending(player);
    } catch (error) {
      this.#journalFailed(run, player, error);
      await this.#grantAll(run, remembered, grant);
      return undefined;
    }
    const marks = entries.filter((e): e is JournalClaimMark => e.state === 'claiming');
    const orphans = marks.filter((mark) => !entries.some((e) => e.deliveryId.startsWith(`${mark.deliveryId}:`)));
    if (orphans.length > 0) this.#reportUnverified(run, player, Math.min(...orphans.map((m) => m.recordedAt)));
    if (marks.length > 0) await this.#write(run, player, (journal) => journal.acknowledge(marks.map((m) => m.deliveryId)));
    const claimed = entries.filter((e): e is JournalLine => e.state === 'claimed');
    await this.#grantAll(run, [...claimed, ...[...this.#unjournaled.values()].filter((e) => e.playerName === player && !claimed.some((c) => c.deliveryId === e.deliveryId))], grant);
    return entries;
  }

  /** Fast mode: mark → claim → journal the lines → drop the mark → grant → acknowledge. */
  async #fast(run: Run, player: string, grant: GrantFunction, control: Control): Promise<StepOutcome> {
    const mark: JournalClaimMark = { deliveryId: `claim:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'claiming', recordedAt: this.#config.now() };
    // The mark is the durable record that comes first: a full disk stops the claim here.
    if (!(await this.#write(run, player, (journal) => journal.append([mark])))) return journalOutcome(run);
    let result: ClaimResult;
    try {
      result = await this.#claim(run, player, {}, control);
    } catch (error) {
      if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) this.#reportUnverified(run, player, mark.recordedAt);
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return failed(error);
    }
    if (result.code !== 'SUCCESS') {
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return outcomeOf(result);
    }
    const lines = result.claims.map((item, index) => this.#line(`${mark.deliveryId}:${index}`, player, 'claimed', item));
    const journaled = await this.#record(run, player, lines);
    if (journaled) await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
    await this.#grantAll(run, lines, grant);
    // Lines the journal could not take but the game granted leave nothing to verify.
    if (!journaled && lines.every((line) => !this.#unjournaled.has(line.deliveryId))) {
      await this.#write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
    }
    return { code: 'SUCCESS', message: result.message };
  }

  /** Exactly-once mode: preview → reconcile → journal the intent → wait → claim → grant. */
  async #exactlyOnce(run: Run, player: string, grant: GrantFunction, control: Control): Promise<StepOutcome> {
    const reconciled = await this.#reconcile(run, player, grant, control);
    if (!reconciled.ok || reconciled.pending.size === 0) return reconciled.outcome;
    if (run.journalError !== undefined) return journalOutcome(run);

    // An intent another node journaled stays that node's: never overwritten, so a claim of
    // ours that finds nothing cannot settle it (its lost claim may have taken the line).
    const node = this.journal.nodeId;
    const foreign = new Set(reconciled.intents.filter((e) => e.node !== node).map((e) => e.invoice));
    const intents = [...reconciled.pending]
      .filter(([invoice]) => !foreign.has(invoice))
      .map(([invoice, item]) => ({ ...this.#line(`invoice:${invoice}`, player, 'intended', item, invoice), previewedAt: reconciled.sentAt, ...(node === undefined ? {} : { node }) }));
    if (!(await this.#write(run, player, (journal) => journal.append(intents)))) return journalOutcome(run);
    // The service opened the window when the preview arrived, which is before its answer
    // was back here: timing from the answer never claims too early.
    const wait = CLAIM_WINDOW_MS - (this.#config.now() - reconciled.answeredAt);
    if (wait > 0) await pause(control, wait);

    let result: ClaimResult;
    try {
      result = await this.#claim(run, player, { includeRawTransactions: true }, control);
    } catch (error) {
      // The intents stay: the next run's preview tells what the lost claim did.
      return failed(error);
    }
    if (result.code === 'NO_ITEMS' || result.code === 'ALREADY_CLAIMED') {
      // We hold this player's lock, so the previewed lines went to another claimer.
      await this.#write(run, player, (journal) => journal.acknowledge(intents.map((e) => e.deliveryId)));
      return outcomeOf(result);
    }
    if (result.code !== 'SUCCESS') return outcomeOf(result);

    const claimed = this.#claimedLines(player, result);
    // Intents this claim did not deliver went to another claimer. Dropped before the
    // claimed lines are written: a crash in between leaves the claimed lines as intents,
    // which the next preview then finds delivered and grants.
    const ids = new Set(claimed.map((e) => e.deliveryId));
    const gone = intents.filter((e) => !ids.has(e.deliveryId)).map((e) => e.deliveryId);
    if (gone.length > 0) await this.#write(run, player, (journal) => journal.acknowledge(gone));
    await this.#record(run, player, claimed);
    await this.#grantAll(run, claimed, grant);
    return { code: 'SUCCESS', message: result.message };
  }

  /**
   * Previews with the raw rows and settles the intents an earlier run left: the ones no
   * longer pending were delivered by a claim whose answer was lost, so they are granted
   * from the journal now, and the time that claim could have taken more is reported.
   */
  async #reconcile(run: Run, player: string, grant: GrantFunction, control: Control): Promise<Reconciled> {
    const sentAt = this.#config.now();
    let preview: ClaimResult;
    try {
      preview = await this.#claim(run, player, { preview: true, includeRawTransactions: true }, control);
    } catch (error) {
      return { ok: false, outcome: failed(error) };
    }
    const answeredAt = this.#config.now();
    let pending = new Map<string, Transaction>();
    const delivered: JournalLine[] = [];
    if (preview.code === 'PREVIEW') {
      const rows = linesOf(preview);
      if (rows === undefined) {
        const error = unusableAnswer(ENDPOINTS.claimV4, player, 'the preview did not list an invoice for every line (rawTransactions), so exactly-once delivery cannot track them');
        return { ok: false, outcome: { code: 'ERROR', message: ERROR_MESSAGE, error } };
      }
      pending = rows;
    } else if (preview.code === 'SUCCESS') {
      // A preview answered like a claim (a misbehaving service or proxy): the service says
      // it delivered these lines, so they are journaled and granted like a claim's.
      delivered.push(...this.#claimedLines(player, preview));
      run.error ??= unusableAnswer(ENDPOINTS.claimV4, player, `the preview answered SUCCESS with ${preview.claims.length} item(s); they were treated as delivered, journaled and granted`);
    } else if (preview.code !== 'NO_ITEMS' && preview.code !== 'ALREADY_CLAIMED') {
      return { ok: false, outcome: outcomeOf(preview) };
    }

    let intents: JournalLine[];
    try {
      intents = (await this.journal.pending(player)).filter((e): e is JournalLine => e.state === 'intended');
    } catch (error) {
      this.#journalFailed(run, player, error);
      intents = [];
    }
    const covered = new Set(delivered.map((e) => e.deliveryId));
    const lost = intents.filter((e) => !covered.has(e.deliveryId) && (e.invoice === undefined || !pending.has(e.invoice)));
    if (lost.length > 0) {
      // Reported before the intents, which carry the window's start, leave the journal.
      this.#reportUnverified(run, player, Math.min(...lost.map((e) => e.previewedAt ?? e.recordedAt)));
      delivered.push(...lost.map(({ previewedAt: _, ...e }) => ({ ...e, state: 'claimed' as const, recordedAt: this.#config.now() })));
    }
    if (delivered.length > 0) {
      await this.#record(run, player, delivered);
      await this.#grantAll(run, delivered, grant);
    }
    const kept = intents.filter((e) => !covered.has(e.deliveryId) && !lost.includes(e));
    return { ok: true, pending, intents: kept, sentAt, answeredAt, outcome: preview.code === 'SUCCESS' ? { code: 'SUCCESS', message: preview.message } : outcomeOf(preview) };
  }

  /** Grants each line, acknowledging it right after; a throwing grant leaves its line pending. */
  async #grantAll(run: Run, lines: readonly JournalLine[], grant: GrantFunction): Promise<void> {
    for (const line of lines) {
      const item: DeliveredItem = { ...line.item, deliveryId: line.deliveryId };
      try {
        await grant(item);
      } catch (error) {
        run.failed.push({ item, error });
        continue;
      }
      run.granted.push(item);
      this.#unjournaled.delete(line.deliveryId);
      await this.#write(run, line.playerName, (journal) => journal.acknowledge([line.deliveryId]));
    }
  }

  /**
   * Journals claimed lines. When the journal fails they are kept in memory (granted from
   * there, written again on the next call) and the failure is reported: once the service
   * delivered them, a failed write must not drop them.
   */
  async #record(run: Run, player: string, lines: readonly JournalLine[]): Promise<boolean> {
    if (await this.#write(run, player, (journal) => journal.append(lines))) return true;
    for (const line of lines) this.#unjournaled.set(line.deliveryId, line);
    return false;
  }

  /** Runs one journal change; a failure is reported on the run, never thrown. */
  async #write(run: Run, player: string, change: (journal: DeliveryJournal) => Promise<void>): Promise<boolean> {
    try {
      await change(this.journal);
      return true;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return false;
    }
  }

  #journalFailed(run: Run, player: string | undefined, error: unknown): JournalError {
    const journalError = isStorefrontError(error, 'JOURNAL_FAILED')
      ? (error as JournalError)
      : new JournalError(`${run.operation}: the delivery journal failed (${String((error as Error | undefined)?.message ?? error).slice(0, 200)})`, { operation: run.operation, cause: error });
    run.journalError ??= journalError;
    if (player !== undefined) this.#emit(run, { type: 'journalError', operation: run.operation, playerName: player, error: journalError });
    return journalError;
  }

  #reportUnverified(run: Run, player: string, from: number): void {
    const window: UnverifiedWindow = { playerName: player, from, to: this.#config.now() };
    run.unverified.push(window);
    this.#emit(run, { type: 'unverified', operation: run.operation, window });
  }

  #emit(run: Run, event: StorefrontEvent): void {
    try {
      run.via.onEvent?.(event);
    } catch {
      // A listener's failure must not change the outcome of a delivery.
    }
  }

  async #pendingCount(run: Run, player: string | undefined): Promise<number> {
    const inMemory = [...this.#unjournaled.values()].filter((e) => player === undefined || e.playerName === player).length;
    try {
      return (await this.journal.pending(player)).length + inMemory;
    } catch (error) {
      this.#journalFailed(run, player, error);
      return inMemory;
    }
  }

  /** The lines of a claim answer: by invoice when the raw rows line up, else by claim and index. */
  #claimedLines(player: string, result: ClaimResult): JournalLine[] {
    const rows = linesOf(result);
    if (rows === undefined) {
      const batch = `claim:${globalThis.crypto.randomUUID()}`;
      return result.claims.map((item, index) => this.#line(`${batch}:${index}`, player, 'claimed', item));
    }
    return [...rows].map(([invoice, item]) => this.#line(`invoice:${invoice}`, player, 'claimed', item, invoice));
  }

  /** A claim that waits out `RATE_LIMIT` (the local guard's or the service's) a few times. */
  async #claim(run: Run, player: string, options: ClaimOptions, control: Control): Promise<ClaimResult> {
    const claimOptions: ClaimOptions = control.signal === undefined ? options : { ...options, signal: control.signal };
    for (let waits = 0; ; waits++) {
      const result = await run.via.claim(player, claimOptions);
      if (result.code !== 'RATE_LIMIT' || waits >= control.maxWaits) return result;
      await pause(control, result.retryAfterMs);
    }
  }

  #line(deliveryId: string, playerName: string, state: JournalLine['state'], item: Transaction, invoice?: string): JournalLine {
    return { deliveryId, playerName, state, item, ...(invoice === undefined ? {} : { invoice }), recordedAt: this.#config.now() };
  }

  /**
   * Runs `work` under the journal's cross-node lock on the player, when it has one. A lock
   * that cannot be had is reported on the run (`undefined` returned): nothing was done.
   */
  async #acrossNodes<T>(run: Run, player: string, work: () => Promise<T>): Promise<T | undefined> {
    const journal = this.journal;
    if (journal.withPlayerLock === undefined) return work();
    let started = false;
    try {
      return await journal.withPlayerLock(player, () => {
        started = true;
        return work();
      });
    } catch (error) {
      if (started) throw error;
      this.#journalFailed(run, player, error);
      return undefined;
    }
  }

}
