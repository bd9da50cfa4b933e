/**
 * Crash-safe delivery, the modes: {@link StorefrontClient.deliver} and
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
 * This file holds the modes (reconcile, intents, claim), loaded by `import()` on an
 * engine's first delivery (engine.ts: what the client and the loop hold from the start);
 * its rooms: `records.ts` the journal side (writes that never throw, memory for refused
 * lines, windows, events), `grants.ts` the grant bounds; from the core, `shared.ts` what every client on
 * one journal shares, `locks.ts` the per-player order and the order across nodes.
 *
 * @module
 */
import { ENDPOINTS } from '../../endpoints.js';
import { NotReconciledError, isStorefrontError, type JournalError, type StorefrontError } from '../../errors.js';
import { unusableAnswer } from '../../internal/to-error.js';
import { fail } from '../../internal/validate.js';
import type { JournalClaimMark, JournalEntry, JournalLine } from '../../journals/contract.js';
import { CLAIM_WINDOW_MS, type ClaimOptions, type ClaimResult, type Transaction } from '../../wire/claim.js';
import { GrantBounds } from './grants.js';
import { checkDeliverOptions, checkGrant, checkResumeOptions, pause, type Control } from './options.js';
import { acrossNodes, type PlayerLocks } from '../core/index.js';
import { checked } from '../records/index.js';
import { EngineRecords, isClaimed, isOpenIntent, isWork } from './records.js';
import { deliveryReport, failed, journalOutcome, linesOf, mergedWindows, newRun, outcomeOf, type Run, type RunExtras, type RunVia, type StepOutcome } from './report.js';
import { ERROR_MESSAGE, loadedModes, type DeliveryMode, type DeliveryReport, type GrantFunction, type ResumeReport, type SeenAt } from '../core/index.js';


/** What a preview found: the lines still pending, and the open intents the journal held (those a lost claim took are granted by then). */
type Reconciled =
  | { ok: true; pending: Map<string, Transaction>; intents: JournalLine[]; moment: SeenAt; answeredAt: number; outcome: StepOutcome }
  | { ok: false; outcome: StepOutcome };

/**
 * The modes behind `deliver` and `resumeDeliveries`, loaded on an engine's first delivery:
 * one per {@link DeliveryEngine}, serializing the work per player so two calls for one
 * player never grant the same line concurrently. Each call names the client it runs for
 * (its claim and its `onEvent`).
 * @internal
 */
export class DeliveryModes extends EngineRecords {
  readonly #grants = new GrantBounds(this);

  async deliver(via: RunVia, playerName: unknown, grant: unknown, options: unknown): Promise<DeliveryReport> {
    const { player, mode, control } = checkDeliverOptions(playerName, options);
    return this.deliverChecked(via, player, checkGrant(grant, 'deliver'), mode, control);
  }

  /** {@link deliver} with its arguments checked already (the delivery loop's, checked where they entered). */
  async deliverChecked(via: RunVia, player: string, grantFn: GrantFunction, mode: DeliveryMode, control: Control, extras: RunExtras = {}): Promise<DeliveryReport> {
    const { locks } = this.shared;
    refuseReentry(locks, player, 'deliver');
    return locks.run(player, control.signal, async () => {
      const run = newRun('deliver', via, extras);
      const locked = await acrossNodes(this.journal, player, control, () => this.#deliver(run, player, grantFn, mode, control), (error) => this.journalFailed(run, player, error));
      return locked.ok ? locked.value : this.#report(run, player, journalOutcome(run), await this.pendingCount(run, player));
    });
  }

  async resume(via: RunVia, grant: unknown, options: unknown): Promise<ResumeReport> {
    const grantFn = checkGrant(grant, 'resumeDeliveries');
    const control = checkResumeOptions(options);
    const run = newRun('resumeDeliveries', via);
    let all: JournalEntry[];
    try {
      all = checked(await this.journal.pending());
    } catch (error) {
      // Nothing can be resumed from a journal that cannot be read: say so at startup.
      throw this.journalFailed(run, undefined, error);
    }
    const { locks, unjournaled } = this.shared;
    // A player with only windows or settled intents has nothing to resume: never visited (nor locked).
    const players = new Set([...all, ...unjournaled.values()].filter(isWork).map((e) => e.playerName));
    const errors: ResumeReport['errors'] = [];
    for (const player of players) {
      refuseReentry(locks, player, 'resumeDeliveries');
      const left = await locks.run(player, control.signal, async () => {
        const locked = await acrossNodes(this.journal, player, control, async (): Promise<StorefrontError | undefined> => {
          const settled = await this.#settle(run, player, grantFn, control);
          if (!settled.ok) return settled.error;
          if (!settled.entries.some(isOpenIntent)) return undefined;
          const reconciled = await this.#reconcile(run, player, grantFn, control);
          if (reconciled.ok) return undefined;
          return reconciled.outcome.error ?? new NotReconciledError(run.operation, player, reconciled.outcome.code);
        }, (error) => this.journalFailed(run, player, error));
        // The player's lock could not be had: nothing was done for them.
        return locked.ok ? locked.value : locked.error;
      });
      if (left !== undefined) errors.push({ playerName: player, error: left });
    }
    const pending = await this.pendingCount(run, undefined);
    return { granted: run.granted, failed: run.failed, pending, errors, unverified: mergedWindows(run.unverified), ...(run.journalError ? { journalError: run.journalError } : {}) };
  }

  async #deliver(run: Run, player: string, grant: GrantFunction, mode: DeliveryMode, control: Control): Promise<DeliveryReport> {
    const settled = await this.#settle(run, player, grant, control);
    let outcome: StepOutcome;
    if (!settled.ok || run.journalError !== undefined) {
      // The journal cannot record a claim now: claim nothing (what was already claimed is granted above).
      outcome = journalOutcome(run);
    } else if (mode === 'exactlyOnce' || settled.entries.some(isOpenIntent)) {
      outcome = await this.#exactlyOnce(run, player, grant, control);
    } else {
      outcome = await this.#fast(run, player, grant, control);
    }
    return this.#report(run, player, outcome, await this.pendingCount(run, player));
  }

  /** The run's report; the player's texts say staff are checking while a window is known. */
  #report(run: Run, player: string, outcome: StepOutcome, pending: number): DeliveryReport {
    const open = [...this.shared.unjournaled.values()].some((e) => e.playerName === player && e.state === 'unverified');
    return deliveryReport(run, outcome, pending, run.windowOpen === true || open);
  }

  /**
   * Finishes what earlier calls left for this player: lines kept in memory are written
   * again, claim marks left by a crash or a lost answer are reported, settled intents are
   * dropped, claimed lines are granted. Returns the player's journal entries, or the
   * journal's error when it cannot be read.
   */
  async #settle(run: Run, player: string, grant: GrantFunction, control: Control): Promise<{ ok: true; entries: JournalEntry[] } | { ok: false; error: JournalError }> {
    const { unjournaled } = this.shared;
    const remembered = [...unjournaled.values()].filter((e) => e.playerName === player);
    if (remembered.length > 0 && (await this.write(run, player, (journal) => journal.append(remembered)))) {
      for (const entry of remembered) unjournaled.delete(entry.deliveryId);
    }
    let entries: JournalEntry[];
    try {
      entries = checked(await this.journal.pending(player));
    } catch (error) {
      const journalError = this.journalFailed(run, player, error);
      await this.#grants.grantAll(run, remembered.filter(isClaimed), grant, control);
      return { ok: false, error: journalError };
    }
    const marks = entries.filter((e): e is JournalClaimMark => e.state === 'claiming');
    // A mark whose lines only memory holds (the journal still refuses them) stays until they
    // are granted or written: dropped now, a crash would leave no trace of them.
    const held = marks.filter((mark) => linesInMemory(unjournaled, mark));
    const orphans = marks.filter((mark) => !held.includes(mark) && !entries.some((e) => e.deliveryId.startsWith(`${mark.deliveryId}:`)));
    // Each claim could take what was completed since the list it followed was seen (a mark
    // without that moment: since ever).
    if (orphans.length > 0) {
      const start = earliest(orphans.map((m) => m.since ?? 0));
      const known = this.shared.seen.get(player);
      await this.reportUnverified(run, player, known?.wall === start ? known : start, 'claimMark');
    }
    // A window staff have not resolved yet: the player's texts say staff are checking.
    // (A vote reward's window is about points, not purchases: the purchase texts stay as they are.)
    if (entries.some((e) => e.state === 'unverified' && e.cause !== 'lostVote')) run.windowOpen = true;
    // Intents a claim settled (its lines were journaled in the same append): nothing to reconcile.
    const done = [...marks.filter((mark) => !held.includes(mark)), ...entries.filter((e) => e.state === 'intended' && e.settled === true)];
    if (done.length > 0) await this.write(run, player, (journal) => journal.acknowledge(done.map((e) => e.deliveryId)));
    const claimed = entries.filter(isClaimed);
    const inMemory = [...unjournaled.values()].filter((e) => e.playerName === player && isClaimed(e) && !claimed.some((c) => c.deliveryId === e.deliveryId));
    await this.#grants.grantAll(run, [...claimed, ...(inMemory as JournalLine[])], grant, control);
    // Marks whose lines the game has now been given leave nothing to verify.
    const granted = held.filter((mark) => !linesInMemory(unjournaled, mark));
    if (granted.length > 0) await this.write(run, player, (journal) => journal.acknowledge(granted.map((e) => e.deliveryId)));
    return { ok: true, entries };
  }

  /** Fast mode: mark → claim → journal the lines → drop the mark → grant → acknowledge. */
  async #fast(run: Run, player: string, grant: GrantFunction, control: Control): Promise<StepOutcome> {
    // What the claim can take unseen was completed after the player's list was last seen.
    const seen = this.shared.seen.get(player);
    const mark: JournalClaimMark = { deliveryId: `claim:${globalThis.crypto.randomUUID()}`, playerName: player, state: 'claiming', recordedAt: this.config.now(), ...(seen === undefined ? {} : { since: seen.wall }) };
    const sentAt = this.moment();
    // The mark is the durable record that comes first: a full disk stops the claim here.
    if (!(await this.write(run, player, (journal) => journal.append([mark])))) return journalOutcome(run);
    let result: ClaimResult;
    try {
      // The raw rows name each line's transaction: a delivery loop's checkout hint (#47) reads them.
      result = await this.#claim(run, player, { includeRawTransactions: true }, control);
    } catch (error) {
      if (isStorefrontError(error, 'CLAIM_OUTCOME_UNKNOWN')) await this.reportUnverified(run, player, seen ?? 0, 'claimMark');
      await this.write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return failed(error);
    }
    // Nothing was pending when the claim was sent: a later lost claim can only take what came after.
    if (result.code === 'NO_ITEMS' || result.code === 'ALREADY_CLAIMED') this.seen(player, sentAt);
    if (result.code !== 'SUCCESS') {
      await this.write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
      return outcomeOf(result);
    }
    this.seen(player, sentAt);
    const lines = result.claims.map((item, index) => this.line(`${mark.deliveryId}:${index}`, player, 'claimed', item));
    // One append, all or nothing: a mark with any line of its claim had all of them journaled.
    const journaled = await this.record(run, player, lines);
    if (journaled) await this.write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
    await this.#grants.grantAll(run, lines, grant, control);
    // Lines the journal could not take but the game granted leave nothing to verify.
    const { unjournaled } = this.shared;
    if (!journaled && lines.every((line) => !unjournaled.has(line.deliveryId))) {
      await this.write(run, player, (journal) => journal.acknowledge([mark.deliveryId]));
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
      .map(([invoice, item]) => ({ ...this.line(`invoice:${invoice}`, player, 'intended', item, invoice), previewedAt: reconciled.moment.wall, ...(node === undefined ? {} : { node }) }));
    if (!(await this.write(run, player, (journal) => journal.append(intents)))) return journalOutcome(run);
    this.seen(player, reconciled.moment);
    // The service opened the window when the preview arrived, which is before its answer
    // was back here: timing from the answer never claims too early. Measured on the
    // monotonic clock, and never longer than the window, whatever the wall clock does.
    const wait = Math.min(CLAIM_WINDOW_MS, CLAIM_WINDOW_MS - (this.monotonic() - reconciled.answeredAt));
    if (wait > 0) await pause(control, wait);

    let result: ClaimResult;
    const claimSentAt = this.moment();
    try {
      result = await this.#claim(run, player, { includeRawTransactions: true }, control);
    } catch (error) {
      // The intents stay: the next run's preview tells what the lost claim did.
      return failed(error);
    }
    if (result.code === 'NO_ITEMS' || result.code === 'ALREADY_CLAIMED') {
      // We hold this player's lock, so the previewed lines went to another claimer.
      await this.write(run, player, (journal) => journal.acknowledge(intents.map((e) => e.deliveryId)));
      return outcomeOf(result);
    }
    if (result.code !== 'SUCCESS') return outcomeOf(result);
    this.seen(player, claimSentAt);

    const claimed = this.claimedLines(player, result);
    // The claimed lines replace the intents in one append, all or nothing: an intent of the
    // same invoice is overwritten in place, the others (the answer had no usable invoices,
    // or another claimer took them) are written again as settled. A crash before the
    // append leaves every intent open, so the next preview finds them delivered and grants
    // them (reporting the window); a crash after it leaves the lines to grant and the
    // settled intents to drop. Never one without the other.
    const ids = new Set(claimed.map((e) => e.deliveryId));
    const gone = intents.filter((e) => !ids.has(e.deliveryId));
    const recorded = await this.record(run, player, [...claimed, ...gone.map((e) => ({ ...e, settled: true }))]);
    // Acknowledging no id changes nothing: no count check before it.
    if (recorded) await this.write(run, player, (journal) => journal.acknowledge(gone.map((e) => e.deliveryId)));
    await this.#grants.grantAll(run, claimed, grant, control);
    return { code: 'SUCCESS', message: result.message };
  }

  /**
   * Previews with the raw rows and settles the intents an earlier run left: the ones no
   * longer pending were delivered by a claim whose answer was lost, so they are granted
   * from the journal now, and the time that claim could have taken more is reported.
   */
  async #reconcile(run: Run, player: string, grant: GrantFunction, control: Control): Promise<Reconciled> {
    const moment = this.moment();
    let preview: ClaimResult;
    try {
      preview = await this.#claim(run, player, { preview: true, includeRawTransactions: true }, control);
    } catch (error) {
      return { ok: false, outcome: failed(error) };
    }
    const answeredAt = this.monotonic();
    let pending = new Map<string, Transaction>();
    const delivered: JournalLine[] = [];
    if (preview.code === 'PREVIEW') {
      const rows = linesOf(preview);
      if (rows === undefined) {
        const error = unusableAnswer(ENDPOINTS.claim, player, 'the preview did not list an invoice for every line (rawTransactions), so exactly-once delivery cannot track them');
        return { ok: false, outcome: { code: 'ERROR', message: ERROR_MESSAGE, error } };
      }
      pending = rows;
    } else if (preview.code === 'SUCCESS') {
      // A preview answered like a claim (a misbehaving service or proxy): the service says
      // it delivered these lines, so they are journaled and granted like a claim's.
      delivered.push(...this.claimedLines(player, preview));
      run.error ??= unusableAnswer(ENDPOINTS.claim, player, `the preview answered SUCCESS with ${preview.claims.length} item(s); they were treated as delivered, journaled and granted`);
    } else if (preview.code !== 'NO_ITEMS' && preview.code !== 'ALREADY_CLAIMED') {
      return { ok: false, outcome: outcomeOf(preview) };
    }

    let intents: JournalLine[];
    try {
      intents = checked(await this.journal.pending(player)).filter(isOpenIntent);
    } catch (error) {
      this.journalFailed(run, player, error);
      intents = [];
    }
    const covered = new Set(delivered.map((e) => e.deliveryId));
    // An intent without an invoice matches no pending line (Map.has(undefined) is false).
    const lost = intents.filter((e) => !covered.has(e.deliveryId) && !pending.has(e.invoice as string));
    if (lost.length > 0) {
      // Reported before the intents, which carry the window's start, leave the journal.
      const start = earliest(lost.map((e) => e.previewedAt ?? e.recordedAt));
      // The preview this process saw itself is measured on the monotonic clock.
      const known = this.shared.seen.get(player);
      await this.reportUnverified(run, player, known?.wall === start ? known : start, 'lostClaim');
      delivered.push(...lost.map(({ previewedAt: _, settled: __, ...e }) => ({ ...e, state: 'claimed' as const, recordedAt: this.config.now() })));
    }
    if (delivered.length > 0) {
      await this.record(run, player, delivered);
      await this.#grants.grantAll(run, delivered, grant, control);
    }
    // The answer listed everything still undelivered when the preview was sent: with nothing
    // listed, a later lost claim can only take what came after (with lines listed, once
    // their intents are journaled).
    if (pending.size === 0) this.seen(player, moment);
    return { ok: true, pending, intents, moment, answeredAt, outcome: outcomeOf(preview) };
  }

  /** A claim that waits out `RATE_LIMIT` (the local guard's or the service's) a few times. */
  async #claim(run: Run, player: string, options: ClaimOptions, control: Control): Promise<ClaimResult> {
    // The client takes `signal: undefined` as no signal (as every option left undefined).
    const claimOptions = { ...options, signal: control.signal } as ClaimOptions;
    for (let waits = 0; ; waits++) {
      const result = await run.via.claim(player, claimOptions);
      if (result.code !== 'RATE_LIMIT' || waits >= control.maxWaits) return result;
      // Never longer than the service's window, whatever a clock or a proxy says.
      await pause(control, Math.min(Math.max(0, result.retryAfterMs), CLAIM_WINDOW_MS));
    }
  }

}

/** A grant calling `deliver` for its own player would wait for itself forever: refused. */
function refuseReentry(locks: PlayerLocks, player: string, operation: 'deliver' | 'resumeDeliveries'): void {
  if (locks.holds(player)) {
    fail('playerName', `must not be the player of a delivery this call runs inside (a grant or onEvent calling ${operation} for ${JSON.stringify(player)} would wait for itself forever); grant the item and return`, operation);
  }
}

/** The earliest of the starts (each from the journal or this process's memory). */
function earliest(starts: ReadonlyArray<number>): number {
  // No spread: a player's list has no bound the call stack would keep.
  return starts.reduce((min, start) => Math.min(min, start), Number.POSITIVE_INFINITY);
}

/** Whether memory holds lines of the claim that `mark` marks (the journal refused them). */
function linesInMemory(unjournaled: ReadonlyMap<string, JournalEntry>, mark: JournalClaimMark): boolean {
  for (const id of unjournaled.keys()) if (id.startsWith(`${mark.deliveryId}:`)) return true;
  return false;
}

// Loaded: engines run the modes from now on without waiting for an import().
loadedModes.DeliveryModes = DeliveryModes;
